"""The main window: navigation, the pages, the group switcher and the agent indicator."""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QSignalBlocker, QSize, Qt
from PySide6.QtGui import QAction, QCloseEvent, QIcon, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QPlainTextEdit,
    QScrollArea,
    QSizePolicy,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from core.model.errors import AmbryError
from core.model.text import plural
from desktop.memories.actions import MemoryActions
from desktop.memories.empty_state import EmptyState
from desktop.memories.view import BrowserPage
from desktop.review.view import ReviewPage
from desktop.settings.appearance import keeps_serving
from desktop.shell.banner import Banner
from desktop.shell.commands import window_commands
from desktop.shell.editing import EditActions
from desktop.shell.focus import focus_page
from desktop.shell.group_box import GroupBox
from desktop.shell.groups import GroupCommands
from desktop.shell.menus import build_menus
from desktop.shell.nav import Nav
from desktop.shell.pages import PageSlot, build_page, put_in_place
from desktop.shell.palette import Command, CommandPalette, KeysDialog
from desktop.shell.sidebar import fit_names
from desktop.shell.window_state import place_window, remember, remembered_page
from desktop.widgets import messages
from desktop.widgets.messages import Level
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

if TYPE_CHECKING:
    from desktop.attachments.view import AttachmentsPage
    from desktop.audit.view import AuditPage
    from desktop.brief.view import BriefPage
    from desktop.claims.view import ClaimsPage
    from desktop.connect.view import ConnectPage
    from desktop.layers.view import LayersPage
    from desktop.server.agent_server import AgentServer
    from desktop.settings.view import SettingsPage
    from desktop.shell.tray import Tray
    from desktop.threads.view import ThreadsPage
    from desktop.trash.view import TrashPage

#: How long a message stays on screen.
INFO_MS = 5000
_NEW_GROUP = "New group…"


