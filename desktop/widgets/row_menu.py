"""Right-click menus on the lists: the page's own commands for the selected rows.

A person who right-clicks a row expects the commands of its page there. Each
page builds its menu from the handlers and keys its buttons already use, so the
menu never does anything a button would not: the same confirmations, the same
undo. Items that do not apply to the selection are greyed out, not hidden, so the
menu reads the same every time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QAbstractScrollArea, QMenu, QWidget

from desktop.widgets import messages


@dataclass(frozen=True)
class Command:
    """One item of a row menu.

    Attributes:
        text: what the item says (``…`` when it asks before acting).
        run: the page's handler.
        enabled: whether it applies to the selection.
        keys: the key the page answers for the same command, shown beside the
            text; the menu only shows it, the page's own shortcut does the work.
    """

    text: str
    run: Callable[[], object]
    enabled: bool = True
    keys: QKeySequence | None = None


#: Between two items of a row menu: a line.
SEPARATOR = None


def row_menu(parent: QWidget, commands: Sequence[Command | None]) -> QMenu:
    """A menu of ``commands`` in order; ``SEPARATOR`` draws a line between groups."""
    menu = QMenu(parent)
    for command in commands:
        if command is None:
            menu.addSeparator()
            continue
        action = menu.addAction(command.text)
        if command.keys is not None:
            action.setShortcut(command.keys)
        action.setEnabled(command.enabled)
        action.triggered.connect(lambda _checked=False, run=command.run: run())
    return menu


def on_right_click(view: QAbstractScrollArea, build: Callable[[], QMenu]) -> None:
    """Open the menu ``build`` returns where ``view`` (a list) is right-clicked.

    The click has already selected the row under the pointer, so ``build`` reads
    the selection as it is.
    """

    def show(pos: QPoint) -> None:
        menu = build()
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(view.viewport().mapToGlobal(pos))

    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    view.customContextMenuRequested.connect(show)


def copy_ids(ids: Sequence[str], noun: str = "memory") -> None:
    """Put ``ids`` on the clipboard, one a line, and say so.

    Args:
        ids: the ids to copy.
        noun: what they name ("memory", "thread"), or "" for things of several kinds.
    """
    if not ids:
        return
    QGuiApplication.clipboard().setText("\n".join(ids))
    what = f"{noun} id" if noun else "id"
    one = f"{what.capitalize()} copied."
    messages.info(one if len(ids) == 1 else f"{len(ids):,} {what}s copied.")


def copy_command(ids: Sequence[str], noun: str) -> Command:
    """Copy the selected rows' ids: "Copy id", or "Copy 3 ids" for several."""
    chosen = list(ids)
    text = "Copy id" if len(chosen) <= 1 else f"Copy {len(chosen):,} ids"
    return Command(text, lambda: copy_ids(chosen, noun), bool(chosen))
