"""How the threads page shares its width: titles readable, the handoff gets the rest."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSplitter, QTableView, QWidget

from desktop.widgets.tables import fit_columns

#: Characters of a thread's title the list makes room for before the tabs get the rest.
TITLE_CHARS = 40
#: At most this share of the page goes to the list, however long the titles.
LIST_SHARE = 0.45
#: A narrower title than this and the counts beside it give way (Exchanges first).
MIN_TITLE_CHARS = 16
#: The columns that give way, in order: the selected thread's subtitle and its
#: History tab still say how many exchanges and handoff versions it has.
YIELDING = (3, 2)


def _char(table: QTableView) -> int:
    return table.fontMetrics().averageCharWidth()


def fit_thread_columns(table: QTableView) -> None:
    """Updated, Handoff and Exchanges as wide as their contents; the title takes the rest."""
    char = _char(table)
    fit_columns(table, {1: 20 * char + 16, 2: 12 * char + 16, 3: 14 * char + 16})


def beside_title(table: QTableView) -> int:
    """Pixels of the list that are not the title: the shown columns, scrollbar and frame."""
    header = table.horizontalHeader()
    shown = [c for c in range(1, header.count()) if not table.isColumnHidden(c)]
    chrome = table.verticalScrollBar().sizeHint().width() + 2 * table.frameWidth() + 4
    return sum(header.sectionSize(c) for c in shown) + chrome


class ThreadsSplitter(QSplitter):
    """The list beside the tabs, re-shared on every resize until the person drags it.

    A splitter only spreads a change in width by its stretch factors, so the share
    it first had decided forever: opened small and then maximised, the list kept a
    few hundred pixels and every title read "Chat abou…".

    Args:
        table: the thread list, whose columns say how much room the list wants.
        parent: the parent widget.
    """

    def __init__(self, table: QTableView, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._table = table
        #: The person moved the handle: their split stays.
        self.dragged = False
        self.splitterMoved.connect(self._on_moved)

    def _on_moved(self, _pos: int, _index: int) -> None:
        self.dragged = True

    def share(self) -> None:
        """Give the list its columns and a readable title, the tabs the rest (unless
        the person chose the split); then hide the counts a title has no room beside."""
        table = self._table
        for column in YIELDING:
            table.setColumnHidden(column, False)
        fit_thread_columns(table)
        total = sum(self.sizes())
        if total <= 0 or self.count() != 2:
            return
        beside = self.orientation() == Qt.Orientation.Horizontal
        if beside and not self.dragged:
            want = beside_title(table) + TITLE_CHARS * _char(table)
            left = min(want, int(total * LIST_SHARE))
            self.setSizes([left, total - left])
        # With the tabs under it (a narrow window) the list has the splitter's width.
        room = self.sizes()[0] if beside else self.width()
        for column in YIELDING:
            if room - beside_title(table) >= MIN_TITLE_CHARS * _char(table):
                break
            table.setColumnHidden(column, True)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.share()
