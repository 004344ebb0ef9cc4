"""A dismissable line above the pages for warnings and errors."""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from desktop.widgets.messages import Level

#: How long a warning or an error stays on screen.
ERROR_MS = 10000


class Banner(QFrame):
    """A dismissable line above the pages for warnings and errors."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        self.text = QLabel(self)
        self.text.setWordWrap(True)
        close = QPushButton("Dismiss", self)
        close.setObjectName("flat")
        close.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 6, 8, 6)
        layout.addWidget(self.text, 1)
        layout.addWidget(close)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def show_text(self, level: Level, text: str) -> None:
        self.setProperty("level", level.value)
        self.style().polish(self)
        self.text.setText(text)
        self.show()
        self._timer.start(ERROR_MS)
