"""Import from another app: a Claude or ChatGPT export, an MCP memory file, Markdown notes.

The dialog does what ``ambry import --from`` does, in three steps the person sees:
choose the source and its file (or folder), **Preview** (the checking pass: the first
malformed record is named, or the counts of what would be added are shown), then
**Import**, with a progress bar over the file's bytes (checking, then writing) and
**Cancel**. The work runs on a background thread with a service of its own
(:class:`~desktop.widgets.ops.Executor`); cancelling raises inside the write
transaction, which rolls back, so a cancelled import leaves nothing written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.model.errors import AmbryError
from core.portability.history import SourceKind
from core.portability.history_import import Cancelled, ImportCounts, plan, run
from core.service import Caller, MemoryService
from desktop.widgets import messages
from desktop.widgets.ops import Executor, as_operator
from desktop.widgets.watch import AppState

T = TypeVar("T")

SOURCES: tuple[tuple[str, SourceKind, str], ...] = (
    ("Claude.ai export", SourceKind.CLAUDE, "Claude export (*.json *.zip)"),
    ("ChatGPT export", SourceKind.CHATGPT, "ChatGPT export (*.json *.zip)"),
    ("MCP memory server (memory.jsonl)", SourceKind.MCP_MEMORY, "JSON Lines (*.jsonl *.json)"),
    ("Markdown notes (a file or a folder)", SourceKind.MARKDOWN, "Markdown (*.md *.markdown)"),
)
#: The bar's range: the checking pass fills the first part, the writing pass the rest.
STEPS = 1000
CHECK_SHARE = 200


class HistoryImportDialog(QDialog):
    """Preview and import another app's history into the current group.

    Signals:
        job_ended(bool, str): a preview or import ended: whether it succeeded, and its text.
        progressed(str, int, int): emitted on the worker thread (phase, done, total bytes).
    """

    job_ended = Signal(bool, str)
    progressed = Signal(str, int, int)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Import from another app")
        self._state = state
        self._job: Executor | None = None
        self._stop = threading.Event()
        self._previewed: tuple[SourceKind, Path] | None = None

        self.source = QComboBox(self)
        for label, kind, _ in SOURCES:
            self.source.addItem(label, kind)
        self.path = QLineEdit(self)
        self.path.setPlaceholderText("conversations.json, the export's .zip, memory.jsonl, notes…")
        self.choose_file = QPushButton("File…", self)
        self.choose_folder = QPushButton("Folder…", self)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.choose_file)
        path_row.addWidget(self.choose_folder)
        form = QFormLayout()
        form.addRow("Source", self.source)
        form.addRow("File", path_row)

        self.hint = QLabel(
            "Conversations become threads with their original times; memories arrive for "
            "review. Secrets are redacted. Importing the same file again adds nothing.",
            self,
        )
        self.hint.setObjectName("hint")
        self.hint.setWordWrap(True)
        self.preview_text = QLabel(self)
        self.preview_text.setWordWrap(True)
        self.progress = QProgressBar(self)
        self.progress.setRange(0, STEPS)
        self.phase = QLabel(self)
        self.preview_button = QPushButton("Preview", self)
        self.import_button = QPushButton("Import", self)
        self.cancel_button = QPushButton("Close", self)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for b in (self.preview_button, self.import_button, self.cancel_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.hint)
        layout.addWidget(self.preview_text)
        layout.addWidget(self.progress)
        layout.addWidget(self.phase)
        layout.addLayout(buttons)

        self.progressed.connect(self._on_progress)
        self.source.currentIndexChanged.connect(self._changed)
        self.path.textChanged.connect(self._changed)
        self.choose_file.clicked.connect(self._ask_file)
        self.choose_folder.clicked.connect(self._ask_folder)
        self.preview_button.clicked.connect(self.preview)
        self.import_button.clicked.connect(self.start_import)
        self.cancel_button.clicked.connect(self.cancel)
        self._changed()
        self._set_busy(None)

    # -- choosing -------------------------------------------------------------------

    @property
    def kind(self) -> SourceKind:
        return SourceKind(self.source.currentData())

    def chosen(self) -> Path | None:
        text = self.path.text().strip()
        return Path(text).expanduser() if text else None

    def _changed(self) -> None:
        self._previewed = None
        self.preview_text.clear()
        self.choose_folder.setEnabled(self.kind is SourceKind.MARKDOWN and not self.busy)
        self.preview_button.setEnabled(self.chosen() is not None and not self.busy)
        self.import_button.setEnabled(False)

    def _ask_file(self) -> None:
        name_filter = SOURCES[self.source.currentIndex()][2]
        path, _ = QFileDialog.getOpenFileName(self, "Choose the file to import", "", name_filter)
        if path:
            self.path.setText(path)

    def _ask_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Choose the folder of notes")
        if path:
            self.path.setText(path)

    # -- the two steps ----------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._job is not None

    def preview(self) -> None:
        path, kind = self.chosen(), self.kind
        if path is None or self.busy:
            return

        def shown(counts: ImportCounts) -> None:
            self._previewed = (kind, path)
            self._show(True, counts.summary().capitalize() + ".")
            self.import_button.setEnabled(counts.adds_anything)

        self._run(
            "Checking…",
            lambda svc, caller: plan(
                svc,
                caller,
                kind,
                path,
                progress=self.progressed.emit,
                should_stop=self._stop.is_set,
            ),
            shown,
        )

    def start_import(self) -> None:
        if self._previewed is None or self.busy:
            return
        kind, path = self._previewed
        group = self._state.group

        def imported(counts: ImportCounts) -> None:
            self._previewed = None
            self.import_button.setEnabled(False)
            if group == self._state.group:
                self._state.poll()  # the worker's commit is another connection's
            text = counts.summary().capitalize() + "."
            if counts.memories_new:
                text += " The memories wait in Review, where you can accept them all at once."
            self._show(True, text)
            messages.info(f"Imported {path.name} into {group!r}.")

        self._run(
            "Importing…",
            lambda svc, caller: run(
                svc,
                caller,
                kind,
                path,
                progress=self.progressed.emit,
                should_stop=self._stop.is_set,
            ),
            imported,
        )

    def cancel(self) -> None:
        """Stop the running job (nothing is written), or close the dialog when idle."""
        if self.busy:
            self._stop.set()
            self.phase.setText("Cancelling…")
            self.cancel_button.setEnabled(False)
        else:
            self.reject()

    def reject(self) -> None:
        if self.busy:  # Escape or the window's close button while a job runs
            self.cancel()
            return
        super().reject()

    def shutdown(self) -> None:
        """Stop a running job at once (the app is quitting); nothing is written."""
        self._stop.set()
        job, self._job = self._job, None
        if job is not None:
            job.close()

    # -- jobs ---------------------------------------------------------------------------

    def _run(
        self,
        status: str,
        work: Callable[[MemoryService, Caller], ImportCounts],
        on_success: Callable[[ImportCounts], None],
    ) -> None:
        group = self._state.group
        executor = Executor(self._state.data_dir, self._state.config, "ambry-import", self)
        self._job = executor
        self._stop.clear()
        self._set_busy(status)

        task = as_operator(group, work)

        def end() -> None:
            self._job = None
            executor.close()
            executor.deleteLater()
            self._set_busy(None)

        def succeeded(counts: ImportCounts) -> None:
            end()
            on_success(counts)

        def failed(exc: BaseException) -> None:
            end()
            if isinstance(exc, Cancelled):
                self._show(False, "Cancelled: nothing was written.")
            elif isinstance(exc, AmbryError):
                self._show(False, exc.message)
            else:
                raise exc  # a bug: the crash handler shows it

        executor.submit(group, task, succeeded, failed)

    def _on_progress(self, phase: str, done: int, total: int) -> None:
        if not self.busy or total <= 0:
            return
        share = done * (CHECK_SHARE if phase == "check" else STEPS - CHECK_SHARE) // total
        self.progress.setValue(share if phase == "check" else CHECK_SHARE + share)
        if not self._stop.is_set():
            self.phase.setText(
                f"{'Checking' if phase == 'check' else 'Writing'}: {done:,} of {total:,} bytes"
            )

    def _set_busy(self, status: str | None) -> None:
        busy = status is not None
        self.progress.setVisible(busy)
        self.progress.setValue(0)
        self.phase.setText(status or "")
        self.phase.setVisible(busy)
        for w in (self.source, self.path, self.choose_file):
            w.setEnabled(not busy)
        self.preview_button.setEnabled(not busy and self.chosen() is not None)
        self.choose_folder.setEnabled(not busy and self.kind is SourceKind.MARKDOWN)
        self.import_button.setEnabled(not busy and self._previewed is not None)
        self.cancel_button.setText("Cancel" if busy else "Close")
        self.cancel_button.setEnabled(True)

    def _show(self, ok: bool, text: str) -> None:
        self.preview_text.setText(text)
        self.preview_text.setProperty("ok", ok)
        self.preview_text.style().polish(self.preview_text)
        self.job_ended.emit(ok, text)
