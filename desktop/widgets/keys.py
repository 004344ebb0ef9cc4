"""Keyboard shortcuts that belong to one part of the window."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget


def add_key(
    widget: QWidget,
    keys: QKeySequence | QKeySequence.StandardKey | str,
    slot: Callable[[], object],
    text: str = "",
) -> QAction:
    """Run ``slot`` on ``keys`` while the focus is in ``widget`` or one of its children.

    Scoped this way, the same key (Ctrl+S, Ctrl+Z, Escape) can mean "save this"
    in each editor without Qt calling the shortcut ambiguous.
    """
    action = QAction(text, widget)
    action.setShortcut(QKeySequence(keys))
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(lambda _checked=False: slot())
    widget.addAction(action)
    return action
