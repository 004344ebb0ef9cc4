"""Forgetting a topic takes the handoffs that mention it: every kept version of a
thread's handoff and every session's, so no handoff_read, brief or history shows
it again; a handoff that does not mention it stays."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.cli.main import main
from core.continuity import episodes, forget_preview, handoffs, session_handoffs, threads
from core.continuity.context import enter_thread
from core.memory import forgetting
from core.model.caller import Caller
from core.model.entries import Actor
from core.semantic.hybrid import Mode
from core.service import MemoryService
from core.storage.paths import DataDir

TOPIC = "divorce"


def _ok(conn: Connection, method: str, params: dict[str, Any] | None = None) -> Any:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    reply = conn.handle_line(json.dumps(message).encode())
    assert reply.frame is not None
    decoded = json.loads(reply.frame)
    assert "result" in decoded, decoded
    return decoded["result"]


def _fails(conn: Connection, method: str, params: dict[str, Any]) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}
    reply = json.loads(conn.handle_line(json.dumps(message).encode()).frame or b"{}")
    assert "error" in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    """An agent connected over the protocol (no socket)."""
    conn = agent_dispatcher(service).connect()
    token = load_or_create_token(data_dir.token_file)
    _ok(conn, "hello", {"token": token, "group": "main", "client": "unit"})
    return conn


def _thread(conn: Connection, title: str, *versions: str) -> str:
    """A thread whose handoff was written as ``versions``, oldest first; its id."""
    thread_id = str(_ok(conn, "thread_open", {"title": title})["thread"]["id"])
    for markdown in versions:
        _ok(conn, "handoff_write", {"thread": thread_id, "markdown": markdown})
    return thread_id


def _versions(service: MemoryService, thread_id: str) -> list[int]:
    return [h.version for h in handoffs.handoff_history(service, "main", thread_id)]


def test_forget_takes_every_handoff_version_that_mentions_the_topic(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    alice = _thread(
        conn,
        "Alice",
        "- Planning the garden",
        "- Alice's divorce is final\n- Planning the garden",
        "- Alice talked about the divorces again\n- Planning the garden",  # stemmed
        "- Planning the garden\n- Lawyer: see the **Divorce** file",  # any case, in markdown
    )
    bob = _thread(conn, "Bob", "- Bob asked about Alice's divorce")
    carol = _thread(conn, "Carol", "- Carol's birthday", "- Carol's birthday is in May")

    plan = forgetting.plan_forget(service, "main", TOPIC)
    assert set(plan.handoff_versions) == {(alice, 2), (alice, 3), (alice, 4), (bob, 1)}
    assert plan.to_dict()["handoff_versions"] == 4
    assert not plan.empty and not plan.entries and not plan.exchange_ids
    service.forget(operator, plan)

    # The earlier version that does not mention it is current again; nothing else is left.
    read = _ok(conn, "handoff_read", {"thread": alice})
    assert read["handoff"]["version"] == 1
    assert read["handoff"]["markdown"] == "- Planning the garden"
    assert _versions(service, alice) == [1]
    assert _ok(conn, "handoff_read", {"thread": bob})["handoff"] is None
    assert _versions(service, bob) == []
    assert _versions(service, carol) == [2, 1]
    assert (
        "birthday is in May" in _ok(conn, "handoff_read", {"thread": carol})["handoff"]["markdown"]
    )
    for thread in (alice, bob, carol):
        shown = _ok(conn, "handoff_read", {"thread": thread})
        assert TOPIC not in json.dumps(shown).lower()
    _ok(conn, "thread_open", {"id": alice})
    assert TOPIC not in service.brief(conn.caller).markdown.lower()
    assert TOPIC not in str(service.store_for("main").execute("SELECT * FROM audit_log").fetchall())
    # Forgotten versions cannot be read by number either.
    assert _fails(conn, "handoff_read", {"thread": alice, "version": 4})["data"]["code"] == (
        "not_found"
    )


def _ended(service: MemoryService, thread: str, markdown: str) -> Caller:
    """An agent session in ``thread`` that ended leaving ``markdown``."""
    agent = service.open_session("main", Actor.AGENT, "tests")
    agent = enter_thread(service, agent, thread).caller
    session_handoffs.end_session_with_handoff(service, agent, markdown)
    return agent


def test_forget_takes_the_session_handoffs_that_mention_the_topic(
    service: MemoryService, operator: Caller
) -> None:
    _ended(service, "Alice", "Alice told me about her divorce.")
    # The next session took that one; it left one about the garden.
    taker = enter_thread(service, service.open_session("main", Actor.AGENT, "tests"), "Alice")
    assert taker.session_handoff is not None
    session_handoffs.end_session_with_handoff(service, taker.caller, "The garden needs water.")
    _ended(service, "Bob", "Bob's DIVORCE lawyer called back.")
    store = service.store_for("main")
    mentioning = [
        int(r[0])
        for r in store.execute("SELECT id FROM session_handoffs WHERE markdown LIKE '%ivorce%'")
    ]

    plan = forgetting.plan_forget(service, "main", TOPIC)
    assert sorted(plan.session_handoff_ids) == sorted(mentioning) and len(mentioning) == 2
    assert plan.to_dict()["session_handoffs"] == 2 and not plan.empty
    service.forget(operator, plan)

    left = [r[0] for r in store.execute("SELECT markdown FROM session_handoffs")]
    assert left == ["The garden needs water."]
    thread_of = {str(r[1]): str(r[0]) for r in store.execute("SELECT id, title FROM threads")}
    assert session_handoffs.peek_session_handoff(service, "main", thread_of["Bob"]) is None
    # The session that took the forgotten one cannot read it again.
    assert session_handoffs.delivered_session_handoff(service, taker.caller) is None
    nxt = enter_thread(service, service.open_session("main", Actor.AGENT, "tests"), "Alice")
    assert nxt.session_handoff is not None
    assert nxt.session_handoff.markdown == "The garden needs water."


def test_claims_drawn_from_a_forgotten_handoff_version_go_with_it(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    thread = _thread(conn, "Alice", "- Alice's divorce is final\n- Alice moved to Berlin")
    extracted = service.extract_claims(operator)
    assert len(extracted.claim_ids) == 2
    plan = forgetting.plan_forget(service, "main", TOPIC)
    # The one about Berlin does not state the topic, but it quotes the version.
    assert sorted(plan.claim_ids) == sorted(extracted.claim_ids)
    assert plan.handoff_versions == ((thread, 1),)
    service.forget(operator, plan)
    assert service.store_for("main").execute("SELECT count(*) FROM claims").get == 0


def test_a_topic_of_no_indexed_word_leaves_handoffs_alone(
    service: MemoryService, conn: Connection
) -> None:
    # "_" is a word to the topic's parser and nothing to the index's tokenizer: it
    # matches no memory or turn, and must not match every handoff.
    _thread(conn, "Alice", "- Planning the garden")
    _ended(service, "Bob", "Bob called.")
    assert forgetting.plan_forget(service, "main", "_").empty


def test_a_forgotten_version_number_is_not_given_to_other_text(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    alice = _thread(conn, "Alice", "- Planning the garden", "- Alice's divorce is final")
    bob = _thread(conn, "Bob", "- Bob asked about the divorce")
    service.forget(operator, forgetting.plan_forget(service, "main", TOPIC))
    assert _ok(conn, "handoff_read", {"thread": alice})["handoff"]["version"] == 1

    # A writer that started from the forgotten version is refused, even after
    # someone else wrote: numbering goes on after it.
    written = _ok(conn, "handoff_write", {"thread": alice, "markdown": "- Seeds ordered"})
    assert written["version"] == 3
    stale = {"thread": alice, "markdown": "- Alice's divorce is final!", "base_version": 2}
    assert _fails(conn, "handoff_write", stale)["data"]["current_version"] == 3
    assert _versions(service, alice) == [3, 1]
    # A thread left with no handoff starts after its forgotten versions too.
    fresh = {"thread": bob, "markdown": "- Bob's bike", "base_version": 0}
    assert _ok(conn, "handoff_write", fresh)["version"] == 2
    assert _versions(service, bob) == [2]


def test_the_cli_says_which_handoffs_it_will_forget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = DataDir(tmp_path / "data")
    data.ensure()
    service = MemoryService(data)
    try:
        operator = service.open_session("main", Actor.OPERATOR, "tests")
        alice, _ = threads.open_thread(service, operator, title="Alice")
        for text in ("- Planning the garden", "- Alice's divorce is final"):
            handoffs.write_handoff(service, operator, alice.id, text)
        bob, _ = threads.open_thread(service, operator, title="Bob")
        handoffs.write_handoff(service, operator, bob.id, "- Bob's divorce lawyer")
        left = _ended(service, "Alice", "We talked about the divorce.")
    finally:
        service.close()
    assert main(["--data-dir", str(data.root), "forget", TOPIC, "--yes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("This will forget 2 versions of thread handoffs and 1 session handoff:")
    assert f"{alice.id}  (handoff of 'Alice') v2 (current); v1 becomes current" in out
    assert f"{bob.id}  (handoff of 'Bob') v1 (current); the thread has no handoff left" in out
    [session_line] = [line for line in out if line.startswith("session handoff ")]
    assert f"('Alice', left by {left.session_id} at " in session_line
    assert session_line.endswith(") We talked about the divorce.")
    assert out[-1] == ("forgot 2 versions of thread handoffs and 1 session handoff")
    assert main(["--data-dir", str(data.root), "--json", "forget", TOPIC, "--yes"]) == 0
    assert json.loads(capsys.readouterr().out)["handoff_versions"] == 0


def test_the_last_versions_are_kept_by_count_across_forgotten_numbers(
    service: MemoryService,
    operator: Caller,
    conn: Connection,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(handoffs, "MAX_HANDOFF_VERSIONS", 3)
    alice = _thread(conn, "Alice", "- one", "- two", "- the divorce")
    service.forget(operator, forgetting.plan_forget(service, "main", TOPIC))
    for text in ("- four", "- five"):
        _ok(conn, "handoff_write", {"thread": alice, "markdown": text})
    assert _versions(service, alice) == [5, 4, 2]


def test_the_preview_names_what_the_plan_takes(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    alice = _thread(conn, "Alice", "- Planning the garden", "- Alice's divorce is final")
    bob = _thread(conn, "Bob", "- Bob's divorce lawyer")
    carol = _thread(conn, "Carol", "- Carol's divorce", "- Carol's birthday")
    note = _ended(service, "Alice", "We talked about the divorce.")
    agent = service.open_session("main", Actor.AGENT, "tests")
    trashed = service.store(agent, {"type": "fact", "content": "Dana's divorce is in May"})
    service.delete(agent, trashed.entry.id)  # an agent's delete: to the trash

    plan = forgetting.plan_forget(service, "main", TOPIC)
    shown = forget_preview.preview(service, "main", plan)
    assert shown.plan is plan
    assert [(i.id, i.preview) for i in shown.trashed] == [
        (trashed.entry.id, "Dana's divorce is in May")
    ]
    fates = {f.thread_id: f for f in shown.handoffs}
    assert (fates[alice].title, fates[alice].gone, fates[alice].outcome) == (
        "Alice",
        "v2 (current)",
        "v1 becomes current",
    )
    assert fates[bob].outcome == "the thread has no handoff left" and fates[bob].after is None
    assert (fates[carol].gone, fates[carol].outcome) == ("v1", "the current v2 stays")
    [going] = shown.session_notes
    assert going.thread_title == "Alice" and going.note.session_id == note.session_id
    assert plan.size == 5 and forgetting.plan_counts(plan) == (
        "1 memory in the trash, 3 versions of thread handoffs and 1 session handoff"
    )


def test_a_forgotten_turn_or_session_handoff_keeps_its_id(service: MemoryService) -> None:
    agent = service.open_session("main", Actor.AGENT, "agent")
    kept = episodes.log_exchange(service, agent, "user", "we planted tulips").exchange.id
    gone = episodes.log_exchange(service, agent, "user", f"the {TOPIC} plan").exchange.id
    entry = enter_thread(service, agent, "Garden")
    ended = session_handoffs.end_session_with_handoff(service, entry.caller, f"{TOPIC} next")
    assert ended is not None
    operator = service.open_session("main", Actor.OPERATOR, "tests")
    service.forget(operator, forgetting.plan_forget(service, "main", TOPIC))
    again = service.open_session("main", Actor.AGENT, "agent")
    fresh = episodes.log_exchange(service, again, "user", "a new turn").exchange.id
    # The newest turn was forgotten: its id names no other turn, now or later.
    assert fresh > gone > kept
    entry = enter_thread(service, again, "Garden")
    later = session_handoffs.end_session_with_handoff(service, entry.caller, "next steps")
    assert later is not None and later.id > ended.id


def test_forget_takes_the_topic_out_of_thread_titles_and_speaker_names(
    service: MemoryService, data_dir: DataDir
) -> None:
    agent = service.open_session("main", Actor.AGENT, "agent")
    entry = enter_thread(service, agent, "Plughwomp plans")
    said = episodes.log_exchange(
        service, entry.caller, "user", "ferns need water", name="Plughwomp", turn="plughwomp-1"
    ).exchange.id
    other = episodes.log_exchange(service, entry.caller, "user", "ferns again", name="Ana")
    plan = forgetting.plan_forget(service, "main", "plughwomp")
    assert plan.thread_titles == ((entry.thread.id, "Plughwomp plans"),)
    assert plan.speaker_names == ("Plughwomp",) and plan.turn_labels == (said,)
    assert "1 thread title" in forgetting.plan_counts(plan)
    operator = service.open_session("main", Actor.OPERATOR, "tests")
    service.forget(operator, plan)
    # The thread and its turns stay; the word does not.
    thread = threads.get_thread(service, "main", entry.thread.id)
    assert thread.title == f"Untitled {entry.thread.id}"
    kept = {
        h.exchange.id: h.exchange
        for h in episodes.find_exchanges(service.store_for("main"), "ferns", mode=Mode.KEYWORD)
    }
    assert kept[said].name is None and kept[said].turn is None
    assert kept[other.exchange.id].name == "Ana"
    service.close()
    for path in data_dir.root.rglob("*.sqlite*"):
        assert b"lughwomp" not in path.read_bytes(), path


def test_the_cli_says_what_upgrade_copies_still_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    assert main([*d, "store", f"the {TOPIC} papers are signed"]) == 0
    capsys.readouterr()
    assert main([*d, "forget", TOPIC, "--yes"]) == 0
    assert "copies upgrades left" not in capsys.readouterr().err
    assert main([*d, "store", f"the {TOPIC} lawyer called"]) == 0
    db = tmp_path / "data" / "memory" / "main.sqlite"
    copy = db.with_name("main.sqlite.bak-v10")
    copy.write_bytes(db.read_bytes())
    capsys.readouterr()
    assert main([*d, "forget", TOPIC, "--yes"]) == 0
    err = capsys.readouterr().err
    assert "note: the copies upgrades left (main.sqlite.bak-v10, in " in err
    assert "delete them once this version has proved itself" in err


def test_the_cli_lists_the_turns_it_will_forget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.continuity import forget_preview

    monkeypatch.setattr(forget_preview, "TURNS_SHOWN", 2)
    data = DataDir(tmp_path / "data")
    data.ensure()
    service = MemoryService(data)
    try:
        agent = service.open_session("main", Actor.AGENT, "agent")
        entry = enter_thread(service, agent, "Garden")
        for n in range(3):
            episodes.log_exchange(
                service, entry.caller, "user", f"the {TOPIC} call {n}", name="Ana"
            )
    finally:
        service.close()
    assert main(["--data-dir", str(data.root), "forget", TOPIC, "--yes"]) == 0
    out = capsys.readouterr().out.splitlines()
    turns = [line for line in out if line.startswith("turn ")]
    assert len(turns) == 2 and turns[0].endswith(f"(Garden, Ana) the {TOPIC} call 0")
    assert "(and 1 more turn)" in out
