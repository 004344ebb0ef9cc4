"""What the detail pane shows when no memory is selected: a hint, and the keys that help."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

#: The hint when nothing is selected (other texts replace it, e.g. "This memory was deleted.").
IDLE_TEXT = "Select a memory to read or edit it here."

_KEYS = (
    ("Ctrl+N", "new memory"),
    ("Ctrl+F", "search"),
    ("↓ / Enter", "from the search into the list"),
    ("Enter", "edit the selected memory"),
    ("Ctrl+S", "save"),
    ("Del", "delete (asks first)"),
    ("Ctrl+Z", "undo a delete"),
    ("Ctrl+K", "command palette"),
    ("F1", "all shortcuts"),
)


class IdlePane(QWidget):
    """A centred hint above a short list of keys."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(IDLE_TEXT, self)
        self.label.setObjectName("emptyTitle")
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setWordWrap(True)
        rows = "".join(
            f"<tr><td align='right'><b>{key}</b>&nbsp;&nbsp;</td><td>{what}</td></tr>"
            for key, what in _KEYS
        )
        keys = QLabel(f"<table cellspacing='4'>{rows}</table>", self)
        keys.setObjectName("hint")
        keys.setTextFormat(Qt.TextFormat.RichText)
        # A narrow pane wraps a key's description rather than taking room from the list.
        keys.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.label)
        layout.addSpacing(16)
        layout.addWidget(keys, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)

    def set_text(self, text: str | None) -> None:
        self.label.setText(text or IDLE_TEXT)
