"""One-click client setup: Ambry's MCP server merged into a client's own config file.

The merge is ``ambry setup CLIENT``'s (``core.cli.setup.install``): everything
else in the file is kept, the file is backed up first, and a second click
changes nothing. The person is asked before a file is touched and sees what
happened: the file, the backup, or why the file was left alone.
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QGroupBox, QLabel, QPushButton, QWidget

from core.cli.setup import CLIENTS, install, replaced_summary
from core.model.errors import AmbryError
from desktop.widgets import messages
from desktop.widgets.path_label import PathLabel
from desktop.widgets.watch import AppState

#: The clients offered, in the order people most often have them.
OFFERED = ("claude-desktop", "claude-code", "cursor", "vscode", "codex")


class SetupBox(QGroupBox):
    """A button per client that adds Ambry to its user config file.

    Args:
        state: the shared app state (the data folder and group the entry names).
        parent: the parent widget.

    Attributes:
        paths: the config file of each client (the client's default; tests redirect it).
    """

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__("Set up a client in one click", parent)
        self._state = state
        self.paths: dict[str, Path] = {name: CLIENTS[name].user_file() for name in OFFERED}
        self.buttons: dict[str, QPushButton] = {}
        grid = QGridLayout(self)
        grid.setColumnStretch(1, 1)
        for row, name in enumerate(OFFERED):
            button = QPushButton(f"Add to {CLIENTS[name].label}", self)
            button.setToolTip(f"Merge Ambry into {self.paths[name]} (backed up first)")
            button.clicked.connect(lambda _c=False, n=name: self.set_up(n))
            # Cut in the middle where the page is narrow (the whole path in its tooltip).
            where = PathLabel(str(self.paths[name]), self)
            where.setObjectName("hint")
            self.buttons[name] = button
            grid.addWidget(button, row, 0)
            grid.addWidget(where, row, 1)
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result.hide()
        grid.addWidget(self.result, len(OFFERED), 0, 1, 2)

    def set_up(self, name: str) -> None:
        """Ask, then merge Ambry's entry into ``name``'s config file and say what happened."""
        client, path = CLIENTS[name], self.paths[name]
        question = (
            f"Add Ambry (data folder {self._state.data_dir.root}, group {self._state.group}) "
            f"to {client.label}'s configuration in {path}? The file is backed up first; "
            "everything else in it stays."
        )
        if not messages.confirm(self, f"Set up {client.label}", question, "Add Ambry"):
            return
        args = argparse.Namespace(data_dir=str(self._state.data_dir.root), group=self._state.group)
        try:
            done = install(name, path, args)
        except AmbryError as exc:
            self._say(f"{client.label} was not changed: {exc.message}", ok=False)
            return
        if not done.changed:
            self._say(f"{client.label} already starts Ambry ({path}). Nothing changed.", ok=True)
            return
        backup = f" The previous file is {done.backup}." if done.backup else ""
        did = f"Added Ambry to {client.label} ({path})."
        if done.replaced is not None:
            summary = replaced_summary(done.replaced)
            did = f"Replaced the Ambry entry in {client.label} ({path}); {summary}."
        self._say(f"{did}{backup} Restart {client.label} to load it.", ok=True)

    def _say(self, text: str, *, ok: bool) -> None:
        self.result.setText(html.escape(text))
        self.result.setObjectName("" if ok else "warningLabel")
        self.result.style().polish(self.result)
        self.result.show()
        if ok:
            messages.info(text)
        else:
            messages.warning(text)
