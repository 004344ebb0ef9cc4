"""``ambry mcp`` driven over stdio by the official MCP client, as an MCP host would.

Every tool, prompt and resource is called through the real subprocess; the SDK
client checks each tool's structured result against the tool's outputSchema.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.types import Implementation, TextContent, TextResourceContents

from core.agent.mcp_bridge import INSTRUCTIONS
from core.policy.manifest import load_manifest, read_resource
from core.service import MemoryService
from core.storage.paths import DataDir

AMBRY = Path(sys.executable).with_name("ambry")
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def server_params(data: Path, *extra: str, group: str = "main") -> StdioServerParameters:
    return StdioServerParameters(
        command=str(AMBRY),
        args=["--data-dir", str(data), "--create", "--group", group, "mcp", *extra],
        # The SDK hands the server a few variables only: PYTHONPATH (tests/conftest.py)
        # too, so it runs this checkout's code whatever the venv's install points at.
        env={"QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": os.environ["PYTHONPATH"]},
    )


def sessions(data: Path, group: str = "main") -> list[tuple[str, str, str, str | None]]:
    svc = MemoryService(DataDir(data))
    try:
        return list(
            svc.store_for(group).execute(
                "SELECT s.id, s.client, s.end_state, t.title FROM sessions s "
                "LEFT JOIN threads t ON t.id = s.thread_id ORDER BY s.rowid"
            )
        )
    finally:
        svc.close()


def text_of(content: object) -> str:
    assert isinstance(content, TextContent | TextResourceContents), content
    return content.text


def run_session(
    data: Path, body: Any, *extra: str, group: str = "main", name: str = "test-host"
) -> Any:
    async def main() -> Any:
        # The server's log goes to devnull, out of the test output.
        with open(os.devnull, "w") as errlog:
            async with (
                stdio_client(server_params(data, *extra, group=group), errlog=errlog) as (r, w),
                ClientSession(r, w, client_info=Implementation(name=name, version="2.1")) as s,
            ):
                init = await s.initialize()
                return await body(s, init)

    return anyio.run(main)


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, args)
    assert not result.is_error, text_of(result.content[0])
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def test_every_tool_prompt_and_resource_over_stdio(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"
    note = tmp_path / "plan.md"
    note.write_text("Ships Friday\n", encoding="utf-8")

    async def body(session: ClientSession, init: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"init": init}
        out["tools"] = {t.name: t for t in (await session.list_tools()).tools}
        stored = await call(session, "memory_store", {"type": "preference", "content": "Metric"})
        receipt = await call(session, "attachment_receipt", {"path": str(note)})
        results = {"memory_store": stored, "attachment_receipt": receipt}
        for name, args in [
            ("memory_search", {"query": "metric"}),
            ("memory_related", {"id": stored["id"]}),
            ("memory_brief", {}),
            ("ingest_text", {"text": "[MEMORY:dependency:web] The build needs pnpm"}),
            ("thread_open", {"title": "Project X"}),
            ("thread_list", {}),
            ("exchange_log", {"speaker": "user", "text": "Use pnpm", "turn": "1"}),
            ("exchange_search", {"query": "pnpm"}),
            ("handoff_write", {"markdown": "- [ ] ship it", "base_version": 0}),
            ("handoff_read", {}),
            ("attachment_verify", {"id": receipt["receipt"]["id"]}),
            ("attachment_list", {}),
            (
                "claim_propose",
                {
                    "text": "Ships Friday",
                    "kind": "project",
                    "sources": [{"kind": "attachment", "id": receipt["receipt"]["id"]}],
                },
            ),
            ("claim_search", {"query": "ships"}),
            ("recall", {"text": "which package manager, pnpm?"}),
            ("dig", {"id": stored["id"], "depth": 1}),
        ]:
            results[name] = await call(session, name, args)
        claim = {"id": results["claim_propose"]["id"]}
        results["claim_verify"] = await call(session, "claim_verify", claim)
        brief = await session.call_tool("memory_brief", {})
        out["brief_text"] = text_of(brief.content[0])
        out["results"] = results
        bad = await session.call_tool("memory_store", {"type": "fact", "content": "x" * 2001})
        out["bad"] = (bad.is_error, bad.structured_content, text_of(bad.content[0]))
        loose = await session.call_tool("thread_open", {"title": "a", "id": "thr-0123456789ab"})
        out["loose"] = (loose.is_error, loose.structured_content, text_of(loose.content[0]))
        with pytest.raises(MCPError, match="unknown tool") as unknown:
            await session.call_tool("settings_set", {})
        out["unknown_code"] = unknown.value.error.code
        prompts = await session.list_prompts()
        out["prompts"] = {p.name: p.title for p in prompts.prompts}
        out["brief_prompt"] = text_of(
            (await session.get_prompt("memory_brief")).messages[0].content
        )
        out["skill_prompt"] = text_of(
            (await session.get_prompt("memory_skill")).messages[0].content
        )
        with pytest.raises(MCPError, match="unknown prompt"):
            await session.get_prompt("nope")
        resources = await session.list_resources()
        out["resources"] = [str(r.uri) for r in resources.resources]
        out["read"] = [
            text_of((await session.read_resource(r.uri)).contents[0]) for r in resources.resources
        ]
        with pytest.raises(MCPError, match="unknown resource") as other:
            await session.read_resource("ambry://brief/other-group")
        out["other_code"] = other.value.error.code
        deleted = await call(session, "memory_delete", {"id": stored["id"]})
        out["deleted"] = deleted
        return out

    out = run_session(data, body)
    init = out["init"]
    assert (init.server_info.name, init.server_info.title) == ("ambry", "Ambry")
    assert init.instructions == INSTRUCTIONS and init.protocol_version == "2025-11-25"
    manifest = load_manifest()
    assert set(out["tools"]) == set(manifest)
    for name, tool in out["tools"].items():
        assert tool.input_schema == manifest[name].schema
        assert tool.output_schema == manifest[name].result_schema
        assert tool.title == manifest[name].title and tool.description == manifest[name].description
        hints = tool.annotations
        assert (
            hints is not None and hints.read_only_hint == manifest[name].annotations["readOnlyHint"]
        )
        assert hints.destructive_hint == manifest[name].annotations["destructiveHint"]
    # Every tool was called, and the SDK client accepted each structured result.
    assert set(out["results"]) | {"memory_delete", "session_end"} == set(manifest)
    assert "Metric" in out["brief_text"]
    # A refusal is text only: an error object would not match the tool's outputSchema.
    is_error, error, text = out["bad"]
    assert is_error and error is None
    assert text.startswith("invalid_params: memory_store: content must be at most 2000")
    is_error, error, text = out["loose"]
    assert is_error and error is None and "exactly one of title" in text
    assert out["unknown_code"] == -32602 and out["other_code"] == -32002
    assert out["prompts"] == {
        "memory_brief": "Ambry memory brief",
        "memory_skill": "How to use Ambry memory",
    }
    assert "Metric" in out["brief_prompt"] and "Project X" in out["brief_prompt"]
    assert out["skill_prompt"] == read_resource("skill/memory.md")
    assert out["resources"] == ["ambry://brief/main", "ambry://skill/memory"]
    assert "Metric" in out["read"][0] and out["read"][1] == read_resource("skill/memory.md")
    assert out["deleted"] == {
        "deleted": out["results"]["memory_store"]["id"],
        "current_again": None,
    }

    [(session_id, client, state, thread)] = sessions(data)
    assert (client, state, thread) == ("test-host 2.1", "ended", "Project X")
    svc = MemoryService(DataDir(data))
    try:
        [exchange_session] = svc.store_for("main").execute("SELECT session_id FROM exchanges")
        assert exchange_session == (session_id,)  # provenance is the MCP session's
    finally:
        svc.close()


def test_session_end_keeps_a_long_lived_client_working(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"

    async def first(session: ClientSession, init: Any) -> list[dict[str, Any]]:
        await call(session, "thread_open", {"title": "Launch"})
        ended = await call(session, "session_end", {"handoff": "- [ ] email the printer"})
        again = await call(session, "memory_store", {"type": "fact", "content": "Launch is May"})
        return [ended, again]

    ended, again = run_session(data, first, "--client", "long-lived")
    assert ended["ended"] and ended["handoff_stored"]
    assert ended["new_session_id"] != ended["session_id"]
    rows = sessions(data)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (ended["session_id"], "long-lived", "ended"),
        (ended["new_session_id"], "long-lived", "ended"),
    ]
    assert again["created"]

    # The next process that works in the thread receives the handoff, once.
    async def second(session: ClientSession, init: Any) -> tuple[str, str]:
        brief = text_of((await session.get_prompt("memory_brief")).messages[0].content)
        read = await call(session, "handoff_read", {})
        return brief, read["session_handoff"]["markdown"]

    brief, handoff = run_session(data, second, "--thread", "Launch")
    assert "email the printer" in brief and handoff == "- [ ] email the printer"
    assert sessions(data)[-1][3] == "Launch"


def test_session_end_without_a_thread_leaves_its_note_for_the_next_process(
    tmp_path: Path,
) -> None:
    data = tmp_path / "mcp-data"

    async def first(session: ClientSession, init: Any) -> dict[str, Any]:
        ended = await call(session, "session_end", {"handoff": "- [ ] rotate the logs"})
        # The session that continues this connection has not taken the note.
        read = await call(session, "memory_brief", {})
        assert "rotate the logs" not in read["markdown"]
        return ended

    ended = run_session(data, first, "--client", "long-lived")
    assert ended["handoff_stored"]

    async def second(session: ClientSession, init: Any) -> str:
        return text_of((await session.get_prompt("memory_brief")).messages[0].content)

    assert "rotate the logs" in run_session(data, second, "--client", "next")


def test_a_redacted_store_says_so(tmp_path: Path) -> None:
    async def body(session: ClientSession, init: Any) -> dict[str, Any]:
        return await call(
            session, "memory_store", {"type": "fact", "content": f"CI uses {GITHUB_TOKEN}"}
        )

    stored = run_session(tmp_path / "mcp-data", body)
    assert (stored["redacted"], stored["redacted_kinds"]) == (1, {"github_token": 1})


def test_the_group_flag_picks_the_group(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"

    async def body(session: ClientSession, init: Any) -> list[str]:
        await session.call_tool("memory_store", {"type": "fact", "content": "Lives in Lyon"})
        return [str(r.uri) for r in (await session.list_resources()).resources]

    assert run_session(data, body, group="travel")[0] == "ambry://brief/travel"
    assert DataDir(data).groups() == ["travel"]


def test_an_unknown_thread_fails_initialize(tmp_path: Path) -> None:
    data = tmp_path / "mcp-data"

    async def main() -> MCPError:
        with open(os.devnull, "w") as errlog:
            params = server_params(data, "--thread", "thr-0123456789ab")
            async with stdio_client(params, errlog=errlog) as (r, w), ClientSession(r, w) as s:
                with pytest.raises(MCPError) as info:
                    await s.initialize()
                return info.value

    error = anyio.run(main)
    assert error.error.code == -32002 and "thr-0123456789ab" in error.error.message
    # As with hello: the half-opened session is closed at once, nothing is filed under it.
    assert [r[2:] for r in sessions(data)] == [("abandoned", None)]


def test_the_high_level_client_falls_back_from_discover_and_cancels_cleanly(
    tmp_path: Path,
) -> None:
    # Client's default mode probes the 2026 `server/discover` first; Ambry answers
    # "unknown method" and the client falls back to the initialize handshake.
    data = tmp_path / "mcp-data"

    async def main() -> tuple[str | None, Any]:
        async with Client(server_params(data)) as client:
            # A call abandoned at once: the client sends notifications/cancelled.
            with anyio.move_on_after(0):
                await client.call_tool("memory_search", {"query": "x"})
            found = await client.call_tool("memory_search", {"query": "nothing"})
            return client.protocol_version, found.structured_content

    assert anyio.run(main) == ("2025-11-25", {"results": [], "claims": []})


def test_a_long_memory_does_not_empty_the_brief_anywhere(tmp_path: Path) -> None:
    from core.cli.main import main

    data = tmp_path / "mcp-data"
    facts = [f"User fact number {n}" for n in range(5)]
    long = "When writing code, follow these conventions: " + "add type hints, " * 120
    for n, text in enumerate(facts):
        assert main(["--data-dir", str(data), *(["--create"] * (n == 0)), "store", text]) == 0
    assert main(["--data-dir", str(data), "store", "--type", "instruction", long[:1990]]) == 0
    assert main(["--data-dir", str(data), "settings", "max_brief_chars", "1500"]) == 0

    async def body(session: ClientSession, _init: object) -> list[str]:
        tool = await call(session, "memory_brief", {})
        assert (tool["brief_count"], tool["entry_count"]) == (5, 6)
        assert tool["truncated_by"] == "max_brief_chars"
        prompt = (await session.get_prompt("memory_brief")).messages[0].content
        resource = (await session.read_resource("ambry://brief/main")).contents[0]
        return [tool["markdown"], text_of(prompt), text_of(resource)]

    for markdown in run_session(data, body):
        assert "5 of 6 memories" in markdown and "conventions" not in markdown
        assert all(fact in markdown for fact in facts)
    cli = subprocess.run(
        [str(AMBRY), "--data-dir", str(data), "brief"], capture_output=True, text=True, check=True
    )
    assert "5 of 6 memories" in cli.stdout and all(fact in cli.stdout for fact in facts)


def test_memory_search_says_where_the_next_page_starts(tmp_path: Path) -> None:
    async def body(session: ClientSession, init: Any) -> list[dict[str, Any]]:
        for fruit in ("apples", "pears", "plums"):
            await call(session, "memory_store", {"type": "fact", "content": f"Buys {fruit} weekly"})
        # By words: the ranking by meaning moves while the new memories are embedded.
        asked = {"query": "weekly", "limit": 2, "mode": "keyword"}
        first = await call(session, "memory_search", asked)
        rest = await call(session, "memory_search", {**asked, "offset": first["next_offset"]})
        return [first, rest]

    first, rest = run_session(tmp_path / "mcp-data", body)
    assert (len(first["results"]), first["next_offset"]) == (2, 2)
    assert len(rest["results"]) == 1 and "next_offset" not in rest
    ids = [r["id"] for r in first["results"] + rest["results"]]
    assert len(set(ids)) == 3


def test_exchange_search_says_where_the_next_page_starts(tmp_path: Path) -> None:
    async def body(session: ClientSession, init: Any) -> list[dict[str, Any]]:
        for n in range(3):
            await call(session, "exchange_log", {"speaker": "user", "text": f"Box {n} is packed"})
        # By words: the ranking by meaning moves while the new turns are embedded.
        asked = {"query": "packed", "limit": 2, "mode": "keyword"}
        first = await call(session, "exchange_search", asked)
        rest = await call(session, "exchange_search", {**asked, "offset": first["next_offset"]})
        return [first, rest]

    first, rest = run_session(tmp_path / "mcp-data", body)
    assert (len(first["results"]), first["next_offset"]) == (2, 2)
    assert len(rest["results"]) == 1 and "next_offset" not in rest
    ids = [r["id"] for r in first["results"] + rest["results"]]
    assert len(set(ids)) == 3


def test_thread_list_says_where_the_next_page_starts(tmp_path: Path) -> None:
    # Before, thread_list took no offset: an agent could not read past its first page.
    async def body(session: ClientSession, init: Any) -> list[dict[str, Any]]:
        for n in range(3):
            await call(session, "thread_open", {"title": f"Plan {n}"})
        first = await call(session, "thread_list", {"limit": 2})
        rest = await call(session, "thread_list", {"limit": 2, "offset": first["next_offset"]})
        return [first, rest]

    first, rest = run_session(tmp_path / "mcp-data", body)
    assert (len(first["threads"]), first["next_offset"]) == (2, 2)
    assert len(rest["threads"]) == 1 and "next_offset" not in rest
    ids = [t["id"] for t in first["threads"] + rest["threads"]]
    assert len(set(ids)) == 3
