"""The main window: navigation, the pages, the group switcher and the agent indicator."""

from __future__ import annotations

from datetime import datetime
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.model.errors import AmbryError
from desktop.attachments.view import AttachmentsPage
from desktop.audit.view import AuditPage
from desktop.brief.view import BriefPage
from desktop.claims.view import ClaimsPage
from desktop.connect.view import ConnectPage
from desktop.layers.view import LayersPage
from desktop.memories.actions import MemoryActions, plural
from desktop.memories.empty_state import EmptyState
from desktop.memories.view import BrowserPage
from desktop.review.view import ReviewPage
from desktop.settings.view import SettingsPage
from desktop.shell.palette import Command, CommandPalette, KeysDialog
from desktop.threads.view import ThreadsPage
from desktop.trash.view import TrashPage
from desktop.widgets import messages
from desktop.widgets.messages import Level
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

if TYPE_CHECKING:
    from desktop.server.agent_server import AgentServer

#: How long a message stays on screen.
INFO_MS = 5000
ERROR_MS = 10000
_NEW_GROUP = "New group…"


class Nav(IntEnum):
    MEMORIES = 0
    REVIEW = 1
    BRIEF = 2
    ATTACHMENTS = 3
    THREADS = 4
    AUDIT = 5
    SETTINGS = 6
    CONNECT = 7
    CLAIMS = 8
    # Last, as a trash is; reached from the palette (Ctrl+K), the digits run out at 9.
    TRASH = 9
    LAYERS = 10

    @property
    def key(self) -> str:
        """Ctrl+1 to Ctrl+9 for the first nine pages; the rest from the palette."""
        return f"Ctrl+{self.value + 1}" if self.value < 9 else ""

    @property
    def label(self) -> str:
        return "Connect an agent" if self is Nav.CONNECT else self.name.capitalize()


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


