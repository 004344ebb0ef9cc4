"""The command palette (Ctrl+K) and the list of keys (F1): every command, found by typing.

Both read the same list of commands the main window builds, so a new command
shows up in the palette and in the key list at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True)
class Command:
    """Something the person can do: its name, its keys (if any) and what it runs.

    A command without ``run`` is a key that acts where the focus is (Ctrl+S in
    an editor, Del in a list): the F1 list shows it, the palette does not.
    """

    name: str
    run: Callable[[], object] | None
    keys: str = ""


class CommandPalette(QDialog):
    """Type a few letters of a view, a group or an action; Enter runs it."""

    def __init__(self, commands: Sequence[Command], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Command palette")
        self.setObjectName("palette")
        self.resize(520, 420)
        self._commands = [c for c in commands if c.run is not None]
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Type a view, a group or an action…")
        self.list = QListWidget(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        self.search.textChanged.connect(self._fill)
        self.search.returnPressed.connect(self.run_selected)
        self.list.itemActivated.connect(lambda _item: self.run_selected())
        self.search.installEventFilter(self)
        self._fill("")

    def _fill(self, text: str) -> None:
        words = text.casefold().split()
        self.list.clear()
        for index, command in enumerate(self._commands):
            if all(w in command.name.casefold() for w in words):
                label = f"{command.name}    {command.keys}" if command.keys else command.name
                item = QListWidgetItem(label, self.list)
                item.setData(Qt.ItemDataRole.UserRole, index)
        self.list.setCurrentRow(0)

    def shown_names(self) -> list[str]:
        return [
            self._commands[self.list.item(r).data(Qt.ItemDataRole.UserRole)].name
            for r in range(self.list.count())
        ]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Up and Down move in the list while the typing stays in the box.
        if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress:
            step = {Qt.Key.Key_Down: 1, Qt.Key.Key_Up: -1}.get(Qt.Key(event.key()))
            if step is not None and self.list.count():
                row = (self.list.currentRow() + step) % self.list.count()
                self.list.setCurrentRow(row)
                return True
        return super().eventFilter(watched, event)

    def run_selected(self) -> None:
        item = self.list.currentItem()
        if item is None:
            return
        run = self._commands[item.data(Qt.ItemDataRole.UserRole)].run
        self.accept()
        if run is not None:
            run()


class KeysDialog(QDialog):
    """Every keyboard shortcut, in a table (F1)."""

    def __init__(self, commands: Sequence[Command], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        rows = "".join(
            f"<tr><td align='right'><b>{c.keys}</b>&nbsp;&nbsp;&nbsp;</td><td>{c.name}</td></tr>"
            for c in commands
            if c.keys
        )
        self.table = QLabel(f"<table cellspacing='5'>{rows}</table>", self)
        self.table.setTextFormat(Qt.TextFormat.RichText)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
