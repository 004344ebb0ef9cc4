"""Threads: the projects agents carry across sessions, with their handoffs and turns.

The list shows every thread of the group, most recently active first. The
selected thread's current handoff is rendered (and editable), with the
commitments found in it, the note the last session left, every kept version
with a diff and restore, and the thread's exchanges, with a search over every
logged turn by words and meaning. Renaming and deleting a
thread are the person's actions; agents cannot do either.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QMenu,
    QPushButton,
    QSizePolicy,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.continuity.episodes import thread_exchanges
from core.continuity.threads import Thread, delete_thread, rename_thread
from core.model.changes import Changes
from core.model.errors import AmbryError
from core.model.text import plural
from desktop.memories.values import local_time
from desktop.threads.exchanges import ExchangesPane
from desktop.threads.handoff_history import HistoryPane
from desktop.threads.handoff_view import HandoffPane
from desktop.threads.model import fetch_threads, threads_model
from desktop.threads.room import ThreadsSplitter
from desktop.widgets import messages
from desktop.widgets.flow import FlowLayout
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.ops import Executor
from desktop.widgets.placeholder import placeholder
from desktop.widgets.record_model import record_table
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command, on_right_click, row_menu
from desktop.widgets.stacking import stack_when_narrow
from desktop.widgets.watch import AppState

_EMPTY_TITLE = "No threads yet"
_EMPTY_BODY = (
    "<p>A thread is a project an agent keeps working on across sessions, such as "
    "“Website redesign”. Each keeps a handoff note (the state of the work, with its "
    "history) and the turns of the conversation.</p>"
    '<p>An agent opens one with <code>hello {"thread": "Website redesign"}</code> or '
    "<code>thread_open</code>; naming a new title creates it. From a terminal: "
    "<code>ambry threads open TITLE</code>.</p>"
)


#: What the page shows with no thread selected, when turns were filed under none.
LOOSE_TITLE = "Turns without a thread"
LOOSE_SUBTITLE = (
    "Turns an agent logged outside any thread, or whose thread was deleted. "
    "The search finds every turn."
)


#: The list and its buttons' height when the tabs are under them: a few threads.
STACKED_LIST_HEIGHT = 200


class Tab:
    HANDOFF = 0
    HISTORY = 1
    EXCHANGES = 2


class ThreadsPage(LazyPage):
    """The current group's threads and the selected thread's handoff, history and turns.

    Args:
        state: the shared app state.
        executor: the background thread exchange searches run on.
        parent: the parent widget.
    """

    def __init__(self, state: AppState, executor: Executor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._shown_id: str | None = None
        self._refreshing = False
        self.model = threads_model(self)
        self.table = record_table(self.model, "threadsTable", self)
        self.table.setAccessibleName("Threads")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.rename_button = QPushButton("Rename…", self)
        self.rename_button.setToolTip("Give the thread a new title (F2)")
        self.delete_button = QPushButton("Delete…", self)
        self.delete_button.setObjectName("danger")
        self.delete_button.setToolTip("Delete the thread and its handoffs (Del)")
        self.loose_button = QPushButton(LOOSE_TITLE, self)
        self.loose_button.setToolTip("The conversation turns filed under no thread")
        #: Whether the group has turns filed under no thread (read on refresh).
        self.has_loose = False
        #: The person asked for those turns: a refresh keeps them on screen.
        self._loose_chosen = False
        # A narrow list puts the last button on a second row instead of widening the page.
        buttons = FlowLayout()
        buttons.addWidget(self.rename_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch()
        buttons.addWidget(self.loose_button)
        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        #: Under an empty list (turns without a thread are shown): how a thread begins.
        self.no_threads = QLabel(
            "No threads yet: an agent opens one with <code>thread_open</code> or "
            '<code>hello {"thread": "…"}</code>.',
            self,
        )
        self.no_threads.setObjectName("hint")
        self.no_threads.setWordWrap(True)
        left_layout.addWidget(self.no_threads)
        left_layout.addLayout(buttons)

        self.title = QLabel(self)
        self.title.setObjectName("editorTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # An agent names the thread: its title is text, never markup, and however long
        # it is it wraps (or is cut, for one endless word) rather than widening the page.
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setWordWrap(True)
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.subtitle = QLabel(self)
        self.subtitle.setObjectName("hint")
        self.subtitle.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle.setWordWrap(True)
        self.handoff = HandoffPane(state, self)
        self.history = HistoryPane(state, self)
        self.exchange_pane = ExchangesPane(state, executor, self)
        self.exchanges = self.exchange_pane.turns
        self.exchange_table = self.exchange_pane.turns_table
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.handoff, "Handoff")
        self.tabs.addTab(self.history, "History")
        self.tabs.addTab(self.exchange_pane, "Exchanges")
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(4, 0, 0, 0)
        right_layout.addWidget(self.title)
        right_layout.addWidget(self.subtitle)
        right_layout.addWidget(self.tabs, 1)

        splitter = ThreadsSplitter(self.table, self)
        splitter.addWidget(left)
        splitter.addWidget(right)
        # The handoff's wide size hint would otherwise squeeze the list to nothing;
        # beyond the list's columns and a readable title, the turns' text gets the room.
        # Narrow enough that list and tabs fit side by side in a 900-pixel window.
        left.setMinimumWidth(260)
        splitter.setChildrenCollapsible(False)
        self.splitter = splitter
        # Where the list and the tabs do not both fit (640x400), the tabs go under
        # the list and the page scrolls down.
        self.stacking = stack_when_narrow(self, splitter, stacked_height=STACKED_LIST_HEIGHT)
        self.stacking.stacked_changed.connect(lambda _s: splitter.share())
        self.stack = QStackedWidget(self)
        self.stack.addWidget(splitter)
        self.stack.addWidget(placeholder(_EMPTY_TITLE, _EMPTY_BODY, self))
        layout = QVBoxLayout(self)
        layout.addWidget(self.stack, 1)

        self.rename_key = self._key(QKeySequence(Qt.Key.Key_F2), self.rename)
        self.delete_key = self._key(QKeySequence(QKeySequence.StandardKey.Delete), self.delete)
        self.rename_button.clicked.connect(self.rename)
        self.delete_button.clicked.connect(self.delete)
        self.loose_button.clicked.connect(self.show_loose)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        on_right_click(self.table, self.row_menu)
        self.handoff.editing_changed.connect(self._on_editing)
        self.handoff.saved.connect(lambda _w: self._invalidate(reload=False))
        self.history.restored.connect(lambda _v: self._invalidate(reload=False))
        state.changed.connect(self._on_changes)
        state.group_changed.connect(self._on_group)
        self._on_selection()

    def _key(self, keys: QKeySequence, slot: object) -> QAction:
        action = QAction(self.table)
        action.setShortcut(keys)
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        action.triggered.connect(slot)
        self.table.addAction(action)
        return action

    # -- refreshing --------------------------------------------------------------

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and (changes.threads or changes.sessions):
            self._invalidate(reload=False)

    def _on_group(self, _group: str) -> None:
        # The edit belonged to the other group's thread and cannot be saved here; the
        # window asked before switching if it had changes.
        if self.handoff.editing:
            self.handoff.discard()
        self._invalidate(reload=True)

    def refresh(self) -> None:
        reload = self._begin_refresh()
        keep = self._shown_id
        # A reset drops the selection and selecting again changes it: show the result once.
        self._refreshing = True
        try:
            if reload:
                keep = None
                self._loose_chosen = False
                self.model.load(fetch_threads(self._state.service, self._state.group))
            else:
                self.model.refresh()
            service, group = self._state.service, self._state.group
            self.has_loose = bool(thread_exchanges(service, group, None, limit=1))
            row = None if keep is None else self.model.row_of(keep)
            if not self.has_loose:
                self._loose_chosen = False
            if row is None and self.model.rowCount() and not self._loose_chosen:
                row = 0
            if row is not None:
                self._select_row(row)
            else:
                self.table.clearSelection()
        finally:
            self._refreshing = False
        self.splitter.share()
        self.stack.setCurrentIndex(0 if self.model.rowCount() or self.has_loose else 1)
        self.no_threads.setVisible(not self.model.rowCount())
        self._show(self.selected(), force=True)

    def show_loose(self) -> None:
        """List the turns filed under no thread (the selection is cleared)."""
        if self.handoff.editing:
            return
        self._loose_chosen = True
        # Clearing the selection would show them once, and the call below again.
        self._refreshing = True
        try:
            self.table.clearSelection()
        finally:
            self._refreshing = False
        self._show(None, force=True)

    # -- selection ---------------------------------------------------------------

    def focus_search(self) -> None:
        """Ctrl+F here: the search over the conversation turns."""
        self.tabs.setCurrentIndex(Tab.EXCHANGES)
        self.exchange_pane.focus_search()

    def selected(self) -> Thread | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record_at(rows[0].row()) if rows else None

    def select(self, thread_id: str) -> None:
        row = self.model.row_of(thread_id)
        if row is not None:
            self._select_row(row)

    def _select_row(self, row: int) -> None:
        self.table.selectionModel().setCurrentIndex(
            self.model.index(row, 0),
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )

    def _on_selection(self, *_args: object) -> None:
        if not self._refreshing:
            thread = self.selected()
            if thread is not None:
                self._loose_chosen = False
            self._show(thread, force=False)

    def _show(self, thread: Thread | None, *, force: bool) -> None:
        thread_id = None if thread is None else thread.id
        for b in (self.rename_button, self.delete_button):
            b.setEnabled(thread is not None and not self.handoff.editing)
        self.loose_button.setEnabled(self.has_loose and thread is not None)
        self.loose_button.setVisible(self.has_loose)
        loose = thread is None and self.has_loose
        for tab in (Tab.HANDOFF, Tab.HISTORY):
            self.tabs.setTabEnabled(tab, not loose)
        if thread is None:
            self.title.setText(LOOSE_TITLE if loose else "")
            self.title.setToolTip("")
            self.subtitle.setText(LOOSE_SUBTITLE if loose else "")
            if loose:
                self.tabs.setCurrentIndex(Tab.EXCHANGES)
        else:
            self.title.setText(thread.title)
            self.title.setToolTip(thread.title)
            self.subtitle.setText(
                f"{thread.id}  ·  created {local_time(thread.created_at)}  ·  "
                f"{plural(thread.exchange_count, 'exchange')}"
            )
        same = thread_id == self._shown_id
        if same and not force:
            return
        self._shown_id = thread_id
        if self.handoff.editing:
            self.handoff.show_notes(thread_id)
        else:
            self.handoff.show_thread(thread_id)
        self.history.show_thread(thread_id)
        self.exchange_pane.show_thread(thread_id, reload=not same)
        self.tabs.setTabText(Tab.HISTORY, f"History ({self.history.model.rowCount()})")

    def _on_editing(self, editing: bool) -> None:
        # One thread is edited at a time: the list waits until the edit is saved or dropped.
        self.table.setEnabled(not editing)
        for b in (self.rename_button, self.delete_button):
            b.setEnabled(not editing and self.selected() is not None)

    # -- renaming and deleting ---------------------------------------------------

    def row_menu(self) -> QMenu:
        """The right-click menu: rename, copy the id or delete the selected thread."""
        thread = self.selected()
        ids = [] if thread is None else [thread.id]
        return row_menu(
            self,
            [
                Command(
                    "Rename…",
                    self.rename,
                    self.rename_button.isEnabled(),
                    self.rename_key.shortcut(),
                ),
                copy_command(ids, "thread"),
                SEPARATOR,
                Command(
                    "Delete…",
                    self.delete,
                    self.delete_button.isEnabled(),
                    self.delete_key.shortcut(),
                ),
            ],
        )

    def rename(self) -> None:
        thread = self.selected()
        if thread is None or self.handoff.editing:
            return
        title = messages.ask_text(self, "Rename thread", f"New title for “{thread.title}”:")
        if not title or title == thread.title:
            return
        try:
            renamed = rename_thread(self._state.service, self._state.operator(), thread.id, title)
        except AmbryError as exc:
            messages.report(exc)
            return
        messages.info(f"Thread renamed to “{renamed.thread.title}”.")
        self._invalidate(reload=False)

    def delete(self) -> None:
        thread = self.selected()
        if thread is None or self.handoff.editing:
            return
        # The history pane lists the selected thread's kept versions.
        versions = self.history.model.rowCount()
        question = (
            f"Delete the thread “{thread.title}” and {plural(versions, 'handoff version')}? "
            f"Its {plural(thread.exchange_count, 'exchange')} stay, filed under no thread."
        )
        if not messages.confirm(self, "Delete thread", question, "Delete"):
            return
        try:
            delete_thread(self._state.service, self._state.operator(), thread.id)
        except AmbryError as exc:
            messages.report(exc)
            return
        messages.info(f"Thread “{thread.title}” deleted.")
        self._shown_id = None
        self._invalidate(reload=False)
