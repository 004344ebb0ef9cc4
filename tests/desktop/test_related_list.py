"""The "also related" list beside the entry editor, with the real model and vectors."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow
from tests.desktop.conftest import add, embed_all


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
