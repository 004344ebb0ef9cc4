"""The continuity methods over the protocol dispatcher (no socket)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection, Dispatcher
from core.agent.mcp_bridge import McpSession
from core.agent.protocol import agent_dispatcher
from core.continuity import session_handoffs
from core.model.entries import Actor
from core.model.errors import Conflict, InvalidParams, NotFound, TooLarge, Unauthorized
from core.policy.manifest import load_manifest
from core.service import MemoryService
from core.storage import audit
from core.storage.paths import DataDir

DOCS = Path(__file__).resolve().parents[2] / "docs" / "continuity.md"
METHODS = (
    "exchange_log",
    "exchange_search",
    "thread_list",
    "thread_open",
    "handoff_read",
    "handoff_write",
)


def call(conn: Connection, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        message["params"] = params
    reply = conn.handle_line(json.dumps(message).encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


def ok(conn: Connection, method: str, params: Any = None) -> Any:
    reply = call(conn, method, params)
    assert "result" in reply, reply
    return reply["result"]


def fails(conn: Connection, method: str, params: Any, code: int) -> dict[str, Any]:
    reply = call(conn, method, params)
    assert "error" in reply, reply
    assert reply["error"]["code"] == code, reply
    data: dict[str, Any] = reply["error"].get("data") or {}
    return data


@pytest.fixture
def token(data_dir: DataDir) -> str:
    return load_or_create_token(data_dir.token_file)


@pytest.fixture
def dispatcher(service: MemoryService, token: str) -> Dispatcher:
    return agent_dispatcher(service)


def connect(dispatcher: Dispatcher, token: str) -> Connection:
    conn = dispatcher.connect()
    ok(conn, "hello", {"token": token, "group": "main", "client": "unit"})
    return conn


@pytest.fixture
def conn(dispatcher: Dispatcher, token: str) -> Connection:
    return connect(dispatcher, token)


def test_methods_need_a_session(dispatcher: Dispatcher) -> None:
    fresh = dispatcher.connect()
    for name in METHODS:
        assert fails(fresh, name, {}, Unauthorized.rpc_code)["code"] == "unauthorized"


def test_thread_open_creates_then_reopens(conn: Connection) -> None:
    opened = ok(conn, "thread_open", {"title": "Project X"})
    assert opened["created"] is True and opened["handoff"] is None
    tid = opened["thread"]["id"]
    assert conn.caller.thread_id == tid  # the connection's session is now in the thread
    again = ok(conn, "thread_open", {"title": "project x"})
    assert again["created"] is False and again["thread"]["id"] == tid
    assert ok(conn, "thread_open", {"id": tid})["thread"]["title"] == "Project X"
    listed = ok(conn, "thread_list")
    assert listed["current"] == tid and [t["id"] for t in listed["threads"]] == [tid]


@pytest.mark.parametrize(
    ("params", "field", "rule"),
    [
        ({}, "title", "oneOf"),
        ({"title": "a", "id": "thr-0123456789ab"}, "title", "oneOf"),
        ({"id": "nope"}, "id", "pattern"),
        ({"title": ""}, "title", "minLength"),
        ({"title": "two\nlines"}, "title", "pattern"),
        ({"title": 3}, "title", "type"),
        ({"title": "x", "extra": 1}, "extra", "additionalProperties"),
    ],
)
def test_thread_open_params(
    conn: Connection, params: dict[str, Any], field: str, rule: str
) -> None:
    data = fails(conn, "thread_open", params, InvalidParams.rpc_code)
    assert (data["field"], data["rule"]) == (field, rule)


def test_a_title_shaped_like_a_thread_id_is_refused_not_looked_up(
    conn: Connection, service: MemoryService
) -> None:
    # It answered not_found "no thread thr-aaaaaaaaaaaa" although a new title creates
    # the thread; created, it could never be found by its title (an id is looked up).
    existing = ok(conn, "thread_open", {"title": "Project X"})["thread"]["id"]
    # In upper case too: titles match without regard to case, and it made a new thread
    # titled THR-… beside the one whose id it spells.
    for title in ("thr-aaaaaaaaaaaa", f" {existing} ", existing.upper(), "Thr-AAAAaaaaAAAA"):
        reply = call(conn, "thread_open", {"title": title})
        assert reply["error"]["code"] == InvalidParams.rpc_code, reply
        assert (reply["error"]["data"]["field"], reply["error"]["data"]["rule"]) == (
            "title",
            "pattern",
        )
        assert reply["error"]["message"] == (
            f"thread_open: title {title.strip()!r} has the shape of a thread id (thr- and 12 "
            "hex digits, in upper or lower case), which only thread ids may have: choose "
            "another title; to open the thread with that id, pass it as id"
        )
    assert [t["id"] for t in ok(conn, "thread_list")["threads"]] == [existing]
    # Named in upper case where a thread is looked up, it is the thread with that id.
    assert ok(conn, "handoff_read", {"thread": existing.upper()})["thread"]["id"] == existing
    again = conn.dispatcher.connect()
    hello = {"token": load_or_create_token(service.data_dir.token_file), "group": "main"}
    ok(again, "hello", {**hello, "client": "unit", "thread": existing.upper()})
    assert again.caller.thread_id == existing
    described = load_manifest()["thread_open"]
    assert "a title shaped like a thread id" in described.description
    assert "not shaped like a thread id" in described.schema["properties"]["title"]["description"]
    # MCP's tools/call answers the same, as a tool error.
    session = McpSession(service, "main", client="mcp-test")
    session.handle(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-test", "version": "1"},
        },
    )
    result = session.handle(
        "tools/call", {"name": "thread_open", "arguments": {"title": "thr-aaaaaaaaaaaa"}}
    )
    assert result["isError"] and "only thread ids may have" in result["content"][0]["text"]
    session.close()


def test_thread_open_by_id_takes_any_case_and_says_to_pass_a_title_as_title(
    conn: Connection, service: MemoryService
) -> None:
    # {"id": "Website"} and {"id": "THR-0123456789AB"} both answered "id must match
    # the pattern ^thr-[0-9a-f]{12}$", though every thread param and hello's thread
    # take an id in any case, and a title meant to open a thread goes in title.
    existing = ok(conn, "thread_open", {"title": "Website"})["thread"]["id"]
    ok(conn, "thread_open", {"title": "Other"})
    for spelled in (existing.upper(), f" {existing} ", "Thr-" + existing[4:].upper()):
        opened = ok(conn, "thread_open", {"id": spelled})
        assert opened["thread"]["id"] == existing and opened["created"] is False
        assert conn.caller.thread_id == existing
    title_hint = (
        "thread_open: id must be a thread id, thr- and 12 hex digits as thread_list shows "
        "it; to open a thread by its title, pass it as title"
    )
    session = McpSession(service, "main", client="mcp-test")
    session.handle(
        "initialize",
        {
            "protocolVersion": "2024-11-05",
            "capabilities": {},
            "clientInfo": {"name": "mcp-test", "version": "1"},
        },
    )
    for value, message in (
        ("Website", title_hint),
        ("web site redesign", title_hint),
        (
            "thr-x",
            "thread_open: id must be a thread id, thr- and 12 hex digits as thread_list shows it",
        ),
        (
            "THR-0123456789AG",
            "thread_open: id must be a thread id, thr- and 12 hex digits as thread_list shows it",
        ),
    ):
        reply = call(conn, "thread_open", {"id": value})
        assert reply["error"]["code"] == InvalidParams.rpc_code, reply
        assert reply["error"]["message"] == message
        assert (reply["error"]["data"]["field"], reply["error"]["data"]["rule"]) == (
            "id",
            "pattern",
        )
        # MCP answers the same, as a tool error.
        result = session.handle("tools/call", {"name": "thread_open", "arguments": {"id": value}})
        assert result["isError"] and result["content"][0]["text"] == f"invalid_params: {message}"
    # An id of the right shape that names no thread is not found, in any case.
    assert fails(conn, "thread_open", {"id": "THR-0123456789AB"}, NotFound.rpc_code)
    session.close()
    assert sorted(t["title"] for t in ok(conn, "thread_list")["threads"]) == ["Other", "Website"]


def test_unknown_thread_id_is_not_found(conn: Connection) -> None:
    data = fails(conn, "thread_open", {"id": "thr-0123456789ab"}, NotFound.rpc_code)
    assert data["code"] == "not_found"
    fails(conn, "handoff_read", {"thread": "Nowhere"}, NotFound.rpc_code)


def test_exchange_log_and_search(conn: Connection) -> None:
    ok(conn, "thread_open", {"title": "Project X"})
    logged = ok(conn, "exchange_log", {"speaker": "user", "text": "Use pnpm, not npm", "turn": "1"})
    assert set(logged) == {
        "id",
        "session_id",
        "thread_id",
        "created_at",
        "at",
        "redacted",
        "redacted_kinds",
    }
    assert logged["at"] == logged["created_at"]  # said now: no `at` given
    ok(conn, "exchange_log", {"speaker": "assistant", "text": "Switched to pnpm", "turn": "1"})
    results = ok(conn, "exchange_search", {"query": "pnpm", "limit": 5})["results"]
    assert {r["speaker"] for r in results} == {"user", "assistant"}
    assert all(r["same_thread"] and r["thread_title"] == "Project X" for r in results)
    assert set(results[0]) >= {"session_id", "thread_id", "created_at", "relevance_score"}
    only = ok(conn, "exchange_search", {"query": "pnpm", "speaker": "user", "thread": "Project X"})
    assert [r["text"] for r in only["results"]] == ["Use pnpm, not npm"]
    # FTS syntax is searched as words, never an error.
    ok(conn, "exchange_search", {"query": 'NOT "( pnpm*'})


@pytest.mark.parametrize(
    ("method", "params", "code", "field"),
    [
        ("exchange_log", {"speaker": "bot", "text": "x"}, InvalidParams.rpc_code, "speaker"),
        ("exchange_log", {"speaker": "user"}, InvalidParams.rpc_code, "text"),
        ("exchange_log", {"speaker": "user", "text": "x" * 20_001}, TooLarge.rpc_code, "text"),
        ("exchange_search", {"limit": 51}, InvalidParams.rpc_code, "limit"),
        ("exchange_search", {"limit": True}, InvalidParams.rpc_code, "limit"),
        ("exchange_search", {"query": "x" * 501}, InvalidParams.rpc_code, "query"),
        ("thread_list", {"limit": "5"}, InvalidParams.rpc_code, "limit"),
        ("handoff_read", {"version": 1}, InvalidParams.rpc_code, "thread"),
        ("handoff_write", {"markdown": "x"}, InvalidParams.rpc_code, "thread"),
    ],
)
def test_bad_params_name_the_field(
    conn: Connection, method: str, params: dict[str, Any], code: int, field: str
) -> None:
    assert fails(conn, method, params, code)["field"] == field


@pytest.mark.parametrize(
    ("offset", "says"),
    [
        (-1, "exchange_search: offset must be at least 0"),
        (1001, "exchange_search: offset must be at most 1000"),
        (2.5, "exchange_search: offset must be of type integer"),
        (True, "exchange_search: offset must be of type integer"),
        ("2", "exchange_search: offset must be of type integer"),
    ],
)
def test_a_bad_offset_is_refused_as_memory_search_refuses_it(
    conn: Connection, offset: object, says: str
) -> None:
    for method in ("exchange_search", "memory_search"):
        reply = call(conn, method, {"query": "move", "offset": offset})
        assert reply["error"]["message"] == says.replace("exchange_search", method)
        assert reply["error"]["data"]["field"] == "offset"


def test_exchange_search_says_where_the_next_page_starts(conn: Connection) -> None:
    ok(conn, "thread_open", {"title": "Moving house"})
    for n in range(5):
        speaker = "user" if n % 2 else "assistant"
        ok(conn, "exchange_log", {"speaker": speaker, "text": f"Box {n} goes in the move van"})
    schema = Draft202012Validator(load_manifest()["exchange_search"].result_schema)
    for asked in ({"query": "move van", "mode": "keyword"}, {}, {"speaker": "user"}):
        pages = [ok(conn, "exchange_search", {**asked, "limit": 2})]
        while "next_offset" in pages[-1]:
            more = {**asked, "limit": 2, "offset": pages[-1]["next_offset"]}
            pages.append(ok(conn, "exchange_search", more))
        for page in pages:
            schema.validate(page)
        ids = [r["id"] for page in pages for r in page["results"]]
        if "speaker" in asked:
            assert [len(p["results"]) for p in pages] == [2]
            assert {r["speaker"] for p in pages for r in p["results"]} == {"user"}
        else:
            assert [len(p["results"]) for p in pages] == [2, 2, 1]
            assert [p.get("next_offset") for p in pages] == [2, 4, None]
        assert len(set(ids)) == len(ids)
    past = ok(conn, "exchange_search", {"query": "move van", "offset": 5, "mode": "keyword"})
    assert past == {"results": []}


def test_handoff_write_read_and_conflict(conn: Connection) -> None:
    tid = ok(conn, "thread_open", {"title": "Project X"})["thread"]["id"]
    written = ok(conn, "handoff_write", {"markdown": "# Plan\n\n- [ ] ship it", "base_version": 0})
    assert written == {
        "thread_id": tid,
        "version": 1,
        "compaction_count": 1,
        "created": True,
        "redacted": 0,
        "redacted_kinds": {},
    }
    read = ok(conn, "handoff_read", {"thread": "Project X"})
    assert read["handoff"]["markdown"] == "# Plan\n\n- [ ] ship it"
    assert read["open_threads"] == ["ship it"] and read["session_handoff"] is None
    data = fails(
        conn,
        "handoff_write",
        {"thread": tid, "markdown": "stale", "base_version": 0},
        Conflict.rpc_code,
    )
    assert data["current_version"] == 1
    ok(conn, "handoff_write", {"thread": tid, "markdown": "second"})
    assert ok(conn, "handoff_read", {"version": 1})["handoff"]["version"] == 1
    fails(conn, "handoff_read", {"version": 9}, NotFound.rpc_code)
    big = "é" * 40_000  # 80,000 bytes of UTF-8
    assert fails(conn, "handoff_write", {"markdown": big}, TooLarge.rpc_code)["field"] == "markdown"
    assert ok(conn, "handoff_read")["handoff"]["markdown"] == "second"


def test_a_write_without_base_version_names_the_other_sessions_version_it_replaced(
    dispatcher: Dispatcher, token: str
) -> None:
    first, second = connect(dispatcher, token), connect(dispatcher, token)
    tid = ok(first, "thread_open", {"title": "Project X"})["thread"]["id"]
    ok(first, "handoff_write", {"markdown": "- [ ] first plan"})
    # The same session rewriting its own text is not told about itself.
    assert "replaced" not in ok(first, "handoff_write", {"markdown": "- [ ] first plan, v2"})
    ok(second, "thread_open", {"id": tid})
    blind = ok(second, "handoff_write", {"markdown": "- [ ] second plan"})
    assert blind["version"] == 3
    assert blind["replaced"]["version"] == 2 and blind["replaced"]["author"] == "agent"
    assert "version 2" in blind["note"] and "base_version" in blind["note"]
    # The replaced text is still there to merge.
    assert ok(second, "handoff_read", {"version": 2})["handoff"]["markdown"] == (
        "- [ ] first plan, v2"
    )
    # Given a base_version, the writer has read what it replaces: no note.
    read = ok(first, "handoff_write", {"markdown": "- [ ] merged", "base_version": 3})
    assert "replaced" not in read and "note" not in read


def test_a_version_not_kept_is_refused_with_the_current_one_named(
    dispatcher: Dispatcher, token: str
) -> None:
    conn = connect(dispatcher, token)
    tid = ok(conn, "thread_open", {"title": "Project X"})["thread"]["id"]
    reply = call(conn, "handoff_read", {"version": 1})
    # No command of any one front end (agents have no history tool).
    assert reply["error"]["message"] == (
        f"thread {tid} has no handoff version 1 (pruned, forgotten or never written), "
        "and no current one"
    )
    ok(conn, "handoff_write", {"markdown": "- [ ] plan"})
    ok(conn, "handoff_write", {"markdown": "- [ ] plan, v2"})
    reply = call(conn, "handoff_read", {"version": 7})
    assert reply["error"]["code"] == NotFound.rpc_code
    assert reply["error"]["message"] == (
        f"thread {tid} has no handoff version 7 (pruned, forgotten or never written); "
        "the current one is version 2"
    )
    assert reply["error"]["data"]["field"] == "version"
    # A version number is a 32-bit one, the same bound for reading and for writing.
    for method, params in (
        ("handoff_read", {"version": 2**31}),
        ("handoff_write", {"markdown": "- [ ] plan", "base_version": 2**31}),
    ):
        reply = call(conn, method, params)
        assert reply["error"]["message"].endswith("must be at most 2147483647"), method


def test_session_handoff_reaches_the_next_session_once(dispatcher: Dispatcher, token: str) -> None:
    first = connect(dispatcher, token)
    ok(first, "thread_open", {"title": "Project X"})
    # What the protocol's session_end does with a handoff.
    session_handoffs.end_session_with_handoff(
        first.service, first.caller, "Stopped mid-refactor. I will finish the parser."
    )
    first.session = None

    second = connect(dispatcher, token)
    entered = ok(second, "thread_open", {"title": "Project X"})
    assert entered["session_handoff"]["markdown"].startswith("Stopped mid-refactor")
    assert entered["open_threads"] == ["I will finish the parser."]
    # The session that took it can read it again; the next one does not get it.
    again = ok(second, "handoff_read", {"thread": "Project X"})
    assert again["session_handoff"]["id"] == entered["session_handoff"]["id"]
    third = connect(dispatcher, token)
    assert ok(third, "thread_open", {"title": "Project X"})["session_handoff"] is None


def test_a_one_line_session_handoff_longer_than_the_brief_shows_its_first_part(
    dispatcher: Dispatcher, token: str
) -> None:
    # The next brief showed an empty fence and "… (truncated)", and the note was
    # taken all the same: the agent never saw a word of it.
    text = ("We decided to keep SQLite; " * 500)[:10500]
    first = connect(dispatcher, token)
    ok(first, "session_end", {"handoff": text})
    second = connect(dispatcher, token)
    brief = ok(second, "memory_brief")
    markdown = brief["markdown"]
    fence = markdown.split("```markdown\n", 1)[1].split("\n```\n", 1)
    assert text.startswith(fence[0]) and len(fence[0]) > 9000
    assert fence[1] == "… (truncated)\n"
    assert brief["truncated_by"] == "max_brief_chars" and brief["char_count"] <= 10_000
    # All of it is still there to read.
    assert ok(second, "handoff_read")["session_handoff"]["markdown"] == text


def test_memory_delete_says_the_turns_that_said_it_are_kept(
    conn: Connection, service: MemoryService
) -> None:
    # The description said "the memory leaves the brief and search at once", but
    # the turn it came from still showed verbatim in the brief's Flash section and
    # in exchange_search: turns are a log of their own.
    said = "My sister Priya lives in Lisbon"
    ok(conn, "exchange_log", {"speaker": "user", "text": said})
    stored = ok(conn, "memory_store", {"type": "fact", "content": said})
    ok(conn, "memory_delete", {"id": stored["id"]})
    assert ok(conn, "memory_search", {"query": "Priya Lisbon"})["results"] == []
    markdown = ok(conn, "memory_brief")["markdown"]
    assert "- [fact]" not in markdown and f"user: {said}" in markdown
    assert ok(conn, "exchange_search", {"query": "Priya Lisbon"})["results"][0]["text"] == said
    assert said in json.dumps(ok(conn, "recall", {"text": "where does Priya live, Lisbon?"}))
    description = load_manifest()["memory_delete"].description
    assert "conversation turns that said it are kept" in description
    assert "ambry forget" in description and "Forget a topic" in description


def test_a_session_in_no_thread_reads_its_session_handoff_again(
    dispatcher: Dispatcher, token: str, service: MemoryService
) -> None:
    # It was refused: "handoff_read: name a thread, or open one first", although the
    # brief had just shown the note and the docs say the session that took it can read it.
    first = connect(dispatcher, token)
    session_handoffs.end_session_with_handoff(
        first.service, first.caller, "threadless note. I will check the backups."
    )
    first.session = None
    second = connect(dispatcher, token)
    brief = ok(second, "memory_brief")
    assert "threadless note" in json.dumps(brief)
    read = ok(second, "handoff_read")
    assert read["thread"] is None and read["handoff"] is None
    assert read["session_handoff"]["markdown"] == "threadless note. I will check the backups."
    assert read["open_threads"] == ["I will check the backups."]
    assert read["note"].startswith("this session is in no thread")
    Draft202012Validator(load_manifest()["handoff_read"].result_schema).validate(read)
    # Reading it again consumes nothing; another session in no thread does not get it.
    assert ok(second, "handoff_read")["session_handoff"]["id"] == read["session_handoff"]["id"]
    third = connect(dispatcher, token)
    assert ok(third, "handoff_read")["session_handoff"] is None
    rows = audit.recent(service.store_for("main"), limit=3, actions=["handoff_read"])
    assert rows[-1].detail == {"scope": "session", "session_handoff": read["session_handoff"]["id"]}
    # Once in a thread, the thread is read, as before.
    ok(second, "thread_open", {"title": "Project X"})
    assert ok(second, "handoff_read")["thread"]["title"] == "Project X"


def test_every_method_is_documented() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in METHODS:
        assert f"### `{name}`" in text, f"docs/continuity.md does not document {name}"
    for code in (-32602, -32001, -32002, -32004, -32005, -32006):
        assert f"`{code}`" in text
    commands = set(re.findall(r"`ambry (\w+)", text))
    assert {"threads", "handoff", "exchanges", "brief"} <= commands


def _mcp(service: MemoryService, client: str) -> McpSession:
    session = McpSession(service, "main", client=client)
    session.handle(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": client, "version": "1"},
        },
    )
    return session


def _tool(session: McpSession, name: str, arguments: dict[str, Any]) -> Any:
    result = session.handle("tools/call", {"name": name, "arguments": arguments})
    assert not result["isError"], result
    return result


#: A note far longer than the brief's 10,000 characters.
LONG_NOTE = "\n".join(f"- [ ] step {n}:" + " check the release notes" * 4 for n in range(200))


def _leave_note(service: MemoryService, markdown: str) -> None:
    first = service.open_session("main", Actor.AGENT, "earlier")
    session_handoffs.end_session_with_handoff(service, first, markdown)


def test_an_mcp_session_shown_a_cut_handoff_gets_it_delivered_only_when_read_whole(
    service: MemoryService,
) -> None:
    _leave_note(service, LONG_NOTE)
    session = _mcp(service, "mcp-test")
    me = session.conn.caller.session_id
    brief = _tool(session, "memory_brief", {})["content"][0]["text"]
    assert "From the last session" in brief and "… (truncated)" in brief
    assert "If it ends cut short, `handoff_read` has it whole." in brief
    # Before: marked delivered at initialize, though the brief showed only its start.
    held = session_handoffs.session_handoffs_by_id(service, "main", [1])[0]
    assert (held.consumed_by, held.consumed_at) == (me, None)
    assert session_handoffs.peek_session_handoff(service, "main", None) == held

    read = _tool(session, "handoff_read", {})["structuredContent"]["session_handoff"]
    assert read["markdown"] == LONG_NOTE and read["consumed_at"] is not None
    assert session_handoffs.peek_session_handoff(service, "main", None) is None
    store = service.store_for("main")
    delivered = audit.recent(store, actions=["handoff_deliver"])
    assert [r.session_id for r in delivered] == [me]
    session.close()


def test_a_handoff_never_shown_whole_goes_to_the_next_session_and_a_whole_one_is_delivered(
    service: MemoryService,
) -> None:
    _leave_note(service, LONG_NOTE)
    first = _mcp(service, "first")
    _tool(first, "memory_brief", {})
    first.close()  # ended having seen only the start of the note
    second = _mcp(service, "second")
    # Before: the note was used up by the first session and the second got nothing.
    brief = _tool(second, "memory_brief", {})["content"][0]["text"]
    assert "From the last session" in brief
    second.close()

    _leave_note(service, "- [ ] email the printer")
    third = _mcp(service, "third")
    assert session_handoffs.peek_session_handoff(service, "main", None) is not None
    brief = _tool(third, "memory_brief", {})["content"][0]["text"]
    assert "email the printer" in brief and "… (truncated)" not in brief
    # Shown whole in the brief: delivered, so the next session does not get it again.
    assert session_handoffs.peek_session_handoff(service, "main", None) is None
    third.close()


def test_a_held_handoff_stays_with_its_session_while_it_is_open(
    service: MemoryService,
) -> None:
    _leave_note(service, "- [ ] continue the migration at step 4")
    first = _mcp(service, "first")
    second = _mcp(service, "second")  # started while the first still holds the note
    # Before: the second took it over, and the first's handoff_read found nothing.
    brief = _tool(second, "memory_brief", {})["content"][0]["text"]
    assert "migration at step 4" not in brief
    read = _tool(first, "handoff_read", {})["structuredContent"]["session_handoff"]
    assert "migration at step 4" in read["markdown"] and read["consumed_at"] is not None
    assert _tool(second, "handoff_read", {})["structuredContent"]["session_handoff"] is None
    first.close()
    second.close()


def test_a_held_handoff_goes_to_a_session_started_after_its_holder_ended(
    service: MemoryService,
) -> None:
    _leave_note(service, "- [ ] continue the migration at step 4")
    first = _mcp(service, "first")
    before = _mcp(service, "started-meanwhile")
    first.close()  # ended without having been shown the note
    after = _mcp(service, "started-after")
    brief = _tool(after, "memory_brief", {})["content"][0]["text"]
    assert "migration at step 4" in brief
    assert "migration at step 4" not in _tool(before, "memory_brief", {})["content"][0]["text"]
    assert session_handoffs.peek_session_handoff(service, "main", None) is None
    before.close()
    after.close()
