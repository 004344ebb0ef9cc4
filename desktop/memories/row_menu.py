"""The memory list's right-click menu: open, copy the ids, delete.

The same commands as the keys (Enter, Del) and the editor's buttons, found
where a desktop person looks for them first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QMenu, QWidget

from desktop.widgets import messages


def copy_ids(ids: Sequence[str]) -> None:
    """Put ``ids`` on the clipboard, one a line."""
    if not ids:
        return
    QGuiApplication.clipboard().setText("\n".join(ids))
    messages.info("Memory id copied." if len(ids) == 1 else f"{len(ids):,} memory ids copied.")


def row_menu(
    parent: QWidget,
    ids: Sequence[str],
    open_entry: Callable[[str], None],
    delete: Callable[[Sequence[str]], None],
) -> QMenu:
    """The menu for the selected rows ``ids`` (open needs exactly one)."""
    menu = QMenu(parent)
    chosen = list(ids)
    opened = menu.addAction("Open")
    opened.setShortcut(QKeySequence("Return"))  # shown only: the list's own key does it
    opened.setEnabled(len(chosen) == 1)
    opened.triggered.connect(lambda: open_entry(chosen[0]))
    copied = menu.addAction("Copy id" if len(chosen) <= 1 else f"Copy {len(chosen):,} ids")
    copied.setEnabled(bool(chosen))
    copied.triggered.connect(lambda: copy_ids(chosen))
    menu.addSeparator()
    deleted = menu.addAction("Delete…")
    deleted.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
    deleted.setEnabled(bool(chosen))
    deleted.triggered.connect(lambda: delete(chosen))
    return menu
