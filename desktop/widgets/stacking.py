"""Two panes side by side where the page has the width, one under the other where not.

A splitter's minimum width is the sum of its panes', and in a small window
(a 1280x800 screen at 200 % leaves 640x400) a page with a list beside its
detail scrolled sideways with the detail cut off. :func:`stack_when_narrow`
turns the splitter vertical when the width the page is given cannot hold both
panes, and the page scrolls down instead.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import QScrollArea, QSplitter, QWidget


def _least_width(widget: QWidget | None) -> int:
    if widget is None:
        return 0
    return max(widget.minimumWidth(), widget.minimumSizeHint().width())


class Stacking(QObject):
    """Puts a splitter's second pane under its first when the page is too narrow for both.

    Args:
        page: the page the splitter is on.
        splitter: the two panes, side by side when there is room.
        second_width: the least width the second pane needs beside the first, if
            more than it says (the memory editor's form while it shows a hint).
        stacked_height: the first pane's least height when the second is under it.

    Signals:
        stacked_changed(bool): the panes went one under the other (True) or back
            side by side (False).
    """

    stacked_changed = Signal(bool)

    def __init__(
        self, page: QWidget, splitter: QSplitter, second_width: int, stacked_height: int
    ) -> None:
        super().__init__(page)
        self._page, self._splitter = page, splitter
        self._second_width, self._stacked_height = second_width, stacked_height
        self._watched: QWidget | None = None
        page.installEventFilter(self)

    @property
    def stacked(self) -> bool:
        return self._splitter.orientation() == Qt.Orientation.Vertical

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
        """Side by side or stacked, as the room the page has now allows."""
        margins = self._page.contentsMargins()
        layout = self._page.layout()
        if layout is not None:
            inner = layout.contentsMargins()
            margins.setLeft(margins.left() + inner.left())
            margins.setRight(margins.right() + inner.right())
        first, second = self._splitter.widget(0), self._splitter.widget(1)
        beside = _least_width(first) + max(self._second_width, _least_width(second))
        beside += self._splitter.handleWidth() + margins.left() + margins.right()
        stacked = self._room() < beside
        if stacked == self.stacked:
            return
        self._splitter.setOrientation(
            Qt.Orientation.Vertical if stacked else Qt.Orientation.Horizontal
        )
        if first is not None:
            first.setMinimumHeight(self._stacked_height if stacked else 0)
        self.stacked_changed.emit(stacked)


def stack_when_narrow(
    page: QWidget, splitter: QSplitter, *, second_width: int = 0, stacked_height: int = 160
) -> Stacking:
    """Keep ``splitter``'s panes side by side while ``page`` has the width, else stacked."""
    return Stacking(page, splitter, second_width, stacked_height)
