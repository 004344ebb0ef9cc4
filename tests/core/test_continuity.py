"""Threads, thread handoffs (versions, restore, export), session handoffs, the brief."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.cli.continuity  # noqa: F401  (registers the commands)
from core.cli.main import main
from core.continuity import context as continuity
from core.continuity import episodes, handoffs, session_handoffs, threads
from core.continuity.handoff_text import (
    MAX_HANDOFF_BYTES,
    MAX_OPEN_THREAD_CHARS,
    MAX_OPEN_THREADS,
    extract_open_threads,
    fenced,
    inline_safe,
)
from core.model.config import Config
from core.model.entries import Actor, utc_now
from core.model.errors import (
    Conflict,
    Forbidden,
    InvalidParams,
    NotFound,
    Refused,
    StorageError,
    TooLarge,
)
from core.policy import screening
from core.recall.brief import build_brief
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir

ROOT = Path(__file__).resolve().parents[2]
NOW_CONFIG = Config(max_brief_chars=200_000, brief_token_budget=100_000)


def new_agent(service: MemoryService, group: str = "main") -> Caller:
    return service.open_session(group, Actor.AGENT, "test-agent")


def thread_of(service: MemoryService, caller: Caller, title: str = "Project X") -> str:
    thread, _ = threads.open_thread(service, caller, title=title)
    return thread.id


def audit_actions(service: MemoryService) -> list[str]:
    return [r.action for r in audit.recent(service.store_for("main"), limit=500)]


# -- threads ---------------------------------------------------------------------------


def test_open_creates_once_and_finds_titles_case_insensitively(
    service: MemoryService, agent: Caller
) -> None:
    first, created = threads.open_thread(service, agent, title="  Straße   Umbau ")
    assert created and first.title == "Straße Umbau"
    assert threads.THREAD_ID.fullmatch(first.id)
    again, created = threads.open_thread(service, agent, title="STRASSE umbau")
    assert not created and again.id == first.id
    assert threads.find_thread(service, "main", "straße UMBAU").id == first.id
    assert threads.find_thread(service, "main", first.id).id == first.id
    with pytest.raises(NotFound):
        threads.find_thread(service, "main", "Other")
    with pytest.raises(NotFound):
        threads.find_thread(service, "main", "thr-000000000000")
    assert "thread_create" in audit_actions(service)


@pytest.mark.parametrize(
    ("title", "rule"),
    [
        ("", "minLength"),
        ("   ", "minLength"),
        ("x" * 201, "maxLength"),
        ("two\nlines", "pattern"),
        ("para\u2029graph", "pattern"),
        ("bell\x07", "pattern"),
        ("thr-0123456789ab", "pattern"),
        (42, "type"),
    ],
)
def test_bad_titles_are_refused_with_the_rule(
    service: MemoryService, agent: Caller, title: Any, rule: str
) -> None:
    with pytest.raises(InvalidParams) as err:
        threads.open_thread(service, agent, title=title)
    assert err.value.rule == rule and err.value.field == "title"
    assert threads.list_threads(service, "main") == []


def test_a_title_stating_a_credential_is_refused_and_audited(
    service: MemoryService, agent: Caller
) -> None:
    with pytest.raises(Refused):
        threads.open_thread(service, agent, title="my password is hunter2")
    assert threads.list_threads(service, "main") == []
    assert "refused" in audit_actions(service)


def test_thread_list_is_most_recent_first_with_counts(
    service: MemoryService, agent: Caller
) -> None:
    old = thread_of(service, agent, "Old")
    new = thread_of(service, agent, "New")
    time.sleep(0.002)  # a later millisecond: threads are ordered by their last change
    handoffs.write_handoff(service, agent, old, "# state\n\nsomething")
    threads.set_session_thread(service, agent, old)
    episodes.log_exchange(service, agent, "user", "hello there")
    listed = threads.list_threads(service, "main")
    assert [t.id for t in listed] == [old, new]
    assert listed[0].handoff_version == 1 and listed[0].exchange_count == 1
    assert listed[0].compaction_count == 1
    assert listed[1].handoff_version is None and listed[1].to_dict()["exchange_count"] == 0


def test_rename_and_delete_are_for_the_person(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    tid = thread_of(service, agent)
    other = thread_of(service, agent, "Other")
    with pytest.raises(Forbidden):
        threads.rename_thread(service, agent, tid, "New name")
    with pytest.raises(Forbidden):
        threads.delete_thread(service, agent, tid)
    with pytest.raises(Conflict):
        threads.rename_thread(service, operator, tid, "OTHER")
    assert threads.rename_thread(service, operator, tid, "New name").thread.title == "New name"
    # Deleting keeps the exchanges (unfiled) and the sessions, drops the handoffs.
    threads.set_session_thread(service, agent, tid)
    episodes.log_exchange(service, agent, "user", "remember the deploy window")
    handoffs.write_handoff(service, agent, tid, "notes")
    threads.delete_thread(service, operator, tid)
    store = service.store_for("main")
    assert store.execute("SELECT count(*) FROM thread_handoffs").get == 0
    assert store.execute("SELECT thread_id FROM exchanges").get is None
    assert threads.session_thread(service, agent) is None
    assert [t.id for t in threads.list_threads(service, "main")] == [other]


# -- thread handoffs ---------------------------------------------------------------------


def test_overwrite_then_restore_a_version(service: MemoryService, agent: Caller) -> None:
    tid = thread_of(service, agent)
    first = handoffs.write_handoff(service, agent, tid, "# Plan\n\nfirst draft")
    second = handoffs.write_handoff(service, agent, tid, "# Plan\n\nsecond draft")
    assert (first.handoff.version, second.handoff.version) == (1, 2)
    current = handoffs.read_handoff(service, "main", tid)
    assert current is not None and current.markdown == "# Plan\n\nsecond draft"
    # Reading never consumes a thread handoff.
    assert handoffs.read_handoff(service, "main", tid) == current

    restored = handoffs.restore_handoff(service, agent, tid, 1)
    assert restored.created and restored.handoff.version == 3
    assert restored.handoff.markdown == "# Plan\n\nfirst draft"
    # A restore is a version too, so it can be undone the same way.
    history = handoffs.handoff_history(service, "main", tid)
    assert [h.version for h in history] == [3, 2, 1]
    assert history[1].markdown == "# Plan\n\nsecond draft"
    assert handoffs.restore_handoff(service, agent, tid, 3).created is False
    diff = handoffs.handoff_diff(history[1], history[0])
    assert "-second draft" in diff and "+first draft" in diff
    assert "handoff_restore" in audit_actions(service)
    with pytest.raises(NotFound):
        handoffs.restore_handoff(service, agent, tid, 9)


def test_compaction_count_and_unchanged_writes(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    tid = thread_of(service, agent)
    assert handoffs.write_handoff(service, agent, tid, "a").handoff.compaction_count == 1
    assert handoffs.write_handoff(service, agent, tid, "b").handoff.compaction_count == 2
    # The person's edit is not a compaction; the count carries forward.
    edit = handoffs.write_handoff(service, operator, tid, "b, edited")
    assert edit.handoff.compaction_count == 2 and edit.handoff.author == "operator"
    same = handoffs.write_handoff(service, agent, tid, "b, edited\n\n")
    assert not same.created and same.handoff.version == 3


def test_base_version_refuses_a_lost_update(service: MemoryService, agent: Caller) -> None:
    tid = thread_of(service, agent)
    handoffs.write_handoff(service, agent, tid, "one", base_version=0)
    with pytest.raises(Conflict) as err:
        handoffs.write_handoff(service, agent, tid, "stale edit", base_version=0)
    assert err.value.data["current_version"] == 1
    handoff = handoffs.read_handoff(service, "main", tid)
    assert handoff is not None and handoff.markdown == "one"
    assert handoffs.write_handoff(service, agent, tid, "two", base_version=1).created


def test_old_versions_are_pruned_past_the_limit(
    service: MemoryService, agent: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(handoffs, "MAX_HANDOFF_VERSIONS", 3)
    tid = thread_of(service, agent)
    for n in range(5):
        handoffs.write_handoff(service, agent, tid, f"version text {n}")
    assert [h.version for h in handoffs.handoff_history(service, "main", tid)] == [5, 4, 3]
    with pytest.raises(NotFound):
        handoffs.read_handoff(service, "main", tid, 1)


def test_handoff_limits_redaction_and_refusal_keep_the_last_good_text(
    service: MemoryService, agent: Caller
) -> None:
    tid = thread_of(service, agent)
    handoffs.write_handoff(service, agent, tid, "good text")
    # The limit is in bytes: 22,000 three-byte characters are over 64 KiB.
    with pytest.raises(TooLarge) as err:
        handoffs.write_handoff(service, agent, tid, "€" * 22_000)
    assert err.value.data["limit"] == MAX_HANDOFF_BYTES
    with pytest.raises(Refused):
        handoffs.write_handoff(service, agent, tid, "note: the password is hunter2")
    with pytest.raises(InvalidParams):
        handoffs.write_handoff(service, agent, tid, " \n\t ")
    handoff = handoffs.read_handoff(service, "main", tid)
    assert handoff is not None and handoff.markdown == "good text"

    key = "sk-proj-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF"
    out = handoffs.write_handoff(service, agent, tid, f"deploy\r\nwith {key}\x1b[31m\n")
    assert out.redacted and out.to_dict()["redacted"] == 1
    stored = handoffs.read_handoff(service, "main", tid)
    assert stored is not None and key not in stored.markdown
    assert stored.markdown == "deploy\nwith [SECRET_REDACTED][31m"
    rows = audit.recent(service.store_for("main"), limit=50)
    assert any(r.action == "secret_redacted" for r in rows)
    assert all(key not in json.dumps(r.to_dict()) for r in rows)


def test_export_writes_the_file_and_an_interrupted_export_leaves_the_old_one(
    service: MemoryService, operator: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tid = thread_of(service, operator)
    handoffs.write_handoff(service, operator, tid, "# Plan\n\nthe new text")
    target = tmp_path / "export" / "HANDOFF.md"
    target.parent.mkdir()
    target.write_text("the old text\n", encoding="utf-8")
    target.chmod(0o644)

    def crash_before_rename(src: Any, dst: Any) -> None:
        raise OSError(errno.EIO, "simulated failure before rename")

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", crash_before_rename)
        with pytest.raises(StorageError, match="unchanged"):
            handoffs.export_handoff(service, operator, tid, target)
    assert target.read_text(encoding="utf-8") == "the old text\n"
    assert [p.name for p in target.parent.iterdir()] == ["HANDOFF.md"]  # no temp file left

    handoffs.export_handoff(service, operator, tid, target)
    assert target.read_text(encoding="utf-8") == "# Plan\n\nthe new text\n"
    assert target.stat().st_mode & 0o777 == 0o644  # an existing file keeps its mode
    fresh = tmp_path / "export" / "new.md"
    handoffs.export_handoff(service, operator, tid, fresh, version=1)
    assert fresh.stat().st_mode & 0o777 == 0o600
    # Through a symlink, the file it points to is replaced and the link stays.
    link = tmp_path / "link.md"
    link.symlink_to(fresh)
    handoffs.write_handoff(service, operator, tid, "third text")
    handoffs.export_handoff(service, operator, tid, link)
    assert link.is_symlink() and fresh.read_text(encoding="utf-8") == "third text\n"
    assert "handoff_export" in audit_actions(service)


def test_export_without_a_handoff_is_not_found(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    tid = thread_of(service, operator)
    with pytest.raises(NotFound):
        handoffs.export_handoff(service, operator, tid, tmp_path / "x.md")
    assert not (tmp_path / "x.md").exists()


# -- session handoffs ----------------------------------------------------------------------


def test_session_handoff_is_delivered_exactly_once(
    service: MemoryService, operator: Caller
) -> None:
    first = new_agent(service)
    tid = continuity.enter_thread(service, first, "Project X").thread
    assert tid is not None
    stored = session_handoffs.end_session_with_handoff(service, first, "Left off at step 3.")
    assert stored is not None and stored.thread_id == tid.id

    # The person's sessions only peek; they never consume what was left for the agent.
    assert session_handoffs.take_session_handoff(service, operator) is None
    peeked = session_handoffs.peek_session_handoff(service, "main", tid.id)
    assert peeked is not None and peeked.consumed_by is None

    # Another thread's session, and an unthreaded one, do not get it.
    elsewhere = new_agent(service)
    assert continuity.enter_thread(service, elsewhere, "Elsewhere").session_handoff is None
    assert continuity.enter_thread(service, new_agent(service), None).session_handoff is None

    second = new_agent(service)
    entry = continuity.enter_thread(service, second, tid.id)
    assert entry.caller.thread_id == tid.id and second.thread_id is None
    assert entry.session_handoff is not None
    assert entry.session_handoff.markdown == "Left off at step 3."
    assert entry.session_handoff.consumed_by == second.session_id
    # It stays readable by the session that took it, and only by that one.
    assert session_handoffs.delivered_session_handoff(service, second) == entry.session_handoff
    third = new_agent(service)
    assert continuity.enter_thread(service, third, "project x").session_handoff is None
    assert session_handoffs.delivered_session_handoff(service, third) is None
    assert session_handoffs.latest_session_handoff(service, "main", tid.id) is not None
    assert "handoff_deliver" in audit_actions(service)


def test_the_newest_of_several_pending_handoffs_is_delivered(service: MemoryService) -> None:
    a, b = new_agent(service), new_agent(service)
    session_handoffs.end_session_with_handoff(service, a, "from a")
    session_handoffs.end_session_with_handoff(service, b, "from b")
    got = session_handoffs.take_session_handoff(service, new_agent(service))
    assert got is not None and got.markdown == "from b"
    assert session_handoffs.take_session_handoff(service, new_agent(service)) is None


def test_session_end_handoff_rules(service: MemoryService) -> None:
    doomed = new_agent(service)
    with pytest.raises(Refused):
        session_handoffs.end_session_with_handoff(service, doomed, "the api key is abc123xyz")
    store = service.store_for("main")
    state = "SELECT end_state FROM sessions WHERE id = ?"
    # Refused before ending, so the agent can fix the handoff and end again.
    assert store.execute(state, (doomed.session_id,)).get == "open"
    assert session_handoffs.end_session_with_handoff(service, doomed, "  \n") is None
    assert store.execute(state, (doomed.session_id,)).get == "ended"
    assert store.execute("SELECT count(*) FROM session_handoffs").get == 0
    with pytest.raises(Conflict):
        session_handoffs.write_session_handoff(service, doomed, "too late")


RACER = textwrap.dedent(
    """
    import pathlib, sys, time
    from core.continuity import session_handoffs
    from core.continuity import threads
    from core.model.entries import Actor, utc_now
    from core.storage.paths import DataDir
    from core.service import MemoryService
    svc = MemoryService(DataDir(pathlib.Path(sys.argv[1])))
    me = svc.open_session("main", Actor.AGENT, "racer")
    threads.set_session_thread(svc, me, sys.argv[2])
    start = float(sys.argv[3])
    while time.time() < start:
        time.sleep(0.001)
    got = session_handoffs.take_session_handoff(svc, me)
    print("got" if got else "none", flush=True)
    svc.close()
    """
)


@pytest.mark.slow
def test_racing_sessions_in_separate_processes_get_it_once(tmp_path: Path) -> None:
    svc = MemoryService(DataDir(tmp_path))
    try:
        leaving = new_agent(svc)
        thread = continuity.enter_thread(svc, leaving, "Race").thread
        assert thread is not None
        session_handoffs.end_session_with_handoff(svc, leaving, "only one of you gets this")
    finally:
        svc.close()
    start = time.time() + 2.0
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path), thread.id, str(start)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for _ in range(4)
    ]
    outcomes = []
    for proc in racers:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outcomes.append(out.strip())
    assert sorted(outcomes) == ["got", "none", "none", "none"]


KILLED = textwrap.dedent(
    """
    import pathlib, sys
    from core.continuity import context as continuity
    from core.continuity import episodes
    from core.continuity import handoffs
    from core.model.entries import Actor, utc_now
    from core.storage.paths import DataDir
    from core.service import MemoryService
    svc = MemoryService(DataDir(pathlib.Path(sys.argv[1])))
    me = svc.open_session("main", Actor.AGENT, "doomed")
    entry = continuity.enter_thread(svc, me, "Project X")
    print("took", entry.session_handoff is not None, flush=True)
    i = 0
    while True:
        episodes.log_exchange(svc, me, "user", f"turn {i} about the migration")
        print("exchange", i, flush=True)  # acknowledged only after the commit
        text = f"# Plan\\n\\nstep {i} done\\n\\n- [ ] step {i + 1}\\n" + "padding " * 2000
        handoffs.write_handoff(svc, me, entry.thread.id, text)
        print("handoff", i, flush=True)
        i += 1
    """
)


@pytest.mark.slow
def test_a_session_killed_mid_conversation_leaves_the_last_good_handoff(tmp_path: Path) -> None:
    svc = MemoryService(DataDir(tmp_path))
    try:
        before = new_agent(svc)
        thread = continuity.enter_thread(svc, before, "Project X").thread
        assert thread is not None
        handoffs.write_handoff(svc, before, thread.id, "# Plan\n\nthe first good plan")
        session_handoffs.end_session_with_handoff(svc, before, "handed to the next session")
    finally:
        svc.close()

    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED, str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    logged: list[int] = []
    written: list[int] = []
    for line in proc.stdout:
        kind, _, value = line.strip().partition(" ")
        if kind == "took":
            assert value == "True"
        elif kind == "exchange":
            logged.append(int(value))
        elif kind == "handoff":
            written.append(int(value))
            if len(written) == 20:
                os.kill(proc.pid, signal.SIGKILL)
                break
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    svc = MemoryService(DataDir(tmp_path))
    try:
        store = svc.store_for("main")
        assert store.execute("PRAGMA integrity_check").get == "ok"
        nxt = new_agent(svc)
        entry = continuity.enter_thread(svc, nxt, thread.id)
        handoff = entry.handoff
        assert handoff is not None
        # The current text is one whole write, at least as new as the last acknowledged.
        step = int(handoff.markdown.split("step ")[1].split()[0])
        assert step >= written[-1]
        assert handoff.markdown.startswith(f"# Plan\n\nstep {step} done\n\n- [ ] step {step + 1}")
        assert handoff.markdown.endswith("padding")
        history = handoffs.handoff_history(svc, "main", thread.id)
        assert history[-1].markdown == "# Plan\n\nthe first good plan"
        # Everything it logged is still there, and still searchable.
        texts = {e.text for e in episodes.thread_exchanges(svc, "main", thread.id, limit=10_000)}
        assert {f"turn {i} about the migration" for i in logged} <= texts
        assert episodes.search_exchanges(svc, nxt, "migration", limit=50)
        # The earlier session handoff went to the killed session; it is not delivered twice.
        assert entry.session_handoff is None
        sections = dict(continuity.session_brief_sections(svc, entry.caller))
        assert f"step {step} done" in sections["Thread handoff: Project X"]
    finally:
        svc.close()


# -- open threads ----------------------------------------------------------------------------


def test_open_threads_are_extracted_from_handoff_text() -> None:
    text = textwrap.dedent(
        """
        # Status
        The API is migrated. I will update the docs next. Nothing else.
        - [ ] add the retry test
        - [x] fix the flaky import
        * [ ] ask about the deploy window
        TODO: rotate the staging certificate
        We need to follow up with Dana about pricing.
        a todo list is not a commitment

        ## Next steps
        - ship 1.2
        1. tag the release

        ## Done
        - wrote the changelog

        ```
        # TODO inside code is not a commitment
        - [ ] neither is this
        ```
        """
    )
    assert extract_open_threads(text) == [
        "I will update the docs next.",
        "add the retry test",
        "ask about the deploy window",
        "TODO: rotate the staging certificate",
        "We need to follow up with Dana about pricing.",
        "ship 1.2",
        "tag the release",
    ]
    # Deduplicated across texts, case-blind.
    assert extract_open_threads("- [ ] Ship it", "- [ ] ship it") == ["Ship it"]


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("#-*[] x\n`~TODO Iwl.!?>1)\u2028\x85é")), max_size=400)
)
def test_extraction_never_raises_and_stays_bounded(text: str) -> None:
    items = extract_open_threads(text, text.upper())
    assert len(items) <= MAX_OPEN_THREADS
    for item in items:
        assert item and len(item) <= MAX_OPEN_THREAD_CHARS
        assert item == " ".join(item.split())


# -- the brief ---------------------------------------------------------------------------------


def _markdown_tokens(text: str) -> list[Any]:
    markdown_it = pytest.importorskip("markdown_it")
    return list(markdown_it.MarkdownIt("commonmark").parse(text))


def _headings(tokens: list[Any]) -> list[tuple[str, str]]:
    return [
        (tok.tag, tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open"
    ]


MARKDOWNISH = st.text(
    alphabet=st.sampled_from(list("#=-*+>`~<!-[]():1. \t\naZ\u2028\x0b|_\\")), max_size=300
)


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH)
def test_a_fenced_handoff_cannot_break_the_brief(body: str) -> None:
    body = screening.strip_controls(body)
    sections = [("Thread handoff: X", f"_note_\n\n{fenced(body)}"), ("Sentinel", "the end")]
    brief = build_brief(
        [], entry_count=0, config=NOW_CONFIG, now=utc_now(), extra_sections=sections
    )
    tokens = _markdown_tokens(brief.markdown)
    assert _headings(tokens) == [
        ("h2", "Memory Context"),
        ("h3", "Thread handoff: X"),
        ("h3", "Sentinel"),
    ]
    assert not any(t.type in ("html_block", "blockquote_open") for t in tokens)


@settings(max_examples=200, deadline=None)
@given(MARKDOWNISH, st.integers(min_value=200, max_value=600))
def test_a_cut_handoff_still_cannot_open_a_heading(body: str, limit: int) -> None:
    body = screening.strip_controls(body) + "\nfiller line" * 40
    config = Config(max_brief_chars=limit)
    sections = [("Thread handoff: X", fenced(body)), ("Sentinel", "the end")]
    brief = build_brief([], entry_count=0, config=config, now=utc_now(), extra_sections=sections)
    tokens = _markdown_tokens(brief.markdown)
    assert set(_headings(tokens)) <= {
        ("h2", "Memory Context"),
        ("h3", "Thread handoff: X"),
        ("h3", "Sentinel"),
    }
    assert not any(t.type == "html_block" for t in tokens)


@settings(max_examples=300, deadline=None)
@given(st.lists(MARKDOWNISH.map(" ".join).filter(str.strip), min_size=1, max_size=5))
def test_open_thread_items_stay_plain_list_items(items: list[str]) -> None:
    body = "\n".join(f"- {inline_safe(i)}" for i in items)
    tokens = _markdown_tokens(f"### Open threads\n\n{body}\n\n### Sentinel\n")
    assert _headings(tokens) == [("h3", "Open threads"), ("h3", "Sentinel")]
    assert sum(t.type == "list_item_open" for t in tokens) == len(items)
    assert not any(
        t.type in ("html_block", "fence", "code_block", "blockquote_open", "hr") for t in tokens
    )


def test_brief_sections_for_a_session(service: MemoryService) -> None:
    leaving = new_agent(service)
    tid = continuity.enter_thread(service, leaving, "Project X").thread
    assert tid is not None
    handoffs.write_handoff(
        service, leaving, tid.id, "## Status\n\n<!-- hidden\n- [ ] finish the importer"
    )
    session_handoffs.end_session_with_handoff(service, leaving, "# Last time\n\nTODO: answer Dana")

    # The person's preview shows what the next agent session would get, without taking it.
    preview = continuity.preview_brief_sections(service, "main", "project x")
    assert [title for title, _ in preview] == [
        "From the last session",
        "Open threads",
        "Thread handoff: Project X",
    ]
    assert session_handoffs.peek_session_handoff(service, "main", tid.id) is not None

    # So does any person's session put in the thread (ambry brief --thread).
    person = replace(service.open_session("main", Actor.OPERATOR, "cli"), thread_id=tid.id)
    assert continuity.session_brief_sections(service, person) == preview

    arriving = continuity.enter_thread(service, new_agent(service), "Project X").caller
    sections = continuity.session_brief_sections(service, arriving)
    assert sections == preview
    assert session_handoffs.peek_session_handoff(service, "main", tid.id) is None
    body = dict(sections)
    assert body["Open threads"] == "- TODO: answer Dana\n- finish the importer"
    assert "by the agent; 1 compaction" in body["Thread handoff: Project X"]
    brief = service.build_brief("main", extra_sections=sections)
    assert "```markdown\n## Status" in brief.markdown
    tokens = _markdown_tokens(brief.markdown)
    assert [h for h in _headings(tokens) if h[0] != "h2"] == [
        ("h3", "From the last session"),
        ("h3", "Open threads"),
        ("h3", "Thread handoff: Project X"),
    ]
    assert continuity.continuity_brief_sections(service, "main", None, None) == []
    threads.delete_thread(service, person, tid.id)
    assert continuity.session_brief_sections(service, arriving) == []


def test_an_agent_whose_thread_is_deleted_still_gets_its_brief(
    service: MemoryService, operator: Caller
) -> None:
    entry = continuity.enter_thread(service, new_agent(service), "Doomed plan")
    assert entry.thread is not None
    handoffs.write_handoff(service, entry.caller, entry.thread.id, "- [ ] zebra migration")
    episodes.log_exchange(service, entry.caller, "user", "we talked about the quokka")
    threads.delete_thread(service, operator, entry.thread.id)

    # The session still believes it is in the thread; its brief is the thread-less one.
    brief = service.brief(entry.caller).markdown
    assert "zebra" not in brief and "Doomed plan" not in brief
    assert "quokka" in brief  # the exchange stays, filed under no thread


def test_a_note_left_in_a_deleted_thread_reaches_no_other_session(
    service: MemoryService, operator: Caller
) -> None:
    entry = continuity.enter_thread(service, new_agent(service), "Doomed plan")
    assert entry.thread is not None
    threads.delete_thread(service, operator, entry.thread.id)

    with pytest.raises(NotFound, match="was deleted while this session worked in it"):
        session_handoffs.end_session_with_handoff(service, entry.caller, "- [ ] zebra step")
    # Refused, so the session is still open and can end without a note.
    assert session_handoffs.end_session_with_handoff(service, entry.caller, None) is None
    assert session_handoffs.peek_session_handoff(service, "main", None) is None
    later = continuity.enter_thread(service, new_agent(service), None)
    assert later.session_handoff is None


def test_fence_choice() -> None:
    assert fenced("plain").startswith("```markdown\n")
    assert fenced("has ``` inside").startswith("~~~markdown\n")
    assert fenced("``` and ~~~ and ````` too").startswith("``````markdown\n")


# -- command line ------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_threads_and_handoffs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    assert run(capsys, *d, "threads")[1].strip() == "no threads yet"
    # stdout is the id alone, so `tid=$(ambry threads open …)` holds it; before, it was
    # "thr-…  (created)". Finding the title again says so on stderr.
    code, out, err = run(capsys, *d, "threads", "open", "Project X")
    tid = out.strip()
    assert (code, out, err) == (0, f"{tid}\n", "") and threads.THREAD_ID.fullmatch(tid)
    assert run(capsys, *d, "threads", "open", "Project X") == (
        0,
        f"{tid}\n",
        "note: a thread titled 'Project X' already exists; this is its id\n",
    )
    code, out, err = run(capsys, *d, "--json", "threads", "open", "Project X")
    assert (code, err, json.loads(out)["created"]) == (0, "", False)
    # A title with the shape of an id is refused as the agent's thread_open refuses it.
    assert run(capsys, *d, "threads", "open", "thr-aaaaaaaaaaaa") == (
        1,
        "",
        "error: title 'thr-aaaaaaaaaaaa' has the shape of a thread id (thr- and 12 hex "
        "digits, in upper or lower case), which only thread ids may have: choose another "
        "title\n",
    )
    # An existing thread's id in upper case is no new title (it made a second thread),
    # for threads open and rename alike; where a thread is looked up, it is that id.
    for argv in (("open", tid.upper()), ("rename", tid, "THR-AAAAAAAAAAAA")):
        code, out, err = run(capsys, *d, "threads", *argv)
        assert (code, out) == (1, "") and "has the shape of a thread id" in err, argv
    code, out, _ = run(capsys, *d, "threads", "--json")
    assert [t["title"] for t in json.loads(out)["threads"]] == ["Project X"]

    source = tmp_path / "plan.md"
    source.write_text("# Plan\n\n- [ ] first step\n", encoding="utf-8")
    # The version alone, which the next write can give as --base-version.
    code, out, err = run(capsys, *d, "handoff", "write", "project x", str(source))
    assert (code, out, err) == (0, "1\n", "")
    # --create with the id of a thread that exists writes to it (it was refused as a
    # title shaped like an id); an unknown id is not found, not made a title.
    assert run(capsys, *d, "handoff", "write", tid, str(source), "--create")[:2] == (0, "1\n")
    code, _, err = run(capsys, *d, "handoff", "write", "thr-aaaaaaaaaaaa", str(source), "--create")
    assert (code, err) == (1, "error: no thread thr-aaaaaaaaaaaa in group main\n")
    assert run(capsys, *d, "handoff", "write", tid, str(source)) == (
        0,
        "1\n",
        "note: the text is already version 1's; no version was added\n",
    )
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("# Plan\n\nrevised\n"))
    assert run(capsys, *d, "handoff", "write", tid, "-", "--base-version", "1")[0] == 0
    code, _, err = run(capsys, *d, "handoff", "write", tid, str(source), "--base-version", "1")
    assert code == 1 and err.startswith("error: ") and "version 2" in err

    assert run(capsys, *d, "handoff", "show", "Project X")[1] == "# Plan\n\nrevised\n"
    code, out, _ = run(capsys, *d, "handoff", "show", "Project X", "--version", "1", "--json")
    assert json.loads(out)["markdown"] == "# Plan\n\n- [ ] first step"
    code, out, _ = run(capsys, *d, "handoff", "history", tid)
    assert out.startswith("v2 ") and "\nv1 " in out
    assert "+revised" in run(capsys, *d, "handoff", "diff", tid, "1")[1]
    assert run(capsys, *d, "handoff", "restore", tid, "1") == (
        0,
        "3\n",
        "note: restored version 1 as version 3\n",
    )
    assert run(capsys, *d, "handoff", "restore", tid, "1") == (
        0,
        "3\n",
        "note: version 1 is already the current text (version 3)\n",
    )

    target = tmp_path / "out" / "HANDOFF.md"
    target.parent.mkdir()  # a missing folder is refused, not made
    code, out, _ = run(capsys, *d, "handoff", "export", tid, str(target))
    assert code == 0 and target.read_text(encoding="utf-8") == "# Plan\n\n- [ ] first step\n"

    code, out, _ = run(capsys, *d, "threads", "--json")
    listed = json.loads(out)["threads"]
    assert listed[0]["id"] == tid and listed[0]["handoff_version"] == 3
    assert run(capsys, *d, "threads", "rename", tid, "Project Y")[0] == 0
    code, _, err = run(capsys, *d, "handoff", "show", "Project X")
    assert code == 1 and "no thread titled" in err
    # A new title is written to only with --create, and the refusal says so (it said
    # "opening a thread by its title creates it", which no option of this command does).
    assert run(capsys, *d, "handoff", "write", "Brand new", str(source)) == (
        1,
        "",
        "error: no thread titled 'Brand new' in group main; add --create to create it\n",
    )
    code, out, err = run(capsys, *d, "handoff", "write", "Brand new", str(source), "--create")
    new_tid = err.removeprefix("note: created the thread 'Brand new', ").strip()
    assert (code, out) == (0, "1\n") and threads.THREAD_ID.fullmatch(new_tid)
    code, _, err = run(capsys, *d, "handoff", "write", tid, str(tmp_path / "missing.md"))
    assert code == 1 and "cannot read" in err

    # Deleting asks for confirmation; without a terminal it needs --yes.
    code, _, err = run(capsys, *d, "threads", "delete", tid)
    assert code == 1 and "--yes" in err
    assert run(capsys, *d, "threads", "delete", tid, "--yes")[0] == 0
    code, out, _ = run(capsys, *d, "threads", "list", "--limit", "5", "--json")
    assert [t["title"] for t in json.loads(out)["threads"]] == ["Brand new"]
    assert main([*d, "handoff"]) == 2  # the subcommand is required
    assert "required: ACTION" in capsys.readouterr().err


def test_cli_exchanges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    try:
        me = new_agent(svc)
        continuity.enter_thread(svc, me, "Project X")
        episodes.log_exchange(svc, me, "user", "Use pnpm for the frontend, not npm")
        episodes.log_exchange(svc, me, "assistant", "Switched the frontend to pnpm")
    finally:
        svc.close()
    d = ["--data-dir", str(data.root)]
    code, out, _ = run(capsys, *d, "exchanges", "pnpm", "--speaker", "user")
    assert code == 0 and "[user] (Project X, sess-" in out and "Switched" not in out
    code, out, _ = run(capsys, *d, "exchanges", "--thread", "Project X", "--json")
    assert [e["speaker"] for e in json.loads(out)["results"]] == ["assistant", "user"]
    code, _, err = run(capsys, *d, "exchanges", "x", "--limit", "51")
    assert code == 1 and "limit" in err


def test_cli_handoff_write_says_when_it_replaced_an_agents_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    source = tmp_path / "plan.md"
    source.write_text("- [ ] my plan\n", encoding="utf-8")
    code, out, _ = run(capsys, *d, "threads", "open", "Project X")
    tid = out.strip()
    assert run(capsys, *d, "handoff", "write", tid, str(source))[1] == "1\n"
    # The person replacing their own text without --base-version is not told of it.
    source.write_text("- [ ] my plan, revised\n", encoding="utf-8")
    assert run(capsys, *d, "handoff", "write", tid, str(source)) == (0, "2\n", "")

    service = MemoryService(DataDir(tmp_path / "data"))
    try:
        agents = handoffs.write_handoff(
            service, new_agent(service), tid, "- [ ] the agent's plan"
        ).handoff
    finally:
        service.close()
    code, out, err = run(capsys, *d, "handoff", "write", tid, str(source))
    # Written for the person: the command that shows the kept text, no tool names. It
    # is on stderr, so `v=$(ambry handoff write …)` holds the version alone (before,
    # stdout held "thr-… handoff v4" and this note).
    assert (code, out, err) == (
        0,
        "4\n",
        f"note: this replaced version 3, which an agent session wrote at "
        f"{agents.created_at}; it is kept: ambry handoff show {tid} --version 3 "
        "(use --base-version to be refused instead of replacing)\n",
    )
    code, out, _ = run(capsys, *d, "handoff", "show", tid, "--version", "3")
    assert out.strip() == "- [ ] the agent's plan"

    # --json keeps the result as the tool returns it.
    service = MemoryService(DataDir(tmp_path / "data"))
    try:
        handoffs.write_handoff(service, new_agent(service), tid, "- [ ] the agent's next plan")
    finally:
        service.close()
    code, out, err = run(capsys, *d, "--json", "handoff", "write", tid, str(source))
    done = json.loads(out)
    assert (code, err) == (0, "")
    assert done["replaced"]["version"] == 5 and done["replaced"]["author"] == "agent"
    assert done["note"].startswith("this replaced version 5") and "base_version" in done["note"]
    # Each agent write is a compaction, counted in words that agree with the number.
    code, out, _ = run(capsys, *d, "handoff", "history", tid)
    counts = [line.rsplit(", ", 1)[1] for line in out.splitlines()]
    assert counts == ["2 compactions"] * 2 + ["1 compaction"] * 2 + ["0 compactions"] * 2


@pytest.mark.parametrize("words", [["week"], []])
def test_cli_exchanges_reads_on_with_offset(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    words: list[str],
) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    try:
        me = new_agent(svc)
        for fruit in ("apples", "pears", "plums"):
            episodes.log_exchange(svc, me, "user", f"Sam buys {fruit} every week")
    finally:
        svc.close()
    d = ["--data-dir", str(data.root), "exchanges", *words, "--mode", "keyword"]
    code, out, _ = run(capsys, *d, "--limit", "2")
    assert code == 0 and out.splitlines()[-1] == "(more follow: add --offset 2)"
    first = out.splitlines()[1:4:2]  # each turn is a heading line, then its text
    code, out, _ = run(capsys, *d, "--limit", "2", "--offset", "2")
    rest = out.splitlines()[1:2]
    assert code == 0 and len(out.splitlines()) == 2 and "more follow" not in out
    said = [f"  Sam buys {fruit} every week" for fruit in ("apples", "pears", "plums")]
    assert sorted(first + rest) == said
    # Past the last page: said as such, not as if nothing matched.
    code, out, _ = run(capsys, *d, "--offset", "3")
    assert (code, out) == (0, "no matching exchanges at --offset 3 or beyond\n")
    code, out, _ = run(capsys, *d, "--offset", "1000")
    assert (code, out) == (0, "no matching exchanges at --offset 1000 or beyond\n")
    # --json prints exchange_search's result: that more follow, or that more match
    # than paging reaches, is in it, as the tool says it.
    code, out, err = run(capsys, "--json", *d, "--limit", "2", "--offset", "1")
    turns = json.loads(out)["results"]
    assert code == 0 and len(turns) == 2 and all(t["text"].startswith("Sam buys") for t in turns)
    assert err == "" and "next_offset" not in json.loads(out)
    code, out, err = run(capsys, "--json", *d, "--limit", "1")
    assert (code, json.loads(out)["next_offset"], err) == (0, 1, "")
    monkeypatch.setattr(episodes, "MAX_EXCHANGE_OFFSET", 1)
    code, out, err = run(capsys, "--json", *d, "--limit", "1", "--offset", "1")
    page = json.loads(out)
    assert code == 0 and len(page["results"]) == 1 and page["truncated"] is True
    assert err == "" and "next_offset" not in page
