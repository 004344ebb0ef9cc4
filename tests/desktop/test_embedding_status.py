"""The status bar shows embedding progress, and says when semantic search is off."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from core.model.config import Config
from core.semantic import embedding
from core.semantic.backfill import EmbeddingWorker, Progress
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow
from desktop.widgets.embedding_status import EmbeddingStatus, show_in
from tests.desktop.conftest import add


def test_progress_shows_while_embedding_and_hides_when_done(
    qtbot: QtBot, service: MemoryService, operator: Caller
) -> None:
    for i in range(70):
        add(service, operator, f"Note {i} about the allotment and its tomatoes")
    worker = EmbeddingWorker()
    status = EmbeddingStatus(worker)
    qtbot.addWidget(status)
    seen: list[str] = []
    status.progressed.connect(
        lambda p: seen.append(status.label.text() if not status.isHidden() else "hidden")
    )
    worker.wake(service.data_dir.group_db("main"), "main")
    try:
        qtbot.waitUntil(lambda: any("of 70" in s for s in seen), timeout=30_000)
        assert worker.wait_idle(60)
        qtbot.waitUntil(lambda: status.isHidden())
        assert status.bar.maximum() == 70
    finally:
        worker.close()


def test_a_missing_model_is_said_in_the_status_bar(
    qtbot: QtBot, tmp_path: Path, service: MemoryService, operator: Caller
) -> None:
    add(service, operator, "Anything at all")
    embedding.forget_shared()
    worker = EmbeddingWorker(model_dir=str(tmp_path / "nowhere"))
    status = EmbeddingStatus(worker)
    qtbot.addWidget(status)
    status.show()
    try:
        worker.wake(service.data_dir.group_db("main"), "main")
        qtbot.waitUntil(lambda: "off" in status.label.text(), timeout=10_000)
        assert "model.onnx" in status.label.toolTip()
        # Saved settings that name the same model change nothing; another model
        # clears what was said of this one.
        status.follow(Config(embedding_model_dir=str(tmp_path / "nowhere")))
        assert status.isVisible() and "model.onnx" in status.label.toolTip()
        status.follow(Config())
        assert status.isHidden() and not status.label.toolTip()
    finally:
        worker.close()
        embedding.forget_shared()


def test_the_count_is_read_whole_in_a_small_window(qtbot: QtBot, window: MainWindow) -> None:
    # At 900x600 the count was cut ("Indexing meaning: 1,200 of") by the socket's path.
    worker = EmbeddingWorker()
    try:
        status = show_in(window, worker, window.state.config_changed)
        window.resize(900, 600)
        window.show()
        # However long another status line grows, the count keeps its width.
        window.socket_label.setText("● Serving agents on /home/firstname.lastname/" + "x" * 60)
        status.progressed.emit(Progress("main", 1200, 20000))
        qtbot.waitUntil(lambda: status.isVisible())
        qtbot.waitUntil(lambda: status.label.width() >= status.label.sizeHint().width())
        assert status.label.text() == "Indexing meaning: 1,200 of 20,000"
    finally:
        worker.close()
