"""Right-click menus on the lists: each page's own commands, with their keys, for the selection."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction, QContextMenuEvent, QGuiApplication
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMenu
from pytestqt.qtbot import QtBot

from core.attachments import attach as attachments
from core.attachments.receipts import SourceState, list_receipts
from core.claims import gate, records
from core.claims.model import ClaimStatus
from core.continuity import context as continuity
from core.continuity import handoffs, threads
from core.continuity.episodes import log_exchange
from core.memory import trash
from core.model.entries import Actor, Status
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import OFFSCREEN_NOISE, Dialogs, add


def select(view: QAbstractItemView, row: int) -> None:
    """Select ``row`` alone (``selectRow`` would add to the selection while a modifier
    key an earlier test pressed is still down)."""
    flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
    view.selectionModel().setCurrentIndex(
        view.model().index(row, 0), flags | QItemSelectionModel.SelectionFlag.Rows
    )


def items(menu: QMenu) -> dict[str, QAction]:
    """The menu's items by their text (separators left out)."""
    return {a.text(): a for a in menu.actions() if not a.isSeparator()}


def keys(menu: QMenu) -> dict[str, str]:
    """The key each item shows, by its text ("" for none)."""
    return {text: a.shortcut().toString() for text, a in items(menu).items()}


def right_click(qtbot: QtBot, view: QAbstractItemView, row: int) -> QMenu:
    """Right-click ``row`` of ``view`` as a person does; the menu that opens."""
    viewport = view.viewport()
    pos = view.visualRect(view.model().index(row, 0)).center()
    # The press selects the row; the window system then asks for the menu.
    qtbot.mousePress(viewport, Qt.MouseButton.RightButton, pos=pos)
    asked = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, viewport.mapToGlobal(pos))
    QApplication.sendEvent(viewport, asked)
    qtbot.waitUntil(lambda: isinstance(QApplication.activePopupWidget(), QMenu))
    menu = QApplication.activePopupWidget()
    assert isinstance(menu, QMenu)
    return menu


def close(qtbot: QtBot, menu: QMenu) -> None:
    menu.close()
    qtbot.waitUntil(lambda: QApplication.activePopupWidget() is None)


def agent_deletes(service: MemoryService, operator: Caller, *texts: str) -> list[str]:
    """Memories stored, then deleted by an agent: they wait in the trash."""
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    ids = [add(service, operator, text) for text in texts]
    for entry_id in ids:
        service.delete(agent, entry_id)
    return ids


