"""Right-click menus on the lists: each page's own commands, with their keys, for the selection."""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QAbstractItemView, QMenu
from pytestqt.qtbot import QtBot

from core.memory import trash
from core.model.entries import Actor, Status
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs, add


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

    # The reject is taken back as from its button: Ctrl+Z.
    page.undo()
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    assert service.get("main", second).status is Status.CANDIDATE
