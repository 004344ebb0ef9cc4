"""The menu bar: the window's actions where desktop people look for them first.

Every item is one of the window's own actions (the same object the shortcut
belongs to), so a key is bound once and the menus, the palette and F1 agree.
On macOS the bar is the system's; elsewhere it sits on top of the window.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenuBar, QMessageBox, QWidget

from core import __version__


def about(parent: QWidget, data_folder: Path) -> None:
    QMessageBox.about(
        parent,
        "About Ambry",
        f"<h3>Ambry {__version__}</h3><p>Local memory for your AI assistants. "
        "Nothing leaves this machine.</p>"
        f"<p>Data folder: {html.escape(str(data_folder))}</p>",
    )


def build_menus(
    window: QMainWindow,
    acts: Mapping[str, QAction],
    nav_actions: Sequence[QAction],
    data_folder: Path,
) -> QMenuBar:
    """Fill ``window``'s menu bar from its actions; returns the bar."""
    bar = window.menuBar()

    file_menu = bar.addMenu("&File")
    file_menu.addAction(acts["new"])
    file_menu.addSeparator()
    file_menu.addAction(acts["new_group"])
    file_menu.addAction(acts["rename_group"])
    file_menu.addAction(acts["delete_group"])
    file_menu.addSeparator()
    file_menu.addAction(acts["close"])
    file_menu.addAction(acts["quit"])

    edit = bar.addMenu("&Edit")
    edit.addAction(acts["undo"])
    edit.addAction(acts["delete"])
    edit.addAction(acts["duplicates"])
    edit.addSeparator()
    edit.addAction(acts["forget"])
    edit.addAction(acts["clear"])
    edit.addSeparator()
    edit.addAction(acts["find"])
    edit.addAction(acts["palette"])

    go = bar.addMenu("&Go")
    for action in nav_actions:
        go.addAction(action)

    help_menu = bar.addMenu("&Help")
    help_menu.addAction(acts["keys"])
    about_action = QAction("About Ambry", window)
    about_action.setMenuRole(QAction.MenuRole.AboutRole)
    about_action.triggered.connect(lambda: about(window, data_folder))
    help_menu.addAction(about_action)
    return bar
