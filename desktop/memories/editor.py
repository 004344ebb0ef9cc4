"""The detail pane: one memory to read and edit, a new one, or a bulk selection.

The editor never writes: it says what the person asked for through signals
and the browser page carries it out (see :mod:`desktop.memories.actions`).

A secret entry arrives masked (``MemoryService.entries`` never decrypts one).
Its text shows only after the person clicks Reveal, and only until another
entry is shown; while masked, its type and tags can still be edited and the
new version keeps the stored text (:attr:`Draft.content` is ``None``).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.model.entries import MAX_CONTENT_CHARS, EntryType, MemoryEntry, Privacy, Status
from desktop.memories.bulk import BulkPanel
from desktop.memories.idle_pane import IdlePane
from desktop.memories.notice import VersionNotice
from desktop.memories.privacy import privacy_box
from desktop.memories.values import (
    Draft,
    info_text,
    is_locked,
    is_masked,
    parse_tags,
    privacy_help,
    status_label,
)
from desktop.widgets.keys import add_key

_REVEAL_TIP = "Show the text of this secret memory (the audit log records it)"


#: The narrowest the form gets: its fields and buttons in view on a small screen.
FORM_WIDTH = 300


class Page(IntEnum):
    EMPTY = 0
    FORM = 1
    BULK = 2


class EntryEditor(QWidget):
    """Shows and edits one entry, creates a new one, or acts on a selection.

    Signals:
        save_requested(object, object): the original entry (None for a new
            one) and the :class:`Draft` to save.
        reveal_requested(str): show the text of this secret entry.
        pin_requested(str, bool): pin or unpin an entry.
        delete_requested(object): delete these ids (``list[str]``).
        history_requested(str): show the version chain of an entry.
        accept_requested(object): accept these candidate ids.
        tag_requested(object, str): add a tag to these ids.
        untag_requested(object, str): remove a tag from these ids.
        open_requested(str): show another entry (the one that superseded this).
        save_on_top_requested(object, object): the version an agent replaced
            while the person edited it, and the person's :class:`Draft`, to
            save as a new version on top of the current one.
        cancel_requested(): the person gave up the new memory (Cancel, Escape).
    """

    save_requested = Signal(object, object)
    reveal_requested = Signal(str)
    pin_requested = Signal(str, bool)
    delete_requested = Signal(object)
    history_requested = Signal(str)
    accept_requested = Signal(object)
    tag_requested = Signal(object, str)
    untag_requested = Signal(object, str)
    open_requested = Signal(str)
    save_on_top_requested = Signal(object, object)
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("editor")
        self._entry: MemoryEntry | None = None
        self._new = False
        #: The person's edits outlived their version: an agent replaced it meanwhile.
        self._orphaned = False
        #: The revealed text of the secret entry shown now, if the person revealed it.
        self._clear: str | None = None
        #: The memory whose text a new memory's form holds: it was deleted while edited.
        self._kept_from: str | None = None
        self.pages = QStackedWidget(self)
        self.idle = IdlePane(self)
        self.pages.addWidget(self.idle)
        self.pages.addWidget(self._build_form())
        self.bulk = BulkPanel(self)
        self.bulk.accept_requested.connect(self.accept_requested)
        self.bulk.delete_requested.connect(self.delete_requested)
        self.bulk.tag_requested.connect(self.tag_requested)
        self.bulk.untag_requested.connect(self.untag_requested)
        self.pages.addWidget(self.bulk)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        self.pages.currentChanged.connect(self._size_to_page)
        add_key(self, QKeySequence.StandardKey.Save, self._save_key, "Save")
        add_key(self, "Escape", self._escape, "Cancel")
        self.show_nothing()
        self._size_to_page(self.pages.currentIndex())

    def _size_to_page(self, index: int) -> None:
        """Only the page shown sets the pane's minimum width: the hint shown when
        nothing is selected needs less than the form, and the list gets the rest."""
        for i in range(self.pages.count()):
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            if (page := self.pages.widget(i)) is not None:
                page.setSizePolicy(policy, policy)
        # The form's fields and buttons fit this; a long id under them is cut short.
        self.pages.setMinimumWidth(FORM_WIDTH if index == Page.FORM else 0)
        # Now, not at the next layout pass: a resize meanwhile must see the new minimum.
        self.updateGeometry()

    # -- building ----------------------------------------------------------------

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
        self.privacy_box = privacy_box(page)
        self.privacy_hint = QLabel(page)
        self.privacy_hint.setObjectName("hint")
        self.privacy_hint.setWordWrap(True)
        self.content = QPlainTextEdit(page)
        self.content.setAccessibleName("Content")
        self.content.setPlaceholderText("What should the agent remember?")
        self.content.setTabChangesFocus(True)
        self.counter = QLabel(page)
        self.counter.setObjectName("hint")
        self.reveal_button = QPushButton("Reveal", page)
        # Revealing or hiding must not make the content box jump.
        policy = self.reveal_button.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.reveal_button.setSizePolicy(policy)
        counter_row = QHBoxLayout()
        counter_row.addWidget(self.counter, 1)
        counter_row.addWidget(self.reveal_button)
        self.tags = QLineEdit(page)
        self.tags.setAccessibleName("Tags")
        self.tags.setPlaceholderText("comma-separated, e.g. work, python")

        self.info = QLabel(page)
        self.info.setObjectName("info")
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.info.setWordWrap(True)
        self.notice = VersionNotice(page)
        self.notice.open_requested.connect(self.open_requested)
        self.notice.save_on_top_requested.connect(self._save)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Type", self.type_box)
        form.addRow("Privacy", self.privacy_box)
        form.addRow("", self.privacy_hint)
        form.addRow("Content", self.content)
        form.addRow("", counter_row)
        form.addRow("Tags", self.tags)

        self.save_button = QPushButton("Save", page)
        self.save_button.setObjectName("primary")
        self.revert_button = QPushButton("Revert", page)
        self.cancel_button = QPushButton("Cancel", page)
        self.cancel_button.setToolTip("Drop this new memory (Escape)")
        self.accept_button = QPushButton("Accept", page)
        self.pin_button = QPushButton("Pin", page)
        self.pin_button.setCheckable(True)
        self.pin_button.setToolTip("Pinned memories never decay")
        self.history_button = QPushButton("History…", page)
        self.delete_button = QPushButton("Delete…", page)
        self.delete_button.setObjectName("danger")
        buttons = QHBoxLayout()
        for b in (self.save_button, self.revert_button, self.cancel_button, self.accept_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        more = QHBoxLayout()
        more.addWidget(self.pin_button)
        more.addWidget(self.history_button)
        more.addStretch(1)
        more.addWidget(self.delete_button)

        layout = QVBoxLayout(page)
        layout.addLayout(head)
        layout.addWidget(self.notice)
        layout.addLayout(form, 1)
        layout.addWidget(self.info)
        layout.addLayout(more)
        layout.addLayout(buttons)

        self.type_box.currentIndexChanged.connect(self._update_buttons)
        self.privacy_box.currentIndexChanged.connect(self._update_buttons)
        self.reveal_button.clicked.connect(self._reveal)
        self.content.textChanged.connect(self._update_buttons)
        self.tags.textChanged.connect(self._update_buttons)
        self.save_button.clicked.connect(self._save)
        self.revert_button.clicked.connect(self._revert)
        self.cancel_button.clicked.connect(self.cancel_requested)
        self.accept_button.clicked.connect(self._accept)
        self.pin_button.clicked.connect(self._pin)
        self.history_button.clicked.connect(self._history)
        self.delete_button.clicked.connect(self._delete)
        return page

    # -- showing -----------------------------------------------------------------

    @property
    def entry(self) -> MemoryEntry | None:
        return self._entry

    @property
    def is_new(self) -> bool:
        return self._new

    @property
    def revealed(self) -> bool:
        """Whether the secret shown now is in clear (the person clicked Reveal)."""
        return self._clear is not None

    @property
    def memory_id(self) -> str | None:
        """The stored memory whose words the form holds: the one shown, or the deleted
        one whose edits were kept as a new memory."""
        if self._entry is not None and not self._new:
            return self._entry.id
        return self._kept_from if self._new else None

    @property
    def showing_nothing(self) -> bool:
        """Nothing is shown: no memory, no new one, no selection."""
        return self.pages.currentIndex() == Page.EMPTY

    @property
    def orphaned(self) -> bool:
        """Whether the text shown are edits of a version an agent replaced meanwhile."""
        return self._orphaned

    def show_nothing(self, text: str | None = None) -> None:
        self._entry, self._new, self._clear, self._orphaned = None, False, None, False
        self._kept_from = None
        self.bulk.clear()
        self.idle.set_text(text)
        self.pages.setCurrentIndex(Page.EMPTY)

    def show_entry(self, entry: MemoryEntry) -> None:
        """Show ``entry``; unsaved edits of the same entry are kept."""
        same = self._entry is not None and self._entry.id == entry.id and not self._new
        keep_edits = same and self.is_dirty()
        # Replaced under the person's edits: keep them editable, to save on top.
        self._orphaned = (
            keep_edits
            and entry.is_superseded
            and (self._orphaned or not (self._entry and self._entry.is_superseded))
        )
        if not same:
            self._clear = None  # another entry: a revealed secret is hidden again
        self._entry, self._new, self._kept_from = entry, False, None
        self.bulk.clear()
        if not keep_edits:
            self._fill(entry.type, self._stored_content(), entry.tags, entry.privacy)
        self.title.setText(f"{entry.type.value.capitalize()} memory")
        self.status_chip.setText(status_label(entry))
        self.status_chip.setProperty("status", status_label(entry).split(" ")[0])
        self.status_chip.style().polish(self.status_chip)
        self.info.setText(info_text(entry))
        if entry.superseded_by:
            self.notice.show_replaced(entry.superseded_by, while_editing=self._orphaned)
        else:
            self.notice.hide()
        self.pin_button.setChecked(entry.pinned)
        self.pin_button.setText("Unpin" if entry.pinned else "Pin")
        self.pages.setCurrentIndex(Page.FORM)
        self._update_buttons()

    def keep_deleted_edits(self) -> bool:
        """The memory being edited is gone: keep unsaved edits as a new memory.

        Returns whether there were edits to keep (text under a secret's mask
        cannot be kept: it never reached the screen).
        """
        if self._new or self._entry is None or self._hidden() or not self.is_dirty():
            return False
        kept_from = self._entry.id
        self._as_new()
        self._kept_from = kept_from
        self.notice.show_deleted()
        self._update_buttons()
        return True

    def drop_forgotten(self, text: str) -> None:
        """The memory whose words the form holds was forgotten: empty the form (its
        undo history too), keep no draft, and say ``text`` instead."""
        self._fill(EntryType.FACT, "", (), Privacy.PUBLIC)
        self.notice.hide()
        self.show_nothing(text)

    def show_revealed(self, entry: MemoryEntry) -> None:
        """Show the clear text of the secret on screen (``entry`` from the reveal)."""
        if self._entry is None or self._new or self._entry.id != entry.id:
            return  # the person moved on while it was being revealed
        self._clear = entry.content
        self.content.setPlainText(entry.content)
        self._update_buttons()

    def show_new(self, entry_type: EntryType = EntryType.FACT) -> None:
        self._kept_from = None
        self.bulk.clear()
        self._fill(entry_type, "", (), Privacy.PUBLIC)
        self._as_new()
        self.notice.hide()
        self.pages.setCurrentIndex(Page.FORM)
        self._update_buttons()
        self.content.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _as_new(self) -> None:
        """What the form holds is a memory yet to be added."""
        self._entry, self._new, self._clear, self._orphaned = None, True, None, False
        self.title.setText("New memory")
        self.status_chip.setText("new")
        self.status_chip.setProperty("status", "new")
        self.status_chip.style().polish(self.status_chip)
        self.info.setText("Memories you add are trusted (source: you) and need no review.")

    def show_bulk(
        self,
        ids: Sequence[str],
        candidates: int,
        listed: int,
        tags: Sequence[tuple[str, int]] = (),
    ) -> None:
        self._entry, self._new, self._clear, self._orphaned = None, False, None, False
        self._kept_from = None
        self.bulk.show_selection(ids, candidates, listed, tags)
        self.pages.setCurrentIndex(Page.BULK)

    def _fill(
        self, entry_type: EntryType, content: str, tags: Sequence[str], privacy: Privacy
    ) -> None:
        self.type_box.setCurrentIndex(self.type_box.findData(entry_type))
        self.privacy_box.setCurrentIndex(self.privacy_box.findData(privacy))
        self.content.setPlainText(content)
        self.tags.setText(", ".join(tags))

    def _stored_content(self) -> str:
        """The current entry's text as saved: revealed, or as it arrived (maybe masked)."""
        if self._clear is not None:
            return self._clear
        return self._entry.content if self._entry is not None else ""

    def _hidden(self) -> bool:
        """The content box holds a mask, not the entry's text."""
        entry = self._entry
        if entry is None or self._new or self._clear is not None:
            return False
        return is_masked(entry) or is_locked(entry)

    # -- editing -----------------------------------------------------------------

    def values(self) -> Draft:
        # Qt hands enum item data back as plain strings.
        return Draft(
            entry_type=EntryType(self.type_box.currentData()),
            content=None if self._hidden() else self.content.toPlainText().strip(),
            tags=parse_tags(self.tags.text()),
            privacy=Privacy(self.privacy_box.currentData()),
        )

    def is_dirty(self) -> bool:
        if self.pages.currentIndex() != Page.FORM:
            return False
        draft = self.values()
        if self._new:
            return bool(draft.content or draft.tags)
        entry = self._entry
        if entry is None:
            return False
        content = self._stored_content().strip() if draft.content is None else draft.content
        return (draft.entry_type, content, draft.tags, draft.privacy) != (
            entry.type,
            self._stored_content().strip(),
            entry.tags,
            entry.privacy,
        )

    def _update_buttons(self) -> None:
        entry = self._entry
        hidden = self._hidden()
        locked = entry is not None and not self._new and is_locked(entry)
        length = len(self.content.toPlainText().strip())
        if hidden:
            self.counter.setText(
                "Encrypted: the key is unavailable" if locked else "Secret: hidden until revealed"
            )
        elif length > MAX_CONTENT_CHARS:
            # Save is greyed out: say why, and by how much.
            self.counter.setText(
                f"{length:,} / {MAX_CONTENT_CHARS:,} characters: "
                f"shorten it by {length - MAX_CONTENT_CHARS:,} to save"
            )
        else:
            self.counter.setText(f"{length:,} / {MAX_CONTENT_CHARS:,} characters")
        self.counter.setProperty("over", length > MAX_CONTENT_CHARS and not hidden)
        self.counter.style().polish(self.counter)
        current = entry is not None and (not entry.is_superseded or self._orphaned)
        editable = not locked and (self._new or current)
        for w in (self.type_box, self.tags):
            w.setEnabled(editable)
        # Greyed: the mask is not the text, so there is nothing to read or edit there.
        self.content.setEnabled(editable and not hidden)
        self.content.setReadOnly(hidden)
        # Lowering a secret's privacy would show its text without a reveal.
        self.privacy_box.setEnabled(editable and not hidden)
        self.privacy_box.setToolTip(
            "Reveal the memory to change its privacy" if hidden and not locked else ""
        )
        self.privacy_hint.setText(privacy_help(Privacy(self.privacy_box.currentData())))
        dirty = self.is_dirty()
        revealed = self._clear is not None
        self.reveal_button.setVisible((hidden and not locked) or revealed)
        self.reveal_button.setText("Hide" if revealed else "Reveal")
        self.reveal_button.setEnabled(not (revealed and dirty))
        self.reveal_button.setToolTip("Hide the text again" if revealed else _REVEAL_TIP)
        self.save_button.setText(
            "Add memory" if self._new else "Save on top" if self._orphaned else "Save"
        )
        length_ok = hidden or 0 < length <= MAX_CONTENT_CHARS
        self.save_button.setEnabled(editable and dirty and length_ok)
        self.revert_button.setVisible(not self._new)
        self.revert_button.setEnabled(dirty or self._orphaned)
        self.cancel_button.setVisible(self._new)
        existing = entry is not None and not self._new
        for b in (self.pin_button, self.history_button, self.delete_button):
            b.setVisible(existing)
        self.pin_button.setEnabled(existing and editable)
        self.accept_button.setVisible(
            existing and entry is not None and entry.status is Status.CANDIDATE
        )

    def _save(self) -> None:
        if self._orphaned:
            self.save_on_top_requested.emit(self._entry, self.values())
        else:
            self.save_requested.emit(None if self._new else self._entry, self.values())

    def _save_key(self) -> None:
        if self.pages.currentIndex() == Page.FORM and self.save_button.isEnabled():
            self._save()

    def _escape(self) -> None:
        if self._new:
            self.cancel_requested.emit()

    def _revert(self) -> None:
        entry = self._entry
        if entry is not None and self._orphaned and entry.superseded_by:
            self._orphaned = False  # dropping the edits: show what the agent saved
            self._fill(entry.type, self._stored_content(), entry.tags, entry.privacy)
            self.open_requested.emit(entry.superseded_by)
        elif entry is not None:
            self._fill(entry.type, self._stored_content(), entry.tags, entry.privacy)

    def _reveal(self) -> None:
        if self._entry is None:
            return
        if self._hidden():
            self.reveal_requested.emit(self._entry.id)
        elif self._clear is not None and not self.is_dirty():
            self.hide_secret()

    def hide_secret(self) -> None:
        """Mask the revealed secret again (the person is done reading it)."""
        entry = self._entry
        if entry is None or self._clear is None:
            return
        self._clear = None
        self.content.setPlainText(entry.content)
        self._update_buttons()

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