def trash_rows(window: MainWindow) -> list[str]:
    table = window.trash.table
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_trash_menu_restores_and_deletes_for_good_after_asking(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    kept, gone = agent_deletes(service, operator, "Window note kept", "Window note gone")
    window.go(Nav.TRASH)
    page = window.trash
    qtbot.waitUntil(lambda: len(trash_rows(window)) == 2)
    page.table.clearSelection()
    nothing = items(page.row_menu())
    assert list(nothing) == ["Restore", "Copy id", "Delete for good…"]
    assert not any(a.isEnabled() for a in nothing.values())

    select(page.table, trash_rows(window).index("Window note gone"))
    menu = items(page.row_menu())
    assert all(a.isEnabled() for a in menu.values())
    dialogs.answer = False
    menu["Delete for good…"].trigger()
    assert dialogs.asked[-1].startswith("Delete 1 memory for good?")
    assert len(trash.list_trash(service, "main")) == 2  # the person said no
    dialogs.answer = True
    menu["Delete for good…"].trigger()
    qtbot.waitUntil(lambda: trash_rows(window) == ["Window note kept"])

    select(page.table, 0)
    items(page.row_menu())["Restore"].trigger()
    assert service.get("main", kept).content == "Window note kept"
    assert service.store_for("main").get(gone) is None
    qtbot.waitUntil(lambda: page.stack.currentWidget() is page.nothing)


def test_review_menu_decides_with_the_keys_shown(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    first = add(service, operator, "A forum says the server is in Oslo", low_trust=True)
    second = add(service, operator, "A page claims Luna is a cat", low_trust=True)
    window.go(Nav.REVIEW)
    page = window.review
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    select(page.table, page.model.row_of(second) or 0)
    menu = page.row_menu()
    assert keys(menu) == {"Accept": "A", "Reject": "R", "Defer": "D", "Copy id": ""}

    items(menu)["Reject"].trigger()
    assert service.store_for("main").get(second) is None
    assert service.get("main", first).status is Status.CANDIDATE
    assert page.selected_ids() == [first]
    items(page.row_menu())["Accept"].trigger()
    assert service.get("main", first).status is Status.ACTIVE

    # Each is taken back as from its button, the last first: Ctrl+Z.
    page.undo()
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    assert service.get("main", first).status is Status.CANDIDATE
    page.undo()
    qtbot.waitUntil(lambda: page.model.rowCount() == 2)
    assert service.get("main", second).status is Status.CANDIDATE


@pytest.fixture
def thread_id(service: MemoryService, agent_caller: Caller) -> str:
    entry = continuity.enter_thread(service, agent_caller, "Website redesign")
    assert entry.thread is not None
    handoffs.write_handoff(service, entry.caller, entry.thread.id, "# Redesign\n\n- ship it\n")
    return entry.thread.id


def test_threads_menu_renames_copies_and_deletes(
    qtbot: QtBot, service: MemoryService, window: MainWindow, thread_id: str, dialogs: Dialogs
) -> None:
    window.go(Nav.THREADS)
    page = window.threads
    qtbot.waitUntil(lambda: page.model.row_of(thread_id) is not None)
    page.select(thread_id)
    menu = page.row_menu()
    assert keys(menu) == {"Rename…": "F2", "Copy id": "", "Delete…": "Del"}

    items(menu)["Copy id"].trigger()
    assert QGuiApplication.clipboard().text() == thread_id
    dialogs.text = "Website relaunch"
    items(menu)["Rename…"].trigger()
    assert threads.get_thread(service, "main", thread_id).title == "Website relaunch"

    items(page.row_menu())["Delete…"].trigger()
    assert "Delete the thread “Website relaunch”" in dialogs.asked[-1]
    assert threads.list_threads(service, "main") == []


def test_attachments_menu_verifies_and_opens_the_selected_receipt(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
) -> None:
    plan = tmp_path / "reports" / "plan.md"
    plan.parent.mkdir()
    plan.write_text("# Plan\n\nShip on Friday.\n", encoding="utf-8")
    attachments.attach(service, agent_caller, str(plan))
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    opened: list[Path] = []
    page.open_folder = opened.append
    qtbot.waitUntil(lambda: page.selected() is not None)
    menu = items(page.row_menu())
    assert list(menu) == ["Open source folder", "Verify selected", "Copy id"]

    menu["Open source folder"].trigger()
    assert opened == [plan.parent]
    plan.write_text("# Plan\n\nShip on Monday.\n", encoding="utf-8")
    with qtbot.waitSignal(page.verifier.finished, timeout=5000):
        menu["Verify selected"].trigger()
    (receipt,) = list_receipts(service.store_for("main"), None, 10, 0)
    assert receipt.state is SourceState.CHANGED


def claim_rows(window: MainWindow) -> list[str]:
    table = window.claims.table
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_claims_menu_accepts_and_retracts_after_asking(
    qtbot: QtBot, service: MemoryService, window: MainWindow, dialogs: Dialogs
) -> None:
    agent = service.open_session("main", Actor.AGENT, "view-test")
    said = log_exchange(service, agent, "user", "The cache is cold on Mondays.").exchange.id
    args = {
        "text": "The cache is cold on Mondays",
        "kind": "fact",
        "sources": [{"kind": "exchange", "id": said}],
    }
    claim = gate.propose(service, agent, args).claim.id
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: claim_rows(window) == ["The cache is cold on Mondays"])
    select(page.table, 0)
    menu = page.row_menu()
    assert keys(menu) == {
        "Accept": "A",
        "Reject": "R",
        "Defer": "D",
        "Copy id": "",
        "Retract…": "",
    }
    assert not items(menu)["Retract…"].isEnabled()  # a candidate is not in the brief yet

    items(menu)["Accept"].trigger()
    store = service.store_for("main")
    assert records.get_claim(store, claim).status is ClaimStatus.VERIFIED
    page.filter.setCurrentIndex(1)
    qtbot.waitUntil(lambda: claim_rows(window) == ["The cache is cold on Mondays"])
    select(page.table, 0)
    verified = items(page.row_menu())
    assert not verified["Accept"].isEnabled() and verified["Retract…"].isEnabled()
    dialogs.answer = False
    verified["Retract…"].trigger()
    assert records.get_claim(store, claim).status is ClaimStatus.VERIFIED
    dialogs.answer = True
    verified["Retract…"].trigger()
    assert records.get_claim(store, claim).status is ClaimStatus.RETRACTED


def test_audit_menu_opens_what_a_row_names(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    entry = add(service, operator, "Works in the Lyon office")
    window.go(Nav.AUDIT)
    page = window.audit
    qtbot.waitUntil(lambda: page.model.rowCount() >= 1)
    row = next(r for r in range(page.model.rowCount()) if page.model.record_at(r).action == "store")
    select(page.table, row)
    menu = items(page.row_menu())
    assert list(menu) == ["Open memory", "Copy id"]
    menu["Copy id"].trigger()
    assert QGuiApplication.clipboard().text() == entry
    menu["Open memory"].trigger()
    assert window.nav.currentRow() == Nav.MEMORIES
    qtbot.waitUntil(lambda: window.browser.editor.entry is not None)
    assert window.browser.editor.entry.id == entry  # type: ignore[union-attr]


#: Puts one row in a list: the service, the person, an agent, a folder for files.
Fill = Callable[[MemoryService, Caller, Caller, Path], None]


def _candidate(service: MemoryService, operator: Caller, _agent: Caller, _tmp: Path) -> None:
    add(service, operator, "A page claims Luna is a cat", low_trust=True)


def _trashed(service: MemoryService, operator: Caller, _agent: Caller, _tmp: Path) -> None:
    agent_deletes(service, operator, "Window note")


def _thread(service: MemoryService, _operator: Caller, agent: Caller, _tmp: Path) -> None:
    continuity.enter_thread(service, agent, "Website redesign")


def _receipt(service: MemoryService, _operator: Caller, agent: Caller, tmp: Path) -> None:
    (tmp / "plan.md").write_text("# Plan\n", encoding="utf-8")
    attachments.attach(service, agent, str(tmp / "plan.md"))


def _claim(service: MemoryService, _operator: Caller, agent: Caller, _tmp: Path) -> None:
    said = log_exchange(service, agent, "user", "Lunch is at noon.").exchange.id
    args = {
        "text": "Lunch is at noon",
        "kind": "fact",
        "sources": [{"kind": "exchange", "id": said}],
    }
    gate.propose(service, agent, args)


def _logged(service: MemoryService, operator: Caller, _agent: Caller, _tmp: Path) -> None:
    add(service, operator, "Works in the Lyon office")


def row_with(view: QAbstractItemView, needle: str) -> int:
    """The first row with ``needle`` in one of its cells."""
    model = view.model()
    return next(
        r
        for r in range(model.rowCount())
        for c in range(model.columnCount())
        if needle in str(model.index(r, c).data() or "")
    )


@pytest.mark.qt_log_ignore(
    OFFSCREEN_NOISE,
    r"This plugin does not support raise\(\)",
    r"This plugin does not support grabbing the keyboard",
)
@pytest.mark.parametrize(
    ("nav", "page", "fill", "needle", "first"),
    [
        (Nav.REVIEW, "review", _candidate, "Luna", "Accept"),
        (Nav.TRASH, "trash", _trashed, "Window note", "Restore"),
        (Nav.THREADS, "threads", _thread, "Website redesign", "Rename…"),
        (Nav.ATTACHMENTS, "attachments", _receipt, "plan.md", "Open source folder"),
        (Nav.CLAIMS, "claims", _claim, "Lunch", "Accept"),
        (Nav.AUDIT, "audit", _logged, "stored", "Open memory"),
    ],
)
def test_a_right_click_on_a_row_selects_it_and_opens_its_menu(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
    nav: Nav,
    page: str,
    fill: Fill,
    needle: str,
    first: str,
) -> None:
    fill(service, operator, agent_caller, tmp_path)
    window.go(nav)
    table: QAbstractItemView = getattr(window, page).table
    qtbot.waitUntil(lambda: table.model().rowCount() > 0)
    table.clearSelection()
    row = row_with(table, needle)
    menu = right_click(qtbot, table, row)
    try:
        assert table.selectionModel().isRowSelected(row)
        assert menu.actions()[0].text() == first and menu.actions()[0].isEnabled()
    finally:
        close(qtbot, menu)
