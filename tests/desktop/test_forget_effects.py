"""What a forget changes in the rest of the app, whether the app or `ambry forget`
forgot: the editor keeps no word of a forgotten memory, and the summary pass draws
the layer summaries it dropped again at once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.cli.main import main
from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.layers.compression import compress, is_due
from core.layers.scheduler import INTERVAL, LayerWorker
from core.memory.forgetting import plan_forget
from core.model.entries import Actor, utc_now
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from core.storage.store import GroupStore
from desktop.memories.editor import EntryEditor, Page
from desktop.shell.main_window import MainWindow
from tests.desktop.conftest import Dialogs
from tests.desktop.test_browser import listed, select
from tests.desktop.test_forget_gui import forget, look, opened

#: How long the pass may take to draw a day of two turns again.
PASS_MS = 5_000


@pytest.fixture
def summarised(service: MemoryService) -> Iterator[GroupStore]:
    """A thread's day of two turns, summarised by a pass that ran a moment ago (so
    none is due), with the app's background pass running as in the app."""
    service.layers = LayerWorker()
    agent = service.open_session("main", Actor.AGENT, "tests")
    inside = enter_thread(service, agent, "Garden").caller
    log_exchange(service, inside, "user", "The divorce papers are signed at last.")
    log_exchange(service, inside, "user", "The tomatoes go in the south bed this year.")
    store = service.store_for("main")
    compress(store, utc_now())
    assert not is_due(store, utc_now(), INTERVAL)
    yield store


def day_hooks(store: GroupStore) -> list[str]:
    return [r[0] for r in store.execute("SELECT hook FROM layer_summaries WHERE level = 'day'")]


def test_a_forget_in_the_app_redraws_the_summaries_at_once(
    qtbot: QtBot, summarised: GroupStore, window: MainWindow
) -> None:
    assert any("divorce" in hook for hook in day_hooks(summarised))
    dialog = opened(window)
    look(qtbot, dialog, "divorce")
    forget(qtbot, dialog)
    # The day drew on a forgotten turn: it went with it, and is drawn again from the
    # turn left without waiting for the 6-hourly pass.
    qtbot.waitUntil(lambda: len(day_hooks(summarised)) == 1, timeout=PASS_MS)
    [hook] = day_hooks(summarised)
    assert "tomatoes" in hook and "divorce" not in hook


def test_ambry_forget_in_a_terminal_redraws_them_too(
    qtbot: QtBot, summarised: GroupStore, data_dir: DataDir, window: MainWindow
) -> None:
    assert main(["--data-dir", str(data_dir.root), "forget", "divorce", "--yes"]) == 0
    assert day_hooks(summarised) == []
    window.state.poll()  # as the app's timer does, twice a second
    qtbot.waitUntil(lambda: len(day_hooks(summarised)) == 1, timeout=PASS_MS)
    assert "divorce" not in day_hooks(summarised)[0]


EDITED = "Prefers green tea, brewed for two minutes"


def editing(qtbot: QtBot, window: MainWindow, entry_id: str, text: str) -> EntryEditor:
    """``entry_id`` open in the editor with ``text`` typed over it, not saved."""
    select(qtbot, window, entry_id)
    editor = window.browser.editor
    editor.content.setPlainText(text)
    assert editor.is_dirty()
    return editor


def dropped(qtbot: QtBot, editor: EntryEditor) -> None:
    """The editor holds no word of the memory, says why, and Ctrl+S saves nothing."""
    qtbot.waitUntil(lambda: editor.pages.currentIndex() == Page.EMPTY)
    assert editor.entry is None and not editor.is_new and not editor.is_dirty()
    assert editor.content.toPlainText() == "" and editor.tags.text() == ""
    assert editor.idle.label.text().startswith("This memory was forgotten")
    qtbot.wait(100)  # the list's refresh comes after: the reason stays on screen
    assert editor.idle.label.text().startswith("This memory was forgotten")
    qtbot.keyClick(editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)


def test_a_memory_forgotten_in_the_app_while_edited_leaves_no_draft(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    editor = editing(qtbot, window, filled["tea"], EDITED)
    dialog = opened(window)
    look(qtbot, dialog, "tea")
    forget(qtbot, dialog)
    dropped(qtbot, editor)
    assert any("you were editing was forgotten" in text for _, text in shown)
    qtbot.waitUntil(lambda: filled["tea"] not in listed(window))
    assert plan_forget(service, "main", "tea").empty  # nothing written back


def test_ambry_forget_in_a_terminal_while_editing_leaves_no_draft(
    qtbot: QtBot,
    service: MemoryService,
    data_dir: DataDir,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    editor = editing(qtbot, window, filled["tea"], EDITED)
    assert main(["--data-dir", str(data_dir.root), "forget", "tea", "--yes"]) == 0
    window.state.poll()  # as the app's timer does, twice a second
    dropped(qtbot, editor)
    assert plan_forget(service, "main", "tea").empty
    assert dialogs.asked == []


def test_a_draft_kept_from_an_agents_delete_goes_when_the_memory_is_forgotten(
    qtbot: QtBot,
    service: MemoryService,
    data_dir: DataDir,
    filled: dict[str, str],
    agent_caller: Caller,
    window: MainWindow,
) -> None:
    editor = editing(qtbot, window, filled["tea"], EDITED)
    service.delete(agent_caller, filled["tea"])  # to the trash: an ordinary delete
    qtbot.waitUntil(lambda: editor.is_new)
    assert editor.content.toPlainText() == EDITED  # kept, to add as a new memory
    # Then the topic is forgotten, the trashed memory with it: the draft is its words.
    assert main(["--data-dir", str(data_dir.root), "forget", "tea", "--yes"]) == 0
    window.state.poll()
    dropped(qtbot, editor)
    assert plan_forget(service, "main", "tea").empty


def test_forgetting_another_topic_leaves_the_edit_alone(
    qtbot: QtBot, data_dir: DataDir, filled: dict[str, str], window: MainWindow
) -> None:
    editor = editing(qtbot, window, filled["office"], "Works in the Paris office")
    assert main(["--data-dir", str(data_dir.root), "forget", "tea", "--yes"]) == 0
    window.state.poll()
    qtbot.waitUntil(lambda: filled["tea"] not in listed(window))
    assert editor.entry is not None and editor.entry.id == filled["office"]
    assert editor.content.toPlainText() == "Works in the Paris office" and editor.is_dirty()
