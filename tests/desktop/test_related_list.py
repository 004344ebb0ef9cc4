"""The "also related" list beside the entry editor, with the real model and vectors."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from core.model.entries import Actor
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow
from tests.desktop.conftest import Dialogs, add, embed_all


def test_selecting_a_memory_lists_its_relatives_and_links_open_them(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    walks = add(service, operator, "Luna the dog needs a long walk every evening")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 3)
    browser.open_entry(luna)
    qtbot.waitUntil(lambda: "Also related" in browser.related.text(), timeout=20_000)
    text = browser.related.text()
    assert "long walk" in text and "tax return" not in text
    browser.related.linkActivated.emit(walks)
    qtbot.waitUntil(lambda: browser.editor.entry is not None and browser.editor.entry.id == walks)
    qtbot.waitUntil(lambda: "Has a dog named Luna" in browser.related.text(), timeout=20_000)
    # A new, blank memory has no relatives: the list of the one shown before goes.
    browser.new_entry()
    assert browser.editor.is_new and browser.related.text() == ""


def test_a_memory_with_nothing_close_says_so(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    browser.open_entry(luna)
    qtbot.waitUntil(lambda: bool(browser.related.text()), timeout=20_000)
    assert browser.related.text() == "<i>No other memory is close in meaning.</i>"


def test_a_related_link_outside_the_list_asks_before_dropping_edits(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow, dialogs: Dialogs
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    walks = add(service, operator, "Luna the dog needs a long walk every evening")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    qtbot.keyClicks(browser.filters.search, "named")  # the list no longer holds `walks`
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1)
    browser.open_entry(luna)
    qtbot.waitUntil(lambda: "long walk" in browser.related.text(), timeout=20_000)
    browser.editor.content.setPlainText("Has a dog named Luna, a border collie")
    assert browser.editor.is_dirty()

    dialogs.answer = False  # keep editing
    browser.related.linkActivated.emit(walks)
    assert dialogs.asked == ["Discard your changes to this memory?"]
    assert browser.editor.entry is not None and browser.editor.entry.id == luna
    assert browser.editor.content.toPlainText().endswith("a border collie")

    dialogs.answer = True
    browser.related.linkActivated.emit(walks)
    assert browser.editor.entry is not None and browser.editor.entry.id == walks
    # The list beside it is now the relatives of the memory shown.
    qtbot.waitUntil(lambda: "named Luna" in browser.related.text(), timeout=20_000)
    assert "long walk" not in browser.related.text()


def test_a_long_word_in_the_list_is_cut_short_and_never_moves_the_panes(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    window.resize(1600, 1000)
    luna = add(service, operator, "Has a dog named Luna")
    add(service, operator, "Luna the dog needs a long walk every evening")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    browser.open_entry(luna)
    qtbot.waitUntil(lambda: "long walk" in browser.related.text(), timeout=20_000)
    qtbot.wait(100)
    widths = (browser.table.width(), browser.editor.width())
    word = "WOOF" * 60  # one word, far wider than the pane
    add(service, operator, f"Luna the dog says {word}")
    embed_all(service)
    browser.related.show_for("main", luna)
    qtbot.waitUntil(lambda: "WOOF" in browser.related.text(), timeout=20_000)
    qtbot.wait(100)
    assert (browser.table.width(), browser.editor.width()) == widths
    related = browser.related
    assert "says WOOFWOOF" in related.text() and "…</a>" in related.text()
    assert word not in related.text()
    # One line a memory, whatever its length: the editor above keeps its height.
    lines = related.text().count("<br>") + 1
    assert related.height() <= (lines + 1) * related.fontMetrics().lineSpacing()


def test_a_memory_deleted_while_shown_takes_its_relatives_with_it(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1)
    browser.open_entry(luna)
    # "No other memory is close in meaning.", or why search by meaning is off.
    qtbot.waitUntil(lambda: bool(browser.related.text()), timeout=20_000)
    terminal = service.open_session("main", Actor.OPERATOR, "cli")
    service.delete(terminal, luna)
    qtbot.waitUntil(lambda: browser.editor.idle.label.text() == "This memory was deleted.")
    assert browser.related.text() == ""


def test_tab_reaches_the_related_links_and_enter_opens_one(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    walks = add(service, operator, "Luna the dog needs a long walk every evening")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    browser.open_entry(luna)
    related = browser.related
    qtbot.waitUntil(lambda: "long walk" in related.text(), timeout=20_000)
    assert related.accessibleName() == "Also related"
    # Tab from the list reaches the links, as it does the audit log's.
    browser.table.setFocus()
    for _ in range(40):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        if QApplication.focusWidget() is related:
            break
    assert QApplication.focusWidget() is related
    with qtbot.waitSignal(related.open_requested) as opened:
        qtbot.keyClick(related, Qt.Key.Key_Return)
    assert opened.args == [walks]
    qtbot.waitUntil(lambda: browser.editor.entry is not None and browser.editor.entry.id == walks)


def test_a_related_list_without_links_is_no_tab_stop(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    browser.open_entry(luna)
    qtbot.waitUntil(lambda: bool(browser.related.text()), timeout=20_000)
    assert browser.related.focusPolicy() == Qt.FocusPolicy.NoFocus
