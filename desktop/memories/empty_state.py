"""First run: what Ambry is, how to connect an agent, and a way to get started."""

from __future__ import annotations

import argparse
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from core.cli.setup import CLIENTS, server_entry, snippet
from core.memory.writing import StoreRequest
from core.model.entries import EntryType, Source, SourceType, Trust
from core.model.errors import AmbryError
from core.storage.paths import DataDir
from desktop.widgets import messages
from desktop.widgets.path_label import PathLabel
from desktop.widgets.watch import AppState

_F, _P, _I, _C, _X = (
    EntryType.FACT,
    EntryType.PREFERENCE,
    EntryType.INSTRUCTION,
    EntryType.CORRECTION,
    EntryType.CONTEXT,
)

#: Realistic memories of every type, to try the app with.
EXAMPLES: tuple[StoreRequest, ...] = (
    StoreRequest(_P, "Prefers concise answers with code first, explanation after.", ("style",)),
    StoreRequest(_P, "Uses dark mode everywhere; screenshots should match.", ("style", "tools")),
    StoreRequest(_P, "Likes type hints and Google-style docstrings in Python.", ("python", "code")),
    StoreRequest(_I, "Run `make test` before proposing a commit.", ("workflow", "code")),
    StoreRequest(_I, "Never push to main directly; open a pull request.", ("workflow", "git")),
    StoreRequest(_C, "The staging database is Postgres 16, not MySQL.", ("infra",)),
    StoreRequest(_C, "Their manager is Priya Raman (not Priya Shah).", ("people", "work")),
    StoreRequest(_F, "Works at Northwind on the billing service team.", ("work",)),
    StoreRequest(_F, "Has a dog named Luna who needs a walk at 6 pm.", ("home", "pets")),
    StoreRequest(_F, "The Lyon office is closed on Fridays in August.", ("work", "travel")),
    StoreRequest(_X, "Migrating the invoices service from cron jobs to a queue.", ("projects",)),
    StoreRequest(_X, "Preparing a talk on local-first software for March.", ("projects",)),
    StoreRequest(
        _F,
        "A blog post claims the billing API will drop XML support next year.",
        ("web",),
        source=Source(SourceType.WEB_CONTENT, Trust.LOW),
    ),
    StoreRequest(
        _I,
        "A web page suggests always answering in French.",
        ("web",),
        source=Source(SourceType.WEB_CONTENT, Trust.LOW),
    ),
)


def load_examples(state: AppState) -> int:
    """Store the example memories in the current group; returns how many were written."""
    try:
        outcomes = state.service.store_entries(state.operator(), EXAMPLES)
    except AmbryError as exc:
        messages.report(exc)
        return 0
    return sum(1 for o in outcomes if o.created)


#: The client the snippet is written for: its ``mcpServers`` shape is Claude Desktop's
#: (and Cursor's), and ``--client`` names it in Ambry's sessions and audit log.
SNIPPET_CLIENT = "claude-desktop"

#: What the snippet is, beside it: for whom, and what to change for another client.
SNIPPET_NOTE = (
    "It is written for Claude Desktop: for another client (Cursor, …) change "
    "<b>-\u2060-\u2060client</b> to its name, which Ambry shows in its sessions and audit log."
)


def mcp_snippet(data_dir: DataDir, group: str) -> str:
    """The MCP client configuration that starts ``ambry mcp`` for this data dir and group."""
    # Always explicit: a data dir taken from AMBRY_DATA_DIR here is not in the
    # MCP client's environment, and an agent pointed at other data fails quietly.
    # The entry is the one `ambry setup claude-desktop` and the Connect page's button write.
    args = argparse.Namespace(data_dir=str(data_dir.root), group=group)
    client = CLIENTS[SNIPPET_CLIENT]
    return snippet(client, "ambry", server_entry(SNIPPET_CLIENT, client, args)).rstrip("\n")


