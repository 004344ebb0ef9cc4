"""The line above the editor's form when the version shown is no longer current.

Three cases: the person opened an old version (it links to the current one),
an agent replaced the memory while the person was editing it, or an agent
deleted it then. In the last two the person's text must not be lost: the
notice offers to save it as a new version on top of the agent's, or says that
it will be added as a new memory.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget


class VersionNotice(QFrame):
    """Says that the shown version was replaced, and what the person can do.

    Signals:
        open_requested(str): show the entry with this id (the current version).
        save_on_top_requested(): save the person's text as a new version on
            top of the current one.
    """

    open_requested = Signal(str)
    save_on_top_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("versionNotice")
        self.text = QLabel(self)
        self.text.setObjectName("warningLabel")
        self.text.setWordWrap(True)
        self.text.linkActivated.connect(self.open_requested.emit)
        self.save_on_top_button = QPushButton("Save mine as a new version on top", self)
        self.save_on_top_button.setObjectName("primary")
        self.save_on_top_button.setToolTip(
            "Keep the agent's version in the history and save your text after it (Ctrl+S)"
        )
        self.save_on_top_button.clicked.connect(self.save_on_top_requested.emit)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.save_on_top_button)
        self.hide()

    def show_replaced(self, current_id: str, *, while_editing: bool) -> None:
        """The shown version was replaced by ``current_id``."""
        link = f'<a href="{current_id}">Show the current version</a>'
        if while_editing:
            self.text.setText(
                "An agent replaced this memory while you were editing it. Your text is "
                f"still here. {link}"
            )
        else:
            self.text.setText(f"This version was replaced and is kept for history. {link}")
        self.save_on_top_button.setVisible(while_editing)
        self.show()

    def show_deleted(self) -> None:
        """The memory being edited was deleted; the person's text is now a new memory."""
        self.text.setText(
            "An agent deleted this memory while you were editing it. Your text is still "
            "here: Add memory (Ctrl+S) keeps it as a new memory, Cancel drops it."
        )
        self.save_on_top_button.hide()
        self.show()
