"""A table model over frozen records (threads, receipts, versions, exchanges) read in pages.

The lists beside the memory browser are short-to-medium lists of core's frozen
records rather than ids over one big table, so :class:`RecordModel` keeps the
records of the rows handed to the view and asks a *fetch* function for the
next page when the view scrolls to the end (``canFetchMore``/``fetchMore``).
Each list says how its pages are read: by offset, by a growing limit, or
before the last id shown.

:meth:`RecordModel.refresh` re-reads what is shown after a change record. When
the same rows come back in the same order (a receipt's state changed, a
thread got a new handoff version) only their cells change, so the person's
selection and scroll position stay; otherwise the model resets and the page
selects the same record again by its key.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QHeaderView, QTableView

from desktop.widgets.tables import FlatTableModel, list_table

T = TypeVar("T")
AnyIndex = QModelIndex | QPersistentModelIndex

#: Reads the next page: given the rows loaded so far and the page size, up to
#: that many more rows. Fewer than a page means the list ends there.
Fetch = Callable[[Sequence[T], int], list[T]]

#: The role under which every cell answers with its record's key.
KEY_ROLE = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class Column(Generic[T]):
    """One column: its header, its text, and optionally a tooltip and a width.

    Attributes:
        width: in average character widths; 0 stretches the column.
    """

    header: str
    text: Callable[[T], str]
    tip: Callable[[T], str | None] | None = None
    numeric: bool = False
    width: int = 10


class RecordModel(FlatTableModel, Generic[T]):
    """Records in the order a fetch function reads them, a page at a time.

    Args:
        columns: what each column shows.
        key: a record's identity (an id), to find it again after a refresh.
        page: rows read per fetch.
        parent: the owning QObject.
    """

    def __init__(
        self,
        columns: Sequence[Column[T]],
        key: Callable[[T], Hashable],
        page: int = 200,
        parent: Any = None,
    ) -> None:
        super().__init__(parent)
        self.columns = tuple(columns)
        self.page = page
        self._key = key
        self._fetch: Fetch[T] | None = None
        self._rows: list[T] = []
        self._more = False

    # -- Qt overrides ------------------------------------------------------------

    def shown_rows(self) -> int:
        return len(self._rows)

    def header_columns(self) -> Sequence[Column[T]]:
        return self.columns

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._rows):
            return None
        record = self._rows[index.row()]
        column = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(record)
        if role == Qt.ItemDataRole.ToolTipRole:
            return None if column.tip is None else column.tip(record)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            side = Qt.AlignmentFlag.AlignRight if column.numeric else Qt.AlignmentFlag.AlignLeft
            return side | Qt.AlignmentFlag.AlignVCenter
        if role == KEY_ROLE:
            return self._key(record)
        return self.extra_data(record, index.column(), role)

    def extra_data(self, record: T, column: int, role: int) -> Any:
        """Other roles (colours, badges); subclasses answer those they show."""
        return None

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return not parent.isValid() and self._more

    def fetchMore(self, parent: AnyIndex) -> None:
        if parent.isValid() or self._fetch is None or not self._more:
            return
        rows = self._fetch(self._rows, self.page)
        self._more = len(rows) == self.page
        if rows:
            have = len(self._rows)
            self.beginInsertRows(QModelIndex(), have, have + len(rows) - 1)
            self._rows.extend(rows)
            self.endInsertRows()

    # -- loading -----------------------------------------------------------------

    def load(self, fetch: Fetch[T] | None) -> None:
        """Show the list ``fetch`` reads, from its first page (None: nothing)."""
        self.beginResetModel()
        self._fetch = fetch
        self._rows = []
        self._more = False
        if fetch is not None:
            self._rows = fetch([], self.page)
            self._more = len(self._rows) == self.page
        self.endResetModel()

    def extend(self, rows: Sequence[T]) -> None:
        """Show ``rows`` after those shown, read in the background (a search's next
        page); ``fetch`` must read them too, for :meth:`refresh`."""
        if rows:
            have = len(self._rows)
            self.beginInsertRows(QModelIndex(), have, have + len(rows) - 1)
            self._rows.extend(rows)
            self.endInsertRows()

    def refresh(self) -> None:
        """Read again as many rows as are shown (at least a page)."""
        if self._fetch is None:
            return
        want = max(len(self._rows), self.page)
        rows: list[T] = []
        more = True
        while more and len(rows) < want:
            page = self._fetch(rows, self.page)
            rows.extend(page)
            more = len(page) == self.page
        if [self._key(r) for r in rows] == [self._key(r) for r in self._rows]:
            self._rows, self._more = rows, more
            if rows:
                last = self.index(len(rows) - 1, len(self.columns) - 1)
                self.dataChanged.emit(self.index(0, 0), last)
            return
        self.beginResetModel()
        self._rows, self._more = rows, more
        self.endResetModel()

    # -- reading -----------------------------------------------------------------

    def record_at(self, row: int) -> T:
        return self._rows[row]

    def row_of(self, key: Hashable) -> int | None:
        for row, record in enumerate(self._rows):
            if self._key(record) == key:
                return row
        return None

    def records(self) -> list[T]:
        return list(self._rows)


def record_table(model: RecordModel[Any], name: str, parent: Any = None) -> QTableView:
    """A table over ``model`` styled like the app's other lists, columns sized to fit."""
    table = list_table(model, name, parent)
    header = table.horizontalHeader()
    header.setHighlightSections(False)
    char = table.fontMetrics().averageCharWidth()
    # Headers are bold and padded: never narrower than the header's own text.
    bold = QFont(header.font())
    bold.setBold(True)
    header_text = QFontMetrics(bold)
    for i, column in enumerate(model.columns):
        if column.width:
            fit = header_text.horizontalAdvance(column.header) + 24
            header.resizeSection(i, max(column.width * char + 16, fit))
        else:
            header.setSectionResizeMode(i, QHeaderView.ResizeMode.Stretch)
    return table