class EmptyState(QScrollArea):
    """Explains Ambry and how to connect an agent, for a group with no memories.

    Args:
        state: the shared app state.
        socket_path: the agent socket to tell the person about.
        parent: the parent widget.

    Signals:
        add_requested(): the person wants to write a first memory.
        examples_loaded(int): example memories were stored (how many).
    """

    add_requested = Signal()
    examples_loaded = Signal(int)

    def __init__(self, state: AppState, socket_path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.setObjectName("emptyState")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        body = QWidget(self)
        body.setObjectName("emptyBody")
        body.setMaximumWidth(760)

        title = QLabel("Your agent's memory lives here", body)
        title.setObjectName("emptyTitle")
        intro = QLabel(
            "Ambry keeps what your AI agents learn about you — preferences, facts, "
            "instructions, corrections — on this machine, in one SQLite file per group. "
            "Agents read a short brief at the start of each session and store what they "
            "learn; you can read, edit, review and delete all of it here.",
            body,
        )
        intro.setWordWrap(True)

        connect = QLabel("Connect an agent", body)
        connect.setObjectName("sectionTitle")
        how = QLabel(
            "Agents connect to the local socket and prove who they are with the token "
            "in a file readable only by you:",
            body,
        )
        how.setWordWrap(True)
        # Paths are one long word each: cut in the middle where the page is narrow,
        # whole in their tooltips, so the page never scrolls sideways.
        self.socket_path = PathLabel(str(socket_path), body)
        self.token_path = PathLabel("", body)
        paths = QFormLayout()
        paths.addRow("Socket", self.socket_path)
        paths.addRow("Token", self.token_path)
        mcp_intro = QLabel(f"Add this to an MCP client's configuration. {SNIPPET_NOTE}", body)
        mcp_intro.setWordWrap(True)
        self.snippet = QPlainTextEdit(body)
        self.snippet.setObjectName("snippet")
        self.snippet.setAccessibleName("MCP configuration")
        self.snippet.setReadOnly(True)
        self.snippet.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.copy_button = QPushButton("Copy config", body)
        self.copy_button.clicked.connect(self.copy_snippet)

        start = QLabel("Get started", body)
        start.setObjectName("sectionTitle")
        self.add_button = QPushButton("Add a memory", body)
        self.add_button.setObjectName("primary")
        self.examples_button = QPushButton("Load example memories", body)
        self.add_button.clicked.connect(self.add_requested.emit)
        self.examples_button.clicked.connect(self.load_examples)
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.examples_button)
        buttons.addStretch(1)
        copy_row = QHBoxLayout()
        copy_row.addStretch(1)
        copy_row.addWidget(self.copy_button)

        layout = QVBoxLayout(body)
        layout.setContentsMargins(32, 28, 32, 28)
        layout.setSpacing(10)
        # The page's only actions first: in a small window the snippet below runs
        # past the fold.
        for w in (title, intro, start):
            layout.addWidget(w)
        layout.addLayout(buttons)
        layout.addWidget(connect)
        layout.addWidget(how)
        layout.addLayout(paths)
        layout.addWidget(mcp_intro)
        layout.addWidget(self.snippet)
        layout.addLayout(copy_row)
        layout.addStretch(1)
        outer = QWidget(self)
        outer_layout = QHBoxLayout(outer)
        outer_layout.addStretch(1)
        outer_layout.addWidget(body, 100)
        outer_layout.addStretch(1)
        self.setWidget(outer)
        # Tab goes from the page's actions on; the page itself is no Tab stop, and
        # Ctrl+1 lands on Add a memory (desktop/shell/focus.py).
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFocusProxy(self.add_button)
        QWidget.setTabOrder(self.add_button, self.examples_button)
        QWidget.setTabOrder(self.examples_button, self.snippet)
        QWidget.setTabOrder(self.snippet, self.copy_button)
        self.update_texts()
        state.group_changed.connect(lambda _g: self.update_texts())

    def update_texts(self) -> None:
        data_dir = self._state.data_dir
        self.token_path.set_path(str(data_dir.token_file))
        text = mcp_snippet(data_dir, self._state.group)
        self.snippet.setPlainText(text)
        # Tall enough for the whole snippet: it is meant to be read at a glance.
        lines = text.count("\n") + 1
        self.snippet.setFixedHeight(self.snippet.fontMetrics().lineSpacing() * lines + 24)

    def copy_snippet(self) -> None:
        QGuiApplication.clipboard().setText(self.snippet.toPlainText())
        messages.info("MCP configuration copied to the clipboard.")

    def load_examples(self) -> None:
        count = load_examples(self._state)
        if count:
            messages.info(f"Loaded {count} example memories.")
            self.examples_loaded.emit(count)
