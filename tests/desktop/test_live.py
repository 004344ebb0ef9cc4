"""Writes by an agent over the real socket, and by another process, appear live."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from PySide6.QtCore import QItemSelectionModel
from pytestqt.qtbot import QtBot

from core.agent.client import AmbryClient
from core.model.config import Config
from core.model.entries import Actor
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.server.agent_server import AgentServer
from desktop.shell.main_window import MainWindow
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState
from tests.desktop.conftest import add


def listed(window: MainWindow) -> list[str]:
    model = window.browser.model
    return [model.id_at(r) for r in range(model.rowCount())]


@pytest.fixture
def server(service: MemoryService, data_dir: DataDir) -> Iterator[AgentServer]:
    agent_server = AgentServer(service, data_dir)
    agent_server.start()
    yield agent_server
    agent_server.stop()


@pytest.fixture
def served_window(
    qtbot: QtBot, state: AppState, executor: Executor, server: AgentServer
) -> Iterator[MainWindow]:
    win = MainWindow(state, executor, server, server.path)
    qtbot.addWidget(win)
    win.show()
    win.start()
    yield win
    win.close()


def in_thread(work: object) -> threading.Thread:
    """Run a blocking client beside the GUI's event loop."""
    thread = threading.Thread(target=work, daemon=True)  # type: ignore[arg-type]
    thread.start()
    return thread


def test_agent_store_over_the_socket_appears_live(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    data_dir: DataDir,
    server: AgentServer,
    served_window: MainWindow,
) -> None:
    window = served_window
    first = add(service, operator, "Has a dog named Luna")
    qtbot.waitUntil(lambda: listed(window) == [first])
    assert window.socket_label.text() == "● Serving agents"
    assert window.socket_label.toolTip().startswith("Serving agents on /")

    stored: dict[str, float] = {}

    def agent() -> None:
        with AmbryClient(socket_path=server.path, data_dir=data_dir.root, timeout=10) as client:
            client.hello(group="main", client="pytest-agent")
            reply = client.store("preference", "Prefers short answers", tags=["style"])
            stored["id"], stored["at"] = reply["id"], time.monotonic()

    thread = in_thread(agent)
    qtbot.waitUntil(lambda: "id" in stored and stored["id"] in listed(window), timeout=5000)
    assert time.monotonic() - stored["at"] < 1.0
    thread.join(5)
    assert listed(window) == [stored["id"], first]
    qtbot.waitUntil(lambda: window.clients_label.text() == "No agents connected")
    assert window.call_label.text().startswith("Last call: memory_store in main")


def test_live_insert_keeps_selection_and_scroll(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    agent_caller: Caller,
    window: MainWindow,
) -> None:
    service.set_config(Config(rate_stores_per_hour=1000, rate_stores_per_day=1000))
    for i in range(120):
        add(service, operator, f"Background memory {i}")
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 120)
    table = window.browser.table
    chosen = window.browser.model.id_at(60)
    table.selectionModel().setCurrentIndex(
        window.browser.model.index(60, 0),
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )
    table.scrollTo(window.browser.model.index(50, 0), table.ScrollHint.PositionAtTop)
    top = window.browser.model.id_at(table.rowAt(0))

    new = service.store(agent_caller, {"type": "fact", "content": "Just learned this"})
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 121)
    assert listed(window)[0] == new.entry.id
    assert window.browser.selected_ids() == [chosen]
    assert window.browser.model.id_at(table.rowAt(0)) == top
    assert window.browser.editor.entry is not None and window.browser.editor.entry.id == chosen


def test_write_by_another_process_appears(
    qtbot: QtBot, data_dir: DataDir, window: MainWindow
) -> None:
    # A second service has its own connection, as `ambry store` in a terminal would.
    other = MemoryService(data_dir, Config())
    try:
        caller = other.open_session("main", Actor.OPERATOR, "cli")
        entry_id = add(other, caller, "Stored from the command line")
    finally:
        other.close()
    qtbot.waitUntil(lambda: entry_id in listed(window), timeout=3000)


def test_agent_delete_of_the_shown_entry_clears_the_editor(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    agent_caller: Caller,
    window: MainWindow,
) -> None:
    keep = add(service, operator, "Keeps this one")
    gone = add(service, operator, "The agent deletes this one")
    qtbot.waitUntil(lambda: listed(window) == [gone, keep])
    window.browser.open_entry(gone)
    assert window.browser.editor.entry is not None
    service.delete(agent_caller, gone)
    qtbot.waitUntil(lambda: listed(window) == [keep])
    assert window.browser.editor.entry is None


def test_vectors_written_by_another_connection_redraw_nothing(
    qtbot: QtBot, data_dir: DataDir, window: MainWindow
) -> None:
    """A background backfill commits often; the window must not refresh for it."""
    from core.semantic import backfill
    from core.semantic.embedding import shared_embedder
    from core.storage.db import open_database

    other = MemoryService(data_dir, Config())
    try:
        caller = other.open_session("main", Actor.OPERATOR, "cli")
        add(other, caller, "The bike lock code is kept in the drawer")
    finally:
        other.close()
    qtbot.waitUntil(lambda: len(listed(window)) == 1, timeout=3000)
    refreshes: list[object] = []
    window.state.changed.connect(refreshes.append)
    model = shared_embedder()
    assert model is not None
    path = data_dir.group_db("main")
    conn = open_database(path)
    try:
        backfill.reindex(conn, path, "main", model)
        assert conn.execute("SELECT count(*) FROM memory_vectors").get == 1
    finally:
        conn.close()
    window.state.poll()
    qtbot.wait(300)
    assert refreshes == []
