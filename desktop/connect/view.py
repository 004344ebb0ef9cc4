"""Connect an agent: always in the sidebar, whatever the group holds.

The configuration names the data folder and group explicitly, so an MCP client
started from elsewhere (without this process's environment) reaches the same
memories. The list below it shows the agents connected to this window's socket.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.agent import auth
from core.cli.setup import mcp_command
from core.model.errors import AmbryError
from desktop.connect.setup_box import SetupBox
from desktop.memories.empty_state import SNIPPET_NOTE, mcp_snippet
from desktop.server.agent_server import AgentServer
from desktop.widgets import messages
from desktop.widgets.tables import leave_on_tab
from desktop.widgets.watch import AppState

_COLUMNS = ("Session", "Group", "Last call", "When")


def claude_code_command(data_dir: Path, group: str) -> str:
    """The one line that registers Ambry with Claude Code's CLI, as ``ambry setup
    claude-code`` would write it."""
    command = [*mcp_command(str(data_dir), group), "--client", "claude-code"]
    return "claude mcp add ambry -- " + shlex.join(command)


class ConnectPage(QScrollArea):
    """How an agent connects, with copy buttons, and the agents connected now.

    Args:
        state: the shared app state.
        server: the socket server of this window, if it runs one.
        socket_path: the socket agents connect to.
        parent: the parent widget.
    """

    def __init__(
        self,
        state: AppState,
        server: AgentServer | None,
        socket_path: Path,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._state = state
        self._server = server
        self.setWidgetResizable(True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no empty Tab stop around the page
        self.setObjectName("connectPage")
        body = QWidget(self)
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)

        title = QLabel("Connect an agent", body)
        title.setObjectName("emptyTitle")
        intro = QLabel(
            "Any MCP client (Claude Desktop, Claude Code, Cursor, VS Code, …) can use Ambry. "
            "Add this to the client's MCP configuration; it starts <b>ambry mcp</b> on this "
            f"data folder and group. {SNIPPET_NOTE}",
            body,
        )
        intro.setWordWrap(True)
        self.snippet = QPlainTextEdit(body)
        self.snippet.setObjectName("snippet")
        self.snippet.setAccessibleName("MCP configuration")
        self.snippet.setReadOnly(True)
        self.snippet.setFont(fixed)
        self.copy_snippet_button = QPushButton("Copy config", body)
        self.copy_snippet_button.clicked.connect(
            lambda: self._copy(self.snippet.toPlainText(), "MCP configuration")
        )
        self.claude_line = QLineEdit(body)
        self.claude_line.setReadOnly(True)
        self.claude_line.setAccessibleName("Claude Code command")
        self.claude_line.setFont(fixed)
        self.copy_claude_button = QPushButton("Copy command", body)
        self.copy_claude_button.clicked.connect(
            lambda: self._copy(self.claude_line.text(), "Claude Code command")
        )
        claude_row = QHBoxLayout()
        claude_row.addWidget(self.claude_line, 1)
        claude_row.addWidget(self.copy_claude_button)

        socket_box = QGroupBox("Local socket (for agents that speak Ambry's protocol)", body)
        socket_line = QLineEdit(str(socket_path), socket_box)
        socket_line.setReadOnly(True)
        socket_line.setAccessibleName("Socket path")
        token_line = QLineEdit(str(state.data_dir.token_file), socket_box)
        token_line.setReadOnly(True)
        token_line.setAccessibleName("Token file path")
        copy_token = QPushButton("Copy token", socket_box)
        copy_token.clicked.connect(self.copy_token)
        token_row = QHBoxLayout()
        token_row.addWidget(token_line, 1)
        token_row.addWidget(copy_token)
        form = QFormLayout(socket_box)
        form.addRow("Socket", socket_line)
        form.addRow("Token file", token_row)

        clients_title = QLabel("Connected now", body)
        clients_title.setObjectName("sectionTitle")
        self.clients = QTableWidget(0, len(_COLUMNS), body)
        self.clients.setObjectName("clientsTable")
        self.clients.setAccessibleName("Agents connected now")
        self.clients.setHorizontalHeaderLabels(_COLUMNS)
        self.clients.verticalHeader().hide()
        self.clients.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.clients.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        leave_on_tab(self.clients)
        self.clients.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.clients.setMinimumHeight(140)
        self.no_clients = QLabel(body)
        self.no_clients.setObjectName("hint")
        self.no_clients.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.no_clients.setWordWrap(True)
        self.client_stack = QStackedWidget(body)
        self.client_stack.addWidget(self.no_clients)
        self.client_stack.addWidget(self.clients)
        self.client_stack.setMinimumHeight(140)

        layout = QVBoxLayout(body)
        layout.setContentsMargins(24, 16, 24, 16)
        layout.setSpacing(10)
        layout.addWidget(title)
        layout.addWidget(intro)
        layout.addWidget(self.snippet)
        copy_row = QHBoxLayout()
        copy_row.addStretch(1)
        copy_row.addWidget(self.copy_snippet_button)
        layout.addLayout(copy_row)
        self.setup_box = SetupBox(state, body)
        layout.addWidget(self.setup_box)
        layout.addWidget(QLabel("Or, for Claude Code, run in a terminal:", body))
        layout.addLayout(claude_row)
        layout.addWidget(socket_box)
        layout.addWidget(clients_title)
        layout.addWidget(self.client_stack)
        layout.addStretch(1)
        self.setWidget(body)

        self.update_texts()
        self.update_clients()
        state.group_changed.connect(lambda _g: self.update_texts())
        if server is not None:
            server.clients_changed.connect(lambda _n: self.update_clients())
            server.call_handled.connect(lambda *_a: self.update_clients())

    def update_texts(self) -> None:
        data_dir, group = self._state.data_dir.root, self._state.group
        text = mcp_snippet(self._state.data_dir, group)
        self.snippet.setPlainText(text)
        lines = text.count("\n") + 1
        self.snippet.setFixedHeight(self.snippet.fontMetrics().lineSpacing() * lines + 24)
        self.claude_line.setText(claude_code_command(data_dir, group))
        self.claude_line.setCursorPosition(0)

    def update_clients(self) -> None:
        """List the connected agents: session, group, last call and when."""
        if self._server is None or not self._server.is_listening:
            self.no_clients.setText(
                "This window does not serve the agent socket (another Ambry may serve it), "
                "so it cannot list connected agents. MCP clients work all the same."
            )
            self.client_stack.setCurrentWidget(self.no_clients)
            return
        sessions = self._server.sessions()
        self.no_clients.setText(
            "No agent is connected. Once a client starts with the configuration above, "
            "it shows here with its session and last call."
        )
        self.client_stack.setCurrentWidget(self.clients if sessions else self.no_clients)
        self.clients.setRowCount(len(sessions))
        for row, (caller, call) in enumerate(sessions):
            when = call.at.astimezone().strftime("%H:%M:%S") if call else ""
            last = f"{call.method}{'' if call.ok else ' (failed)'}" if call else "none yet"
            cells = (
                caller.session_id if caller else "waiting for hello",
                caller.group if caller else "",
                last,
                when,
            )
            for column, text in enumerate(cells):
                self.clients.setItem(row, column, QTableWidgetItem(text))

    def _copy(self, text: str, what: str) -> None:
        QGuiApplication.clipboard().setText(text)
        messages.info(f"{what} copied to the clipboard.")

    def copy_token(self) -> None:
        try:
            token = auth.load_or_create_token(self._state.data_dir.token_file)
        except AmbryError as exc:
            messages.report(exc)
            return
        QGuiApplication.clipboard().setText(token)
        messages.info("Agent token copied to the clipboard.")
