"""A thread's handoff: rendered, edited with a lost-update check, and its version history.

The person edits the handoff as plain text. Saving writes a new version with
the version the edit started from as ``base_version``: if an agent wrote in
the meantime, core refuses with :class:`~core.model.errors.Conflict` and the pane
says so, keeps the person's text, and offers to reload the newer version.
Nothing an agent writes while the person edits touches the editor.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.continuity.context import open_threads
from core.continuity.handoff_text import inline_safe
from core.continuity.handoffs import ThreadHandoff, read_handoff, write_handoff
from core.continuity.session_handoffs import latest_session_handoff
from core.model.errors import AmbryError, Conflict
from desktop.memories.values import local_time
from desktop.threads.model import author_text
from desktop.widgets import messages
from desktop.widgets.markdown import render_markdown
from desktop.widgets.watch import AppState

# A translucent tint for code: the text takes the palette's colour in either theme.
HANDOFF_CSS = """
h1 { font-size: 14pt; margin-bottom: 4px; }
h2 { font-size: 12pt; margin-top: 12px; margin-bottom: 4px; }
h3 { font-size: 10pt; margin-top: 10px; margin-bottom: 4px; }
li { margin-bottom: 3px; }
p { margin: 4px 0; }
pre, code { background: rgba(127, 127, 127, 46); }
.hint { color: #6b7280; }
"""

_NO_HANDOFF = (
    "<p class='hint'>This thread has no handoff yet. An agent writes one with "
    "<code>handoff_write</code> (or when its context is compacted); <b>Edit</b> starts one "
    "here.</p>"
)


def _caption(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setObjectName("hint")
    font = label.font()
    font.setBold(True)
    label.setFont(font)
    return label


def _browser(name: str, parent: QWidget) -> QTextBrowser:
    view = QTextBrowser(parent)
    view.setObjectName(name)
    view.setOpenLinks(False)
    view.document().setDefaultStyleSheet(HANDOFF_CSS)
    return view


def handoff_meta(handoff: ThreadHandoff | None) -> str:
    if handoff is None:
        return "No handoff yet"
    plural = "" if handoff.compaction_count == 1 else "s"
    return (
        f"Version {handoff.version}, written {local_time(handoff.created_at)} by "
        f"{author_text(handoff.author)}  ·  {handoff.compaction_count} compaction{plural}"
    )


class HandoffPane(QWidget):
    """The selected thread's handoff, its open threads and the last session's note.

    Args:
        state: the shared app state.
        parent: the parent widget.

    Signals:
        editing_changed(bool): the editor opened (True) or closed (False).
        saved(object): the :class:`~core.continuity.handoffs.HandoffWrite` of a save.
    """

    editing_changed = Signal(bool)
    saved = Signal(object)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._thread_id: str | None = None
        self.handoff: ThreadHandoff | None = None
        #: The version the open edit started from (0: the thread had none).
        self.base_version: int | None = None
        self._base_text = ""

        self.meta = QLabel(self)
        self.meta.setObjectName("hint")
        self.meta.setWordWrap(True)  # version, date and author: two lines in a narrow pane
        self.edit_button = QPushButton("Edit", self)
        self.edit_button.setToolTip("Edit the handoff as plain markdown (Ctrl+E)")
        self.save_button = QPushButton("Save", self)
        self.save_button.setObjectName("primary")
        self.save_button.setToolTip("Save as a new version (Ctrl+S)")
        self.cancel_button = QPushButton("Cancel", self)
        top = QHBoxLayout()
        top.addWidget(self.meta, 1)
        for b in (self.edit_button, self.save_button, self.cancel_button):
            top.addWidget(b)

        # The window's banner style, inside the pane: the conflict is about this editor.
        self.conflict = QFrame(self)
        self.conflict.setObjectName("banner")
        self.conflict.setProperty("level", "warning")
        self.conflict_text = QLabel(self.conflict)
        self.conflict_text.setWordWrap(True)
        self.reload_button = QPushButton("Reload", self.conflict)
        self.reload_button.setToolTip("Replace your text with the newest version")
        conflict_layout = QHBoxLayout(self.conflict)
        conflict_layout.setContentsMargins(10, 6, 8, 6)
        conflict_layout.addWidget(self.conflict_text, 1)
        conflict_layout.addWidget(self.reload_button)
        self.conflict.hide()

        self.rendered = _browser("handoffRendered", self)
        self.rendered.setAccessibleName("Handoff")
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("handoffEditor")
        self.editor.setAccessibleName("Handoff text")
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setTabChangesFocus(True)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.rendered)
        self.stack.addWidget(self.editor)

        self.open_view = _browser("openThreads", self)
        self.session_view = _browser("lastSession", self)
        self.open_view.setAccessibleName("Open threads")
        self.session_view.setAccessibleName("Last session")
        below = QWidget(self)
        below_layout = QGridLayout(below)
        below_layout.setContentsMargins(0, 0, 0, 0)
        below_layout.addWidget(_caption("Open threads", below), 0, 0)
        below_layout.addWidget(_caption("From the last session", below), 0, 1)
        below_layout.addWidget(self.open_view, 1, 0)
        below_layout.addWidget(self.session_view, 1, 1)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.stack)
        splitter.addWidget(below)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.conflict)
        layout.addWidget(splitter, 1)

        self.edit_button.clicked.connect(self.edit)
        self.save_button.clicked.connect(self.save)
        self.cancel_button.clicked.connect(self.cancel)
        self.reload_button.clicked.connect(self.reload)
        for keys, slot in (
            (QKeySequence("Ctrl+E"), self.edit),
            (QKeySequence.StandardKey.Save, self.save),
        ):
            action = QAction(self)
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(slot)
            self.addAction(action)
        self._set_editing(False)

    # -- showing -----------------------------------------------------------------

    @property
    def editing(self) -> bool:
        return self.base_version is not None

    def is_dirty(self) -> bool:
        return self.editing and self.editor.toPlainText() != self._base_text

    def show_thread(self, thread_id: str | None) -> None:
        """Show ``thread_id``'s handoff (None: nothing); an open edit is left alone."""
        self._thread_id = thread_id
        service, group = self._state.service, self._state.group
        self.handoff = None if thread_id is None else read_handoff(service, group, thread_id)
        self.meta.setText("" if thread_id is None else handoff_meta(self.handoff))
        self.edit_button.setEnabled(thread_id is not None and not self.editing)
        position = self.rendered.verticalScrollBar().value()
        if self.handoff is None:
            self.rendered.setHtml(_NO_HANDOFF if thread_id else "")
        else:
            self.rendered.setHtml(render_markdown(self.handoff.markdown))
        self.rendered.verticalScrollBar().setValue(position)
        self.show_notes(thread_id)

    def show_notes(self, thread_id: str | None) -> None:
        """The open threads and the last session's note of ``thread_id`` as they are now.

        Shown beside an open edit too: a forget takes what they quote from the
        handoffs at once, not when the edit ends.
        """
        self._show_open_threads(thread_id)
        self._show_last_session(thread_id)

    def _show_open_threads(self, thread_id: str | None) -> None:
        items = (
            []
            if thread_id is None
            else open_threads(self._state.service, self._state.group, thread_id)
        )
        if items:
            # As the brief lists them: markdown inline, escaped so no item opens a block.
            listed = "\n".join(f"- {inline_safe(i)}" for i in items)
            self.open_view.setHtml(render_markdown(listed))
        else:
            self.open_view.setHtml(
                "<p class='hint'>Nothing open: no unchecked items, TODOs or next steps in the "
                "handoffs.</p>"
            )

    def _show_last_session(self, thread_id: str | None) -> None:
        note = (
            None
            if thread_id is None
            else latest_session_handoff(self._state.service, self._state.group, thread_id)
        )
        if note is None:
            self.session_view.setHtml(
                "<p class='hint'>No session of this thread has left a note.</p>"
            )
            return
        if note.consumed_at:
            fate = f"delivered to session {note.consumed_by}, {local_time(note.consumed_at)}"
        else:
            fate = "waiting for the thread's next agent session"
        self.session_view.setHtml(
            f"<p class='hint'>Left by session {html.escape(note.session_id)} when it ended, "
            f"{html.escape(local_time(note.created_at))}; {html.escape(fate)}.</p>"
            + render_markdown(note.markdown)
        )

    # -- editing -----------------------------------------------------------------

    def _set_editing(self, editing: bool) -> None:
        self.stack.setCurrentWidget(self.editor if editing else self.rendered)
        self.edit_button.setVisible(not editing)
        self.edit_button.setEnabled(self._thread_id is not None)
        self.save_button.setVisible(editing)
        self.cancel_button.setVisible(editing)
        if not editing:
            self.conflict.hide()

    def edit(self) -> None:
        """Open the editor on the current version (remembered as the base of the save)."""
        if self._thread_id is None or self.editing:
            return
        self.show_thread(self._thread_id)
        self._start_from(self.handoff)
        self._set_editing(True)
        self.editor.setFocus()
        self.editing_changed.emit(True)

    def _start_from(self, handoff: ThreadHandoff | None) -> None:
        self.base_version = 0 if handoff is None else handoff.version
        self._base_text = "" if handoff is None else handoff.markdown
        self.editor.setPlainText(self._base_text)

    def save(self) -> None:
        if self._thread_id is None or not self.editing:
            return
        service, operator = self._state.service, self._state.operator()
        try:
            written = write_handoff(
                service,
                operator,
                self._thread_id,
                self.editor.toPlainText(),
                base_version=self.base_version,
            )
        except Conflict:
            self._show_conflict()
            return
        except AmbryError as exc:
            messages.report(exc)
            return
        self.discard()
        if written.created:
            messages.info(f"Handoff saved as version {written.handoff.version}.")
        else:
            messages.info("No change: the handoff already says that.")
        self.show_thread(self._thread_id)
        self.saved.emit(written)

    def _show_conflict(self) -> None:
        assert self._thread_id is not None
        newer = read_handoff(self._state.service, self._state.group, self._thread_id)
        assert self.base_version is not None
        # Versions go only when a topic they mention is forgotten (`ambry forget`).
        if newer is None:
            what = (
                "Every version of the handoff mentioned a topic that was forgotten while "
                "you were editing, and was deleted with it; the thread has no handoff now."
            )
        elif newer.version < self.base_version:
            what = (
                f"Version {self.base_version}, which you started from, mentioned a topic "
                "that was forgotten while you were editing, and was deleted with it; "
                f"version {newer.version} is current again."
            )
        else:
            what = (
                f"While you were editing, {author_text(newer.author)} saved version "
                f"{newer.version} ({local_time(newer.created_at)}); you started from version "
                f"{self.base_version}."
            )
        self.conflict_text.setText(
            f"{what} Your text was not saved and is still here: copy what you want to keep, "
            "then Reload to edit the newest version."
        )
        self.conflict.style().polish(self.conflict)
        self.conflict.show()

    def reload(self) -> None:
        """Discard the edit and start again from the newest version."""
        if self._thread_id is None:
            return
        self.show_thread(self._thread_id)
        self._start_from(self.handoff)
        self.conflict.hide()

    def cancel(self) -> None:
        if self.is_dirty() and not messages.confirm(
            self, "Discard changes", "Discard your changes to this handoff?", "Discard"
        ):
            return
        self.discard()
        self.show_thread(self._thread_id)

    def discard(self) -> None:
        """Close the editor without saving or asking."""
        self.base_version = None
        self._base_text = ""
        self._set_editing(False)
        self.editing_changed.emit(False)
