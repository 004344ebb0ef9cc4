"""The status bar's word on semantic search: a progress bar while memories are being
embedded, and why semantic search is off when it is."""

from __future__ import annotations

from PySide6.QtCore import Signal, SignalInstance
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QProgressBar,
    QWidget,
)

from core.model.config import Config
from core.semantic.backfill import EmbeddingWorker, Progress
from core.semantic.embedding import unavailable_reason


class EmbeddingStatus(QWidget):
    """Shows the background worker's progress; hidden while there is nothing to say.

    The worker calls back from its own thread; the signals carry the news to the
    GUI thread.

    Signals:
        progressed(object): a :class:`~core.semantic.backfill.Progress`.
        unavailable(str): why the model could not be loaded.
    """

    progressed = Signal(object)
    unavailable = Signal(str)

    def __init__(self, worker: EmbeddingWorker, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        # The count is the news: the label keeps its width (set with each text) and
        # the bar gives way.
        self.bar = QProgressBar(self)
        self.bar.setMaximumWidth(160)
        self.bar.setMinimumWidth(48)
        self.bar.setTextVisible(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        self.setVisible(False)
        self.progressed.connect(self._on_progress)
        self.unavailable.connect(self._on_unavailable)
        worker.on_progress = self.progressed.emit
        worker.on_unavailable = self.unavailable.emit
        self._model_dir = worker.model_dir
        reason = unavailable_reason(worker.model_dir)
        if reason is not None:
            self._on_unavailable(reason)

    def follow(self, config: Config) -> None:
        """Settings saved: if they name another model, what was said of the old one no
        longer holds (the worker reports the new one's progress, or why it cannot load)."""
        if config.embedding_model_dir == self._model_dir:
            return
        self._model_dir = config.embedding_model_dir
        self.label.setToolTip("")
        self.setVisible(False)

    def _on_progress(self, progress: Progress) -> None:
        if progress.complete:
            self.setVisible(False)
            return
        self.label.setToolTip("")
        self.label.setText(f"Indexing meaning: {progress.done:,} of {progress.total:,}")
        self.label.setMinimumWidth(self.label.sizeHint().width())
        self.bar.setRange(0, max(1, progress.total))
        self.bar.setValue(progress.done)
        self.bar.setVisible(True)
        self.setVisible(True)

    def _on_unavailable(self, reason: str) -> None:
        self.label.setText("Semantic search off: keyword search only")
        self.label.setMinimumWidth(self.label.sizeHint().width())
        self.label.setToolTip(reason)
        self.bar.setVisible(False)
        self.setVisible(True)


def show_in(
    window: QMainWindow, worker: EmbeddingWorker, config_changed: SignalInstance
) -> EmbeddingStatus:
    """Put an :class:`EmbeddingStatus` for ``worker`` in ``window``'s status bar, following
    the settings. It sits with the permanent widgets: a passing message ("Settings
    saved…") takes the bar's left side and would otherwise be drawn over it."""
    status = EmbeddingStatus(worker, window)
    window.statusBar().insertPermanentWidget(0, status)
    config_changed.connect(status.follow)
    return status
