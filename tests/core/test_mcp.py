"""``ambry mcp`` driven over stdio by the official MCP client, as an MCP host would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent, TextResourceContents

from core.manifest import load_manifest
from core.model import EntryFilter
from core.paths import DataDir
from core.service import MemoryService

AMBRY = Path(sys.executable).with_name("ambry")


def server_params(data: Path, group: str = "main") -> StdioServerParameters:
    return StdioServerParameters(
        command=str(AMBRY),
        args=["--data-dir", str(data), "--group", group, "mcp"],
        env={"QT_QPA_PLATFORM": "offscreen"},
    )


def sessions(data: Path, group: str = "main") -> list[tuple[str, str, str]]:
    svc = MemoryService(DataDir(data))
    try:
        return list(
            svc.store_for(group).execute(
                "SELECT id, client, end_state FROM sessions ORDER BY rowid"
            )
        )
    finally:
        svc.close()


def text_of(content: object) -> str:
    assert isinstance(content, TextContent | TextResourceContents), content
    return content.text


def run_session(data: Path, body: Any, group: str = "main") -> Any:
    async def main() -> Any:
        # The server's log goes to devnull, out of the test output.
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(server_params(data, group), errlog=errlog) as (r, w),
                ClientSession(r, w) as session,
            ):
                init = await session.initialize()
                return await body(session, init)

    return anyio.run(main)


def test_tools_prompt_and_resource_over_stdio(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"

    async def body(session: ClientSession, init: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"server": init.server_info.name, "instructions": init.instructions}
        out["tools"] = {t.name: t.input_schema for t in (await session.list_tools()).tools}
        stored = await session.call_tool(
            "memory_store", {"type": "preference", "content": "Prefers metric units"}
        )
        out["stored"] = stored.structured_content
        found = await session.call_tool("memory_search", {"query": "metric"})
        out["found"] = json.loads(text_of(found.content[0]))
        bad = await session.call_tool("memory_store", {"type": "fact", "content": "x" * 2001})
        out["bad"] = (bad.is_error, bad.structured_content)
        brief = await session.call_tool("memory_brief", {})
        out["brief_tool"] = text_of(brief.content[0])
        with pytest.raises(MCPError, match="unknown tool"):
            await session.call_tool("settings_set", {})
        prompts = await session.list_prompts()
        out["prompts"] = [p.name for p in prompts.prompts]
        prompt = await session.get_prompt("memory_brief")
        out["prompt"] = text_of(prompt.messages[0].content)
        resources = await session.list_resources()
        out["resources"] = [str(r.uri) for r in resources.resources]
        read = await session.read_resource(resources.resources[0].uri)
        out["resource"] = text_of(read.contents[0])
        with pytest.raises(MCPError, match="unknown resource"):
            await session.read_resource("ambry://brief/other-group")
        return out

    out = run_session(data, body)
    assert out["server"] == "ambry" and "memory" in out["instructions"]
    manifest = load_manifest()
    assert out["tools"] == {name: manifest[name].schema for name in out["tools"]}
    assert set(out["tools"]) == {
        "memory_store",
        "memory_search",
        "memory_brief",
        "memory_delete",
        "memory_related",
    }
    assert [r["id"] for r in out["found"]["results"]] == [out["stored"]["id"]]
    is_error, error = out["bad"]
    assert is_error and error["code"] == "invalid_params" and error["field"] == "content"
    for text in (out["brief_tool"], out["prompt"], out["resource"]):
        assert "Prefers metric units" in text
    assert out["prompts"] == ["memory_brief"]
    assert out["resources"] == ["ambry://brief/main"]

    [(session_id, client, state)] = sessions(data)
    assert (client, state) == ("mcp", "ended")  # stdin closed: a graceful end
    svc = MemoryService(DataDir(data))
    try:
        entry = svc.get("main", out["stored"]["id"])
        assert entry.provenance.session_id == session_id
        assert svc.search_entries("main", "", EntryFilter(), 10)[0].trust == "medium"
    finally:
        svc.close()


def test_the_group_flag_picks_the_group(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"

    async def body(session: ClientSession, init: Any) -> list[str]:
        await session.call_tool("memory_store", {"type": "fact", "content": "Lives in Lyon"})
        return [str(r.uri) for r in (await session.list_resources()).resources]

    assert run_session(data, body, group="travel") == ["ambry://brief/travel"]
    assert DataDir(data).groups() == ["travel"]


def test_sigterm_ends_the_session_gracefully(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"
    proc = subprocess.Popen(
        [str(AMBRY), "--data-dir", str(data), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        proc.stdin.write(json.dumps(init).encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["result"]["serverInfo"]["name"] == "ambry"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
    [(_, _, state)] = sessions(data)
    assert state == "ended"


def test_nothing_heavy_is_imported_before_it_is_needed() -> None:
    # The CLI and the bridge module load neither Qt nor the MCP SDK; `ambry mcp`
    # imports the SDK only once it runs, and never Qt. jsonschema waits for the
    # first call that validates, after `initialize` has been answered.
    probe = (
        "import sys, core.cli, core.commands, core.mcp_bridge, core.client; "
        "print(sorted(m for m in ('mcp', 'PySide6', 'anyio', 'jsonschema') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"
