"""Servers follow config.json: every process on a data dir uses the settings saved last,
whoever saved them (the app, another server, `ambry settings`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from core.agent.auth import load_or_create_token
from core.agent.protocol import agent_dispatcher
from core.cli.main import main as cli_main
from core.model.config import load_config, save_config
from core.semantic import embedding
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.test_mcp import run_session, text_of
from tests.core.test_protocol import call, error_of


def test_a_server_uses_settings_saved_by_ambry_settings_from_its_next_call(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    service = MemoryService(data_dir, load_config(data_dir.config_file))
    try:
        conn = agent_dispatcher(service).connect()
        token = load_or_create_token(data_dir.token_file)
        assert "result" in call(conn, "hello", {"token": token, "group": "main"})
        store = {"type": "fact", "content": "The user keeps bees"}
        assert "result" in call(conn, "memory_store", store)
        argv = ["--data-dir", str(data_dir.root), "settings", "rate_stores_per_hour", "1"]
        assert cli_main(argv) == 0
        assert "use it from their next call" in capsys.readouterr().out
        _, data = error_of(call(conn, "memory_store", {**store, "content": "and wasps"}))
        assert data["code"] == "rate_limited"
        assert service.config.rate_stores_per_hour == 1
        # A broken file: said in the log, the settings in use are kept, calls go on.
        data_dir.config_file.write_text("{not json")
        reply = call(conn, "memory_search", {"query": "bees"})
        assert reply["result"]["results"]
        assert service.config.rate_stores_per_hour == 1
        assert any("the settings in use are kept" in r.message for r in caplog.records)
    finally:
        service.close()


def test_two_servers_on_one_data_dir_end_on_the_model_saved_last(
    data_dir: DataDir, model_copy: Path
) -> None:
    folder = model_copy
    first = MemoryService(data_dir, load_config(data_dir.config_file))
    second = MemoryService(data_dir, load_config(data_dir.config_file))
    try:
        token = load_or_create_token(data_dir.token_file)
        conns = [agent_dispatcher(s).connect() for s in (first, second)]
        for i, conn in enumerate(conns):
            assert "result" in call(conn, "hello", {"token": token, "group": "main"})
            for n in range(20):
                fact = {"type": "fact", "content": f"Server {i} fact {n} about the garden"}
                assert "result" in call(conn, "memory_store", fact)
        for s in (first, second):
            s.start_embedding()
            assert s.embedding is not None and s.embedding.wait_idle(60)
        # The app saves another model; the other server, still on the installed one,
        # takes a write. Had it kept its model, its worker would re-embed every row
        # back, and the first one's again after the next write, and so on.
        config = first.config.with_changes(embedding_model_dir=str(folder.resolve()))
        save_config(data_dir.config_file, config)
        first.set_config(config)
        assert "result" in call(conns[1], "memory_store", {"type": "fact", "content": "Late"})
        assert second.config.embedding_model_dir == str(folder.resolve())
        for s in (first, second):
            assert s.embedding is not None and s.embedding.wait_idle(60)
        rows = first.store_for("main").execute("SELECT DISTINCT model FROM memory_vectors")
        assert {r[0] for r in rows} == {embedding.directory_files(folder).model_id}
    finally:
        first.close()
        second.close()
        embedding.forget_shared()


def test_an_mcp_server_follows_the_settings_file(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"

    async def body(session: ClientSession, _init: Any) -> Any:
        for fact in ("The user keeps bees", "The user grows leeks"):
            stored = await session.call_tool("memory_store", {"type": "fact", "content": fact})
            assert not stored.is_error
        settings = {"rate_stores_per_hour": 2, "max_brief_entries": 1}
        (data / "config.json").write_text(json.dumps(settings))
        brief = text_of((await session.get_prompt("memory_brief")).messages[0].content)
        refused = await session.call_tool("memory_store", {"type": "fact", "content": "Wasps"})
        return brief, refused

    brief, refused = run_session(data, body)
    assert ("bees" in brief) != ("leeks" in brief)  # one entry: the new brief limit
    assert refused.is_error and "rate_limited" in text_of(refused.content[0])
