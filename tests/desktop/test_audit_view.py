"""The audit page: rows as sentences, a search, links to what a row names, empty states."""

from __future__ import annotations

from datetime import datetime, timedelta

from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType, iso, utc_now
from core.service import Caller, MemoryService
from core.storage.audit import Action, AuditRecord
from desktop.audit.sentences import actions_described_by, sentence
from desktop.audit.view import ID_COLUMN
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
    forgot = AuditRecord(1, "", "forget", "operator", None, [], 1, None, {"exchanges": 2})
    assert sentence(forgot, {}) == "You forgot 1 memory and 2 exchanges"
    handoffs = {"exchanges": 2, "handoff_versions": 3, "session_handoffs": 1}
    forgot = AuditRecord(1, "", "forget", "operator", None, [], 1, None, handoffs)
    assert sentence(forgot, {}) == (
        "You forgot 1 memory, 2 exchanges, 3 handoff versions and 1 session handoff"
    )
    odd = AuditRecord(1, "", "future_thing", "system", None, [], None, None, {})
    assert sentence(odd, {}) == "Ambry future thing"
    assert "store" in actions_described_by("stored") and "delete" not in actions_described_by(
        "stored"
    )
    assert actions_described_by("  ") == []


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
    qtbot.waitUntil(lambda: page.model.rowCount() >= 4)
    assert page.stack.currentIndex() == 0
    qtbot.keyClicks(page.search, "claude")
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    said = {page.model.index(r, 1).data() for r in range(2)}
    assert said == {
        "Agent Claude Code started a session",
        "Agent Claude Code stored a fact (13 chars)",
    }
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
    qtbot.waitUntil(lambda: page.model.rowCount() >= 2)
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
