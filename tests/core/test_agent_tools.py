"""The manifest is the one schema file of both doors: every socket tool method is in it,
validates from it, and answers with results its result schema describes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.policy.manifest import load_manifest
from core.service import MemoryService
from core.storage.paths import DataDir

#: Socket methods that are protocol plumbing, not tools (MCP has its own initialize and tools/list).
NOT_TOOLS = {"hello", "tools/list"}
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def call(conn: Connection, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}})
    reply = conn.handle_line(line.encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


def ok(conn: Connection, method: str, params: dict[str, Any] | None = None) -> Any:
    reply = call(conn, method, params)
    assert "result" in reply, reply
    return reply["result"]


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    token = load_or_create_token(data_dir.token_file)
    connection = agent_dispatcher(service).connect()
    ok(connection, "hello", {"token": token, "client": "unit"})
    return connection


def test_every_socket_tool_is_in_the_manifest_and_nothing_else_is(
    service: MemoryService,
) -> None:
    methods = set(agent_dispatcher(service).method_names) - NOT_TOOLS
    assert methods == set(load_manifest())


def test_every_tool_is_described_for_a_model() -> None:
    for tool in load_manifest().values():
        Draft202012Validator.check_schema(tool.schema)
        Draft202012Validator.check_schema(tool.result_schema)
        assert tool.title and "Example: {" in tool.description, tool.name
        assert tool.schema["additionalProperties"] is False, tool.name
        assert tool.result_schema["type"] == "object", tool.name
        assert set(tool.annotations) == {
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        }, tool.name
        for name, prop in tool.schema["properties"].items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
    hints = {name: t.annotations for name, t in load_manifest().items()}
    assert hints["memory_delete"]["destructiveHint"] is True
    assert [n for n, h in hints.items() if h["destructiveHint"]] == ["memory_delete"]
    assert hints["memory_search"]["readOnlyHint"] and not hints["memory_store"]["readOnlyHint"]


def test_every_tool_example_is_valid_and_the_ingest_example_stores_its_markers(
    conn: Connection,
) -> None:
    examples = {}
    for name, tool in load_manifest().items():
        example = json.loads(tool.description.split("Example: ", 1)[1])
        Draft202012Validator(tool.schema).validate(example)
        examples[name] = example
    # The example is what an agent copies: it must do what the tool is for.
    result = ok(conn, "ingest_text", examples["ingest_text"])
    assert result["malformed"] == 0 and result["problems"] == []
    assert result["markers"] == len(result["stored"]) == 2


def test_the_schema_states_the_limits_the_code_enforces() -> None:
    from core.continuity.threads import MAX_TITLE_CHARS

    tools = load_manifest()
    assert tools["thread_open"].schema["properties"]["title"]["maxLength"] == MAX_TITLE_CHARS
    # A turn over its limit is too_large (-32004, with the limit), not a schema error.
    assert "maxLength" not in tools["exchange_log"].schema["properties"]["text"]
    assert "20,000" in tools["exchange_log"].schema["properties"]["text"]["description"]


def test_a_malformed_marker_line_says_what_to_change(conn: Connection) -> None:
    text = "[MEMORY:tooling:npm] The project uses pnpm\n[MEMORY:timing:nas] Boots in 3 minutes"
    result = ok(conn, "ingest_text", {"text": text})
    assert result["malformed"] == 1 and len(result["stored"]) == 1
    [problem] = result["problems"]
    assert problem["line"] == 1
    assert "unknown category 'tooling'" in problem["reason"]
    assert "timing, dependency, behavior, remediation, maintenance" in problem["reason"]
    # A well-formed marker the policy refuses says so on its line too.
    refused = ok(
        conn, "ingest_text", {"text": "ok\n[MEMORY:dependency:nas] my password is hunter22"}
    )
    assert (refused["refused"], refused["malformed"]) == (1, 0)
    [why] = refused["problems"]
    assert why["line"] == 2 and why["reason"].startswith("refused: ")
    assert "password" in why["reason"]


def test_every_tool_result_matches_its_result_schema(conn: Connection, tmp_path: Path) -> None:
    note = tmp_path / "plan.md"
    note.write_text("Ships Friday\n", encoding="utf-8")
    stored = ok(conn, "memory_store", {"type": "fact", "content": "Lives in Lyon"})
    receipt = ok(conn, "attachment_receipt", {"path": str(note), "observation": "Friday"})
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_search", {"query": "Lyon"}),
        ("memory_related", {"id": stored["id"]}),
        ("memory_brief", {}),
        ("ingest_text", {"text": "[MEMORY:dependency:web] The build needs pnpm"}),
        ("thread_open", {"title": "Project X"}),
        ("thread_list", {}),
        ("exchange_log", {"speaker": "user", "text": "Use pnpm", "turn": "1", "name": "Ada"}),
        ("exchange_search", {"query": "pnpm", "mode": "keyword"}),
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
        ("memory_delete", {"id": stored["id"]}),
    ]
    results = {"memory_store": stored, "attachment_receipt": receipt}
    results |= {name: ok(conn, name, params) for name, params in calls}
    results["claim_verify"] = ok(conn, "claim_verify", {"id": results["claim_propose"]["id"]})
    results["session_end"] = ok(conn, "session_end", {"handoff": "next: ship"})
    assert set(results) == set(load_manifest())
    for name, result in results.items():
        errors = list(Draft202012Validator(load_manifest()[name].result_schema).iter_errors(result))
        assert not errors, f"{name}: {errors[0].message}"


def test_a_redacted_store_says_what_was_removed(conn: Connection) -> None:
    result = ok(
        conn,
        "memory_store",
        {
            "type": "fact",
            "content": f"The CI bot uses {GITHUB_TOKEN} for releases",
            "tags": ["ci", GITHUB_TOKEN],
        },
    )
    assert (result["redacted"], result["redacted_kinds"]) == (2, {"github_token": 2})
    clean = ok(conn, "memory_store", {"type": "fact", "content": "Lives in Lyon"})
    assert (clean["redacted"], clean["redacted_kinds"]) == (0, {})
    # The same text again is a duplicate: it was still redacted before it matched.
    again = ok(
        conn,
        "memory_store",
        {"type": "fact", "content": f"The CI bot uses {GITHUB_TOKEN} for releases"},
    )
    assert (again["created"], again["redacted"]) == (False, 1)
    logged = ok(conn, "exchange_log", {"speaker": "tool", "text": f"token {GITHUB_TOKEN}"})
    assert (logged["redacted"], logged["redacted_kinds"]) == (1, {"github_token": 1})
    # A secret in the speaker's name or the turn id is cut out and counted too.
    named = ok(
        conn,
        "exchange_log",
        {"speaker": "user", "text": "hello", "name": f"bot {GITHUB_TOKEN}", "turn": "t-1"},
    )
    assert (named["redacted"], named["redacted_kinds"]) == (1, {"github_token": 1})


def valid(name: str, result: dict[str, Any]) -> dict[str, Any]:
    errors = list(Draft202012Validator(load_manifest()[name].result_schema).iter_errors(result))
    assert not errors, f"{name}: {errors[0].message}"
    return result


def test_a_store_held_for_review_says_what_it_replaces_and_a_trusted_one_accepts_it(
    conn: Connection,
) -> None:
    old = ok(conn, "memory_store", {"type": "fact", "content": "User's phone is a Pixel 7"})
    text = "User's phone is an iPhone 15"
    web = {"type": "web_content"}
    held = ok(
        conn,
        "memory_store",
        {"type": "fact", "content": text, "supersedes": old["id"], "source": web},
    )
    valid("memory_store", held)
    assert (held["status"], held["superseded"], held["supersedes_on_accept"]) == (
        "candidate",
        None,
        old["id"],
    )
    assert "accepted_from_review" not in held
    said = ok(
        conn,
        "memory_store",
        {"type": "fact", "content": text, "source": {"type": "user_message"}},
    )
    valid("memory_store", said)
    assert (said["id"], said["status"], said["created"], said["accepted_from_review"]) == (
        held["id"],
        "active",
        False,
        True,
    )
    assert (said["superseded"], said["supersedes_on_accept"]) == (old["id"], None)
    found = ok(conn, "memory_search", {"query": "phone", "mode": "keyword"})["results"]
    assert [r["id"] for r in found] == [held["id"]]


def test_a_stale_memory_is_found_and_says_it_is_stale(
    conn: Connection, service: MemoryService
) -> None:
    from core.model.entries import utc_now
    from core.recall.briefing import refresh_decay

    old = ok(conn, "memory_store", {"type": "fact", "content": "User's dentist is Dr Lee"})
    fresh = ok(conn, "memory_store", {"type": "fact", "content": "User's dentist is downtown"})
    store = service.store_for("main")
    with store.transaction():
        # Last seen years ago: decayed under the stale threshold, out of the brief.
        store.execute(
            "UPDATE memory_entries SET last_seen_at = ? WHERE id = ?",
            ("2020-01-01T00:00:00.000Z", old["id"]),
        )
    refresh_decay(store, service.config, utc_now(), force=True)
    assert "Dr Lee" not in ok(conn, "memory_brief", {})["markdown"]
    for mode in ("keyword", "auto"):
        result = valid(
            "memory_search", ok(conn, "memory_search", {"query": "dentist", "mode": mode})
        )
        stale = {r["id"]: r.get("stale") for r in result["results"]}
        assert stale == {old["id"]: True, fresh["id"]: None}, mode
    listing = ok(conn, "memory_search", {})["results"]
    assert {r["id"]: r.get("stale") for r in listing} == {old["id"]: True, fresh["id"]: None}


def test_search_says_candidates_are_left_out_as_they_are(conn: Connection) -> None:
    description = load_manifest()["memory_search"].description
    assert "are not returned until accepted" in description
    assert "marked by status" not in description  # it said so, and none was ever returned
    held = ok(
        conn,
        "memory_store",
        {"type": "fact", "content": "Server room is in Oslo", "source": {"type": "web_content"}},
    )
    assert held["status"] == "candidate"
    for params in ({"query": "Oslo"}, {}, {"query": "Oslo", "include_superseded": True}):
        assert ok(conn, "memory_search", params)["results"] == [], params
