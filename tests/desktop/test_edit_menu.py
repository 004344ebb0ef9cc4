"""Undo and Delete in the Edit menu, the memory list's right-click menu, and the palette."""

from __future__ import annotations

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from core.service import MemoryService
from desktop.shell.main_window import MainWindow, Nav
from desktop.shell.palette import CommandPalette
from tests.desktop.conftest import Dialogs


def listed(window: MainWindow) -> list[str]:
    model = window.browser.model
    return [model.id_at(r) for r in range(model.rowCount())]


def edit_menu(window: MainWindow) -> QMenu:
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    menu = menus["Edit"]
    assert isinstance(menu, QMenu)
    return menu


def test_edit_menu_deletes_the_selection_and_undoes_it(
    qtbot: QtBot,
    filled: dict[str, str],
    window: MainWindow,
    service: MemoryService,
    dialogs: Dialogs,
) -> None:
    menu = edit_menu(window)
    undo, delete = window.acts["undo"], window.acts["delete"]
    assert menu.actions()[:2] == [undo, delete]
    assert undo.shortcut().toString() == "Ctrl+Z" and delete.shortcut().toString() == "Del"
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    assert not undo.isEnabled() and not delete.isEnabled()  # nothing to undo, nothing selected

    window.browser.open_entry(filled["tea"])
    assert delete.isEnabled()
    window.go(Nav.AUDIT)
    assert not delete.isEnabled()  # the list is not on screen
    window.go(Nav.MEMORIES)
    delete.trigger()
    assert dialogs.asked and "Prefers green tea" in dialogs.asked[-1]
    qtbot.waitUntil(lambda: filled["tea"] not in listed(window))
    assert undo.isEnabled()

    undo.trigger()
    qtbot.waitUntil(lambda: filled["tea"] in listed(window))
    assert service.get("main", filled["tea"]).content == "Prefers green tea"
    assert not undo.isEnabled()


def test_right_click_menu_opens_copies_and_deletes(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, dialogs: Dialogs
) -> None:
    browser = window.browser
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    browser.table.selectRow(browser.model.row_of(filled["luna"]) or 0)
    assert browser.selected_ids() == [filled["luna"]]
    actions = {a.text(): a for a in browser.row_menu().actions() if a.text()}
    assert list(actions) == ["Open", "Copy id", "Delete…"]

    actions["Copy id"].trigger()
    assert QGuiApplication.clipboard().text() == filled["luna"]
    actions["Open"].trigger()
    assert browser.editor.entry is not None and browser.editor.entry.id == filled["luna"]
    assert QApplication.focusWidget() is browser.editor.content

    browser.table.selectAll()
    many = {a.text(): a for a in browser.row_menu().actions() if a.text()}
    assert not many["Open"].isEnabled() and "Copy 4 ids" in many
    many["Delete…"].trigger()
    qtbot.waitUntil(lambda: listed(window) == [])


def test_palette_finds_deleting_the_selected_memory(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, dialogs: Dialogs
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    window.browser.open_entry(filled["office"])
    palette = CommandPalette(window.command_list(), window)
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.search, "del")
    names = palette.shown_names()
    assert "Delete the selected memories (asks first)" in names
    assert names.index("Delete the selected memories (asks first)") < names.index(
        "Delete group main…"
    )
    palette.list.setCurrentRow(names.index("Delete the selected memories (asks first)"))
    palette.run_selected()
    qtbot.waitUntil(lambda: filled["office"] not in listed(window))

    palette = CommandPalette(window.command_list(), window)
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.search, "undo")
    assert palette.shown_names() == ["Undo the last delete, reject or accept"]
    palette.run_selected()
    qtbot.waitUntil(lambda: filled["office"] in listed(window))
