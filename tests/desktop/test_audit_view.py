"""The audit page: rows as sentences, a search, links to what a row names, empty states."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.claims import gate, modes
from core.claims.model import Decision
from core.claims.verify import verify_claim
from core.continuity.episodes import log_exchange
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType, iso, utc_now
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.audit import Action, AuditRecord
from desktop.audit.sentences import PREDICATES, actions_described_by, sentence
from desktop.audit.view import ID_COLUMN, link_for
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets.times import short_time
from tests.desktop.conftest import add


def record(action: Action, actor: Actor, **kw: object) -> AuditRecord:
    return AuditRecord(1, iso(utc_now()), action.value, actor.value, "sess-1", [], None, None, **kw)  # type: ignore[arg-type]


def test_sentences_name_who_and_what() -> None:
    store = AuditRecord(
        1, "", "store", "agent", "sess-1", ["mem-1"], None, 57, {"type": "fact", "status": "active"}
    )
    assert (
        sentence(store, {"sess-1": "Claude Code"}) == "Agent Claude Code stored a fact (57 chars)"
    )
    assert sentence(store, {}) == "An agent stored a fact (57 chars)"
    held = AuditRecord(
        1, "", "store", "agent", None, [], None, 9, {"type": "instruction", "status": "candidate"}
    )
    assert sentence(held, {}) == "An agent stored an instruction (9 chars) for review"
    refused = AuditRecord(
        1, "", "refused", "operator", None, [], None, None, {"reason": "credential"}
    )
    assert sentence(refused, {}) == "You were refused: credential"
    decay = AuditRecord(1, "", "decay", "system", None, [], 3, None, {})
    assert sentence(decay, {}) == "Ambry lowered the confidence of 3 unused memories"
    undone = AuditRecord(1, "", "review_undo", "operator", None, [], 3, None, {})
    assert sentence(undone, {}) == "You returned 3 memories to review"
    replaced = AuditRecord(
        1, "", "review_undo", "operator", None, [], 1, None, {"current_again": 1}
    )
    assert sentence(replaced, {}) == (
        "You returned 1 memory to review and made 1 memory it replaced current again"
    )
    assert "review_undo" in actions_described_by("returned")
    accepted = AuditRecord(1, "", "review_accept", "operator", None, ["mem-1"], None, None, {})
    assert sentence(accepted, {}) == "You accepted 1 memory in review"
    # The agent did not review it: it stored, from a trusted source, the text awaiting review.
    stored_again = AuditRecord(
        1, "", "review_accept", "agent", None, ["mem-1"], None, None, {"stored_again": True}
    )
    assert sentence(stored_again, {}) == (
        "An agent stored the text of a memory awaiting review, which made it active"
    )
    deleted = AuditRecord(
        1, "", "delete", "agent", None, [], 1, None, {"current_again": ["mem-1"], "to": "trash"}
    )
    assert sentence(deleted, {}) == "An agent deleted 1 memory; an earlier version is current again"
    tagged = AuditRecord(1, "", "update", "agent", None, ["mem-1"], 2, None, {"field": "tags"})
    assert sentence(tagged, {}) == "An agent added 2 tags to a memory"
    mended = AuditRecord(1, "", "update", "system", None, [], 2, None, {"field": "superseded_by"})
    assert sentence(mended, {}) == (
        "Ambry relinked 2 memories whose newer version an earlier Ambry deleted"
    )
    forgot = AuditRecord(1, "", "forget", "operator", None, [], 1, None, {"exchanges": 2})
    assert sentence(forgot, {}) == "You forgot 1 memory and 2 exchanges"
    handoffs = {"exchanges": 2, "handoff_versions": 3, "session_handoffs": 1}
    forgot = AuditRecord(1, "", "forget", "operator", None, [], 1, None, handoffs)
    assert sentence(forgot, {}) == (
        "You forgot 1 memory, 2 exchanges, 3 handoff versions and 1 session handoff"
    )
    reread = AuditRecord(1, "", "handoff_read", "agent", None, [], None, None, {"scope": "session"})
    assert sentence(reread, {}) == (
        "An agent read the session handoff it received again (in no thread)"
    )
    odd = AuditRecord(1, "", "future_thing", "system", None, [], None, None, {})
    assert sentence(odd, {}) == "Ambry future thing"
    assert "store" in actions_described_by("stored") and "delete" not in actions_described_by(
        "stored"
    )
    assert actions_described_by("  ") == []


@pytest.mark.parametrize("action", list(Action))
def test_every_action_reads_as_a_sentence(action: Action) -> None:
    """A new action without a sentence would show as its code ("claim propose")."""
    assert action in PREDICATES
    bare = AuditRecord(1, "", action.value, "operator", None, [], None, None, {})
    said = sentence(bare, {})
    assert said.startswith("You ") and said != "You " + action.value.replace("_", " ")


def test_claim_actions_read_as_sentences() -> None:
    def said(action: Action, count: int | None = None, **detail: object) -> str:
        row = AuditRecord(1, "", action.value, "operator", None, ["clm-1"], count, None, detail)
        return sentence(row, {})

    assert said(Action.CLAIM_PROPOSE, 2, created=True) == "You proposed a claim (2 sources)"
    assert said(Action.CLAIM_PROPOSE, 1, created=False) == (
        "You proposed a known claim again, adding 1 source"
    )
    assert said(Action.CLAIM_EXTRACT, 2, handoffs=3, summaries=1, statements=5) == (
        "You looked for claims in 3 handoffs and 1 day summary: 5 statements, 2 new candidates"
    )
    decided = said(Action.CLAIM_DECIDE, decision="accept_verified", state="source_drifted")
    assert decided == "You verified a claim (sources had drifted)"
    assert said(Action.CLAIM_DECIDE, decision="reject") == "You rejected a claim"
    mode = said(Action.CLAIM_MODE, how="apply", previous="observe", mode="enforce")
    assert mode == "You set the claims mode to enforce (it was observe)"
    back = said(Action.CLAIM_MODE, how="rollback", previous="enforce", mode="observe")
    assert back == "You put the claims mode back to observe (it was enforce)"


@pytest.mark.parametrize(
    ("speaker", "words"),
    [("user", "a user turn"), ("assistant", "an assistant turn"), ("hour", "an hour turn")],
)
def test_the_article_goes_by_sound(speaker: str, words: str) -> None:
    row = AuditRecord(1, "", "exchange_log", "agent", None, [], None, 12, {"speaker": speaker})
    assert sentence(row, {}) == f"An agent logged {words} (12 chars)"


def test_claim_rows_read_as_sentences_and_open_the_claim(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    agent = service.open_session("main", Actor.AGENT, "Claude Code")
    said = log_exchange(service, agent, "user", "The cache is cold on Mondays.").exchange.id
    sources = [{"kind": "exchange", "id": said}]
    claim = gate.propose(
        service, agent, {"text": "The cache is cold on Mondays", "kind": "fact", "sources": sources}
    ).claim
    state = verify_claim(service.store_for("main"), claim).state
    gate.decide(
        service,
        operator,
        claim.id,
        Decision.ACCEPT,
        confirmed_text=claim.text,
        confirmed_state=state,
    )
    modes.apply(service, operator, "diagnostic", yes=True)
    window.go(Nav.AUDIT)
    page = window.audit
    qtbot.waitUntil(lambda: page.model.rowCount() >= 4)
    rows = {page.model.index(r, 1).data(): r for r in range(page.model.rowCount())}
    assert "Agent Claude Code logged a user turn (29 chars)" in rows
    assert "Agent Claude Code proposed a claim (1 source)" in rows
    assert "You verified a claim (sources matched exactly)" in rows
    assert "You set the claims mode to diagnostic (it was observe)" in rows
    assert not any("claim propose" in text or "claim decide" in text for text in rows)
    # The claim's id is a link, as a memory's is: the Claims page opens on it,
    # listing every claim since the candidates no longer hold a verified one.
    row = rows["You verified a claim (sources matched exactly)"]
    about = page.model.index(row, ID_COLUMN)
    assert about.data() == claim.id[:12]
    assert about.data(Qt.ItemDataRole.FontRole).underline()
    page.table.selectRow(row)
    assert f'href="claim:{claim.id}"' in page.detail.toHtml()
    page._on_click(about)
    assert window.nav.currentRow() == Nav.CLAIMS
    assert window.claims.selected_id() == claim.id


def test_session_rows_wait_behind_a_tick(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    """A command run in a terminal is a session of its own: its start and end are
    not listed around every useful row unless asked for, and stay in the log."""
    for text in ("Prefers tea", "Lives in Lyon"):
        cli = service.open_session("main", Actor.OPERATOR, "cli")
        add(service, cli, text)
        service.end_session(cli)
    window.go(Nav.AUDIT)
    page = window.audit
    qtbot.waitUntil(lambda: page.model.rowCount() >= 2)
    said = [page.model.index(r, 1).data() for r in range(page.model.rowCount())]
    assert said == ["You stored a fact (13 chars)", "You stored a fact (11 chars)"]
    assert not page.sessions_box.isChecked()
    page.sessions_box.setChecked(True)
    qtbot.waitUntil(lambda: page.model.rowCount() > 2)
    said = [page.model.index(r, 1).data() for r in range(page.model.rowCount())]
    assert said[:3] == [
        "You ended a session",
        "You stored a fact (13 chars)",
        "You started a session",
    ]
    page.sessions_box.setChecked(False)
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    # Picking a session action in Show lists it, ticked or not.
    page.action_box.setCurrentIndex(page.action_box.findData(Action.SESSION_END.value))
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    assert page.model.index(0, 1).data() == "You ended a session"
    # The store keeps every row: only the page leaves them out.
    kept = audit.recent(service.store_for("main"), limit=100, actions=[Action.SESSION_END.value])
    assert len(kept) == 2


def test_claim_links() -> None:
    assert link_for("clm-0a1b2c3d-0000") == "claim:clm-0a1b2c3d-0000"


def test_short_time_is_shorter_for_today() -> None:
    now = datetime.now().astimezone()
    assert short_time(iso(utc_now()), now) == now.strftime("%H:%M")
    last_year = now - timedelta(days=400)
    assert short_time(iso(last_year), now).startswith(str(last_year.year))


def test_search_and_empty_states(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    agent = service.open_session("main", Actor.AGENT, "Claude Code")
    service.store_entries(agent, [StoreRequest(EntryType.FACT, "Lives in Lyon", ())])
    add(service, operator, "Prefers tea")
    window.go(Nav.AUDIT)
    page = window.audit
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    assert page.stack.currentIndex() == 0
    qtbot.keyClicks(page.search, "claude")
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    assert page.model.index(0, 1).data() == "Agent Claude Code stored a fact (13 chars)"
    page.sessions_box.setChecked(True)
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    said = {page.model.index(r, 1).data() for r in range(2)}
    assert said == {
        "Agent Claude Code started a session",
        "Agent Claude Code stored a fact (13 chars)",
    }
    page.sessions_box.setChecked(False)
    page.search.clear()
    qtbot.keyClicks(page.search, "no such thing at all")
    qtbot.waitUntil(lambda: page.stack.currentWidget() is page.no_match_page)
    page.search.clear()
    qtbot.waitUntil(lambda: page.stack.currentIndex() == 0)
    window.state.set_group("empty")
    qtbot.waitUntil(lambda: page.model.rowCount() <= 1)
    # A new group's log holds only the window's own session start, if anything.
    if page.model.rowCount() == 0:
        assert page.stack.currentWidget() is page.empty_page


def test_ids_open_the_memory_and_the_receipt(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow, tmp_path: object
) -> None:
    entry = add(service, operator, "Works in the Lyon office")
    window.go(Nav.AUDIT)
    page = window.audit
    qtbot.waitUntil(lambda: page.model.rowCount() >= 1)
    row = next(r for r in range(page.model.rowCount()) if page.model.record_at(r).action == "store")
    page.table.selectRow(row)
    assert f'href="memory:{entry}"' in page.detail.toHtml()
    page._on_click(page.model.index(row, ID_COLUMN))
    assert window.nav.currentRow() == Nav.MEMORIES
    qtbot.waitUntil(lambda: window.browser.editor.entry is not None)
    assert window.browser.editor.entry.id == entry  # type: ignore[union-attr]
    window.go(Nav.AUDIT)
    page.open_link("receipt:att_0123456789abcdef")
    assert window.nav.currentRow() == Nav.ATTACHMENTS


def test_memory_search_with_no_match_says_so_and_clears(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    add(service, operator, "Prefers green tea")
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1)
    assert not browser.no_results.isVisible()
    qtbot.keyClicks(browser.filters.search, "zebra")
    qtbot.waitUntil(lambda: browser.no_results.isVisible())
    # First it looks by meaning; finding nothing there either, it says so.
    qtbot.waitUntil(lambda: "No memories match “zebra”" in browser.no_results.text())
    assert "Check the spelling" in browser.no_results.text()  # one word: a typo, likely
    browser.filters.search.setText("zebra crossing")
    qtbot.waitUntil(lambda: "Try fewer words" in browser.no_results.text())
    browser.no_results.linkActivated.emit("clear")
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1)
    assert browser.filters.search.text() == "" and not browser.no_results.isVisible()
