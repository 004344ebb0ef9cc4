"""The search box and filter menus above the memory table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtWidgets import QComboBox, QLineEdit, QWidget

from core.model.entries import EntryType
from desktop.memories.state import BrowserQuery, StatusFilter
from desktop.widgets.flow import FlowLayout
from desktop.widgets.text_room import RESTYLED, width_for

#: Typing pauses shorter than this are one search, not one per key.
DEBOUNCE_MS = 120


#: The search box's placeholder, longest first: it shows the longest that fits whole,
#: as the style draws it, rather than one cut short with "…".
PLACEHOLDERS = ("Search memories  (Ctrl+F)", "Search memories", "Search")


class FilterBar(QWidget):
    """Search as you type (debounced) plus type, tag, status and behavioral filters.

    Signals:
        changed(object): the new :class:`BrowserQuery`; for typing, once the
            person pauses.
        typing(): the search text changed; whatever runs now is out of date.
    """

    changed = Signal(object)
    typing = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit(self)
        self.search.setObjectName("search")
        self.search.setAccessibleName("Search memories")
        self.search.setPlaceholderText(PLACEHOLDERS[0])
        self.search.installEventFilter(self)
        self.search.setClearButtonEnabled(True)
        self.type_box = self._combo(
            "Type", [("All types", None), *((t.value.capitalize(), t) for t in EntryType)]
        )
        self.tag_box = self._combo("Tag", [("All tags", None)])
        # A fixed width: the bar must not jump as tags come and go.
        self.tag_box.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.tag_box.setMinimumContentsLength(12)
        self.status_box = self._combo("Status", [(s.label, s) for s in StatusFilter])
        self.behavioral_box = self._combo(
            "Behavioral",
            [("Behavioral or not", None), ("Behavioral", True), ("Not behavioral", False)],
        )
        # A narrow window puts the boxes that do not fit on a second row rather than
        # squeezing the search box to a few letters. Not wider: at 150 % of 1366x768 a
        # second row would push the editor's buttons out of the window.
        self.search.setMinimumWidth(self.search.fontMetrics().averageCharWidth() * 20)
        layout = FlowLayout(self)
        layout.addWidget(self.search)
        for box in (self.type_box, self.tag_box, self.status_box, self.behavioral_box):
            layout.addWidget(box)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._emit)
        self.search.textChanged.connect(self._on_text)
        for box in (self.type_box, self.tag_box, self.status_box, self.behavioral_box):
            box.currentIndexChanged.connect(self._emit)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.search and event.type() in (QEvent.Type.Resize, *RESTYLED):
            width = self.search.width()
            fits = (p for p in PLACEHOLDERS if width_for(self.search, p) <= width)
            self.search.setPlaceholderText(next(fits, PLACEHOLDERS[-1]))
        return super().eventFilter(watched, event)

    def _combo(self, name: str, items: Sequence[tuple[str, Any]]) -> QComboBox:
        box = QComboBox(self)
        box.setObjectName(f"{name.lower()}_filter")
        box.setAccessibleName(f"{name} filter")
        box.setToolTip(f"{name} filter")
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        for label, value in items:
            box.addItem(label, value)
        return box

    def _on_text(self, text: str) -> None:
        self.typing.emit()
        if text.strip():
            self._debounce.start()
        else:
            self._emit()  # clearing the box shows everything at once

    def _emit(self) -> None:
        self._debounce.stop()
        self.changed.emit(self.query())

    def query(self) -> BrowserQuery:
        # Qt hands enum item data back as plain strings.
        entry_type = self.type_box.currentData()
        return BrowserQuery(
            text=self.search.text().strip(),
            entry_type=EntryType(entry_type) if entry_type else None,
            tag=self.tag_box.currentData(),
            status=StatusFilter(self.status_box.currentData()),
            behavioral=self.behavioral_box.currentData(),
        )

    def set_status(self, status: StatusFilter) -> None:
        self.status_box.setCurrentIndex(self.status_box.findData(status))

    def set_tags(self, tags: Sequence[tuple[str, int]]) -> None:
        """Offer ``(tag, count)`` choices, keeping the chosen tag if it still exists."""
        current = self.tag_box.currentData()
        with QSignalBlocker(self.tag_box):
            self.tag_box.clear()
            self.tag_box.addItem("All tags", None)
            for tag, count in tags:
                self.tag_box.addItem(f"{tag} ({count})", tag)
            found = self.tag_box.findData(current) if current is not None else 0
            self.tag_box.setCurrentIndex(max(found, 0))
        if current is not None and found < 0:
            self._emit()  # the chosen tag is gone; show what is left

    def reset(self) -> None:
        """Back to no search and no filters (a new group)."""
        boxes = (self.type_box, self.tag_box, self.status_box, self.behavioral_box)
        blockers = [QSignalBlocker(w) for w in (self.search, *boxes)]
        self.search.clear()
        for box in boxes:
            box.setCurrentIndex(0)
        del blockers
        self._debounce.stop()

    def clear_all(self) -> None:
        """No search and no filters, listed at once."""
        self.reset()
        self._emit()

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()
