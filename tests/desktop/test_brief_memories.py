"""The Brief page's list of memories: from a line to its memory, and what was left out."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from core.model.config import Config
from core.model.entries import EntryType
from core.service import Caller, MemoryService
from desktop.brief.view import BriefPage
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs, add


def brief_page(qtbot: QtBot, window: MainWindow) -> BriefPage:
    window.go(Nav.BRIEF)
    page = window.brief
    qtbot.waitUntil(lambda: page.brief is not None)
    return page


def menu_item(menu: QMenu, text: str) -> None:
    for action in menu.actions():
        if action.text() == text:
            assert action.isEnabled()
            action.trigger()
            return
    raise AssertionError(f"no {text!r} in {[a.text() for a in menu.actions()]}")


def test_the_list_follows_the_lines_of_the_brief(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    fact = add(service, operator, "Deploys happen on Tuesdays")
    preference = add(service, operator, "Prefers short answers", EntryType.PREFERENCE)
    page = brief_page(qtbot, window)
    qtbot.waitUntil(lambda: len(page.memory_list.rows(page.memory_list.shown)) == 2)
    # The preference's line comes first in the markdown, so it comes first here.
    assert page.memory_list.rows(page.memory_list.shown) == [preference, fact]
    assert page.memory_list.rows(page.memory_list.left_out) == []
    left_out = page.memory_list.left_out
    assert left_out.child(0).text(0).startswith("Nothing left out")  # type: ignore[union-attr]
    # What the agent gets is what it got before: the same markdown, no ids in it.
    assert page.raw_view.toPlainText() == service.build_brief("main").markdown
    assert fact not in page.brief.markdown  # type: ignore[union-attr]


def test_enter_on_a_line_opens_its_memory_on_the_memories_page(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    add(service, operator, "Prefers short answers", EntryType.PREFERENCE)
    fact = add(service, operator, "Deploys happen on Tuesdays")
    page = brief_page(qtbot, window)
    tree = page.memory_list
    qtbot.waitUntil(lambda: fact in tree.rows(tree.shown))
    tree.setFocus()
    assert tree.select_id(fact)
    qtbot.keyClick(tree, Qt.Key.Key_Return)
    assert window.nav.currentRow() == Nav.MEMORIES
    editor = window.browser.editor
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.id == fact)


def test_pin_from_the_brief_pins_the_memory(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    fact = add(service, operator, "Deploys happen on Tuesdays")
    page = brief_page(qtbot, window)
    tree = page.memory_list
    qtbot.waitUntil(lambda: fact in tree.rows(tree.shown))
    tree.select_id(fact)
    menu_item(tree.menu(), "Pin")
    assert service.get("main", fact).pinned
    # The menu now offers the way back.
    tree.select_id(fact)
    menu_item(tree.menu(), "Unpin")
    assert not service.get("main", fact).pinned


def test_delete_from_the_brief_asks_and_ctrl_z_brings_it_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    fact = add(service, operator, "Deploys happen on Tuesdays")
    page = brief_page(qtbot, window)
    tree = page.memory_list
    qtbot.waitUntil(lambda: fact in tree.rows(tree.shown))
    tree.setFocus()
    tree.select_id(fact)
    qtbot.keyClick(tree, Qt.Key.Key_Delete)
    assert dialogs.asked and "Deploys happen on Tuesdays" in dialogs.asked[-1]
    qtbot.waitUntil(lambda: tree.rows(tree.shown) == [])
    assert "No memories in the brief" in tree.shown.child(0).text(0)  # type: ignore[union-attr]
    assert window.commands.can_undo
    window.commands.undo()
    qtbot.waitUntil(lambda: tree.rows(tree.shown) == [fact])


def test_a_left_out_memory_is_listed_with_its_reason_and_opens(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    window.state.update_config(Config(max_brief_entries=3, max_brief_chars=600))
    # Brief order: behavioral first, then the most recent (stamped to the millisecond).
    long = add(service, operator, "Follow the house style: " + "x" * 700, EntryType.INSTRUCTION)
    preference = add(service, operator, "Deploys happen on Tuesdays", EntryType.PREFERENCE)
    facts = []
    for text in ("Fact A", "Fact B", "Fact C", "deploys happen on tuesdays."):
        time.sleep(0.005)
        facts.append(add(service, operator, text))
    beyond, b, c, twin = facts
    page = brief_page(qtbot, window)
    tree = page.memory_list
    qtbot.waitUntil(lambda: len(tree.rows(tree.left_out)) == 3)
    assert tree.rows(tree.shown) == [preference, c, b]
    reasons = [tree.left_out.child(i).text(1) for i in range(3)]  # type: ignore[union-attr]
    assert list(zip(tree.rows(tree.left_out), reasons, strict=True)) == [
        (long, "character limit"),
        (twin, "same as a line above"),
        (beyond, "entry limit"),
    ]
    # The agent's markdown is what it was: nothing about what was left out.
    assert page.raw_view.toPlainText() == service.build_brief("main").markdown
    assert "Fact A" not in page.raw_view.toPlainText()

    tree.setFocus()
    tree.select_id(long)
    menu_item(tree.menu(), "Open")
    assert window.nav.currentRow() == Nav.MEMORIES
    editor = window.browser.editor
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.id == long)
