"""The app and ``ambry serve`` embed rows another process wrote, and say so meanwhile."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from core.agent.client import AmbryClient
from core.continuity.episodes import log_exchange
from core.model.entries import Actor
from core.semantic import vectors
from core.semantic.embedding import DEFAULT_MODEL_ID
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.widgets.embedding_status import EmbeddingStatus
from desktop.widgets.watch import AppState
from tests.desktop.conftest import add, start_serve

#: Another process storing memories: it loads no model and runs no worker.
WRITER = """
import sys
from pathlib import Path
from core.model.entries import Actor
from core.service import MemoryService
from core.storage.paths import DataDir

svc = MemoryService(DataDir(Path(sys.argv[1])))
caller = svc.open_session("main", Actor.OPERATOR, "import")
svc.store_entries(caller, [
    svc.parse_store_args({"type": "fact", "content": f"Imported note {i} about rivers"})
    for i in range(int(sys.argv[2]))
])
svc.close()
"""


def pending(service: MemoryService) -> int:
    conn = service.store_for("main").conn
    return sum(vectors.pending_count(conn, k, DEFAULT_MODEL_ID) for k in vectors.TABLES)


def test_the_app_embeds_what_another_process_stored_and_shows_the_progress(
    qtbot: QtBot, service: MemoryService, operator: Caller, state: AppState, data_dir: DataDir
) -> None:
    add(service, operator, "User keeps bees")
    service.start_embedding()
    worker = service.embedding
    assert worker is not None and worker.wait_idle(60)
    status = EmbeddingStatus(worker)
    qtbot.addWidget(status)
    shown: list[str] = []
    status.progressed.connect(
        lambda _: shown.append(status.label.text() if not status.isHidden() else "hidden")
    )
    state.start_polling()
    subprocess.run([sys.executable, "-c", WRITER, str(data_dir.root), "150"], check=True)
    # The app's poll notices the commit; the status bar counts the rows being embedded.
    qtbot.waitUntil(lambda: any(s.endswith(" of 151") for s in shown), timeout=30_000)
    assert worker.wait_idle(60)
    qtbot.waitUntil(status.isHidden, timeout=10_000)
    assert pending(service) == 0


@pytest.mark.slow
def test_ambry_serve_finds_turns_another_process_logged_by_meaning(
    tmp_path: Path, sock_dir: Path
) -> None:
    served = start_serve(tmp_path, sock_dir)
    proc, data, sock = served.proc, served.data, served.sock
    writer = None
    try:
        with AmbryClient(sock, data_dir=data) as client:
            client.hello("main", "agent")
            client.call("exchange_log", {"speaker": "user", "text": "The weather is mild today"})
            question = {"query": "which animal lives with us", "mode": "semantic"}
            client.call("exchange_search", question)  # the model is loaded, the worker idle
            # This test's process is the second writer: it embeds nothing.
            writer = MemoryService(DataDir(data))
            caller = writer.open_session("main", Actor.AGENT, "other agent")
            log_exchange(writer, caller, "user", "Our dog Biscuit sleeps on the sofa")
            found = client.call("exchange_search", question)
            assert found["results"][0]["text"] == "Our dog Biscuit sleeps on the sofa"
            assert "semantic" in found["results"][0]["signals"]
            assert "pending_vectors" not in found
    finally:
        if writer is not None:
            writer.close()
        proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
