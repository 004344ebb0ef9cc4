"""What a forget changes in the rest of the app: the summary pass draws the layer
summaries it dropped again at once, whether the app or `ambry forget` forgot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from core.cli.main import main
from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.layers.compression import compress, is_due
from core.layers.scheduler import INTERVAL, LayerWorker
from core.model.entries import Actor, utc_now
from core.service import MemoryService
from core.storage.paths import DataDir
from core.storage.store import GroupStore
from desktop.shell.main_window import MainWindow
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
