"""Clear from the app: turns, memories or everything, counted first, asked (twice for all)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from core.continuity import session_handoffs, threads
from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.memory.forgetting import Scope, clear_counts
from core.model.entries import Actor
from core.service import Caller, MemoryService
from desktop.settings.clear_dialog import ClearDialog
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets import messages
from tests.desktop.conftest import Dialogs, add
from tests.desktop.test_browser import listed, select

JOB_MS = 10_000


def opened(qtbot: QtBot, window: MainWindow) -> ClearDialog:
    """Edit → Clear turns, memories or everything…, once its counts are on screen."""
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    edit = menus["Edit"]
    assert isinstance(edit, QMenu)
    [clear] = [a for a in edit.actions() if a.text() == "Clear turns, memories or everything…"]
    panel = window.settings.data_panel
    if panel.clear_dialog is None:
        clear.trigger()
        dialog = panel.clear_dialog
        assert dialog is not None
        qtbot.waitUntil(lambda: bool(dialog.counts), timeout=JOB_MS)
    else:
        dialog = panel.clear_dialog
        with qtbot.waitSignal(dialog.counted, timeout=JOB_MS):
            clear.trigger()
    assert dialog.isVisible()
    return dialog


def clear(qtbot: QtBot, dialog: ClearDialog, scope: Scope) -> None:
    """Choose ``scope``, click the button and wait until the clear (if asked for) ends."""
    dialog.choose(scope)
    qtbot.mouseClick(dialog.clear_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.busy_clearing, timeout=JOB_MS)


@pytest.fixture
def turns(service: MemoryService) -> list[int]:
    """Two turns in a thread, and a session handoff."""
    agent = service.open_session("main", Actor.AGENT, "tests")
    thread, _ = threads.open_thread(service, agent, title="Garden")
    inside = enter_thread(service, agent, thread.id).caller
    said = [log_exchange(service, inside, "user", f"Water the roses, day {n}") for n in (1, 2)]
    session_handoffs.end_session_with_handoff(service, inside, "Roses watered.")
    return [s.exchange.id for s in said]


def count(service: MemoryService, table: str) -> int:
    return int(service.store_for("main").execute(f"SELECT count(*) FROM {table}").get)


def test_counts_are_shown_before_anything_goes(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    turns: list[int],
    window: MainWindow,
) -> None:
    dialog = opened(qtbot, window)
    assert dialog.count_labels[Scope.EPISODIC].text() == (
        "2 conversation turns, 1 session handoff."
    )
    assert dialog.count_labels[Scope.SEMANTIC].text() == "4 memories."
    assert dialog.counts[Scope.ALL] == clear_counts(service, "main", Scope.ALL)
    # Nothing chosen yet: nothing can be cleared.
    assert dialog.chosen() is None and not dialog.clear_button.isEnabled()
    dialog.choose(Scope.EPISODIC)
    assert dialog.clear_button.isEnabled() and dialog.clear_button.text() == "Delete 3 items…"


def test_clearing_turns_keeps_the_memories(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    turns: list[int],
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    dialog = opened(qtbot, window)
    with qtbot.waitSignal(dialog.cleared, timeout=JOB_MS) as done:
        clear(qtbot, dialog, Scope.EPISODIC)
    assert dialogs.asked == [
        "Delete 2 conversation turns, 1 session handoff from group 'main'?\n\n"
        "This cannot be undone: Ctrl+Z does not bring them back."
    ]
    assert count(service, "exchanges") == 0 and count(service, "session_handoffs") == 0
    assert count(service, "memory_entries") == 4
    said = "Deleted 2 conversation turns, 1 session handoff from 'main'."
    assert done.args == [said] and dialog.status.text() == said and ("info", said) in shown
    qtbot.waitUntil(lambda: dialog.count_labels[Scope.EPISODIC].text() == "Nothing to delete.")
    assert not dialog.clear_button.isEnabled()


def test_clearing_memories_keeps_the_turns_and_takes_the_undo(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    turns: list[int],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    select(qtbot, window, filled["tea"])  # deleted in the app: Ctrl+Z could bring it back
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: filled["tea"] not in listed(window))
    assert window.acts["undo"].isEnabled()

    dialog = opened(qtbot, window)
    clear(qtbot, dialog, Scope.SEMANTIC)
    assert count(service, "memory_entries") == 0 and count(service, "exchanges") == 2
    assert not window.acts["undo"].isEnabled()  # at once, not at the next poll
    window.edit.undo()
    assert service.store_for("main").get(filled["tea"]) is None
    qtbot.waitUntil(lambda: listed(window) == [])


def test_clearing_everything_asks_twice(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    turns: list[int],
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answers: list[bool] = []
    asked: list[str] = []

    def confirm(_parent: object, _title: str, question: str, action: str) -> bool:
        asked.append(action)
        return answers.pop(0)

    monkeypatch.setattr(messages, "confirm", confirm)
    dialog = opened(qtbot, window)
    answers[:] = [True, False]  # yes to the counts, no to "really everything?"
    clear(qtbot, dialog, Scope.ALL)
    assert asked == ["Delete", "Delete everything"]
    assert count(service, "memory_entries") == 4 and count(service, "threads") == 1

    answers[:] = [False]
    clear(qtbot, dialog, Scope.ALL)
    assert asked[2:] == ["Delete"] and count(service, "exchanges") == 2

    answers[:] = [True, True]
    with qtbot.waitSignal(dialog.cleared, timeout=JOB_MS):
        clear(qtbot, dialog, Scope.ALL)
    for table in ("memory_entries", "exchanges", "threads", "session_handoffs"):
        assert count(service, table) == 0
    assert dialog.status.text().startswith("Deleted 4 memories, 2 conversation turns")


def test_an_empty_group_has_nothing_to_clear(
    qtbot: QtBot, operator: Caller, window: MainWindow
) -> None:
    dialog = opened(qtbot, window)
    for scope in Scope:
        assert dialog.count_labels[scope].text() == "Nothing to delete."
        dialog.choose(scope)
        assert not dialog.clear_button.isEnabled() and dialog.clear_button.text() == "Clear…"
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_settings_opens_it_and_it_follows_the_group(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    window.go(Nav.SETTINGS)
    panel = window.settings.data_panel
    qtbot.mouseClick(panel.clear_button, Qt.MouseButton.LeftButton)
    dialog = panel.clear_dialog
    assert dialog is not None and dialog.isVisible()
    qtbot.waitUntil(lambda: dialog.count_labels[Scope.SEMANTIC].text() == "4 memories.")
    add(service, service.open_session("work", Actor.OPERATOR, "tests"), "Quarterly plan")
    with qtbot.waitSignal(dialog.counted, timeout=JOB_MS):
        window.state.set_group("work")
    assert dialog.count_labels[Scope.SEMANTIC].text() == "1 memory."
    assert "group <b>work</b>" in dialog.intro.text()
