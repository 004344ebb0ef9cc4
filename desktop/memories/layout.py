"""How the memory page is arranged: filters on top, the list beside the detail, counts below.

Where the two do not fit side by side (a 1280x800 screen at 200 % leaves a
640x400 window), the detail goes under the list and the page scrolls down,
rather than sideways with the editor's boxes and buttons cut off.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.memories.editor import FORM_WIDTH

#: The narrowest the list gets beside the editor.
LIST_WIDTH = 320
#: The list's height when the editor is under it: a few rows.
STACKED_LIST_HEIGHT = 160


class _Stacking(QObject):
    """Puts the detail under the list when the width the page has cannot hold both."""

    def __init__(self, page: QWidget, splitter: QSplitter, table: QTableView) -> None:
        super().__init__(page)
        self._page, self._splitter, self._table = page, splitter, table
        self._watched: QWidget | None = None
        page.installEventFilter(self)

    def _room(self) -> int:
        """The width the page is given: that of the scroll area around it, if any (the
        page itself is never narrower than its minimum, which side by side is too wide)."""
        parent = self._page.parentWidget()
        while parent is not None and not isinstance(parent, QScrollArea):
            parent = parent.parentWidget()
        viewport = parent.viewport() if parent is not None else None
        if viewport is not self._watched:
            if self._watched is not None:
                self._watched.removeEventFilter(self)
            self._watched = viewport
            if viewport is not None:
                viewport.installEventFilter(self)
        return viewport.width() if viewport is not None else self._page.width()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in (
            QEvent.Type.Resize,
            QEvent.Type.Show,
            QEvent.Type.ParentChange,
            QEvent.Type.LayoutRequest,
        ):
            self.fit()
        return False

    def fit(self) -> None:
        margins = self._page.contentsMargins()
        layout = self._page.layout()
        if layout is not None:
            inner = layout.contentsMargins()
            margins.setLeft(margins.left() + inner.left())
            margins.setRight(margins.right() + inner.right())
        side = self._splitter.widget(1)
        # As wide as the editor's form needs even while it shows the narrower hint,
        # so selecting a memory does not move the editor under the list.
        side_width = FORM_WIDTH if side is None else max(FORM_WIDTH, side.minimumSizeHint().width())
        beside = self._table.minimumWidth() + side_width + self._splitter.handleWidth()
        beside += margins.left() + margins.right()
        stacked = self._room() < beside
        orientation = Qt.Orientation.Vertical if stacked else Qt.Orientation.Horizontal
        if self._splitter.orientation() != orientation:
            self._splitter.setOrientation(orientation)
            self._table.setMinimumHeight(STACKED_LIST_HEIGHT if stacked else 0)


def arrange(
    page: QWidget,
    filters: QWidget,
    table: QTableView,
    editor: QWidget,
    related: QWidget,
    progress: QWidget,
) -> tuple[QLabel, QPushButton]:
    """Lay ``page`` out, a bulk change's ``progress`` under the list; returns the count
    label and the "Delete all matching" button it adds."""
    count_label = QLabel(page)
    count_label.setObjectName("hint")
    delete_matching = QPushButton("Delete all matching…", page)
    delete_matching.setObjectName("danger")
    delete_matching.setToolTip(
        "Delete every memory the search and filters match (asks first, Ctrl+Z undoes)"
    )
    delete_matching.setEnabled(False)

    splitter = QSplitter(Qt.Orientation.Horizontal, page)
    splitter.addWidget(table)
    side = QWidget(page)
    side_layout = QVBoxLayout(side)
    side_layout.setContentsMargins(0, 0, 0, 0)
    side_layout.addWidget(editor, 1)
    side_layout.addWidget(related)
    splitter.addWidget(side)
    # Both sides give way as the window narrows, the list less than the editor,
    # so on a small screen the list keeps room to read its rows. The editor is as
    # narrow as what it shows allows: the form its fields and buttons, the hint
    # shown when nothing is selected less, leaving the list the rest.
    splitter.setStretchFactor(0, 3)
    splitter.setStretchFactor(1, 1)
    splitter.setChildrenCollapsible(False)
    splitter.setSizes([800, 380])
    table.setMinimumWidth(LIST_WIDTH)
    _Stacking(page, splitter, table)
    layout = QVBoxLayout(page)
    layout.addWidget(filters)
    layout.addWidget(splitter, 1)
    bottom = QHBoxLayout()
    bottom.addWidget(count_label)
    bottom.addWidget(delete_matching)
    bottom.addWidget(progress, 1)
    bottom.addStretch(1)
    layout.addLayout(bottom)
    return count_label, delete_matching