def nav_icon(name: str) -> QIcon:
    with resources.as_file(resources.files("resources") / "icons" / "nav" / f"{name}.svg") as p:
        return QIcon(str(p))


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
        self.executor = executor
        #: Set when the window closes to quit, not to the tray.
        self.quitting = False
        #: The tray icon, where the platform has one (set by the app).
        self.tray: Tray | None = None
        self.group_commands = GroupCommands(
            self, state, executor, self.may_leave, self.switch_group, self.groups_changed
        )
        self.setWindowTitle(f"Ambry — {state.group}")
        self.commands = MemoryActions(state, self)
        self.browser = BrowserPage(state, executor, self.commands)
        self.empty = EmptyState(state, socket_path)
        self.memories = QStackedWidget()
        self.memories.addWidget(self.browser)
        self.memories.addWidget(self.empty)
        self.review = ReviewPage(state, self.commands)
        self._socket_path = socket_path
        # The other pages are built on first use (desktop/shell/pages.py).
        self._built: dict[Nav, QWidget] = {Nav.MEMORIES: self.memories, Nav.REVIEW: self.review}
        self.pages = QStackedWidget()
        for item in Nav:
            self.pages.addWidget(self._built.get(item) or QWidget())
        self.banner = Banner()

        central = QWidget(self)
        layout = QHBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self._sidebar())
        right = QVBoxLayout()
        right.setContentsMargins(8, 8, 8, 0)
        right.addWidget(self.banner)
        # On a small screen (1366x768 at 150 %) a page scrolls rather than the window overflowing.
        scroll = QScrollArea(central)
        scroll.setObjectName("pageScroll")
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.pages)
        # Only what it holds takes the keyboard: the area itself showed as an empty Tab stop.
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        right.addWidget(scroll, 1)
        layout.addLayout(right, 1)
        self.setCentralWidget(central)
        self._status_bar(socket_path, socket_error)
        self._shortcuts()
        build_menus(self, self.acts, self.nav_actions, state.data_dir.root)
        place_window(self, state.data_dir)
        page = remembered_page(state.data_dir)
        if page is not None and 0 <= page < len(Nav):
            self.go(Nav(page))

        messages.bridge.shown.connect(self._on_message)
        self._listening = True
        self.browser.emptiness_changed.connect(self._on_emptiness)
        self.empty.add_requested.connect(self.new_entry)
        self.review.count_changed.connect(self._on_review_count)
        state.group_changed.connect(self._on_group)
        if server is not None:
            server.clients_changed.connect(self._on_clients)
            server.call_handled.connect(self._on_call)

    brief: PageSlot[BriefPage] = PageSlot(Nav.BRIEF)
    attachments: PageSlot[AttachmentsPage] = PageSlot(Nav.ATTACHMENTS)
    threads: PageSlot[ThreadsPage] = PageSlot(Nav.THREADS)
    audit: PageSlot[AuditPage] = PageSlot(Nav.AUDIT)
    settings: PageSlot[SettingsPage] = PageSlot(Nav.SETTINGS)
    connect_page: PageSlot[ConnectPage] = PageSlot(Nav.CONNECT)
    claims: PageSlot[ClaimsPage] = PageSlot(Nav.CLAIMS)
    layers: PageSlot[LayersPage] = PageSlot(Nav.LAYERS)
    trash: PageSlot[TrashPage] = PageSlot(Nav.TRASH)

    def page(self, item: Nav) -> QWidget:
        """The page of ``item``, built (in place of its placeholder) the first time."""
        built = self._built.get(item)
        if built is not None:
            return built
        page = build_page(
            item, self.state, self.executor, self.server, self._socket_path, self.commands
        )
        self._built[item] = page
        put_in_place(self.pages, item, page)
        if item != self.nav.currentRow():
            # Built off screen (a menu command): it must not set the window's minimum size.
            page.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)
        if item in (Nav.AUDIT, Nav.BRIEF):
            page.open_requested.connect(self.open_item)  # type: ignore[attr-defined]
        self._claim_ctrl_k(page)
        return page

    # -- building ----------------------------------------------------------------

    def _sidebar(self) -> QWidget:
        side = QFrame(self)
        side.setObjectName("sidebar")
        title = QLabel("Ambry", side)
        title.setObjectName("appTitle")
        self.group_box = GroupBox(side)
        self.group_box.setObjectName("groupBox")
        self.group_box.setAccessibleName("Memory group")
        self.group_box.setToolTip("Memory group: each has its own database")
        self._fill_groups()
        self.group_box.activated.connect(self._on_group_chosen)
        self.nav = QListWidget(side)
        self.nav.setObjectName("nav")
        self.nav.setAccessibleName("Pages")
        self.nav.setAccessibleDescription("The page the window shows")
        self.nav.setIconSize(QSize(18, 18))
        self.nav.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        for item in Nav:
            self.nav.addItem(QListWidgetItem(nav_icon(item.name.lower()), item.label))
        self.nav.currentRowChanged.connect(self._show_page)
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
        fit_names(side, self.nav)
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
            # The path is long and the Connect page shows it: here, in the tooltip.
            self.socket_label.setText("● Serving agents")
            self.socket_label.setToolTip(f"Serving agents on {socket_path}")
            self.socket_label.setProperty("state", "up")
        else:
            why = socket_error or "not started"
            self.socket_label.setText(f"○ Agent socket off: {why}")
            self.socket_label.setProperty("state", "down")
            self.socket_label.setToolTip(why)
        self._on_clients(self.server.client_count if self.server else 0)

    def _shortcuts(self) -> None:
        def add(
            text: str, keys: QKeySequence | QKeySequence.StandardKey | str | None, slot: object
        ) -> QAction:
            action = QAction(text, self)
            if keys is not None:
                action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            self.addAction(action)
            return action

        groups = self.group_commands
        self.acts = {
            "find": add("Find", QKeySequence.StandardKey.Find, self.search_here),
            "new": add("New memory", QKeySequence.StandardKey.New, self.new_entry),
            "quit": add("Quit", QKeySequence.StandardKey.Quit, self.quit),
            "close": add("Close window", QKeySequence.StandardKey.Close, self.close),
            "palette": add("Command palette", "Ctrl+K", self.show_palette),
            "keys": add("Keyboard shortcuts", "F1", self.show_keys),
            "new_group": add("New group…", None, groups.new_group),
            "rename_group": add("Rename group…", None, groups.rename),
            "delete_group": add("Delete group…", None, groups.delete),
            "forget": add("Forget a topic…", "Ctrl+Shift+Del", self.forget_topic),
            "clear": add("Clear turns, memories or everything…", None, self.clear_memory),
        }
        self.acts["quit"].setMenuRole(QAction.MenuRole.QuitRole)
        if self.acts["quit"].shortcut().isEmpty():
            # Windows has no standard key to quit; Ctrl+Q is the one F1 and the menu promise.
            self.acts["quit"].setShortcut(QKeySequence("Ctrl+Q"))
        # Ctrl+W first, as F1 and the docs say; the platform's own Close keys (Ctrl+F4 on
        # Windows) still work.
        ctrl_w = QKeySequence("Ctrl+W")
        others = QKeySequence.keyBindings(QKeySequence.StandardKey.Close)
        self.acts["close"].setShortcuts([ctrl_w, *(k for k in others if k != ctrl_w)])
        self.edit = EditActions(
            self,
            self.browser,
            self.review,
            self.commands,
            self._showing_list,
            self.show_memory_list,
        )
        self.acts["undo"], self.acts["delete"] = self.edit.undo_action, self.edit.delete_action
        self.acts["duplicates"] = self.edit.duplicates_action
        self.nav.currentRowChanged.connect(lambda _row: self.edit.update())
        self.memories.currentChanged.connect(lambda _index: self.edit.update())
        self.find_action, self.new_action = self.acts["find"], self.acts["new"]
        self.nav_actions = [
            add(item.label, item.key or None, lambda _c=False, i=item: self.go_to(i))
            for item in Nav
        ]
        self._claim_ctrl_k(self)

    def _claim_ctrl_k(self, widget: QWidget) -> None:
        # Text fields claim Ctrl+K (delete to the end of the line); the palette wins.
        for kind in (QLineEdit, QPlainTextEdit):
            for field in widget.findChildren(kind):
                field.installEventFilter(self)

    def command_list(self) -> list[Command]:
        """Everything the palette offers; those with keys also make the F1 list."""
        return window_commands(self)

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

    def _show_page(self, index: int) -> None:
        if 0 <= index < len(Nav):
            self.page(Nav(index))
        # Only the page on screen sets the minimum size: a wide page elsewhere
        # must not push the memory editor's buttons off a small screen.
        for i in range(self.pages.count()):
            policy = QSizePolicy.Policy.Preferred if i == index else QSizePolicy.Policy.Ignored
            if (widget := self.pages.widget(i)) is not None:
                widget.setSizePolicy(policy, policy)
        self.pages.setCurrentIndex(index)

    def go(self, page: Nav) -> None:
        self.nav.setCurrentRow(page)

    def go_to(self, page: Nav) -> None:
        """Show ``page`` with the keyboard in its search field or list (Ctrl+1 … Ctrl+9)."""
        self.go(page)
        if not focus_page(self.pages.currentWidget()):
            self.nav.setFocus(Qt.FocusReason.ShortcutFocusReason)  # nothing to type in or list

    def open_item(self, kind: str, item_id: str) -> None:
        """Show a memory, receipt, thread or claim that another view names (the audit log)."""
        match kind:
            case "memory":
                self.go(Nav.MEMORIES)
                self.memories.setCurrentWidget(self.browser)
                self.browser.open_entry(item_id)
            case "receipt":
                self.go(Nav.ATTACHMENTS)
                self.attachments.select([item_id])
            case "thread":
                self.go(Nav.THREADS)
                self.threads.select(item_id)
            case "claim":
                self.go(Nav.CLAIMS)
                self.claims.select(item_id)

    def _showing_list(self) -> QWidget | None:
        """The memory list or the review inbox, whichever is on screen (else None)."""
        if self.nav.currentRow() == Nav.REVIEW:
            return self.review
        if self.nav.currentRow() == Nav.MEMORIES and self.memories.currentWidget() is self.browser:
            return self.browser
        return None

    def show_memory_list(self) -> None:
        self.go(Nav.MEMORIES)
        self.memories.setCurrentWidget(self.browser)

    def search_here(self) -> None:
        """Ctrl+F: the search of the page on screen (the turns' on Threads), else the memories'."""
        if self.nav.currentRow() == Nav.THREADS:
            self.threads.focus_search()
            return
        self.focus_search()

    def focus_search(self) -> None:
        self.go(Nav.MEMORIES)
        self.memories.setCurrentWidget(self.browser)
        self.browser.focus_search()

    def forget_topic(self) -> None:
        """Edit → Forget a topic…: the dialog of Settings → Your data."""
        self.settings.data_panel.forget_topic()

    def clear_memory(self) -> None:
        """Edit → Clear turns, memories or everything…: the dialog of Settings → Your data."""
        self.settings.data_panel.clear()

    def new_entry(self) -> None:
        self.go(Nav.MEMORIES)
        self.memories.setCurrentWidget(self.browser)
        self.browser.new_entry()

    def _on_emptiness(self, empty: bool) -> None:
        editing = self.browser.editor.is_new or self.browser.editor.is_dirty()
        focused = QApplication.focusWidget()
        had_keyboard = focused is None or self.memories.isAncestorOf(focused)
        self.memories.setCurrentWidget(self.empty if empty and not editing else self.browser)
        if had_keyboard and self.nav.currentRow() == Nav.MEMORIES:
            focus_page(self.memories.currentWidget())

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
        name = self.group_box.itemText(index)
        if name == _NEW_GROUP:
            self._fill_groups()
            self.group_commands.new_group()
        else:
            self.switch_group(name)

    def switch_group(self, name: str | None) -> None:
        """Open group ``name`` (asks first if that drops unsaved edits)."""
        if name and name != self.state.group and self.may_leave("Switch group"):
            try:
                self.state.set_group(name)
            except AmbryError as exc:
                messages.report(exc)
        self._fill_groups()

    def groups_changed(self) -> None:
        """The list of groups changed (a rename or delete): show it again."""
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
        # The keyboard starts in the page, not in the sidebar's group list.
        focus_page(self.pages.currentWidget())
        self.state.start_polling()

    def _unsaved(self, *, quitting: bool = False) -> str | None:
        """What leaving the current group (or quitting) would lose, in words; None if nothing."""
        if self.browser.editor.is_dirty():
            return "your changes to this memory"
        threads, settings = self._built.get(Nav.THREADS), self._built.get(Nav.SETTINGS)
        if threads is not None and threads.handoff.is_dirty():  # type: ignore[attr-defined]
            return "your edit of this thread's handoff"
        if quitting and settings is not None and settings.is_dirty():  # type: ignore[attr-defined]
            # Settings belong to the data folder, not the group: only quitting drops them.
            return "your changes to the settings"
        return None

    def may_leave(self, action: str, *, quitting: bool = False) -> bool:
        """Whether to go on with ``action`` (the button's verb) when it drops unsaved edits."""
        unsaved = self._unsaved(quitting=quitting)
        return unsaved is None or messages.confirm(
            self, "Unsaved changes", f"{action} without saving {unsaved}?", action
        )

    def set_tray(self, tray: Tray) -> None:
        """Keep serving agents from ``tray`` when the window closes; its menu shows or quits."""
        self.tray = tray
        tray.show_requested.connect(self.bring_to_front)
        tray.quit_requested.connect(self.quit)

    def bring_to_front(self) -> None:
        """Show the window again (from the tray, or when Ambry is launched a second time)."""
        self.showNormal()
        self.raise_()
        self.activateWindow()

    def quit(self) -> None:
        """Close the window and stop serving agents (asks first about unsaved edits)."""
        self.quitting = True
        if self.close():
            QApplication.quit()
        self.quitting = False

    def closeEvent(self, event: QCloseEvent) -> None:
        remember(self, self.state.data_dir, self.nav.currentRow(), self.state.group)
        if self.tray is not None and not self.quitting and keeps_serving(self.state.data_dir):
            # The socket stays served; edits stay in the hidden window, unsaved and intact.
            event.ignore()
            self.hide()
            self.tray.tell_once()
            return
        if not self.may_leave("Quit", quitting=True) or not self.commands.jobs.may_quit(self):
            event.ignore()
            return
        if self._listening:
            messages.bridge.shown.disconnect(self._on_message)
            self._listening = False
        super().closeEvent(event)
