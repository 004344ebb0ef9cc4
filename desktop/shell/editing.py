"""Edit → Undo, Delete and Find near-duplicates: the memory list's commands in the menu.

The keys themselves stay with the pages that own them, so Ctrl+Z in a text
box still undoes typing and Del in another list still acts on that list.
These actions show the keys in the Edit menu, run the same commands from the
menu and the command palette, and are enabled only when they would do
something: Undo while a delete, reject or accept (of memories, or of a claim)
can be taken back (its text says which), Delete while memories are selected in the list on screen.
Find near-duplicates… opens the memory page's dialog of memories said twice.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from desktop.memories.actions import MemoryActions
from desktop.memories.undo import Undoable
from desktop.memories.view import BrowserPage
from desktop.review.view import ReviewPage
from desktop.widgets import messages
from desktop.widgets.row_menu import copy_ids

_NOTHING_SELECTED = "Select the memories in the list first."


class EditActions(QObject):
    """Undo and Delete for the window's Edit menu and palette.

    Args:
        window: the main window (the actions' owner).
        browser: the memory list.
        review: the review inbox (its undo brings back rejected or accepted candidates).
        commands: the memory commands with the shared undo stack.
        showing: which of ``browser`` and ``review`` is on screen, if either.
        show_memories: brings the memory list on screen.
    """

    def __init__(
        self,
        window: QWidget,
        browser: BrowserPage,
        review: ReviewPage,
        commands: MemoryActions,
        showing: Callable[[], QWidget | None],
        show_memories: Callable[[], None],
    ) -> None:
        super().__init__(window)
        self._browser, self._review, self._commands = browser, review, commands
        self._showing, self._show_memories = showing, show_memories
        self.undo_action = self._action(window, "Undo", QKeySequence.StandardKey.Undo, self.undo)
        self.delete_action = self._action(
            window, "Delete…", QKeySequence.StandardKey.Delete, self.delete
        )
        self.duplicates_action = QAction("Find near-duplicates…", window)
        self.duplicates_action.triggered.connect(self.find_duplicates)
        commands.undo_changed.connect(lambda _can: self.update())
        browser.table.selectionModel().selectionChanged.connect(lambda *_a: self.update())
        self.update()

    @staticmethod
    def _action(
        window: QWidget, text: str, key: QKeySequence.StandardKey, slot: Callable[[], None]
    ) -> QAction:
        action = QAction(text, window)
        # The key is shown in the menu; the page with the focus acts on it, so this
        # action answers only while the menu is open, never twice for one press.
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        action.triggered.connect(slot)
        window.addAction(action)
        return action

    def update(self) -> None:
        """Enable what applies now (call when the page on screen changes)."""
        self.undo_action.setEnabled(self._commands.can_undo)
        self.undo_action.setText(self._commands.undo_text)
        on_list = self._showing() is self._browser
        self.delete_action.setEnabled(on_list and bool(self._browser.selected_ids()))

    def undo(self) -> None:
        """Take back the last delete, reject or accept (shown in Review if on screen)."""
        if self._commands.busy():
            return  # a bulk change is under way: said why
        if not self._commands.can_undo:
            messages.info("Nothing to undo.")
        elif self._commands.undo_kind is Undoable.CLAIM_ACCEPT:
            self._commands.undo()  # the Claims page follows the change record
        elif self._showing() is self._review:
            self._review.undo()
        else:
            self._show_memories()
            self._browser.undo()

    def delete(self) -> None:
        """Delete the memories selected in the list (asks first)."""
        if ids := self._selected():
            self._show_memories()
            self._browser.delete_ids(ids)

    def find_duplicates(self) -> None:
        """Show the memory list and the near-duplicates of its group, to keep one of each."""
        self._show_memories()
        self._browser.find_duplicates()

    def copy_ids(self) -> None:
        """Copy the selected memories' ids."""
        if ids := self._selected():
            copy_ids(ids)

    def open_selected(self) -> None:
        """Edit the selected memory (the first of several)."""
        if ids := self._selected():
            self._show_memories()
            self._browser.edit_entry(ids[0])

    def _selected(self) -> list[str]:
        """The ids selected in the memory list; with none, says to select some first."""
        ids = self._browser.selected_ids()
        if not ids:
            messages.info(_NOTHING_SELECTED)
        return ids
