"""Attachment receipts: what files agents saw, whether they are still the same, and proof.

Each row is a receipt (hash, type, excerpt; never a copy of the file) with a
badge for what the last check found at its source path. Verifying hashes the
sources again on the executor's thread, with progress, and records the states
in one write. Attaching a file from here makes the same receipt an agent's
``attachment_receipt`` call would, filed under no thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.attachments import attach as attachments
from core.attachments import receipts
from core.attachments.attach import AttachOutcome, FileFacts
from core.attachments.receipts import Receipt, SourceState
from core.attachments.verification import SourceCheck, Verification, pending_checks
from core.continuity import threads
from core.model.changes import Changes
from core.model.errors import AmbryError
from core.model.text import plural
from core.service import MemoryService
from desktop.attachments.model import (
    DETAIL_CSS,
    BadgeDelegate,
    ReceiptsModel,
    receipt_html,
    source_folder,
)
from desktop.attachments.verifier import Verifier
from desktop.widgets import messages
from desktop.widgets.files import open_folder
from desktop.widgets.flow import FlowLayout
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.ops import Executor
from desktop.widgets.placeholder import placeholder
from desktop.widgets.record_model import record_table
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command, on_right_click, row_menu
from desktop.widgets.watch import AppState

_EMPTY_TITLE = "No attachment receipts yet"
_EMPTY_BODY = (
    "<p>When an agent reads a file it can keep a receipt for it: the file's SHA-256, type, "
    "size and, for text, an excerpt. Ambry never copies the file; it can later tell whether "
    "the file is still the same.</p>"
    "<p>Agents record one with the <code>attachment_receipt</code> call (an absolute path). "
    "From a terminal: <code>ambry attach PATH</code>. Or attach one here.</p>"
)


def choose_file(parent: QWidget) -> str | None:
    """Ask for one file; None when the person cancels."""
    path, _filter = QFileDialog.getOpenFileName(parent, "Attach a file", str(Path.home()))
    return path or None


def outcome_text(verifications: Sequence[Verification]) -> str:
    """What a verification run found, in one line."""
    if not verifications:
        return "Nothing was verified."
    counts = {s: sum(1 for v in verifications if v.state is s) for s in SourceState}
    found = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    gaps = sum(n for s, n in counts.items() if s.is_gap)
    tail = f" — {plural(gaps, 'verification gap')}" if gaps else ""
    return f"Checked {plural(len(verifications), 'source')}: {found}{tail}."


def summary_text(checks: Sequence[SourceCheck]) -> str:
    """How many receipts there are and how many are verification gaps, as last checked."""
    gaps = sum(1 for c in checks if c.state.is_gap)
    found = f"⚠ {plural(gaps, 'verification gap')}" if gaps else "no verification gaps"
    return f"{plural(len(checks), 'receipt')}  ·  {found}"


class AttachmentsPage(LazyPage):
    """The current group's receipts with their states; attach, verify and inspect them.

    Args:
        state: the shared app state.
        executor: the background thread for hashing files.
        parent: the parent widget.
    """

    def __init__(self, state: AppState, executor: Executor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._executor = executor
        #: Dialogs and the file manager go through these, so tests need neither.
        self.choose_file: Callable[[QWidget], str | None] = choose_file
        self.open_folder: Callable[[Path], None] = open_folder
        self.verifier = Verifier(state, executor, self)
        self.model = ReceiptsModel(self)
        self.table = record_table(self.model, "receiptsTable", self)
        self.table.setAccessibleName("Attachments")
        self.table.setAccessibleDescription("Receipts of the files attached in this group")
        self.table.setItemDelegateForColumn(0, BadgeDelegate(self.table))

        self.summary = QLabel(self)
        self.summary.setObjectName("counts")
        self.attach_button = QPushButton("Attach a file…", self)
        self.verify_button = QPushButton("Verify selected", self)
        self.verify_button.setToolTip("Hash the selected receipts' sources again")
        self.verify_all_button = QPushButton("Verify all", self)
        self.verify_all_button.setObjectName("primary")
        self.verify_all_button.setToolTip("Hash every receipt's source again")
        # Hidden while there are no receipts: the empty page has its own Attach button.
        self.toolbar = QWidget(self)
        self.folder_button = QPushButton("Open source folder", self)
        self.folder_button.setToolTip("Show the selected receipt's folder in the file manager")
        buttons = FlowLayout()
        for pair in (
            (self.attach_button, self.folder_button),
            (self.verify_button, self.verify_all_button),
        ):
            both = QHBoxLayout()
            for button in pair:
                both.addWidget(button)
            buttons.addLayout(both)
        # The buttons go under the summary, together, when both do not fit on one
        # row; in a narrow window (640x400) the verify pair goes to a row of its own.
        top = FlowLayout(self.toolbar)
        top.addWidget(self.summary)
        top.addStretch()
        top.addLayout(buttons)

        self.progress = QProgressBar(self)
        self.progress.setFormat("%v of %m sources checked")
        self.stop_button = QPushButton("Stop", self)
        self.progress_row = QWidget(self)
        progress_layout = QHBoxLayout(self.progress_row)
        progress_layout.setContentsMargins(0, 0, 0, 0)
        progress_layout.addWidget(self.progress, 1)
        progress_layout.addWidget(self.stop_button)
        self.progress_row.hide()

        self.detail = QTextBrowser(self)
        self.detail.setObjectName("receiptDetail")
        self.detail.setAccessibleName("Attachment details")
        self.detail.setOpenLinks(False)
        self.detail.document().setDefaultStyleSheet(DETAIL_CSS)
        # Below the list, not beside it: the source path column needs the width.
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)

        self.stack = QStackedWidget(self)
        self.stack.addWidget(splitter)
        self.stack.addWidget(self._empty_page())
        layout = QVBoxLayout(self)
        layout.addWidget(self.toolbar)
        layout.addWidget(self.progress_row)
        layout.addWidget(self.stack, 1)

        self.attach_button.clicked.connect(self.attach)
        self.verify_button.clicked.connect(self.verify_selected)
        self.verify_all_button.clicked.connect(self.verify_all)
        self.stop_button.clicked.connect(self.verifier.stop)
        self.folder_button.clicked.connect(self.open_source_folder)
        self.verifier.started.connect(self._on_verify_started)
        self.verifier.progress.connect(self._on_progress)
        self.verifier.finished.connect(self._on_verified)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        on_right_click(self.table, self.row_menu)
        state.changed.connect(self._on_changes)
        state.group_changed.connect(lambda _g: self._invalidate(reload=True))
        self._on_selection()

    def _empty_page(self) -> QWidget:
        self.empty_attach_button = QPushButton("Attach a file…", self)
        self.empty_attach_button.setObjectName("primary")
        self.empty_attach_button.clicked.connect(self.attach)
        return placeholder(_EMPTY_TITLE, _EMPTY_BODY, self, self.empty_attach_button)

    # -- refreshing --------------------------------------------------------------

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and (changes.attachments or changes.threads):
            self._invalidate(reload=False)

    def refresh(self) -> None:
        keep = self.selected_ids()
        store = self._state.service.store_for(self._state.group)
        if self._begin_refresh():
            self.model.load(
                lambda loaded, limit: receipts.list_receipts(store, None, limit, len(loaded))
            )
        else:
            self.model.refresh()
        checks = pending_checks(store)
        self.summary.setText(summary_text(checks))
        self.stack.setCurrentIndex(0 if checks else 1)
        self.toolbar.setVisible(bool(checks))
        selection = self.table.selectionModel()
        if not selection.hasSelection():  # the model was reset: select the same receipts
            self.select(keep)
        if not selection.hasSelection() and self.model.rowCount():
            self.select([self.model.record_at(0).id])
        self._on_selection()

    # -- selection ---------------------------------------------------------------

    def selected_ids(self) -> list[str]:
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [self.model.record_at(r).id for r in rows]

    def selected(self) -> Receipt | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record_at(rows[0].row()) if len(rows) == 1 else None

    def select(self, ids: Sequence[str]) -> None:
        """Select the rows of ``ids`` (those that are listed), and only those."""
        selection = self.table.selectionModel()
        rows = QItemSelectionModel.SelectionFlag.Rows
        flag = QItemSelectionModel.SelectionFlag.ClearAndSelect
        for rid in ids:
            row = self.model.row_of(rid)
            if row is not None:
                selection.setCurrentIndex(self.model.index(row, 0), flag | rows)
                flag = QItemSelectionModel.SelectionFlag.Select

    def row_menu(self) -> QMenu:
        """The right-click menu: the selected receipts' folder, verify them, copy their ids."""
        return row_menu(
            self,
            [
                Command(
                    "Open source folder", self.open_source_folder, self.folder_button.isEnabled()
                ),
                Command("Verify selected", self.verify_selected, self.verify_button.isEnabled()),
                SEPARATOR,
                copy_command(self.selected_ids(), "receipt"),
            ],
        )

    def _on_selection(self, *_args: object) -> None:
        rows = self.table.selectionModel().selectedRows()
        busy = self.verifier.running
        self.verify_button.setEnabled(bool(rows) and not busy)
        self.verify_all_button.setEnabled(self.model.rowCount() > 0 and not busy)
        receipt = self.selected()
        self.folder_button.setEnabled(receipt is not None)
        if receipt is not None:
            store = self._state.service.store_for(self._state.group)
            sightings = receipts.links(store, receipt.id)
            titles = {}
            for tid in {s.thread_id for s in sightings if s.thread_id}:
                thread = threads.thread_by_id(store, tid)
                titles[tid] = thread.title if thread else f"{tid} (deleted)"
            self.detail.setHtml(receipt_html(receipt, sightings, titles))
        elif rows:
            self.detail.setHtml(f"<p>{plural(len(rows), 'receipt')} selected.</p>")
        else:
            self.detail.clear()

    # -- verifying ---------------------------------------------------------------

    def verify_selected(self) -> None:
        ids = self.selected_ids()
        if ids:
            self.verifier.start(ids)

    def verify_all(self) -> None:
        self.verifier.start(None)

    def _on_verify_started(self, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(0)
        self.progress_row.show()
        self._on_selection()

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)

    def _on_verified(self, results: list[Verification]) -> None:
        self.progress_row.hide()
        messages.info(outcome_text(results))
        # The change record refreshes the rows too; refreshing now shows them at once.
        self._invalidate(reload=False)

    # -- attaching and opening ---------------------------------------------------

    def attach(self) -> None:
        path = self.choose_file(self)
        if path:
            self.attach_path(path)

    def attach_path(self, path: str) -> None:
        """Hash and classify ``path`` on the executor, then record the receipt."""
        group = self._state.group

        def inspect(service: MemoryService) -> FileFacts:
            # No database: the file's hashing and reading happen here, off the GUI thread.
            return attachments.inspect_file(path, data_root=service.data_dir.root)

        def record(facts: FileFacts) -> None:
            try:
                outcome = attachments.record_receipt(
                    self._state.service, self._state.operator(group), facts
                )
            except AmbryError as exc:
                messages.report(exc)
                return
            self._on_attached(outcome)

        self._executor.submit(group, inspect, record)

    def _on_attached(self, outcome: AttachOutcome) -> None:
        r = outcome.receipt
        how = "new receipt" if outcome.created else "already known, link added"
        messages.info(f"Attached {r.filename} ({how}: {r.id}).")
        self._invalidate(reload=False)
        self.select([r.id])

    def open_source_folder(self) -> None:
        receipt = self.selected()
        if receipt is None:
            return
        folder = source_folder(receipt)
        if not folder.is_dir():
            messages.warning(f"The folder {folder} no longer exists.")
            return
        self.open_folder(folder)
