"""The detail pane's page for a selection of several memories."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class BulkPanel(QWidget):
    """Tag, untag, accept or delete every selected memory at once.

    Signals:
        accept_requested(object): accept these candidate ids (``list[str]``).
        delete_requested(object): delete these ids.
        tag_requested(object, str): add a tag to these ids.
        untag_requested(object, str): remove a tag from these ids.
    """

    accept_requested = Signal(object)
    delete_requested = Signal(object)
    tag_requested = Signal(object, str)
    untag_requested = Signal(object, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._ids: list[str] = []
        self._has_tags = False
        self._waiting = False
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
        self.untag = QComboBox(self)
        self.untag.setAccessibleName("Tag to remove")
        self.untag.setToolTip("The tags the selected memories have, with how many have each")
        self.untag_button = QPushButton("Remove tag", self)
        self.untag_button.setToolTip(
            "Take this tag off each selected memory that has it (Ctrl+Z takes it back)"
        )
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
        untag_row = QHBoxLayout()
        untag_row.addWidget(self.untag, 1)
        untag_row.addWidget(self.untag_button)
        # The two buttons as wide, so the fields beside them line up.
        width = max(self.tag_button.sizeHint().width(), self.untag_button.sizeHint().width())
        for button in (self.tag_button, self.untag_button):
            button.setMinimumWidth(width)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.rest)
        layout.addLayout(tag_row)
        layout.addLayout(untag_row)
        layout.addWidget(self.accept_button)
        layout.addWidget(self.delete_button)
        layout.addWidget(self.waiting)
        layout.addStretch(1)
        self.tag_button.clicked.connect(self._tag)
        self.tag.returnPressed.connect(self._tag)
        self.untag_button.clicked.connect(self._untag)
        self.accept_button.clicked.connect(lambda: self.accept_requested.emit(list(self._ids)))
        self.delete_button.clicked.connect(lambda: self.delete_requested.emit(list(self._ids)))

    def show_selection(
        self,
        ids: Sequence[str],
        candidates: int,
        listed: int,
        tags: Sequence[tuple[str, int]] = (),
    ) -> None:
        """Offer the actions for ``ids``, ``candidates`` of them candidates, out of
        ``listed``; ``tags`` are theirs, with how many have each, to remove one."""
        self._ids = list(ids)
        chosen = self.untag.currentData()
        self.untag.clear()
        for tag, count in tags:
            self.untag.addItem(f"{tag} ({count:,})", tag)
        if not tags:
            self.untag.addItem("no tags to remove")
        at = self.untag.findData(chosen)
        self.untag.setCurrentIndex(max(at, 0))
        self._has_tags = bool(tags)
        self._enable_untag()
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
        self._waiting = waiting
        for w in (self.tag, self.tag_button, self.accept_button, self.delete_button):
            w.setEnabled(not waiting)
        self._enable_untag()
        self.waiting.setVisible(waiting)

    def _enable_untag(self) -> None:
        for w in (self.untag, self.untag_button):
            w.setEnabled(self._has_tags and not self._waiting)

    def clear(self) -> None:
        self._ids = []

    def _tag(self) -> None:
        tag = self.tag.text().strip()
        if tag and self._ids:
            self.tag_requested.emit(list(self._ids), tag)
            self.tag.clear()

    def _untag(self) -> None:
        tag = self.untag.currentData()
        if tag and self._ids:
            self.untag_requested.emit(list(self._ids), tag)
