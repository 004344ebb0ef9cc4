"""The sidebar's width: every page's name whole, even beside a scrollbar.

A fixed width cut "Connect an agent" short ("Connect an ag…") once the page
list needed a scrollbar, as it does in a short window, or in a larger font.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QListWidget, QWidget

from desktop.widgets.text_room import RESTYLED

#: The sidebar's width when the names need no more.
WIDTH = 220


class _FitNames(QObject):
    """Widens the sidebar when its names and a scrollbar need more than :data:`WIDTH`."""

    def __init__(self, side: QWidget, nav: QListWidget) -> None:
        super().__init__(side)
        self._side, self._nav = side, nav
        nav.installEventFilter(self)
        # A page's name changes with what it counts ("Review (12)").
        nav.model().dataChanged.connect(lambda *_a: self.fit())
        self.fit()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._nav and event.type() in RESTYLED:
            self.fit()
        return False

    def fit(self) -> None:
        nav, layout = self._nav, self._side.layout()
        around = 0
        if layout is not None:
            margins = layout.contentsMargins()
            around = margins.left() + margins.right()
        names = nav.sizeHintForColumn(0) + 2 * nav.frameWidth()
        need = names + nav.verticalScrollBar().sizeHint().width() + around
        self._side.setFixedWidth(max(WIDTH, need))


def fit_names(side: QWidget, nav: QListWidget) -> None:
    """Keep ``side`` (which holds ``nav``) wide enough for every name in ``nav`` whole."""
    _FitNames(side, nav)
