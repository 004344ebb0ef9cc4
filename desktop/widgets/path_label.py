"""A file path that fits the room it gets: cut in the middle, whole in its tooltip.

A path is one long word that a label cannot wrap, so a plain ``QLabel`` holding
one asks for its whole width and makes a narrow page scroll sideways. This one
asks for little, shows as much of the path as fits with "…" in the middle
(its start and file name stay), and keeps the whole path in its tooltip and in
its context menu's *Copy path*.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QGuiApplication, QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

#: How many characters of the path the label shows at the least.
MIN_CHARS = 16


class PathLabel(QLabel):
    """A label showing ``path`` elided in the middle to its width.

    Args:
        path: the full path.
        parent: the parent widget.
    """

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._path = ""
        copy = QAction("Copy path", self)
        copy.triggered.connect(lambda: QGuiApplication.clipboard().setText(self._path))
        self.addAction(copy)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.set_path(path)

    def path(self) -> str:
        return self._path

    def set_path(self, path: str) -> None:
        self._path = path
        self.setToolTip(path)
        self.setAccessibleName(path)
        self._elide()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        return QSize(metrics.horizontalAdvance(self._path) + 4, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().averageCharWidth() * MIN_CHARS, self.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = self.contentsRect().width()
        self.setText(self.fontMetrics().elidedText(self._path, Qt.TextElideMode.ElideMiddle, room))
