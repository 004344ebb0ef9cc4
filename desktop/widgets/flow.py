"""A row of controls that wraps onto more rows when the page is narrow.

Toolbars built with a plain ``QHBoxLayout`` set their page's minimum width to
the sum of their buttons, and on a small screen the page then scrolls
sideways. :class:`FlowLayout` places its items left to right and starts a new
row where the next one would not fit; an item that grows horizontally (a
search box, a stretch) shares out the room left on its row.

The layout does not answer "height for width": a scroll area sizes a page
that does to its preferred height, and in a small window such a page
scrolled though it would fit. Instead the height the rows take at the width
the layout was given is its minimum height, and it asks to be laid out again
when that changes. An item that does answer it (a :class:`FlowLabel`) gets
the height it needs at the width its row gives it.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt
from PySide6.QtWidgets import QLabel, QLayout, QLayoutItem, QSizePolicy, QSpacerItem, QWidget


class FlowLayout(QLayout):
    """Items in rows, wrapped to the width the layout gets.

    Args:
        parent: the widget the layout belongs to, if any.
        spacing: pixels between items, across and down.
    """

    def __init__(self, parent: QWidget | None = None, spacing: int = 6) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._gap = spacing
        #: The height the rows took at the last width given (None: not laid out yet).
        self._height: int | None = None
        self.setContentsMargins(0, 0, 0, 0)

    # -- QLayout overrides -------------------------------------------------------

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        # Only if something in it grows: a flow of buttons inside another flow keeps
        # its buttons on one row where that row has room for them all.
        grows = any(i.expandingDirections() & Qt.Orientation.Horizontal for i in self._visible())
        return Qt.Orientation.Horizontal if grows else Qt.Orientation(0)

    def sizeHint(self) -> QSize:
        # One row with everything: what the layout asks for when there is room.
        width = sum(i.sizeHint().width() for i in self._visible())
        width += self._gap * max(0, len(self._visible()) - 1)
        return QSize(width, self._rows_height()) + self._margin_size()

    def minimumSize(self) -> QSize:
        # The widest single item: everything else can go onto rows of its own.
        width = max((i.minimumSize().width() for i in self._visible()), default=0)
        return QSize(width, self._rows_height()) + self._margin_size()

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        height = self._arrange(rect, move=True)
        if height != self._height:
            # More rows (or fewer) than the parent made room for: lay out again.
            self._height = height
            self.update()

    # -- building ----------------------------------------------------------------

    def addStretch(self) -> None:
        """Room that pushes what follows on its row to the right."""
        self.addItem(QSpacerItem(0, 0, QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum))

    def addLayout(self, layout: QLayout) -> None:
        """A group of controls kept together on one row (another layout, as a whole)."""
        holder = QWidget(self.parentWidget())
        layout.setContentsMargins(0, 0, 0, 0)
        holder.setLayout(layout)
        self.addWidget(holder)

    # -- layout ------------------------------------------------------------------

    def _rows_height(self) -> int:
        """The rows' height at the last width, or one row's before the first layout."""
        if self._height is not None:
            return self._height - self._margin_size().height()
        return max((i.sizeHint().height() for i in self._visible()), default=0)

    def _visible(self) -> list[QLayoutItem]:
        return [i for i in self._items if not i.isEmpty() or isinstance(i, QSpacerItem)]

    def _margin_size(self) -> QSize:
        m: QMargins = self.contentsMargins()
        return QSize(m.left() + m.right(), m.top() + m.bottom())

    @staticmethod
    def _width_of(item: QLayoutItem, width: int) -> int:
        """What ``item`` takes before the spare room is shared: a growing item (a
        search box) its minimum, the others their preferred width."""
        if isinstance(item, QSpacerItem):
            return 0
        grows = bool(item.expandingDirections() & Qt.Orientation.Horizontal)
        want = item.minimumSize().width() if grows else item.sizeHint().width()
        return min(width, max(want, item.minimumSize().width()))

    @staticmethod
    def _height_of(item: QLayoutItem, width: int) -> int:
        """``item``'s height at ``width``: more lines for a label that wraps."""
        if item.hasHeightForWidth():
            return max(item.heightForWidth(width), item.minimumSize().height())
        return item.sizeHint().height()

    def _rows(self, width: int) -> list[list[QLayoutItem]]:
        rows: list[list[QLayoutItem]] = [[]]
        used = 0
        for item in self._visible():
            want = self._width_of(item, width)
            if rows[-1] and used + self._gap + want > width:
                rows.append([])
                used = 0
            used += (self._gap if rows[-1] else 0) + want
            rows[-1].append(item)
        # A stretch that ends up first or alone on a row pushes nothing.
        return [r for r in rows if any(not isinstance(i, QSpacerItem) for i in r)]

    def _arrange(self, rect: QRect, *, move: bool) -> int:
        m = self.contentsMargins()
        area = rect.marginsRemoved(m)
        width = max(1, area.width())
        y = area.y()
        for row in self._rows(width):
            widths = [self._width_of(i, width) for i in row]
            growing = [
                n for n, i in enumerate(row) if i.expandingDirections() & Qt.Orientation.Horizontal
            ]
            spare = width - sum(widths) - self._gap * (len(row) - 1)
            if spare > 0 and growing:
                share, extra = divmod(spare, len(growing))
                for k, n in enumerate(growing):
                    widths[n] += share + (1 if k < extra else 0)
            heights = [self._height_of(i, w) for i, w in zip(row, widths, strict=True)]
            height = max(heights)
            if move:
                x = area.x()
                for item, w, h in zip(row, widths, heights, strict=True):
                    top = y + (height - h) // 2
                    item.setGeometry(QRect(QPoint(x, top), QSize(w, h)))
                    x += w + self._gap
            y += height + self._gap
        return y - self._gap - area.y() + m.top() + m.bottom()


class FlowLabel(QLabel):
    """A line of text for a :class:`FlowLayout`: one line where its row has the
    room, wrapped onto more (at spaces) where it does not, never wider than the page.

    A plain label sets its page's minimum width to its text's, and a long one (the
    brief's counts) made a small window scroll sideways.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:
        # A wrapping label asks for a squarish block; this one asks for one line.
        margins = self.contentsMargins()
        width = self.fontMetrics().horizontalAdvance(self.text()) + 2 * self.margin()
        width += margins.left() + margins.right() + 1
        return QSize(width, self.heightForWidth(width))
