"""How a memory row is drawn: the type as a coloured chip, the content over a detail line.

Content gets the room: its first line is the memory's text, its second the
tags and where the memory came from. Painting reads only what the model has
already loaded for the row, so a 100,000-row list scrolls as before.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableView,
)

from core.model.entries import EntryType
from core.recall.ordering import SortKey
from desktop.memories.model import DETAIL_ROLE, IdListModel
from desktop.widgets.tables import leave_on_tab

AnyIndex = QModelIndex | QPersistentModelIndex

#: Chip colours per type: background, text. Behavioral types are warm, knowledge cool.
CHIP_COLOURS: dict[str, tuple[str, str]] = {
    EntryType.PREFERENCE.value: ("#efe3fb", "#6b3fa0"),
    EntryType.INSTRUCTION.value: ("#fdecc8", "#8a5300"),
    EntryType.CORRECTION.value: ("#fde0dd", "#a4262c"),
    EntryType.FACT.value: ("#dcebfb", "#1f5f9e"),
    EntryType.CONTEXT.value: ("#d9f2ec", "#1d6b57"),
}
_DETAIL = QColor("#6b7280")


def row_height(font_height: int) -> int:
    """Two lines of text and their padding."""
    return 2 * font_height + 14


class _Delegate(QStyledItemDelegate):
    def _background(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        opt.icon = QIcon()
        style = opt.widget.style() if opt.widget else QApplication.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)


class TypeChipDelegate(_Delegate):
    """The type as a rounded chip, coloured per type."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        self._background(painter, option, index)
        text = index.data(Qt.ItemDataRole.DisplayRole) or ""
        if not text:
            return
        back, fore = CHIP_COLOURS.get(text, ("#eceff3", "#3d4450"))
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        font = QFont(option.font)
        font.setPointSizeF(max(7.0, font.pointSizeF() * 0.88))
        painter.setFont(font)
        metrics = painter.fontMetrics()
        width = metrics.horizontalAdvance(text) + 14
        height = metrics.height() + 4
        rect = option.rect
        chip = QRect(rect.left() + 6, rect.top() + (rect.height() - height) // 2, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(back))
        painter.drawRoundedRect(chip, height / 2, height / 2)
        painter.setPen(QColor(fore))
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()


class ContentDelegate(_Delegate):
    """The content on the first line (with its privacy lock), tags and source on the second."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: AnyIndex) -> None:
        self._background(painter, option, index)
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        rect = option.rect.adjusted(6, 5, -6, -5)
        painter.save()
        metrics = painter.fontMetrics()
        line = metrics.height()
        icon = opt.icon
        if not icon.isNull():
            size = line - 2
            icon.paint(painter, QRect(rect.left(), rect.top() + 1, size, size))
            rect.setLeft(rect.left() + size + 4)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        fore = opt.palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        brush = index.data(Qt.ItemDataRole.ForegroundRole)
        painter.setPen(brush.color() if brush is not None else fore)
        first = QRect(rect.left(), rect.top(), rect.width(), line)
        text = metrics.elidedText(opt.text, Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(first, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        detail = index.data(DETAIL_ROLE) or ""
        if detail:
            small = QFont(option.font)
            small.setPointSizeF(max(7.0, small.pointSizeF() * 0.9))
            painter.setFont(small)
            painter.setPen(_DETAIL)
            second = QRect(rect.left(), rect.top() + line + 2, rect.width(), line)
            elided = painter.fontMetrics().elidedText(
                detail, Qt.TextElideMode.ElideRight, rect.width()
            )
            painter.drawText(
                second, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, elided
            )
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: AnyIndex) -> QSize:
        size = super().sizeHint(option, index)
        return QSize(size.width(), row_height(option.fontMetrics.height()))


#: Initial column widths, in average character widths (Content stretches).
_WIDTHS = {"type": 12, "confidence": 6, "age": 6, "status": 14}
#: Shown on each content cell's second line instead of in a column of their own.
_FOLDED = ("tags", "source")


#: Columns a narrow list leaves out, first to last, so the content keeps room.
_DROPPED_WHEN_NARROW = ("confidence", "status")
#: Average character widths the content column keeps before a column is left out.
_CONTENT_ROOM = 22


class _NarrowColumns(QObject):
    """Leaves out the confidence, then the status column while the list is too
    narrow for them beside readable content (the editor shows both)."""

    def __init__(self, table: QTableView, model: IdListModel) -> None:
        super().__init__(table)
        self._table = table
        self._keys = [c.key for c in model.columns]
        table.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._table and event.type() == QEvent.Type.Resize:
            self.fit()
        return False

    def fit(self) -> None:
        table, hh = self._table, self._table.horizontalHeader()
        char = table.fontMetrics().averageCharWidth()
        room = table.width() - 2 * table.frameWidth() - table.verticalScrollBar().sizeHint().width()
        # A hidden column measures 0: count it at the width it had (or starts with).
        fixed = {
            key: hh.sectionSize(column) or _WIDTHS.get(key, 10) * char + 16
            for column, key in enumerate(self._keys)
            if key not in _FOLDED and key != "content"
        }
        hidden: set[str] = set()
        for key in _DROPPED_WHEN_NARROW:
            if key in fixed and sum(fixed.values()) + _CONTENT_ROOM * char > room:
                del fixed[key]
                hidden.add(key)
        for column, key in enumerate(self._keys):
            if key in _DROPPED_WHEN_NARROW:
                table.setColumnHidden(column, key in hidden)


def sort_key_of(column_key: str) -> SortKey | None:
    """The order a click on the column ``column_key`` asks for."""
    try:
        return SortKey(column_key)
    except ValueError:
        return None


def setup_memory_table(table: QTableView, model: IdListModel) -> None:
    """Two-line rows, the type as a chip, columns sortable by a click on their header."""
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
    table.setWordWrap(False)
    table.setShowGrid(False)
    table.setAlternatingRowColors(True)
    leave_on_tab(table)
    # The model holds ids only: the store sorts (SortKey), the view must not.
    table.setSortingEnabled(False)
    vh = table.verticalHeader()
    vh.hide()
    # Fixed row heights let the view skip measuring rows it does not show.
    vh.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    vh.setDefaultSectionSize(row_height(table.fontMetrics().height()))
    hh = table.horizontalHeader()
    hh.setHighlightSections(False)
    hh.setSectionsClickable(True)
    hh.setSortIndicatorShown(True)
    hh.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    hh.setToolTip("Click a column to sort by it; click again to reverse")
    char = table.fontMetrics().averageCharWidth()
    for column, key in enumerate(c.key for c in model.columns):
        if key == "content":
            hh.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            table.setItemDelegateForColumn(column, ContentDelegate(table))
        else:
            hh.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            hh.resizeSection(column, _WIDTHS.get(key, 10) * char + 16)
        if key == "type":
            table.setItemDelegateForColumn(column, TypeChipDelegate(table))
        table.setColumnHidden(column, key in _FOLDED)
    _NarrowColumns(table, model)
