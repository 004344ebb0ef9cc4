"""The memories behind the brief: each line's memory, in the order of the lines,
then the ones the limits left out, each with why.

The markdown carries no ids (the agent needs none), so this list is where a
person goes from a line to its memory: Enter or a double-click opens it on the
Memories page, and the right-click menu pins, unpins or deletes it with the
memory list's own commands (same question, same Ctrl+Z).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeySequence
from PySide6.QtWidgets import QMenu, QTreeWidget, QTreeWidgetItem, QWidget

from core.recall.brief import LEFT_OUT_LISTED, BriefEntry, LeftOutReason, MemoryBrief
from desktop.memories.action_texts import memories
from desktop.memories.actions import MemoryActions
from desktop.widgets import row_menu as menus
from desktop.widgets.keys import add_key
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command

#: The role holding a row's memory id (none on headings and empty-state rows).
ID_ROLE = Qt.ItemDataRole.UserRole


def reason_text(reason: LeftOutReason) -> str:
    match reason:
        case LeftOutReason.MAX_ENTRIES:
            return "entry limit"
        case LeftOutReason.MAX_CHARS:
            return "character limit"
        case LeftOutReason.TOKEN_BUDGET:
            return "token budget"
        case LeftOutReason.DUPLICATE:
            return "same as a line above"
        case LeftOutReason.REWORDING:
            return "reworded line above"


#: What each reason means, for the reason's tooltip.
REASON_HELP = {
    LeftOutReason.MAX_ENTRIES: "Max entries were already shown.",
    LeftOutReason.MAX_CHARS: "Its line did not fit in the characters left (Max characters).",
    LeftOutReason.TOKEN_BUDGET: "Its line did not fit in the tokens left (Token budget).",
    LeftOutReason.DUPLICATE: "A line above says the same (ignoring case, spacing, quotes, "
    "final punctuation), so it is shown once.",
    LeftOutReason.REWORDING: "A line above says the same in other words (a near-duplicate, "
    "as Find near-duplicates groups them), so it is shown once.",
}


def _line(entry: BriefEntry) -> str:
    return f"[{entry.type}] {entry.content or '(empty)'}"


class BriefMemories(QTreeWidget):
    """Two groups of rows: "In the brief" (line order) and "Left out" (brief order).

    Args:
        commands: the memory list's commands, for pin and delete (and their undo).
        parent: the parent widget.

    Signals:
        open_requested(str): show this memory on the Memories page.
    """

    open_requested = Signal(str)

    def __init__(self, commands: MemoryActions, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._commands = commands
        self.setObjectName("briefMemories")
        self.setAccessibleName("Memories in the brief and left out")
        self.setColumnCount(2)
        self.setHeaderLabels(["Memory", "Left out by"])
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, self.header().ResizeMode.Stretch)
        self.header().setSectionResizeMode(1, self.header().ResizeMode.ResizeToContents)
        self.shown = QTreeWidgetItem(self, ["In the brief"])
        self.left_out = QTreeWidgetItem(self, ["Left out"])
        for heading in (self.shown, self.left_out):
            heading.setFlags(Qt.ItemFlag.ItemIsEnabled)
            heading.setFirstColumnSpanned(True)
            font = heading.font(0)
            font.setBold(True)
            heading.setFont(0, font)
        # A double-click (or a single one where the platform activates on one) opens.
        self.itemActivated.connect(lambda item, _col: self._open(item))
        for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            add_key(self, QKeySequence(key), self._on(self.open_requested.emit))
        add_key(self, QKeySequence(QKeySequence.StandardKey.Delete), self.delete_current)
        menus.on_right_click(self, self.menu)

    def show_brief(self, brief: MemoryBrief) -> None:
        """List ``brief``'s memories, keeping the current one if it is still there."""
        current = self.current_id()
        by_id = {e.id: e for e in brief.entries}
        for heading in (self.shown, self.left_out):
            heading.takeChildren()
        self.shown.setText(0, f"In the brief ({brief.brief_count:,})")
        self.shown.setToolTip(0, "The memory of each line of the brief, in the order of the lines")
        for entry_id in brief.line_order:
            self._add(self.shown, by_id[entry_id], "")
        if not brief.entries:
            self._note(self.shown, "No memories in the brief.")

        listed = len(brief.left_out)
        first = "first " if listed >= LEFT_OUT_LISTED else ""
        self.left_out.setText(0, f"Left out ({first}{listed:,})")
        self.left_out.setToolTip(
            0,
            "Memories that qualify for the brief but are not in it, in brief order"
            + (f"; the first {memories(listed)} are listed" if first else ""),
        )
        for item in brief.left_out:
            row = self._add(self.left_out, item.entry, reason_text(item.reason))
            row.setToolTip(1, REASON_HELP[item.reason])
        if not brief.left_out:
            self._note(self.left_out, "Nothing left out.")
        self.expandAll()
        if current is not None:
            self.select_id(current)

    def _add(self, heading: QTreeWidgetItem, entry: BriefEntry, reason: str) -> QTreeWidgetItem:
        row = QTreeWidgetItem(heading, [_line(entry), reason])
        row.setData(0, ID_ROLE, entry.id)
        row.setToolTip(0, entry.content)
        return row

    def _note(self, heading: QTreeWidgetItem, text: str) -> None:
        row = QTreeWidgetItem(heading, [text])
        row.setFlags(Qt.ItemFlag.ItemIsEnabled)
        row.setFirstColumnSpanned(True)
        font = row.font(0)
        font.setItalic(True)
        row.setFont(0, font)

    def rows(self, heading: QTreeWidgetItem) -> list[str]:
        """The memory ids listed under ``heading``, in order."""
        return [i for c in self._children(heading) if isinstance(i := c.data(0, ID_ROLE), str)]

    @staticmethod
    def _children(heading: QTreeWidgetItem) -> list[QTreeWidgetItem]:
        children = (heading.child(i) for i in range(heading.childCount()))
        return [c for c in children if c is not None]

    def current_id(self) -> str | None:
        item = self.currentItem()
        value = item.data(0, ID_ROLE) if item is not None else None
        return value if isinstance(value, str) else None

    def select_id(self, entry_id: str) -> bool:
        for heading in (self.shown, self.left_out):
            for child in self._children(heading):
                if child.data(0, ID_ROLE) == entry_id:
                    self.setCurrentItem(child)
                    return True
        return False

    def focusInEvent(self, event: QFocusEvent) -> None:
        # Tabbing in lands on the first memory, not on a heading.
        super().focusInEvent(event)
        if self.current_id() is None:
            first = self.rows(self.shown) or self.rows(self.left_out)
            if first:
                self.select_id(first[0])

    # -- commands ------------------------------------------------------------------

    def _open(self, item: QTreeWidgetItem) -> None:
        value = item.data(0, ID_ROLE)
        if isinstance(value, str):
            self.open_requested.emit(value)

    def _on(self, run: Callable[[str], object]) -> Callable[[], None]:
        def act() -> None:
            if (entry_id := self.current_id()) is not None:
                run(entry_id)

        return act

    def delete_current(self) -> None:
        self._on(lambda i: self._commands.delete([i], self))()

    def menu(self) -> QMenu:
        """Open, Pin or Unpin, Copy id and Delete… for the memory under the pointer."""
        entry_id = self.current_id()
        entry = self._commands.read(entry_id) if entry_id is not None else None
        pinned = entry is not None and entry.pinned
        return menus.row_menu(
            self,
            [
                Command(
                    "Open",
                    self._on(self.open_requested.emit),
                    entry is not None,
                    QKeySequence("Return"),
                ),
                Command(
                    "Unpin" if pinned else "Pin",
                    self._on(lambda i: self._commands.set_pinned(i, not pinned)),
                    entry is not None,
                ),
                copy_command([entry_id] if entry_id else [], "memory"),
                SEPARATOR,
                Command(
                    "Delete…",
                    self.delete_current,
                    entry is not None,
                    QKeySequence(QKeySequence.StandardKey.Delete),
                ),
            ],
        )
