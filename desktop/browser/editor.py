"""The detail pane: one memory to read and edit, a new one, or a bulk selection.

The editor never writes: it says what the person asked for through signals
and the browser page carries it out (see :mod:`desktop.browser.actions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.model import MAX_CONTENT_CHARS, EntryType, MemoryEntry, Status, parse_iso
from desktop.browser.values import confidence_of, source_text, status_label


def parse_tags(text: str) -> tuple[str, ...]:
    """Comma-separated tags as the person typed them, blanks dropped."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def local_time(timestamp: str | None) -> str:
    if not timestamp:
        return "—"
    return parse_iso(timestamp).astimezone().strftime("%Y-%m-%d %H:%M")


class Page(IntEnum):
    EMPTY = 0
    FORM = 1
    BULK = 2


class EntryEditor(QWidget):
    """Shows and edits one entry, creates a new one, or acts on a selection.

    Signals:
        save_requested(object, object, str, object): the original entry (None
            for a new one), the :class:`EntryType`, the content and the tags.
        pin_requested(str, bool): pin or unpin an entry.
        delete_requested(object): delete these ids (``list[str]``).
        history_requested(str): show the version chain of an entry.
        accept_requested(object): accept these candidate ids.
        tag_requested(object, str): add a tag to these ids.
        open_requested(str): show another entry (the one that superseded this).
    """

    save_requested = Signal(object, object, str, object)
    pin_requested = Signal(str, bool)
    delete_requested = Signal(object)
    history_requested = Signal(str)
    accept_requested = Signal(object)
    tag_requested = Signal(object, str)
    open_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editor")
        self._entry: MemoryEntry | None = None
        self._new = False
        self._bulk_ids: list[str] = []
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._build_empty())
        self.pages.addWidget(self._build_form())
        self.pages.addWidget(self._build_bulk())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        self.show_nothing()

    # -- building ----------------------------------------------------------------

    def _build_empty(self) -> QWidget:
        page = QWidget(self)
        self.empty_label = QLabel(
            "Select a memory to read or edit it here.\n\nCtrl+N adds a new one.", page
        )
        self.empty_label.setObjectName("hint")
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setWordWrap(True)
        layout = QVBoxLayout(page)
        layout.addWidget(self.empty_label)
        return page

    def _build_form(self) -> QWidget:
        page = QWidget(self)
        self.title = QLabel(page)
        self.title.setObjectName("editorTitle")
        self.status_chip = QLabel(page)
        self.status_chip.setObjectName("chip")
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.status_chip)

        self.type_box = QComboBox(page)
        self.type_box.setAccessibleName("Type")
        for t in EntryType:
            self.type_box.addItem(t.value.capitalize(), t)
        self.content = QPlainTextEdit(page)
        self.content.setAccessibleName("Content")
        self.content.setPlaceholderText("What should the agent remember?")
        self.content.setTabChangesFocus(True)
        self.counter = QLabel(page)
        self.counter.setObjectName("hint")
        self.tags = QLineEdit(page)
        self.tags.setAccessibleName("Tags")
        self.tags.setPlaceholderText("comma-separated, e.g. work, python")

        self.info = QLabel(page)
        self.info.setObjectName("info")
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info.setWordWrap(True)
        self.superseded_link = QLabel(page)
        self.superseded_link.setObjectName("warningLabel")
        self.superseded_link.setWordWrap(True)
        self.superseded_link.linkActivated.connect(self.open_requested.emit)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Type", self.type_box)
        form.addRow("Content", self.content)
        form.addRow("", self.counter)
        form.addRow("Tags", self.tags)

        self.save_button = QPushButton("Save", page)
        self.save_button.setObjectName("primary")
        self.revert_button = QPushButton("Revert", page)
        self.accept_button = QPushButton("Accept", page)
        self.pin_button = QPushButton("Pin", page)
        self.pin_button.setCheckable(True)
        self.pin_button.setToolTip("Pinned memories never decay")
        self.history_button = QPushButton("History…", page)
        self.delete_button = QPushButton("Delete…", page)
        self.delete_button.setObjectName("danger")
        buttons = QHBoxLayout()
        for b in (self.save_button, self.revert_button, self.accept_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        more = QHBoxLayout()
        more.addWidget(self.pin_button)
        more.addWidget(self.history_button)
        more.addStretch(1)
        more.addWidget(self.delete_button)

        layout = QVBoxLayout(page)
        layout.addLayout(head)
        layout.addWidget(self.superseded_link)
        layout.addLayout(form, 1)
        layout.addWidget(self.info)
        layout.addLayout(more)
        layout.addLayout(buttons)

        self.type_box.currentIndexChanged.connect(self._update_buttons)
        self.content.textChanged.connect(self._update_buttons)
        self.tags.textChanged.connect(self._update_buttons)
        self.save_button.clicked.connect(self._save)
        self.revert_button.clicked.connect(self._revert)
        self.accept_button.clicked.connect(self._accept)
        self.pin_button.clicked.connect(self._pin)
        self.history_button.clicked.connect(self._history)
        self.delete_button.clicked.connect(self._delete)
        return page

    def _build_bulk(self) -> QWidget:
        page = QWidget(self)
        self.bulk_title = QLabel(page)
        self.bulk_title.setObjectName("editorTitle")
        self.bulk_tag = QLineEdit(page)
        self.bulk_tag.setAccessibleName("Tag to add")
        self.bulk_tag.setPlaceholderText("tag to add")
        self.bulk_tag_button = QPushButton("Add tag", page)
        self.bulk_accept_button = QPushButton("Accept candidates", page)
        self.bulk_delete_button = QPushButton("Delete…", page)
        self.bulk_delete_button.setObjectName("danger")
        tag_row = QHBoxLayout()
        tag_row.addWidget(self.bulk_tag, 1)
        tag_row.addWidget(self.bulk_tag_button)
        layout = QVBoxLayout(page)
        layout.addWidget(self.bulk_title)
        layout.addLayout(tag_row)
        layout.addWidget(self.bulk_accept_button)
        layout.addWidget(self.bulk_delete_button)
        layout.addStretch(1)
        self.bulk_tag_button.clicked.connect(self._bulk_tag)
        self.bulk_tag.returnPressed.connect(self._bulk_tag)
        self.bulk_accept_button.clicked.connect(
            lambda: self.accept_requested.emit(list(self._bulk_ids))
        )
        self.bulk_delete_button.clicked.connect(
            lambda: self.delete_requested.emit(list(self._bulk_ids))
        )
        return page

    # -- showing -----------------------------------------------------------------

    @property
    def entry(self) -> MemoryEntry | None:
        return self._entry

    @property
    def is_new(self) -> bool:
        return self._new

    def show_nothing(self, text: str | None = None) -> None:
        self._entry, self._new, self._bulk_ids = None, False, []
        self.empty_label.setText(
            text or "Select a memory to read or edit it here.\n\nCtrl+N adds a new one."
        )
        self.pages.setCurrentIndex(Page.EMPTY)

    def show_entry(self, entry: MemoryEntry) -> None:
        """Show ``entry``; unsaved edits of the same entry are kept."""
        same = self._entry is not None and self._entry.id == entry.id and not self._new
        keep_edits = same and self.is_dirty()
        self._entry, self._new, self._bulk_ids = entry, False, []
        if not keep_edits:
            self._fill(entry.type, entry.content, entry.tags)
        self.title.setText(f"{entry.type.value.capitalize()} memory")
        self.status_chip.setText(status_label(entry))
        self.status_chip.setProperty("status", status_label(entry).split(" ")[0])
        self.status_chip.style().polish(self.status_chip)
        self.info.setText(self._info_text(entry))
        if entry.superseded_by:
            self.superseded_link.setText(
                "This version was replaced and is kept for history. "
                f'<a href="{entry.superseded_by}">Show the current version</a>'
            )
        self.superseded_link.setVisible(entry.superseded_by is not None)
        self.pin_button.setChecked(entry.pinned)
        self.pin_button.setText("Unpin" if entry.pinned else "Pin")
        self.pages.setCurrentIndex(Page.FORM)
        self._update_buttons()

    def show_new(self, entry_type: EntryType = EntryType.FACT) -> None:
        self._entry, self._new, self._bulk_ids = None, True, []
        self._fill(entry_type, "", ())
        self.title.setText("New memory")
        self.status_chip.setText("new")
        self.status_chip.setProperty("status", "new")
        self.status_chip.style().polish(self.status_chip)
        self.info.setText(
            "Memories you add are trusted (source: you) and go straight to the brief."
        )
        self.superseded_link.hide()
        self.pages.setCurrentIndex(Page.FORM)
        self._update_buttons()
        self.content.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def show_bulk(self, ids: Sequence[str], candidates: int) -> None:
        self._entry, self._new, self._bulk_ids = None, False, list(ids)
        self.bulk_title.setText(f"{len(ids)} memories selected")
        self.bulk_accept_button.setVisible(candidates > 0)
        self.bulk_accept_button.setText(
            f"Accept {candidates} candidate" + ("s" if candidates != 1 else "")
        )
        self.pages.setCurrentIndex(Page.BULK)

    def _fill(self, entry_type: EntryType, content: str, tags: Sequence[str]) -> None:
        self.type_box.setCurrentIndex(self.type_box.findData(entry_type))
        self.content.setPlainText(content)
        self.tags.setText(", ".join(tags))

    @staticmethod
    def _info_text(entry: MemoryEntry) -> str:
        stored = entry.confidence
        lines = [
            f"Source: {source_text(entry)}",
            f"Confidence: {confidence_of(entry):.2f} now ({stored:.2f} when last seen)",
            f"Created {local_time(entry.provenance.created_at)}, "
            f"last seen {local_time(entry.last_seen_at)}",
            f"Id: {entry.id}",
        ]
        if entry.review_reason:
            lines.insert(0, f"Awaiting review: {entry.review_reason}")
        return "\n".join(lines)

    # -- editing -----------------------------------------------------------------

    def values(self) -> tuple[EntryType, str, tuple[str, ...]]:
        return (
            EntryType(self.type_box.currentData()),
            self.content.toPlainText().strip(),
            parse_tags(self.tags.text()),
        )

    def is_dirty(self) -> bool:
        if self.pages.currentIndex() != Page.FORM:
            return False
        entry_type, content, tags = self.values()
        if self._new:
            return bool(content or tags)
        entry = self._entry
        if entry is None:
            return False
        return (entry_type, content, tags) != (entry.type, entry.content.strip(), entry.tags)

    def _update_buttons(self) -> None:
        length = len(self.content.toPlainText().strip())
        self.counter.setText(f"{length} / {MAX_CONTENT_CHARS} characters")
        self.counter.setProperty("over", length > MAX_CONTENT_CHARS)
        self.counter.style().polish(self.counter)
        entry = self._entry
        editable = self._new or (entry is not None and not entry.is_superseded)
        for w in (self.type_box, self.content, self.tags):
            w.setEnabled(editable)
        dirty = self.is_dirty()
        self.save_button.setText("Add memory" if self._new else "Save")
        self.save_button.setEnabled(editable and dirty and 0 < length <= MAX_CONTENT_CHARS)
        self.revert_button.setVisible(not self._new)
        self.revert_button.setEnabled(dirty)
        existing = entry is not None and not self._new
        for b in (self.pin_button, self.history_button, self.delete_button):
            b.setVisible(existing)
        self.pin_button.setEnabled(existing and editable)
        self.accept_button.setVisible(
            existing and entry is not None and entry.status is Status.CANDIDATE
        )

    def _save(self) -> None:
        entry_type, content, tags = self.values()
        self.save_requested.emit(None if self._new else self._entry, entry_type, content, tags)

    def _revert(self) -> None:
        if self._entry is not None:
            self._fill(self._entry.type, self._entry.content, self._entry.tags)

    def _accept(self) -> None:
        if self._entry is not None:
            self.accept_requested.emit([self._entry.id])

    def _pin(self) -> None:
        if self._entry is not None:
            self.pin_requested.emit(self._entry.id, self.pin_button.isChecked())

    def _history(self) -> None:
        if self._entry is not None:
            self.history_requested.emit(self._entry.id)

    def _delete(self) -> None:
        if self._entry is not None:
            self.delete_requested.emit([self._entry.id])

    def _bulk_tag(self) -> None:
        tag = self.bulk_tag.text().strip()
        if tag and self._bulk_ids:
            self.tag_requested.emit(list(self._bulk_ids), tag)
            self.bulk_tag.clear()
