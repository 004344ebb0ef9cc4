"""A thread handoff's kept versions, the diff of any of them, and restoring one.

Restoring never rewrites history: the old text becomes current as a new
version, so a restore can itself be undone the same way.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.continuity.handoffs import ThreadHandoff, handoff_diff, restore_handoff
from core.model.errors import AmbryError, Conflict
from desktop.threads.model import fetch_versions, versions_model
from desktop.widgets import messages
from desktop.widgets.record_model import record_table
from desktop.widgets.version_diff import Compare, VersionDiffPane
from desktop.widgets.watch import AppState


def diff_html(diff: str) -> str:
    """A unified diff as coloured monospace HTML (escaped: handoffs are untrusted text)."""
    if not diff:
        return "<p class='hint'>No differences.</p>"
    lines = []
    for line in diff.splitlines():
        text = html.escape(line) or " "
        if line.startswith(("+++", "---")):
            lines.append(f"<b>{text}</b>")
        elif line.startswith("+"):
            lines.append(f"<span class='add'>{text}</span>")
        elif line.startswith("-"):
            lines.append(f"<span class='del'>{text}</span>")
        elif line.startswith("@@"):
            lines.append(f"<span class='hunk'>{text}</span>")
        else:
            lines.append(text)
    return "<pre>" + "\n".join(lines) + "</pre>"


class HistoryPane(QWidget):
    """Every kept version of the selected thread's handoff, newest first.

    Args:
        state: the shared app state.
        parent: the parent widget.

    Signals:
        restored(int): the version that was made current again.
    """

    restored = Signal(int)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._thread_id: str | None = None
        self.model = versions_model(self)
        self.table = record_table(self.model, "versionsTable", self)
        self.table.setAccessibleName("Handoff versions")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.pane = VersionDiffPane(
            "handoffDiff", "Make this version's text current again, as a new version", self
        )
        self.compare_box = self.pane.compare_box
        self.restore_button = self.pane.restore_button
        self.diff_view = self.pane.view
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.pane)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(splitter)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.compare_box.currentIndexChanged.connect(self._on_selection)
        self.restore_button.clicked.connect(self.restore)
        self._on_selection()

    def show_thread(self, thread_id: str | None) -> None:
        """List ``thread_id``'s versions, keeping the selected one if it is still there."""
        keep = self.selected()
        if thread_id != self._thread_id or thread_id is None:
            keep = None
            self._thread_id = thread_id
            service, group = self._state.service, self._state.group
            self.model.load(
                None if thread_id is None else fetch_versions(service, group, thread_id)
            )
        else:
            self.model.refresh()
        row = None if keep is None else self.model.row_of(keep.version)
        if row is None and self.model.rowCount():
            row = 0
        if row is not None:
            self.table.selectRow(row)
        self._on_selection()

    def selected(self) -> ThreadHandoff | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record_at(rows[0].row()) if rows else None

    def current(self) -> ThreadHandoff | None:
        return self.model.record_at(0) if self.model.rowCount() else None

    def _on_selection(self, *_args: object) -> None:
        chosen, current = self.selected(), self.current()
        self.restore_button.setEnabled(
            chosen is not None and current is not None and chosen.version != current.version
        )
        if chosen is None:
            self.diff_view.setHtml(
                "<p class='hint'>No versions yet.</p>" if self._thread_id else ""
            )
            return
        if self.compare_box.currentData() == Compare.CURRENT:
            assert current is not None
            self.diff_view.setHtml(diff_html(handoff_diff(chosen, current)))
            return
        row = self.model.row_of(chosen.version)
        assert row is not None
        if row + 1 < self.model.rowCount():
            self.diff_view.setHtml(diff_html(handoff_diff(self.model.record_at(row + 1), chosen)))
        else:
            self.diff_view.setHtml(
                f"<p class='hint'>Version {chosen.version} is the oldest kept; its text:</p>"
                f"<pre>{html.escape(chosen.markdown)}</pre>"
            )

    def restore(self) -> None:
        chosen, current = self.selected(), self.current()
        if self._thread_id is None or chosen is None or current is None:
            return
        if chosen.version == current.version:
            return
        question = (
            f"Make version {chosen.version} the current handoff again? It is saved as version "
            f"{current.version + 1}; version {current.version} stays in the history."
        )
        if not messages.confirm(self, "Restore handoff version", question, "Restore"):
            return
        try:
            written = restore_handoff(
                self._state.service,
                self._state.operator(),
                self._thread_id,
                chosen.version,
                base_version=current.version,
            )
        except AmbryError as exc:
            messages.report(exc)
            if isinstance(exc, Conflict):  # show the version that came in meanwhile
                self.show_thread(self._thread_id)
            return
        if written.created:
            messages.info(
                f"Version {chosen.version} restored as version {written.handoff.version}."
            )
        else:
            messages.info(f"Version {chosen.version} already says what the current one does.")
        self.show_thread(self._thread_id)
        self.table.selectRow(0)
        self.restored.emit(chosen.version)
