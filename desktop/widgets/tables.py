"""What the app's flat, read-only tables share: their model base and their look."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import (
    QAbstractItemModel,
    QAbstractTableModel,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView, QTableWidget, QWidget

AnyIndex = QModelIndex | QPersistentModelIndex


class HeaderColumn(Protocol):
    """What a column's header needs: its text, and whether it holds numbers."""

    @property
    def header(self) -> str: ...

    @property
    def numeric(self) -> bool: ...


@dataclass(frozen=True)
class Header:
    """A plain column header, for a model that computes its cells itself."""

    header: str
    numeric: bool = False


class FlatTableModel(QAbstractTableModel):
    """Selectable rows with no children, under headers from :meth:`header_columns`.

    Subclasses keep their own rows and say how many are shown (:meth:`shown_rows`).
    """

    def shown_rows(self) -> int:
        raise NotImplementedError

    def header_columns(self) -> Sequence[HeaderColumn]:
        raise NotImplementedError

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.shown_rows()

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.header_columns())

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        columns = self.header_columns()
        if orientation is not Qt.Orientation.Horizontal or not 0 <= section < len(columns):
            return None
        column = columns[section]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.header
        if role == Qt.ItemDataRole.TextAlignmentRole and column.numeric:
            return Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return (
            Qt.ItemFlag.ItemIsEnabled
            | Qt.ItemFlag.ItemIsSelectable
            | Qt.ItemFlag.ItemNeverHasChildren
        )


def leave_on_tab(table: QAbstractItemView) -> None:
    """Tab moves on to the next control, as everywhere else, instead of from cell to cell.

    Rows are selected whole, so Qt's default (Tab walks the cells) only changed the
    selected row every few presses and never let the keyboard leave the list.
    """
    table.setTabKeyNavigation(False)


def list_table(model: QAbstractItemModel, name: str, parent: QWidget | None = None) -> QTableView:
    """A table over ``model`` in the app's list style: whole rows, no grid, fixed row heights."""
    table = QTableView(parent)
    table.setObjectName(name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.setAlternatingRowColors(True)
    leave_on_tab(table)
    table.verticalHeader().hide()
    table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 10)
    table.horizontalHeader().setSectionsClickable(False)
    return table


def item_table(
    columns: Sequence[str],
    name: str,
    parent: QWidget,
    selection: QAbstractItemView.SelectionMode = QAbstractItemView.SelectionMode.SingleSelection,
) -> QTableWidget:
    """A read-only table of items in the list style: the first column stretches, rows select whole.

    For short lists a view fills itself (claims, the trash); long ones use :func:`list_table`
    over a lazy model.
    """
    table = QTableWidget(0, len(columns), parent)
    table.setObjectName(name)
    table.setHorizontalHeaderLabels(list(columns))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(selection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setShowGrid(False)
    table.setWordWrap(False)
    leave_on_tab(table)
    table.verticalHeader().hide()
    header = table.horizontalHeader()
    header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    for column in range(1, len(columns)):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
    return table


def fit_columns(table: QTableView, caps: Mapping[int, int]) -> None:
    """Size each column of ``caps`` to its contents and header, up to its cap in
    pixels, so the stretching text column gets the rest. Call after the rows change.

    A column sized to its contents alone (``ResizeToContents``) takes what its longest
    cell asks, however narrow the table: a claim's text was left "The office do…".
    """
    header = table.horizontalHeader()
    for column, cap in caps.items():
        if table.isColumnHidden(column):
            continue
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        want = max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
        header.resizeSection(column, min(want, cap))
