"""The memory list's right-click menu: open, copy the ids, delete.

The same commands as the keys (Enter, Del) and the editor's buttons, found
where a desktop person looks for them first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from desktop.widgets import row_menu as menus
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command


def row_menu(
    parent: QWidget,
    ids: Sequence[str],
    open_entry: Callable[[str], None],
    delete: Callable[[Sequence[str]], None],
) -> QMenu:
    """The menu for the selected rows ``ids`` (open needs exactly one)."""
    chosen = list(ids)
    return menus.row_menu(
        parent,
        [
            # Enter is the list's own key; the menu shows it.
            Command(
                "Open", lambda: open_entry(chosen[0]), len(chosen) == 1, QKeySequence("Return")
            ),
            copy_command(chosen, "memory"),
            SEPARATOR,
            Command(
                "Delete…",
                lambda: delete(chosen),
                bool(chosen),
                QKeySequence(QKeySequence.StandardKey.Delete),
            ),
        ],
    )
