"""The detail pane's page for a selection of several memories."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget


class BulkPanel(QWidget):
    """Tag, accept or delete every selected memory at once.

    Signals:
        accept_requested(object): accept these candidate ids (``list[str]``).
        delete_requested(object): delete these ids.
        tag_requested(object, str): add a tag to these ids.
    """

    accept_requested = Signal(object)
    delete_requested = Signal(object)
    tag_requested = Signal(object, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._ids: list[str] = []
        self.title = QLabel(self)
        self.title.setObjectName("editorTitle")
        self.title.setWordWrap(True)
        self.rest = QLabel(self)
        self.rest.setObjectName("hint")
        self.rest.setWordWrap(True)
        self.tag = QLineEdit(self)
        self.tag.setAccessibleName("Tag to add")
        self.tag.setPlaceholderText("tag to add")
        self.tag_button = QPushButton("Add tag", self)
        self.accept_button = QPushButton("Accept candidates", self)
        self.delete_button = QPushButton("Delete…", self)
        self.delete_button.setObjectName("danger")
        self.waiting = QLabel(
            "A bulk change is under way (see under the list): these wait until it ends.", self
        )
        self.waiting.setObjectName("hint")
        self.waiting.setWordWrap(True)
        self.waiting.hide()
        tag_row = QHBoxLayout()
        tag_row.addWidget(self.tag, 1)
        tag_row.addWidget(self.tag_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.rest)
        layout.addLayout(tag_row)
        layout.addWidget(self.accept_button)
        layout.addWidget(self.delete_button)
        layout.addWidget(self.waiting)
        layout.addStretch(1)
        self.tag_button.clicked.connect(self._tag)
        self.tag.returnPressed.connect(self._tag)
        self.accept_button.clicked.connect(lambda: self.accept_requested.emit(list(self._ids)))
        self.delete_button.clicked.connect(lambda: self.delete_requested.emit(list(self._ids)))

    def show_selection(self, ids: Sequence[str], candidates: int, listed: int) -> None:
        """Offer the actions for ``ids``, ``candidates`` of them candidates, out of ``listed``."""
        self._ids = list(ids)
        if len(ids) < listed:
            # Ctrl+A selects the rows the list has drawn so far, not the whole result.
            self.title.setText(f"{len(ids):,} of {listed:,} memories selected")
            self.rest.setText(
                "These act on the selected rows only. To act on every memory listed, "
                "use Delete all matching… under the list."
            )
        else:
            self.title.setText(f"{len(ids):,} memories selected")
            self.rest.clear()
        self.rest.setVisible(bool(self.rest.text()))
        self.accept_button.setVisible(candidates > 0)
        self.accept_button.setText(
            f"Accept {candidates} candidate" + ("s" if candidates != 1 else "")
        )

    def set_waiting(self, waiting: bool) -> None:
        """Hold the actions while another bulk change runs, and say why."""
        for w in (self.tag, self.tag_button, self.accept_button, self.delete_button):
            w.setEnabled(not waiting)
        self.waiting.setVisible(waiting)

    def clear(self) -> None:
        self._ids = []

    def _tag(self) -> None:
        tag = self.tag.text().strip()
        if tag and self._ids:
            self.tag_requested.emit(list(self._ids), tag)
            self.tag.clear()
