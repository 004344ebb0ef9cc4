"""Choosing another embedding model in Settings → Search: checked, saved, used at once."""

from __future__ import annotations

import json
from pathlib import Path

from pytestqt.qtbot import QtBot

from core.semantic import embedding
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets.embedding_status import show_in
from desktop.widgets.watch import AppState
from tests.desktop.conftest import add, embed_all


def _models(service: MemoryService) -> set[str]:
    store = service.store_for("main")
    return {str(r[0]) for r in store.execute("SELECT DISTINCT model FROM memory_vectors")}


def test_a_chosen_model_folder_is_saved_and_every_memory_embedded_with_it(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    state: AppState,
    window: MainWindow,
    data_dir: DataDir,
    tmp_path: Path,
    model_copy: Path,
    shown: list[tuple[str, str]],
) -> None:
    for i in range(12):
        add(service, operator, f"Note {i}: the allotment's tomatoes need water")
    peanuts = add(service, operator, "User is allergic to peanuts")
    embed_all(service)
    assert service.embedding is not None
    status = show_in(window, service.embedding, state.config_changed)
    window.go(Nav.SETTINGS)
    row = window.settings.model_folder
    assert row.value() == "" and not row.installed_button.isEnabled()

    # A folder without a model is refused where it is chosen; nothing changes.
    empty = tmp_path / "empty"
    empty.mkdir()
    row.choose_folder = lambda start: str(empty)
    row.choose_button.click()
    qtbot.waitUntil(lambda: bool(shown) and shown[-1][0] == "error", timeout=10_000)
    assert "model.onnx is missing" in shown[-1][1]
    assert row.value() == "" and not window.settings.is_dirty()
    assert row.choose_button.isEnabled() and "installed with Ambry" in row.status.text()
    row.choose_folder = lambda start: ""  # cancelled
    row.choose_button.click()
    assert row.value() == ""

    folder = model_copy
    custom_id = embedding.directory_files(folder).model_id
    row.choose_folder = lambda start: str(folder)
    row.choose_button.click()
    assert "Checking the model" in row.status.text() and not row.choose_button.isEnabled()
    qtbot.waitUntil(lambda: row.value() == str(folder.resolve()), timeout=10_000)
    assert window.settings.is_dirty() and row.choose_button.isEnabled()
    assert str(folder) in row.status.text() and row.installed_button.isEnabled()
    progress: list[str] = []
    status.progressed.connect(lambda p: progress.append(status.label.text()))
    window.settings.save_button.click()
    assert "new model" in shown[-1][1]
    assert service.config.embedding_model_dir == str(folder.resolve())
    saved = json.loads(data_dir.config_file.read_text())
    assert saved["embedding_model_dir"] == str(folder.resolve())
    # Re-embedded in the background with progress in the status bar, then quiet.
    qtbot.waitUntil(lambda: any("of 13" in text for text in progress), timeout=30_000)
    assert service.embedding.wait_idle(60)
    qtbot.waitUntil(status.isHidden)
    assert _models(service) == {custom_id}
    agent = service.open_session("main", operator.actor, "test")
    first = service.search(agent, {"query": "Which food could make me ill?"})[0]
    assert first.id == peanuts and "semantic" in first.signals

    # Back to the installed model.
    row.installed_button.click()
    assert row.value() == "" and window.settings.is_dirty()
    window.settings.save_button.click()
    assert service.embedding.wait_idle(60)
    assert _models(service) == {embedding.DEFAULT_MODEL_ID}
    assert service.config.embedding_model_dir == ""


def test_the_model_folder_status_is_shown_whole_at_any_window_width(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    # The form kept the row at its hinted height, and the wrapped status was cut off
    # at the top and the bottom.
    window.go(Nav.SETTINGS)
    row = window.settings.model_folder
    long_path = tmp_path / ("a-folder-with-a-long-name-" * 3)
    for width in (1100, 1400, 1800):
        window.resize(width, 900)
        for folder in ("", str(long_path)):
            row.set_value(folder)
            qtbot.waitUntil(
                lambda: row.status.height() >= row.status.heightForWidth(row.status.width())
            )
            assert row.status.geometry().top() >= row.choose_button.geometry().bottom()
