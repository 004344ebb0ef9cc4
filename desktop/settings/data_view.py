"""Your data: export the current group to a file, import a file into it, forget a
topic or clear a kind of memory.

Both run on a background thread with a service of its own on the same data
directory (apsw connections belong to the thread that opened them), so the
window stays responsive. Each job gets a fresh :class:`~desktop.widgets.ops.Executor`,
closed when the job ends: the browser's query thread interrupts whatever it
runs when the person types, and that must never be an import.

The worker reports progress through a queued signal (emitted on the worker
thread, delivered on the GUI thread); the bar is busy until the first report,
then counts records, and a summary follows. Import writes everything or nothing
(``core.portability.importing``), so a failed import leaves the group as it was. The
questions and summaries are in :mod:`desktop.settings.data_dialogs`; forgetting and
clearing have dialogs of their own (:mod:`desktop.settings.forget_dialog`,
:mod:`desktop.settings.clear_dialog`), which the Edit menu opens too.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.model.entries import EntryFilter, Privacy
from core.model.errors import AmbryError, Conflict, InvalidParams
from core.model.text import plural
from core.portability.export import ExportSummary, export
from core.portability.importing import ImportReport, import_file
from core.portability.markdown_export import MarkdownExport, export_markdown
from core.service import Caller, MemoryService
from core.storage.crypto import KeyUnavailable, load_key
from desktop.memories.action_texts import memories
from desktop.settings.clear_dialog import ClearDialog
from desktop.settings.data_dialogs import (
    ask_new_passphrase,
    ask_open_path,
    ask_password,
    ask_save_path,
    conflict_text,
    export_text,
    import_text,
)
from desktop.settings.forget_dialog import ForgetDialog
from desktop.settings.history_dialog import HistoryImportDialog
from desktop.widgets import messages
from desktop.widgets.flow import FlowLayout
from desktop.widgets.ops import Executor, as_operator, run_alone
from desktop.widgets.watch import AppState

T = TypeVar("T")


# -- work on the background thread ------------------------------------------------


def check_key(service: MemoryService, group: str) -> None:
    """Refuse before writing a file whose private memories could not be decrypted.

    Without the key, core would read their content as a placeholder and seal
    that into the file instead of the text.
    """
    hidden = EntryFilter(
        statuses=(), include_superseded=True, privacy=(Privacy.PRIVATE, Privacy.SECRET)
    )
    if not service.store_for(group).count(hidden):
        return
    if load_key(service.data_dir.root, create=False) is None:
        raise KeyUnavailable(
            "Ambry's encryption key for this data folder is not in the keyring, so its "
            "private and secret memories cannot be exported; untick the option to export "
            "the rest"
        )


class DataPanel(QGroupBox):
    """Export and import the current group, in the background, with a summary.

    Args:
        state: the shared app state (data dir, settings, current group).
        executor: the query thread, where forget and clear read what they would delete.
        parent: the parent widget.

    Signals:
        finished(bool, str): a job ended: whether it succeeded, and its summary.
    """

    finished = Signal(bool, str)
    #: Emitted from the worker thread; Qt queues it to this object's (the GUI) thread.
    progressed = Signal(int, int)

    def __init__(self, state: AppState, executor: Executor, parent: QWidget | None = None) -> None:
        super().__init__("Your data", parent)
        self._state, self._executor = state, executor
        self._job: Executor | None = None
        self._folder = Path.home()

        self.intro = QLabel(self)
        self.intro.setObjectName("hint")
        self.intro.setWordWrap(True)
        self.export_button = QPushButton("Export…", self)
        self.include_private = QCheckBox(
            "Include private and secret memories (encrypted with a passphrase you choose)", self
        )
        self.import_button = QPushButton("Import…", self)
        import_hint = QLabel(
            "All or nothing: memories already here are skipped; a conflict stops it.", self
        )
        import_hint.setObjectName("hint")
        import_hint.setWordWrap(True)
        # Other apps' history, and a copy a person can read without Ambry.
        self.history_button = QPushButton("Import from another app…", self)
        self.markdown_button = QPushButton("Export as Markdown…", self)
        self.history_dialog: HistoryImportDialog | None = None
        # Deleting on purpose, as `ambry forget` and `ambry clear` do.
        self.forget_button = QPushButton("Forget a topic…", self)
        self.forget_button.setObjectName("danger")
        self.forget_button.setToolTip("Delete everything that mentions a topic (Ctrl+Shift+Del)")
        self.clear_button = QPushButton("Clear…", self)
        self.clear_button.setObjectName("danger")
        self.clear_button.setToolTip("Delete all conversation turns, all memories, or everything")
        forget_hint = QLabel("Both show what goes and ask first; neither can be undone.", self)
        forget_hint.setObjectName("hint")
        forget_hint.setWordWrap(True)
        self.forget_dialog: ForgetDialog | None = None
        self.clear_dialog: ClearDialog | None = None
        self.progress = QProgressBar(self)
        self.progress.setRange(0, 0)  # busy until the worker's first report
        self.progress.setTextVisible(False)
        self.progressed.connect(self._on_progress)
        self.progress.setMaximumWidth(160)
        self.status = QLabel(self)
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        # In a narrow window the choice goes under the button rather than widening the page.
        export_row = FlowLayout()
        export_row.addWidget(self.export_button)
        export_row.addWidget(self.include_private)
        import_row = QHBoxLayout()
        import_row.addWidget(self.import_button)
        import_row.addWidget(import_hint, 1)
        other_row = QHBoxLayout()
        other_row.addWidget(self.history_button)
        other_row.addWidget(self.markdown_button)
        other_row.addStretch(1)
        forget_row = QHBoxLayout()
        forget_row.addWidget(self.forget_button)
        forget_row.addWidget(self.clear_button)
        forget_row.addWidget(forget_hint, 1)
        busy_row = QHBoxLayout()
        busy_row.addWidget(self.progress)
        busy_row.addWidget(self.status, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(export_row)
        layout.addLayout(import_row)
        layout.addLayout(other_row)
        layout.addLayout(forget_row)
        layout.addLayout(busy_row)
        layout.addWidget(self.result)
        # Both buttons the same width, so the rows line up.
        width = max(self.export_button.sizeHint().width(), self.import_button.sizeHint().width())
        for button in (self.export_button, self.import_button):
            button.setMinimumWidth(width)

        self._set_busy(None)
        self.result.hide()
        self._show_group(state.group)
        self.export_button.clicked.connect(self.export_group)
        self.import_button.clicked.connect(self.import_file)
        self.history_button.clicked.connect(self.import_history)
        self.markdown_button.clicked.connect(self.export_markdown)
        self.forget_button.clicked.connect(self.forget_topic)
        self.clear_button.clicked.connect(self.clear)
        state.group_changed.connect(self._show_group)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def busy(self) -> bool:
        return self._job is not None

    def _show_group(self, group: str) -> None:
        self.intro.setText(
            f"Copy the memories of group {group!r} (with threads and attachment receipts) "
            f"to a file, bring a file's memories into {group!r}, or delete for good what "
            "should not be kept."
        )

    # -- export ------------------------------------------------------------------

    def export_group(self) -> None:
        if self.busy:
            return
        group = self._state.group
        suggested = self._folder / f"ambry-{group}-{date.today().isoformat()}.jsonl"
        path = ask_save_path(self, suggested)
        if path is None:
            return
        self._folder = path.parent
        include = self.include_private.isChecked()
        passphrase = ask_new_passphrase(self) if include else None
        if include and passphrase is None:
            return

        def work(service: MemoryService, caller: Caller) -> ExportSummary:
            if include:
                check_key(service, group)
            return export(
                service,
                caller,
                path,
                include_private=include,
                passphrase=passphrase,
                progress=self.progressed.emit,
            )

        self._run(
            f"Exporting {group!r} to {path.name}…",
            group,
            as_operator(group, work),
            lambda summary: self._done(
                True, export_text(summary), f"Exported {memories(summary.entries)}."
            ),
            lambda exc: self._failed("Not exported", exc),
        )

    def export_markdown(self) -> None:
        if self.busy:
            return
        folder = QFileDialog.getExistingDirectory(
            self, "Export as Markdown into", str(self._folder)
        )
        if not folder:
            return
        group, path = self._state.group, Path(folder)

        def done(summary: MarkdownExport) -> None:
            text = (
                f"Wrote {memories(summary.memories)} and {plural(summary.threads, 'thread')} "
                f"({plural(summary.turns, 'turn')}) as Markdown to {path}."
            )
            if summary.skipped_private:
                text += f" {memories(summary.skipped_private)} (private or secret) left out."
            self._done(True, text)

        self._run(
            f"Exporting {group!r} as Markdown…",
            group,
            as_operator(
                group,
                lambda svc, caller: export_markdown(
                    svc, caller, path, progress=self.progressed.emit
                ),
            ),
            done,
            lambda exc: self._failed("Not exported", exc),
        )

    # -- import ------------------------------------------------------------------

    def import_history(self) -> None:
        """The dialog for other apps' files (it runs its own jobs)."""
        if self.history_dialog is None:
            self.history_dialog = HistoryImportDialog(self._state, self)
        self.history_dialog.show()
        self.history_dialog.activateWindow()

    def import_file(self) -> None:
        if self.busy:
            return
        path = ask_open_path(self, self._folder)
        if path is not None:
            self._folder = path.parent
            self._import(path, None)

    def _import(self, path: Path, passphrase: str | None) -> None:
        group = self._state.group

        def imported(report: ImportReport) -> None:
            if group == self._state.group:
                # The worker's commit is another connection's: make the views look now.
                self._state.poll()
            self._done(
                True,
                import_text(report, path, group),
                f"Imported {memories(report.entries)} into {group!r}.",
            )

        def failed(exc: BaseException) -> None:
            if isinstance(exc, InvalidParams) and exc.field == "passphrase" and passphrase is None:
                asked = ask_password(
                    self,
                    "Passphrase for the import",
                    f"{path.name} holds encrypted private memories.\n"
                    "Passphrase it was exported with:",
                )
                if asked:
                    self._import(path, asked)
                    return
            if isinstance(exc, Conflict):
                self._done(False, conflict_text(exc, group))
            else:
                self._failed("Not imported", exc)

        self._run(
            f"Importing {path.name} into {group!r}…",
            group,
            as_operator(
                group,
                lambda svc, caller: import_file(
                    svc, caller, path, passphrase=passphrase, progress=self.progressed.emit
                ),
            ),
            imported,
            failed,
        )

    # -- forget and clear --------------------------------------------------------

    def forget_topic(self) -> ForgetDialog:
        """Open the dialog that lists what mentions a topic and forgets it."""
        if self.forget_dialog is None:
            self.forget_dialog = ForgetDialog(self._state, self._executor, self)
        self.forget_dialog.open()
        self.forget_dialog.activateWindow()
        return self.forget_dialog

    def clear(self) -> ClearDialog:
        """Open the dialog that deletes all turns, all memories or everything."""
        if self.clear_dialog is None:
            self.clear_dialog = ClearDialog(self._state, self._executor, self)
        self.clear_dialog.open()
        self.clear_dialog.activateWindow()
        return self.clear_dialog

    # -- jobs --------------------------------------------------------------------

    def _run(
        self,
        status: str,
        group: str,
        task: Callable[[MemoryService], T],
        on_success: Callable[[T], None],
        on_failure: Callable[[BaseException], None],
    ) -> None:
        self._set_busy(status)

        def succeeded(result: T) -> None:
            self._end()
            on_success(result)

        def failed(exc: BaseException) -> None:
            self._end()
            on_failure(exc)

        state = self._state
        self._job = run_alone(
            state.data_dir, state.config, "ambry-data", group, task, succeeded, failed, self
        )

    def _end(self) -> None:
        self._job = None
        self._set_busy(None)

    def _on_progress(self, done: int, total: int) -> None:
        if self._job is not None and total > 0:
            self.progress.setRange(0, total)
            self.progress.setValue(done)

    def _set_busy(self, status: str | None) -> None:
        self.progress.setRange(0, 0)
        self.progress.setVisible(status is not None)
        self.status.setVisible(status is not None)
        self.status.setText(status or "")
        for w in (
            self.export_button,
            self.import_button,
            self.include_private,
            self.markdown_button,
            self.forget_button,
            self.clear_button,
        ):
            w.setEnabled(status is None)

    def _done(self, ok: bool, text: str, brief: str | None = None) -> None:
        """Show how a job ended; ``brief`` is the one line for the status bar."""
        self.result.setText(text)
        self.result.setProperty("ok", ok)
        self.result.style().polish(self.result)
        self.result.show()
        if ok:
            messages.info(brief or text)
        else:
            messages.error(text)
        self.finished.emit(ok, text)

    def _failed(self, what: str, exc: BaseException) -> None:
        if not isinstance(exc, AmbryError):
            raise exc  # a bug: the crash handler shows it
        self._done(False, f"{what}: {exc.message}")

    def shutdown(self) -> None:
        """Stop a running job (at quit); an import stopped midway writes nothing."""
        for dialog in (self.history_dialog, self.forget_dialog, self.clear_dialog):
            if dialog is not None:
                dialog.shutdown()
        job, self._job = self._job, None
        if job is not None:
            job.close()
