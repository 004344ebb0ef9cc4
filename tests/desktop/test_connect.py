"""The "Connect an agent" page: the right configuration, copy buttons, live clients."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from core.agent.client import AmbryClient
from core.service import MemoryService
from core.storage.paths import DATA_DIR_ENV, DataDir
from desktop.connect.view import ConnectPage
from desktop.server.agent_server import AgentServer
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets.watch import AppState


def test_connect_page_is_in_the_sidebar_with_memories_present(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    assert window.nav.item(Nav.CONNECT).text() == "Connect an agent"
    window.go(Nav.CONNECT)
    assert window.pages.currentWidget() is window.connect_page


def test_snippet_names_a_data_dir_taken_from_the_environment(
    qtbot: QtBot,
    monkeypatch: pytest.MonkeyPatch,
    data_dir: DataDir,
    state: AppState,
    tmp_path: Path,
) -> None:
    # The app found its data through AMBRY_DATA_DIR; an MCP client will not have it.
    monkeypatch.setenv(DATA_DIR_ENV, str(data_dir.root))
    page = ConnectPage(state, None, tmp_path / "agent.sock")
    qtbot.addWidget(page)
    config = json.loads(page.snippet.toPlainText())
    args = config["mcpServers"]["ambry"]["args"]
    # As README's snippets and `ambry setup` have it: the client named for the audit log.
    assert args[-3:] == ["mcp", "--client", "claude-desktop"]
    assert args[args.index("--data-dir") + 1] == str(data_dir.root)
    assert args[args.index("--group") + 1] == "main"
    assert f"--data-dir {data_dir.root}" in page.claude_line.text()
    page.copy_snippet_button.click()
    assert json.loads(QGuiApplication.clipboard().text()) == config
    state.set_group("work")
    assert '"work"' in page.snippet.toPlainText()
    assert page.claude_line.text().endswith("--group work mcp --client claude-code")
    assert "cannot list connected agents" in page.no_clients.text()


@pytest.fixture
def server(qapp: object, service: MemoryService, data_dir: DataDir) -> Iterator[AgentServer]:
    sock_dir = Path(tempfile.mkdtemp(prefix="ambry-"))
    srv = AgentServer(service, data_dir, sock_dir / "agent.sock")
    srv.start()
    yield srv
    srv.stop()
    shutil.rmtree(sock_dir, ignore_errors=True)


def test_connected_clients_are_listed_live(
    qtbot: QtBot, state: AppState, data_dir: DataDir, server: AgentServer
) -> None:
    page = ConnectPage(state, server, server.path)
    qtbot.addWidget(page)
    page.show()
    assert page.client_stack.currentWidget() is page.no_clients
    assert "No agent is connected" in page.no_clients.text()

    with ThreadPoolExecutor(max_workers=1) as pool:
        client = AmbryClient(server.path, data_dir=data_dir.root, timeout=30)
        hello = pool.submit(lambda: (client.connect(), client.hello("main", "test-agent"))[1])
        qtbot.waitUntil(hello.done, timeout=10_000)
        session = hello.result()["session_id"]
        qtbot.waitUntil(lambda: page.clients.rowCount() == 1)
        call = pool.submit(client.call, "memory_brief", {})
        qtbot.waitUntil(call.done, timeout=10_000)
        qtbot.waitUntil(lambda: page.clients.item(0, 2).text() == "memory_brief")
        assert page.client_stack.currentWidget() is page.clients
        assert page.clients.item(0, 0).text() == session
        assert page.clients.item(0, 1).text() == "main"
        client.close()
    qtbot.waitUntil(lambda: page.client_stack.currentWidget() is page.no_clients)
