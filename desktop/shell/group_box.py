"""The sidebar's group list: a group is opened, or New group… asked for, only when chosen.

A plain combo box treats Up, Down, the wheel and a typed letter as a choice:
Down from the only group landed on *New group…* and opened its dialog, and with
several groups it switched group. Here those open the list instead, and only
Enter or a click in it chooses.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent, QWheelEvent
from PySide6.QtWidgets import QComboBox

#: Keys that move a closed combo box's choice.
_MOVING = {
    Qt.Key.Key_Up,
    Qt.Key.Key_Down,
    Qt.Key.Key_PageUp,
    Qt.Key.Key_PageDown,
    Qt.Key.Key_Home,
    Qt.Key.Key_End,
}


class GroupBox(QComboBox):
    """A combo box whose choice changes only from its open list."""

    def keyPressEvent(self, event: QKeyEvent) -> None:
        plain = not event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        typed = plain and event.text().isprintable() and event.text().strip() != ""
        if event.key() in _MOVING or typed:
            self.showPopup()
            event.accept()
            return
        super().keyPressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:
        event.ignore()  # scrolls what is under the sidebar, never changes group
