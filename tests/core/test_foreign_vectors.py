"""Rows written by another process get their vectors from the process that searches.

``ambry store`` and imports load no model: they write rows without vectors and wake
no worker. A long-running ``ambry mcp`` must notice those rows on its next search,
embed them in its background worker, and tell the agent while some still wait.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.model.entries import Actor
from core.policy.manifest import load_manifest
from core.semantic import backfill, vectors
from core.semantic.embedding import DEFAULT_MODEL_ID
from core.semantic.hybrid import Mode
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.test_mcp_wire import AMBRY, Wire

PET = "what pet does the user have"


class Mcp(Wire):
    """One real ``ambry mcp`` process, initialised, its tools called by name."""

    def __init__(self, data: Path) -> None:
        super().__init__(data)
        self.initialize()
        self._id = 0

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        self._id += 1
        result = self.request(self._id, "tools/call", {"name": tool, "arguments": args})["result"]
        assert not result.get("isError"), result
        structured: dict[str, Any] = result["structuredContent"]
        return structured


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def mcp(data: Path) -> Iterator[Mcp]:
    server = Mcp(data)
    yield server
    if server.proc.poll() is None:
        server.close()


def cli_store(data: Path, content: str) -> None:
    """Store with the command line: another process, which embeds nothing."""
    subprocess.run(
        [str(AMBRY), "--data-dir", str(data), "store", "--type", "fact", content],
        check=True,
        capture_output=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )


def vector_count(data: Path) -> int:
    svc = MemoryService(DataDir(data))
    try:
        conn = svc.store_for("main").conn
        return sum(int(conn.execute(f"SELECT count(*) FROM {k.table}").get) for k in vectors.TABLES)
    finally:
        svc.close()


def contents(found: dict[str, Any]) -> list[str]:
    return [r["content"] for r in found["results"]]


@pytest.mark.slow
def test_a_memory_another_process_stored_is_found_by_meaning_at_once(data: Path, mcp: Mcp) -> None:
    mcp.call("memory_store", type="fact", content="User's favourite colour is green")
    assert contents(mcp.call("memory_search", query=PET, mode="semantic")) == [
        "User's favourite colour is green"
    ]
    cli_store(data, "User has a cat called Whiskers")
    # The search notices the row no vector was made for, and waits for the worker
    # as it does for the agent's own write.
    found = mcp.call("memory_search", query=PET, mode="semantic")
    assert contents(found)[0] == "User has a cat called Whiskers"
    assert "pending_vectors" not in found and "note" not in found


@pytest.mark.slow
def test_an_auto_search_has_the_worker_embed_another_process_s_rows(data: Path, mcp: Mcp) -> None:
    mcp.call("memory_store", type="fact", content="User's favourite colour is green")
    deadline = time.monotonic() + 30
    while vector_count(data) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    cli_store(data, "User has a cat called Whiskers")
    cli_store(data, "User walks to work")
    mcp.call("memory_search", query="cat")  # found by its words; the worker is woken
    deadline = time.monotonic() + 30
    while vector_count(data) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert vector_count(data) == 3


def seed_without_vectors(data: Path, count: int) -> None:
    """``count`` memories written by a process with no embedding worker (an import)."""
    svc = MemoryService(DataDir(data))
    try:
        caller = svc.open_session("main", Actor.OPERATOR, "import")
        svc.store_entries(
            caller,
            [
                svc.parse_store_args({"type": "fact", "content": f"Imported note {i} about rivers"})
                for i in range(count)
            ],
        )
    finally:
        svc.close()


@pytest.mark.slow
def test_a_search_says_how_many_rows_wait_for_their_vectors(data: Path) -> None:
    seed_without_vectors(data, 400)
    server = Mcp(data)
    try:
        found = server.call("memory_search", query="streams and waterways", mode="semantic")
        turns = server.call("exchange_search", query="streams and waterways", mode="semantic")
        fused = server.call("memory_search", query="rivers", mode="auto")
        keyword = server.call("memory_search", query="rivers", mode="keyword")
        for result in (found, turns, fused):
            assert 0 < result["pending_vectors"] <= 400
            assert f"{result['pending_vectors']} memories and turns" in result["note"]
        # By meaning alone they are not searched at all (before, the note said they
        # were found by their words, which a semantic search does not look at).
        for result in (found, turns):
            said = result["note"]
            assert "a search by meaning alone (mode semantic) does not search them" in said
            assert result["note"].endswith("or use mode auto to find them by their words")
        assert "until then they are found by words only (mode auto" in fused["note"]
        assert "pending_vectors" not in keyword
        manifest = load_manifest()
        Draft202012Validator(manifest["memory_search"].result_schema).validate(found)
        Draft202012Validator(manifest["exchange_search"].result_schema).validate(turns)
        deadline = time.monotonic() + 120
        while vector_count(data) < 400 and time.monotonic() < deadline:
            time.sleep(0.2)
        done = server.call("memory_search", query="streams and waterways", mode="semantic")
        assert done["results"] and "pending_vectors" not in done
    finally:
        server.close()


def test_the_worker_embeds_rows_of_another_connection_once_a_search_looks(
    data_dir: DataDir,
) -> None:
    """In process: a second service (no worker) writes and deletes vectors behind the
    first one's back; its searches wake its worker, without a write of its own."""
    served = MemoryService(data_dir)
    other = MemoryService(data_dir)
    try:
        served.start_embedding()
        agent = served.open_session("main", Actor.AGENT, "agent")
        assert served.embedding is not None
        served.embedding.wait_idle(30)
        writer = other.open_session("main", Actor.OPERATOR, "cli")
        other.store(writer, {"type": "fact", "content": "User has a cat called Whiskers"})
        found = served.search(agent, {"query": PET, "mode": "semantic"})
        assert [r.content for r in found] == ["User has a cat called Whiskers"]
        conn = other.store_for("main").conn
        conn.execute("DELETE FROM memory_vectors")
        served.search(agent, {"query": PET})
        assert served.embedding.wait_idle(30)
        assert vectors.pending_count(conn, vectors.MEMORIES, DEFAULT_MODEL_ID) == 0
        # Nothing changed since: the next searches read one pragma, and wake no one.
        served.search(agent, {"query": PET})
        assert served.embedding.wait_idle(0)
    finally:
        other.close()
        served.close()


def test_the_note_counts_one_row_as_one() -> None:
    assert backfill.pending_note(1)["note"].startswith("1 memory or turn has no vector yet and is")
    assert backfill.pending_note(2)["note"].startswith("2 memories and turns have no vector")
    assert backfill.pending_note(0) == {}


def test_the_note_says_what_each_mode_does_with_rows_without_a_vector() -> None:
    # Before, every mode's note said the rows were found by their words: untrue for a
    # search by meaning alone, which does not look at them until they have a vector.
    assert backfill.pending_note(3000, Mode.AUTO)["note"] == (
        "3000 memories and turns have no vector yet and are being embedded in the "
        "background; until then they are found by words only (mode auto or keyword), "
        "not by meaning"
    )
    assert backfill.pending_note(3000, Mode.SEMANTIC)["note"] == (
        "3000 memories and turns have no vector yet and are being embedded in the "
        "background; a search by meaning alone (mode semantic) does not search them "
        "until then: search again shortly, or use mode auto to find them by their words"
    )
    assert backfill.pending_note(1, Mode.SEMANTIC, command_line=True)["note"] == (
        "1 memory or turn has no vector yet and is not searched by meaning alone "
        "(--mode semantic); run `ambry reindex`, or search with --mode auto to find it "
        "by its words"
    )
