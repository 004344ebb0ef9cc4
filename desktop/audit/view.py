"""The audit log: what happened, who did it, when. Metadata only, never content."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from core.model.changes import Changes
from core.model.entries import Actor
from core.storage import audit
from core.storage.audit import Action, AuditRecord
from core.storage.store import GroupStore
from desktop.memories.values import local_time
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.tables import FlatTableModel, Header, list_table
from desktop.widgets.watch import AppState

AnyIndex = QModelIndex | QPersistentModelIndex

HEADERS = tuple(
    Header(h) for h in ("Time", "Action", "Actor", "Session", "Entries", "Count", "Size", "Details")
)


def _entries_text(ids: Sequence[str]) -> str:
    if not ids:
        return ""
    first = ids[0].removeprefix("mem-")[:8]
    return first if len(ids) == 1 else f"{first} +{len(ids) - 1}"


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def cells(record: AuditRecord) -> tuple[str, ...]:
    return (
        local_time(record.at),
        record.action.replace("_", " "),
        record.actor,
        (record.session_id or "").removeprefix("sess-"),
        _entries_text(record.entry_ids),
        "" if record.count is None else str(record.count),
        "" if record.size is None else str(record.size),
        ", ".join(f"{k}: {_value(v)}" for k, v in record.detail.items()),
    )


class AuditModel(FlatTableModel):
    """The newest audit rows first, a page at a time (``fetchMore``).

    Args:
        parent: the owning QObject.
    """

    PAGE = 200

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._store: GroupStore | None = None
        self._actions: tuple[str, ...] = ()
        self._actor: str | None = None
        self._records: list[AuditRecord] = []
        self._cells: list[tuple[str, ...]] = []
        self._more = False

    def shown_rows(self) -> int:
        return len(self._records)

    def header_columns(self) -> Sequence[Header]:
        return HEADERS

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._records):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[index.row()][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 4:
            return "\n".join(self._records[index.row()].entry_ids) or None
        return None

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return not parent.isValid() and self._more

    def fetchMore(self, parent: AnyIndex) -> None:
        if parent.isValid() or self._store is None:
            return
        have = len(self._records)
        rows = self._query(have + self.PAGE)[have:]
        self._more = len(rows) == self.PAGE
        if rows:
            self.beginInsertRows(QModelIndex(), have, have + len(rows) - 1)
            self._append(rows)
            self.endInsertRows()

    def _query(self, limit: int) -> list[AuditRecord]:
        assert self._store is not None
        return audit.recent(self._store, limit=limit, actions=self._actions, actor=self._actor)

    def _append(self, rows: list[AuditRecord]) -> None:
        self._records.extend(rows)
        self._cells.extend(cells(r) for r in rows)

    def record_at(self, row: int) -> AuditRecord:
        return self._records[row]

    def load(self, store: GroupStore, actions: Sequence[str], actor: str | None) -> None:
        """Show ``store``'s log with these filters, from the newest row."""
        self.beginResetModel()
        self._store, self._actions, self._actor = store, tuple(actions), actor
        self._records, self._cells = [], []
        rows = self._query(self.PAGE)
        self._more = len(rows) == self.PAGE
        self._append(rows)
        self.endResetModel()

    def refresh(self) -> None:
        """Add rows newer than the top one, keeping the selection and scroll position."""
        if self._store is None:
            return
        top = self._records[0].id if self._records else 0
        newest = [r for r in self._query(self.PAGE) if r.id > top]
        if not newest:
            return
        if len(newest) == self.PAGE:  # too many to splice in: start over
            self.load(self._store, self._actions, self._actor)
            return
        self.beginInsertRows(QModelIndex(), 0, len(newest) - 1)
        self._records[0:0] = newest
        self._cells[0:0] = [cells(r) for r in newest]
        self.endInsertRows()


class AuditPage(LazyPage):
    """The audit log of the current group, filtered by action and actor.

    Args:
        state: the shared app state.
        parent: the parent widget.

    Signals:
        filters_changed(): the action or actor filter changed.
    """

    filters_changed = Signal()

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.model = AuditModel(self)
        self.action_box = QComboBox(self)
        self.action_box.setAccessibleName("Action filter")
        self.action_box.addItem("All actions", None)
        for action in Action:
            self.action_box.addItem(action.value.replace("_", " "), action.value)
        self.actor_box = QComboBox(self)
        self.actor_box.setAccessibleName("Actor filter")
        self.actor_box.addItem("Everyone", None)
        for actor in Actor:
            self.actor_box.addItem(actor.value, actor.value)
        self.table = list_table(self.model, "auditTable", self)
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        char = self.table.fontMetrics().averageCharWidth()
        for column, width in enumerate((17, 15, 9, 17, 14, 6, 6)):
            header.resizeSection(column, width * char + 16)
        note = QLabel("Metadata only: the log never records memory content or search text.")
        note.setObjectName("hint")
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Show", self))
        filters.addWidget(self.action_box)
        filters.addWidget(QLabel("by", self))
        filters.addWidget(self.actor_box)
        filters.addStretch(1)
        filters.addWidget(note)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        self.action_box.currentIndexChanged.connect(self._on_filters)
        self.actor_box.currentIndexChanged.connect(self._on_filters)
        state.changed.connect(self._on_changes)
        state.group_changed.connect(lambda _g: self._invalidate(reload=True))

    def _on_filters(self) -> None:
        self._invalidate(reload=True)
        self.filters_changed.emit()

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and changes.audit:
            self._invalidate(reload=False)

    def refresh(self) -> None:
        if self._begin_refresh():
            action = self.action_box.currentData()
            self.model.load(
                self._state.service.store_for(self._state.group),
                [action] if action else [],
                self.actor_box.currentData(),
            )
        else:
            self.model.refresh()