class MainWindow(QMainWindow):
    """Ambry's window.

    Args:
        state: the shared app state.
        executor: the background thread for queries and maintenance.
        server: the agent socket server, if one runs in this process.
        socket_path: the socket agents connect to (shown to the person).
        socket_error: why the socket is not served, if it is not.
    """

    def __init__(
        self,
        state: AppState,
        executor: Executor,
        server: AgentServer | None,
        socket_path: Path,
        socket_error: str | None = None,
    ) -> None:
        super().__init__()
        self.state = state
        self.server = server
        self.setWindowTitle(f"Ambry — {state.group}")
        self.resize(1360, 820)
        self.commands = MemoryActions(state, self)
        self.browser = BrowserPage(state, executor, self.commands)
        self.empty = EmptyState(state, socket_path)
        self.memories = QStackedWidget()
        self.memories.addWidget(self.browser)
        self.memories.addWidget(self.empty)
        self.review = ReviewPage(state, self.commands)
        self.brief = BriefPage(state)
        self.attachments = AttachmentsPage(state, executor)
        self.threads = ThreadsPage(state)
        self.audit = AuditPage(state)
        self.trash = TrashPage(state)
        self.layers = LayersPage(state)
        self.claims = ClaimsPage(state)
        self.settings = SettingsPage(state, executor, socket_path)
        self.connect_page = ConnectPage(state, server, socket_path)
        self.pages = QStackedWidget()
        for page in (
            self.memories,
            self.review,
            self.brief,
            self.attachments,
            self.threads,
            self.audit,
            self.settings,
            self.connect_page,
            self.claims,
            self.trash,
            self.layers,
        ):
            self.pages.addWidget(page)
        self.banner = Banner()

        central = QWidget(self)
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._sidebar())
        right = QVBoxLayout()
        right.setContentsMargins(8, 8, 8, 0)
        right.addWidget(self.banner)
        right.addWidget(self.pages, 1)
        layout.addLayout(right, 1)
        self.setCentralWidget(central)
        self._status_bar(socket_path, socket_error)
        self._shortcuts()

        messages.bridge.shown.connect(self._on_message)
        self.browser.emptiness_changed.connect(self._on_emptiness)
        self.empty.add_requested.connect(self.new_entry)
        self.review.count_changed.connect(self._on_review_count)
        state.group_changed.connect(self._on_group)
        if server is not None:
            server.clients_changed.connect(self._on_clients)
            server.call_handled.connect(self._on_call)

    # -- building ----------------------------------------------------------------

    def _sidebar(self) -> QWidget:
        side = QFrame(self)
        side.setObjectName("sidebar")
        title = QLabel("Ambry", side)
        title.setObjectName("appTitle")
        self.group_box = QComboBox(side)
        self.group_box.setObjectName("groupBox")
        self.group_box.setAccessibleName("Memory group")
        self.group_box.setToolTip("Memory group: each has its own database")
        self._fill_groups()
        self.group_box.activated.connect(self._on_group_chosen)
        self.nav = QListWidget(side)
        self.nav.setObjectName("nav")
        for item in Nav:
            self.nav.addItem(item.label)
        self.nav.currentRowChanged.connect(self.pages.setCurrentIndex)
        self.nav.setCurrentRow(Nav.MEMORIES)
        group_label = QLabel("GROUP", side)
        group_label.setObjectName("sideCaption")
        layout = QVBoxLayout(side)
        layout.setContentsMargins(12, 16, 12, 12)
        layout.addWidget(title)
        layout.addSpacing(10)
        layout.addWidget(group_label)
        layout.addWidget(self.group_box)
        layout.addSpacing(10)
        layout.addWidget(self.nav, 1)
        side.setFixedWidth(200)
        return side

    def _status_bar(self, socket_path: Path, socket_error: str | None) -> None:
        bar = self.statusBar()
        self.socket_label = QLabel(self)
        self.socket_label.setObjectName("socketState")
        self.clients_label = QLabel(self)
        self.call_label = QLabel("No agent calls yet", self)
        for w in (self.socket_label, self.clients_label, self.call_label):
            bar.addPermanentWidget(w)
        if self.server is not None and self.server.is_listening:
            self.socket_label.setText(f"● Serving agents on {socket_path}")
            self.socket_label.setProperty("state", "up")
        else:
            why = socket_error or "not started"
            self.socket_label.setText(f"○ Agent socket off: {why}")
            self.socket_label.setProperty("state", "down")
            self.socket_label.setToolTip(why)
        self._on_clients(self.server.client_count if self.server else 0)

    def _shortcuts(self) -> None:
        def add(
            text: str, keys: QKeySequence | QKeySequence.StandardKey | str, slot: object
        ) -> QAction:
            action = QAction(text, self)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            self.addAction(action)
            return action

        self.find_action = add("Find", QKeySequence.StandardKey.Find, self.focus_search)
        self.new_action = add("New memory", QKeySequence.StandardKey.New, self.new_entry)
        add("Quit", QKeySequence.StandardKey.Quit, self.close)
        for item in Nav:
            if item.key:
                add(item.label, item.key, lambda _c=False, i=item: self.go(i))
        add("Command palette", "Ctrl+K", self.show_palette)
        # Text fields claim Ctrl+K (delete to the end of the line); the palette wins.
        for kind in (QLineEdit, QPlainTextEdit):
            for field in self.findChildren(kind):
                field.installEventFilter(self)
        add("Keyboard shortcuts", "F1", self.show_keys)

    def command_list(self) -> list[Command]:
        """Everything the palette offers; those with keys also make the F1 list."""
        found = [
            Command("New memory", self.new_entry, "Ctrl+N"),
            Command("Search memories", self.focus_search, "Ctrl+F"),
            Command("Save the memory, settings or handoff being edited", None, "Ctrl+S"),
            Command("Cancel a new memory", None, "Escape"),
            Command("Delete the selected memories (asks first)", None, "Del"),
            Command("Undo the last delete or reject", None, "Ctrl+Z"),
            Command("Accept / reject / defer in Review", None, "A / R / D"),
            Command("Memory list: default order", self.browser.clear_sort),
        ]
        found += [Command(f"Go to {n.label}", lambda n=n: self.go(n), n.key) for n in Nav]
        found += [
            Command(f"Switch to group {g}", lambda g=g: self.switch_group(g))
            for g in self.state.groups()
            if g != self.state.group
        ]
        found += [
            Command("Command palette", self.show_palette, "Ctrl+K"),
            Command("Keyboard shortcuts", self.show_keys, "F1"),
            Command("Quit", self.close, "Ctrl+Q"),
        ]
        return found

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            event.type() == QEvent.Type.ShortcutOverride
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_K
            and event.modifiers() == Qt.KeyboardModifier.ControlModifier
        ):
            return True  # not accepted: the shortcut runs
        return super().eventFilter(watched, event)

    def show_palette(self) -> None:
        self.palette_dialog = CommandPalette(self.command_list(), self)
        self.palette_dialog.open()

    def show_keys(self) -> None:
        self.keys_dialog = KeysDialog(self.command_list(), self)
        self.keys_dialog.open()

    # -- navigation --------------------------------------------------------------

    def go(self, page: Nav) -> None:
        self.nav.setCurrentRow(page)

    def focus_search(self) -> None:
        self.go(Nav.MEMORIES)
        self.memories.setCurrentWidget(self.browser)
        self.browser.focus_search()

    def new_entry(self) -> None:
        self.go(Nav.MEMORIES)
        self.memories.setCurrentWidget(self.browser)
        self.browser.new_entry()

    def _on_emptiness(self, empty: bool) -> None:
        editing = self.browser.editor.is_new or self.browser.editor.is_dirty()
        self.memories.setCurrentWidget(self.empty if empty and not editing else self.browser)

    def _on_review_count(self, count: int) -> None:
        item = self.nav.item(Nav.REVIEW)
        item.setText(f"Review ({count})" if count else "Review")

    # -- groups ------------------------------------------------------------------

    def _fill_groups(self) -> None:
        with QSignalBlocker(self.group_box):
            self.group_box.clear()
            self.group_box.addItems(self.state.groups())
            self.group_box.addItem(_NEW_GROUP)
            self.group_box.setCurrentText(self.state.group)

    def _on_group_chosen(self, index: int) -> None:
        name: str | None = self.group_box.itemText(index)
        if name == _NEW_GROUP:
            name = messages.ask_text(self, "New group", "Name (letters, digits, '_' or '-'):")
        self.switch_group(name)

    def switch_group(self, name: str | None) -> None:
        """Open group ``name`` (asks first if that drops unsaved edits)."""
        if name and name != self.state.group and self._may_leave("Switch group"):
            try:
                self.state.set_group(name)
            except AmbryError as exc:
                messages.report(exc)
        self._fill_groups()

    def _on_group(self, group: str) -> None:
        self._fill_groups()
        self.setWindowTitle(f"Ambry — {group}")
        self.review.recount()

    # -- status ------------------------------------------------------------------

    def _on_message(self, level: str, text: str) -> None:
        match Level(level):
            case Level.INFO:
                self.statusBar().showMessage(text, INFO_MS)
            case Level.WARNING | Level.ERROR:
                self.banner.show_text(Level(level), text)

    def _on_clients(self, count: int) -> None:
        self.clients_label.setText(
            "No agents connected" if count == 0 else f"{plural(count, 'agent')} connected"
        )

    def _on_call(self, method: str, group: str, ok: bool) -> None:
        when = datetime.now().strftime("%H:%M:%S")
        where = f" in {group}" if group else ""
        outcome = "" if ok else " (failed)"
        self.call_label.setText(f"Last call: {method or 'unknown'}{where} at {when}{outcome}")
        self.call_label.setProperty("ok", ok)
        self.call_label.style().polish(self.call_label)

    # -- lifetime ----------------------------------------------------------------

    def start(self) -> None:
        """Fill the views and start watching for changes (once the window shows)."""
        self.browser.start()
        self.review.recount()
        self.state.start_polling()

    def _unsaved(self, *, quitting: bool = False) -> str | None:
        """What leaving the current group (or quitting) would lose, in words; None if nothing."""
        if self.browser.editor.is_dirty():
            return "your changes to this memory"
        if self.threads.handoff.is_dirty():
            return "your edit of this thread's handoff"
        if quitting and self.settings.is_dirty():
            # Settings belong to the data folder, not the group: only quitting drops them.
            return "your changes to the settings"
        return None

    def _may_leave(self, action: str, *, quitting: bool = False) -> bool:
        """Whether to go on with ``action`` (the button's verb) when it drops unsaved edits."""
        unsaved = self._unsaved(quitting=quitting)
        return unsaved is None or messages.confirm(
            self, "Unsaved changes", f"{action} without saving {unsaved}?", action
        )

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._may_leave("Quit", quitting=True):
            event.ignore()
            return
        messages.bridge.shown.disconnect(self._on_message)
        super().closeEvent(event)
