"""A table model over ordered entry ids whose rows load only when shown.

Like Anki's browser table model, :class:`IdListModel` holds just the ordered
ids of the current query; an entry is read from the store (a hundred at a
time) the first time a view asks for one of its cells. Rows are handed to the
view in pages through ``canFetchMore``/``fetchMore``, so a query matching
100,000 entries costs the ids, one page and the rows on screen.

:meth:`IdListModel.update` takes a fresh id list for the same query (after an
agent's write, say) and turns the difference into row insertions and
removals, so the person's selection and current row survive; only when the
order of surviving rows changed does it fall back to a reset.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from core.model.entries import MemoryEntry, Privacy, utc_now
from desktop.memories.privacy import lock_icon, privacy_tooltip
from desktop.memories.values import MEMORY_COLUMNS, Column, RowView, detail_line
from desktop.widgets.tables import FlatTableModel

#: Reads entries by id; ids it does not return are gone from the store.
Loader = Callable[[list[str]], dict[str, MemoryEntry]]
AnyIndex = QModelIndex | QPersistentModelIndex

#: The role under which every cell also answers with its entry's id.
ID_ROLE = Qt.ItemDataRole.UserRole + 1
#: The second line of a content cell: tags, source and trust (see :mod:`desktop.memories.rows`).
DETAIL_ROLE = Qt.ItemDataRole.UserRole + 2

_MUTED = QBrush(QColor("#8a8f98"))
_GONE_TEXT = "(deleted)"


def _runs(positions: list[int]) -> list[tuple[int, int]]:
    """Sorted positions as inclusive ``(first, last)`` runs of consecutive numbers."""
    runs: list[tuple[int, int]] = []
    for p in positions:
        if runs and runs[-1][1] == p - 1:
            runs[-1] = (runs[-1][0], p)
        else:
            runs.append((p, p))
    return runs


class IdListModel(FlatTableModel):
    """Ordered ids, with rows loaded lazily through ``loader``.

    Args:
        loader: reads entries by id (the GUI thread's store).
        columns: what each column shows.
        parent: the owning QObject.
    """

    #: Rows handed to the view per fetchMore.
    PAGE = 500
    #: Rows read from the store at once when one of them is first needed.
    CHUNK = 100
    #: Loaded rows kept; past this the cache starts over (rows reload on demand).
    CACHE_LIMIT = 20_000

    def __init__(
        self,
        loader: Loader,
        columns: Sequence[Column] = MEMORY_COLUMNS,
        parent: Any = None,
    ) -> None:
        super().__init__(parent)
        self._loader = loader
        self._columns = tuple(columns)
        self._ids: list[str] = []
        self._partial = False
        #: Rows a search found by meaning alone (:mod:`desktop.memories.meaning`).
        self.by_meaning: frozenset[str] = frozenset()
        self._shown = 0
        self._rows: dict[str, RowView | None] = {}
        self._index: dict[str, int] | None = None
        self._now = utc_now()

    # -- Qt overrides ------------------------------------------------------------

    def shown_rows(self) -> int:
        return self._shown

    def header_columns(self) -> Sequence[Column]:
        return self._columns

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= self._shown:
            return None
        column = self._columns[index.column()]
        if role == ID_ROLE:
            return self._ids[index.row()]
        if role == DETAIL_ROLE:
            row = self._row(index.row())
            if row is None:
                return ""
            detail = detail_line(row.entry)
            return f"{detail}  ·  by meaning" if row.entry.id in self.by_meaning else detail
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column.numeric:
                return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            return Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        if role not in (
            Qt.ItemDataRole.DisplayRole,
            Qt.ItemDataRole.ToolTipRole,
            Qt.ItemDataRole.ForegroundRole,
            Qt.ItemDataRole.DecorationRole,
        ):
            return None
        row = self._row(index.row())
        if role == Qt.ItemDataRole.ForegroundRole:
            return _MUTED if row is None or row.muted else None
        if role == Qt.ItemDataRole.DecorationRole:
            # The privacy marker sits in front of the content it applies to.
            if row is None or column.key != "content":
                return None
            return lock_icon(row.entry.privacy)
        if row is None:
            return _GONE_TEXT if column.key == "content" else ""
        if role == Qt.ItemDataRole.ToolTipRole:
            if column.key != "content":
                return None
            # Plain-text tooltips do not wrap by themselves.
            text = textwrap.fill(row.entry.content[:1000], 80)
            if row.entry.privacy is Privacy.PUBLIC:
                return text
            return f"{privacy_tooltip(row.entry.privacy)}\n\n{text}"
        return row.cells[index.column()]

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return not parent.isValid() and self._shown < len(self._ids)

    def fetchMore(self, parent: AnyIndex) -> None:
        if parent.isValid():
            return
        self.show_rows(self._shown + self.PAGE)

    # -- reading -----------------------------------------------------------------

    @property
    def columns(self) -> tuple[Column, ...]:
        return self._columns

    @property
    def total(self) -> int:
        """Ids of the whole query, shown or not yet."""
        return len(self._ids)

    def ids(self) -> Sequence[str]:
        return self._ids

    def id_at(self, row: int) -> str:
        return self._ids[row]

    def row_of(self, entry_id: str) -> int | None:
        """The row of ``entry_id`` in the whole query (it may not be shown yet)."""
        if self._index is None:
            self._index = {entry_id: row for row, entry_id in enumerate(self._ids)}
        return self._index.get(entry_id)

    def entry_at(self, row: int) -> MemoryEntry | None:
        """The entry on ``row``, or ``None`` if it left the store since the query ran."""
        view = self._row(row)
        return None if view is None else view.entry

    def _row(self, row: int) -> RowView | None:
        entry_id = self._ids[row]
        if entry_id in self._rows:
            return self._rows[entry_id]
        if len(self._rows) >= self.CACHE_LIMIT:
            self._rows.clear()
        start = row - row % self.CHUNK
        missing = [i for i in self._ids[start : start + self.CHUNK] if i not in self._rows]
        found = self._loader(missing)
        for i in missing:
            entry = found.get(i)
            self._rows[i] = (
                None if entry is None else RowView.build(entry, self._columns, self._now)
            )
        return self._rows[entry_id]

    # -- changing ----------------------------------------------------------------

    def set_loader(self, loader: Loader) -> None:
        """Read from another store (the group changed); call :meth:`reset` next."""
        self._loader = loader

    def reset(self, ids: Iterable[str], *, partial: bool = False) -> None:
        """Show a new query's ids from the top (``partial``: its first ones; the
        rest come to :meth:`extend`)."""
        self.beginResetModel()
        self._partial = partial
        self._ids = list(ids)
        self._index = None
        self._rows.clear()
        self._now = utc_now()
        self._shown = min(len(self._ids), self.PAGE)
        self.endResetModel()

    def extend(self, ids: Sequence[str]) -> bool:
        """Complete a partial list with the whole of it; False (nothing changed)
        unless the list is partial and ``ids`` begins with what it holds."""
        if not self._partial or list(ids[: len(self._ids)]) != self._ids:
            return False
        self._partial = False
        self._ids.extend(ids[len(self._ids) :])
        self._index = None
        return True

    @property
    def listed_by_meaning(self) -> int:
        """How many of the listed rows a search found by meaning alone."""
        return sum(1 for i in self.by_meaning if self.row_of(i) is not None)

    @property
    def partial(self) -> bool:
        """Only the first ids of the query are here yet."""
        return self._partial

    def show_rows(self, count: int) -> None:
        """Hand the view at least ``count`` rows (or all there are)."""
        target = min(len(self._ids), count)
        if target <= self._shown:
            return
        self.beginInsertRows(QModelIndex(), self._shown, target - 1)
        self._shown = target
        self.endInsertRows()

    def update(self, ids: Sequence[str]) -> bool:
        """Move to ``ids`` (same query, newer data) by inserting and removing rows.

        Returns False, changing nothing, when rows that stay changed order; the
        caller then resets (and restores the selection itself).
        """
        old = self._ids
        new = list(ids)
        self._partial = False  # a refresh lists every id
        if old == new:
            return True
        new_set, old_set = set(new), set(old)
        if [i for i in old if i in new_set] != [i for i in new if i in old_set]:
            return False
        self._index = None
        self._ids = list(old)
        removed = [p for p, i in enumerate(old) if i not in new_set]
        # From the bottom up, so earlier positions stay valid.
        for first, last in reversed(_runs(removed)):
            visible_last = min(last, self._shown - 1)
            if first <= visible_last:
                self.beginRemoveRows(QModelIndex(), first, visible_last)
                del self._ids[first : last + 1]
                self._shown -= visible_last - first + 1
                self.endRemoveRows()
            else:
                del self._ids[first : last + 1]
        added = [p for p, i in enumerate(new) if i not in old_set]
        # From the top down: everything before ``first`` already matches ``new``.
        for first, last in _runs(added):
            block = new[first : last + 1]
            if first < self._shown or self._shown == len(self._ids):
                self.beginInsertRows(QModelIndex(), first, last)
                self._ids[first:first] = block
                self._shown += len(block)
                self.endInsertRows()
            else:
                self._ids[first:first] = block
        for p in removed:
            self._rows.pop(old[p], None)
        return True

    def refresh_rows(self, ids: Iterable[str] | None = None) -> None:
        """Reload ``ids`` (default: every row) from the store when next shown."""
        self._now = utc_now()
        if ids is None:
            self._rows.clear()
            if self._shown:
                self.dataChanged.emit(
                    self.index(0, 0), self.index(self._shown - 1, len(self._columns) - 1)
                )
            return
        for entry_id in ids:
            self._rows.pop(entry_id, None)
            row = self.row_of(entry_id)
            if row is not None and row < self._shown:
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(self._columns) - 1))
