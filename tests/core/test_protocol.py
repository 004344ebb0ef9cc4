"""The agent protocol without a socket: framing, parsing, dispatch, auth, errors."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from core.agent.auth import load_or_create_token, read_token, regenerate_token, token_matches
from core.agent.client import RemoteError, error_from_reply
from core.agent.dispatch import MAX_FAILED_HELLOS, Connection, Dispatcher
from core.agent.framing import (
    MAX_NESTING_DEPTH,
    ErrorCode,
    FrameBuffer,
    FrameTooLarge,
    RpcError,
    bracket_depth,
    decode_json,
    encode_frame,
    nesting_depth,
    parse_request,
)
from core.agent.mcp_bridge import McpSession
from core.agent.protocol import agent_dispatcher
from core.agent.rpc_memory import run_tool
from core.cli.main import main as cli_main
from core.model import errors
from core.model.config import Config
from core.model.errors import InvalidGroup, InvalidParams, NotFound, RateLimited, Unauthorized
from core.policy.manifest import load_manifest
from core.service import MemoryService
from core.storage.paths import DataDir

DOCS = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"

# -- helpers ---------------------------------------------------------------------


def frame(method: str, params: Any = None, request_id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    if request_id is not ...:
        message["id"] = request_id
    return json.dumps(message).encode()


def call(conn: Connection, method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    reply = conn.handle_line(frame(method, params, request_id))
    assert reply.frame is not None and reply.frame.endswith(b"\n")
    assert reply.frame.count(b"\n") == 1
    decoded: dict[str, Any] = json.loads(reply.frame)
    assert decoded["jsonrpc"] == "2.0"
    return decoded


def error_of(reply: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    assert "error" in reply, reply
    return reply["error"]["code"], reply["error"].get("data") or {}


@pytest.fixture
def token(data_dir: DataDir) -> str:
    return load_or_create_token(data_dir.token_file)


@pytest.fixture
def dispatcher(service: MemoryService, token: str) -> Dispatcher:
    return agent_dispatcher(service)


@pytest.fixture
def conn(dispatcher: Dispatcher, token: str) -> Connection:
    c = dispatcher.connect()
    reply = call(c, "hello", {"token": token, "group": "main", "client": "unit"})
    assert "result" in reply
    return c


def mcp_tool_call(service: MemoryService, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """MCP's tools/call of ``method`` in a fresh session, which is closed after it."""
    session = McpSession(service, "main", client="mcp-test")
    session.handle(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-test", "version": "1"},
        },
    )
    result: dict[str, Any] = session.handle("tools/call", {"name": method, "arguments": params})
    session.close()
    return result


def entry_rows(service: MemoryService, group: str = "main") -> list[tuple[Any, ...]]:
    return list(service.store_for(group).execute("SELECT * FROM memory_entries ORDER BY seq"))


# -- framing ---------------------------------------------------------------------


def test_frames_split_across_reads_and_joined_in_one() -> None:
    buf = FrameBuffer(limit=100)
    assert buf.feed(b'{"a"') == []
    assert buf.pending == 4
    assert buf.feed(b":1}\n{}\r\n\npartial") == [b'{"a":1}', b"{}", b""]
    assert buf.pending == len(b"partial")
    assert buf.feed(b"\n") == [b"partial"]
    assert buf.pending == 0


def test_a_frame_of_exactly_the_limit_passes_and_one_more_byte_does_not() -> None:
    buf = FrameBuffer(limit=10)
    assert buf.feed(b"x" * 10 + b"\n") == [b"x" * 10]
    assert buf.feed(b"y" * 10) == []
    with pytest.raises(FrameTooLarge):
        buf.feed(b"y")
    # Once over, always over: the stream cannot be resynchronised.
    with pytest.raises(FrameTooLarge):
        buf.feed(b"\n{}\n")


def test_an_oversized_complete_line_is_refused_even_in_one_read() -> None:
    with pytest.raises(FrameTooLarge) as info:
        FrameBuffer(limit=8).feed(b"{}\n" + b"z" * 9 + b"\n")
    assert info.value.rpc_code == errors.TooLarge.rpc_code


@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=20),
    st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=30),
)
def test_any_chunking_yields_the_same_lines(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    buf = FrameBuffer(limit=64)
    got: list[bytes] = []
    pos = 0
    for size in cuts * (len(stream) // max(1, sum(cuts)) + 1):
        got += buf.feed(stream[pos : pos + size])
        pos += size
        if pos >= len(stream):
            break
    got += buf.feed(stream[pos:])
    assert got == [line.removesuffix(b"\r") for line in lines]
    assert buf.pending == 0


@given(st.lists(st.binary(max_size=300), max_size=20))
def test_arbitrary_bytes_only_ever_give_lines_or_frame_too_large(chunks: list[bytes]) -> None:
    buf = FrameBuffer(limit=128)
    try:
        for chunk in chunks:
            for line in buf.feed(chunk):
                assert b"\n" not in line and len(line) <= 128
    except FrameTooLarge:
        pass


# -- parsing ---------------------------------------------------------------------


def test_a_valid_request_and_a_notification() -> None:
    req = parse_request(frame("memory_search", {"query": "tea"}, "abc"))
    assert (req.method, req.params, req.id, req.notification) == (
        "memory_search",
        {"query": "tea"},
        "abc",
        False,
    )
    note = parse_request(frame("memory_search", None, ...))
    assert note.notification and note.params == {}
    assert parse_request(frame("x", None, None)).notification is False  # "id": null is a request


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"\xff\xfe{}", ErrorCode.PARSE_ERROR),
        (b'{"jsonrpc": "2.0", "method": "x", "id": 1', ErrorCode.PARSE_ERROR),
        (b'{"jsonrpc": "2.0", "method": "x", "id": NaN}', ErrorCode.PARSE_ERROR),
        (b"[" * 100_000, ErrorCode.INVALID_PARAMS),  # deeper than the limit, and not JSON
        (b'"[[[' + b"]" * 40, ErrorCode.PARSE_ERROR),
        (b"1" * 5000, ErrorCode.PARSE_ERROR),  # past Python's int-digits limit
        (b'[{"jsonrpc": "2.0", "method": "x", "id": 1}]', ErrorCode.INVALID_REQUEST),
        (b'"hello"', ErrorCode.INVALID_REQUEST),
        (b'{"method": "x", "id": 1}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "1.0", "method": "x", "id": 1}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "", "id": 1}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": 7, "id": 1}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": true}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": 1.5}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": {}}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": 1, "param": {}}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": 1, "params": 3}', ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "x", "id": 1, "params": [1]}', ErrorCode.INVALID_PARAMS),
    ],
)
def test_bad_frames_get_the_right_code(line: bytes, code: ErrorCode) -> None:
    with pytest.raises(RpcError) as info:
        parse_request(line)
    assert info.value.code == code
    assert len(info.value.message) < 400


def nested(depth: int) -> Any:
    """Arguments whose deepest value sits ``depth`` levels inside the request object."""
    value: Any = "leaf"
    for i in range(depth - 2):
        value = [value] if i % 2 else {"k": value}
    return value


@pytest.mark.parametrize("depth", [MAX_NESTING_DEPTH + 1, 1000, 1100, 100_000])
def test_frames_nested_past_the_limit_are_invalid_params_before_any_schema(
    conn: Connection, service: MemoryService, depth: int
) -> None:
    before = entry_rows(service)
    tags = "[" * (depth - 2) + "]" * (depth - 2)
    line = b'{"jsonrpc":"2.0","id":5,"method":"memory_store","params":{"type":"fact",'
    line += b'"content":"deep","tags":' + tags.encode() + b"}}"
    reply = conn.handle_line(line)
    assert reply.frame is not None
    decoded = json.loads(reply.frame)
    code, data = error_of(decoded)
    assert code == ErrorCode.INVALID_PARAMS and data["rule"] == "maxDepth"
    assert str(MAX_NESTING_DEPTH) in decoded["error"]["message"]
    # The id is echoed when the frame could be decoded at all.
    assert decoded["id"] == (5 if depth <= 1000 else None)
    assert entry_rows(service) == before


def test_a_frame_at_the_depth_limit_is_served(conn: Connection) -> None:
    reply = call(conn, "memory_search", {"query": "x", "tags": nested(MAX_NESTING_DEPTH)})
    code, data = error_of(reply)
    # Past the depth check: the schema now names the field.
    assert code == ErrorCode.INVALID_PARAMS and data["rule"] != "maxDepth"
    assert nesting_depth(json.loads(frame("m", {"a": nested(MAX_NESTING_DEPTH)}))) == (
        MAX_NESTING_DEPTH
    )


@given(st.integers(min_value=1, max_value=80), st.text(alphabet='[]{}"\\a,:', max_size=30))
def test_bracket_depth_agrees_with_the_decoded_depth(depth: int, noise: str) -> None:
    value = nested(depth + 2)
    data = json.dumps({"v": value, "s": noise}).encode()
    assert bracket_depth(data, limit=1000) == nesting_depth(json.loads(data), limit=1000)


def test_an_error_carries_the_id_once_it_is_known() -> None:
    with pytest.raises(RpcError) as info:
        parse_request(b'{"jsonrpc": "1.0", "method": "x", "id": "q7"}')
    assert info.value.request_id == "q7"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.binary(max_size=200) | JSON.map(lambda v: json.dumps(v).encode()))
def test_parse_never_fails_with_anything_but_an_rpc_error(line: bytes) -> None:
    try:
        parse_request(line)
    except RpcError as exc:
        assert exc.code in {c.value for c in ErrorCode}


def test_replies_are_one_utf8_line_even_with_lone_surrogates() -> None:
    raw = encode_frame({"jsonrpc": "2.0", "id": "\ud800é", "result": "naïve\n"})
    assert raw.count(b"\n") == 1 and "é".encode() in raw
    assert json.loads(raw)["id"] == "\ud800é"


ANY_TEXT = st.text(st.characters(exclude_categories=()))  # lone surrogates included
WIRE_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()  # past 64 bits too
    | st.floats(allow_nan=False, allow_infinity=False)
    | ANY_TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(ANY_TEXT, children, max_size=4)
    ),
    max_leaves=12,
)


@given(WIRE_VALUES)
def test_every_reply_is_one_line_that_decodes_to_what_was_sent(value: object) -> None:
    raw = encode_frame({"jsonrpc": "2.0", "id": 1, "result": value})
    assert raw.endswith(b"\n") and raw.count(b"\n") == 1
    assert json.loads(raw)["result"] == value


@given(WIRE_VALUES)
def test_frames_are_read_exactly_as_the_json_module_reads_them(value: object) -> None:
    escaped = json.dumps(value)  # lone surrogates and all as ASCII escapes
    assert decode_json(escaped.encode()) == json.loads(escaped)
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "backslashreplace")
    assert decode_json(raw) == json.loads(raw)


@given(st.integers(min_value=2**62) | st.integers(max_value=-(2**62)) | st.integers(), st.text())
def test_big_integers_stay_integers(number: int, text: str) -> None:
    frame = json.dumps({"id": number, "result": [number, text, -number]}).encode()
    assert decode_json(frame) == json.loads(frame)
    assert type(decode_json(frame)["id"]) is int


@pytest.mark.parametrize(
    "text", [b"NaN", b"[Infinity]", b'{"a": -Infinity}', b"[1,]", b"", b'"\\x"', b"\xff"]
)
def test_what_json_refuses_is_refused(text: bytes) -> None:
    with pytest.raises(ValueError):
        decode_json(text)


def test_every_manifest_schema_is_a_valid_json_schema() -> None:
    for tool in load_manifest().values():
        Draft202012Validator.check_schema(tool.schema)
        assert tool.validator.schema is tool.schema


# -- hello and sessions ------------------------------------------------------------


def test_methods_other_than_hello_need_a_session(dispatcher: Dispatcher) -> None:
    conn = dispatcher.connect()
    code, data = error_of(call(conn, "memory_search", {}))
    assert code == Unauthorized.rpc_code and data["code"] == "unauthorized"
    code, _ = error_of(call(conn, "no_such_method", {}))
    assert code == ErrorCode.METHOD_NOT_FOUND


def test_hello_opens_an_agent_session_that_provides_provenance(
    dispatcher: Dispatcher, token: str, service: MemoryService
) -> None:
    conn = dispatcher.connect()
    hello = call(conn, "hello", {"token": token, "group": "work", "client": "unit-agent"})
    session_id = hello["result"]["session_id"]
    assert hello["result"]["group"] == "work"
    stored = call(conn, "memory_store", {"type": "fact", "content": "Deploys on Fridays"})
    entry = service.get("work", stored["result"]["id"])
    assert entry.provenance.session_id == session_id
    assert entry.provenance.group == "work"
    row = service.store_for("work").execute(
        "SELECT actor, client, end_state FROM sessions WHERE id = ?", (session_id,)
    )
    assert list(row) == [("agent", "unit-agent", "open")]


def test_a_wrong_token_is_refused_and_repeated_failures_hang_up(dispatcher: Dispatcher) -> None:
    conn = dispatcher.connect()
    for attempt in range(1, MAX_FAILED_HELLOS + 1):
        reply = conn.handle_line(frame("hello", {"token": "guess", "group": "main"}))
        assert reply.frame is not None
        code, _ = error_of(json.loads(reply.frame))
        assert code == Unauthorized.rpc_code
        assert reply.close is (attempt == MAX_FAILED_HELLOS)
    assert conn.session is None


@pytest.mark.parametrize(
    ("params", "field", "rule"),
    [
        ({"group": "main"}, "token", "required"),
        ({"token": 5}, "token", "type"),
        ({"token": "t", "client": "c" * 201}, "client", "maxLength"),
        ({"token": "t", "extra": 1}, "extra", "additionalProperties"),
    ],
)
def test_hello_params_are_checked_before_the_token(
    dispatcher: Dispatcher, params: dict[str, Any], field: str, rule: str
) -> None:
    code, data = error_of(call(dispatcher.connect(), "hello", params))
    assert code == ErrorCode.INVALID_PARAMS
    assert (data["field"], data["rule"]) == (field, rule)


@pytest.mark.parametrize("group", ["../etc", "", "a" * 65, "with space", "ünï"])
def test_hello_refuses_an_invalid_group(dispatcher: Dispatcher, token: str, group: str) -> None:
    code, data = error_of(call(dispatcher.connect(), "hello", {"token": token, "group": group}))
    assert code == InvalidGroup.rpc_code
    assert data["code"] == "invalid_group" and data["field"] == "group"


def test_a_second_hello_on_one_connection_is_a_conflict(conn: Connection, token: str) -> None:
    code, data = error_of(call(conn, "hello", {"token": token}))
    assert code == errors.Conflict.rpc_code and data["session_id"] == conn.caller.session_id


def test_session_end_is_graceful_and_closing_without_it_is_not(
    dispatcher: Dispatcher, token: str, service: MemoryService
) -> None:
    ended, dropped = dispatcher.connect(), dispatcher.connect()
    ids = []
    for c in (ended, dropped):
        ids.append(call(c, "hello", {"token": token})["result"]["session_id"])
        call(c, "memory_store", {"type": "fact", "content": f"kept from {len(ids)}"})
    reply = call(ended, "session_end", {"handoff": "next: finish the report"})
    assert reply["result"] == {"session_id": ids[0], "ended": True, "handoff_stored": True}
    code, _ = error_of(call(ended, "memory_search", {}))
    assert code == Unauthorized.rpc_code  # a new hello is needed
    dropped.close()
    dropped.close()  # idempotent
    states = dict(service.store_for("main").execute("SELECT id, end_state FROM sessions"))
    assert states[ids[0]] == "ended" and states[ids[1]] == "abandoned"
    assert len(entry_rows(service)) == 2  # what the dropped client stored is kept


# -- calls -----------------------------------------------------------------------


def test_tools_list_is_the_manifest(conn: Connection) -> None:
    tools = call(conn, "tools/list")["result"]["tools"]
    names = [t["name"] for t in tools]
    assert names[:4] == ["memory_store", "memory_search", "memory_brief", "memory_delete"]
    assert all(t["arguments_schema"]["type"] == "object" for t in tools)


def test_a_replaced_text_stored_again_names_what_replaced_it(conn: Connection) -> None:
    tea = call(conn, "memory_store", {"type": "preference", "content": "User likes tea"})
    coffee = call(
        conn,
        "memory_store",
        {
            "type": "preference",
            "content": "User prefers coffee now",
            "supersedes": tea["result"]["id"],
        },
    )["result"]["id"]
    again = call(conn, "memory_store", {"type": "preference", "content": "User likes tea."})
    result = again["result"]
    assert result["created"] is True and result["superseded"] is None
    assert result["replaced_earlier_by"] == coffee and coffee in result["note"]


def test_store_search_brief_delete(conn: Connection, service: MemoryService) -> None:
    stored = call(conn, "memory_store", {"type": "preference", "content": "Likes green tea"})
    entry_id = stored["result"]["id"]
    assert stored["result"]["created"] is True
    hits = call(conn, "memory_search", {"query": "tea"})["result"]["results"]
    assert [h["id"] for h in hits] == [entry_id]
    brief = call(conn, "memory_brief", {})["result"]
    assert "Likes green tea" in brief["markdown"] and brief["brief_count"] == 1
    assert call(conn, "memory_delete", {"id": entry_id})["result"] == {
        "deleted": entry_id,
        "current_again": None,
    }
    code, data = error_of(call(conn, "memory_delete", {"id": entry_id}))
    assert code == NotFound.rpc_code and data["field"] == "id"
    assert entry_rows(service) == []


@pytest.mark.parametrize(
    ("method", "params", "field", "rule"),
    [
        ("memory_store", {"type": "fact"}, "content", "required"),
        ("memory_store", {"type": "fact", "content": "x" * 2001}, "content", "maxLength"),
        ("memory_store", {"type": "opinion", "content": "x"}, "type", "enum"),
        ("memory_search", {"limit": 0}, "limit", "minimum"),
        ("memory_search", {"group": "other"}, "group", "additionalProperties"),
        ("memory_brief", {"group": "other"}, "group", "additionalProperties"),
        ("memory_delete", {}, "id", "required"),
        ("memory_delete", {"id": ""}, "id", "minLength"),
        ("memory_related", {"id": ""}, "id", "minLength"),
        ("ingest_text", {}, "text", "required"),
        ("ingest_text", {"text": "x" * 100_001}, "text", "maxLength"),
        ("session_end", {"handoff": 3}, "handoff", "type"),
        ("tools/list", {"x": 1}, "x", "additionalProperties"),
        ("memory_store", {"type": "fact", "content": "bad \ud800"}, "content", "unicode"),
    ],
)
def test_invalid_params_name_the_field_and_rule(
    conn: Connection, method: str, params: dict[str, Any], field: str, rule: str
) -> None:
    code, data = error_of(call(conn, method, params))
    assert code == ErrorCode.INVALID_PARAMS
    assert (data["field"], data["rule"]) == (field, rule)


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "memory_store",
            {"type": "fact", "content": "Works on billing", "tags": ["work", ""]},
            "memory_store: tags.1 must not be empty",
        ),
        (
            "memory_store",
            {"type": "fact", "content": "Works on billing", "tags": ["work", " \t", "x"]},
            "memory_store: tags.1 must not be empty or only white space; leave it out",
        ),
        (
            "memory_store",
            {"type": "fact", "content": "Works on billing", "tags": ["\u0007"]},
            "memory_store: tags.0 must not be empty or only white space; leave it out",
        ),
        ("memory_search", {"tags": [""]}, "memory_search: tags.0 must not be empty"),
        (
            "memory_search",
            {"query": "billing", "tags": ["work", "  "]},
            "memory_search: tags.1 must not be empty or only white space; leave it out",
        ),
    ],
)
def test_an_empty_tag_is_refused_by_its_index_not_dropped(
    conn: Connection, service: MemoryService, method: str, params: dict[str, Any], message: str
) -> None:
    # It was dropped without a word: the agent believed it had tagged the memory, or
    # searched by a tag, when the tag was gone (and a search was widened to all).
    reply = call(conn, method, params)
    code, data = error_of(reply)
    assert (code, reply["error"]["message"]) == (ErrorCode.INVALID_PARAMS, message)
    index = message.split("tags.")[1].split()[0]
    assert (data["field"], data["rule"]) == (f"tags.{index}", "minLength")
    assert entry_rows(service) == []
    # MCP's tools/call goes through the same method: the same refusal, as a tool error.
    result = mcp_tool_call(service, method, params)
    assert result["isError"] and result["content"][0]["text"] == f"invalid_params: {message}"
    assert entry_rows(service) == []


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        (
            "memory_store",
            {"type": "fact", "content": "x", "tag": ["a"]},
            "memory_store: unknown argument(s): 'tag'; "
            "allowed: type, content, tags, supersedes, source, privacy",
        ),
        (
            "memory_store",
            {"type": "fact", "content": "x", "source": {"kind": "user_message"}},
            "memory_store: source: unknown member(s): 'kind'; allowed: type, trust",
        ),
        (
            "memory_delete",
            {"id": ""},
            "memory_delete: id must not be empty: give the entry's id (mem-...), from "
            "memory_search (the brief's text shows no ids; search for the line's words)",
        ),
        (
            "dig",
            {"id": "abc"},
            "dig: id must be at least 5 characters: give a memory id (mem-...) or a summary "
            "id (sum-...)",
        ),
        (
            "thread_open",
            {"id": "thr-x"},
            "thread_open: id must be a thread id, thr- and 12 hex digits as thread_list shows it",
        ),
        (
            "claim_propose",
            {"text": "x", "kind": "fact", "sources": []},
            "claim_propose: sources must have at least 1 item",
        ),
    ],
)
def test_a_schema_refusal_says_what_to_change(
    conn: Connection, method: str, params: dict[str, Any], message: str
) -> None:
    # An unknown argument read "memory_store: tag unknown argument(s): tag" and
    # named none of the allowed ones; minLength, minItems and pattern came out
    # in jsonschema's own words ("'' should be non-empty").
    reply = call(conn, method, params)
    assert reply["error"]["message"] == message


def _id_arguments() -> list[tuple[str, str, str]]:
    """(tool, argument, id prefix) for each argument whose description names the brief."""
    found = []
    for name, tool in load_manifest().items():
        for argument, schema in tool.schema.get("properties", {}).items():
            said = str(schema.get("description", ""))
            kind = re.search(r"\(([a-z]{3}[-_])\.\.\.\)", said)
            # "from ... or the brief", not "the brief's text shows no ids"
            if kind and re.search(r"\bthe brief\b(?!')", said):
                found.append((name, argument, kind[1]))
    return found


def test_an_id_the_descriptions_say_is_in_the_brief_is_in_its_text(
    conn: Connection, tmp_path: Path
) -> None:
    # supersedes, memory_delete's and memory_related's id said "from memory_search or
    # the brief", but the brief's text has no mem- ids (only its structured entries,
    # which a client of MCP 2024-11-05 never receives).
    assert "result" in call(conn, "memory_store", {"type": "fact", "content": "Name is Dana"})
    doc = tmp_path / "notes.txt"
    doc.write_text("The venue is booked for May.\n")
    assert "result" in call(conn, "attachment_receipt", {"path": str(doc)})
    markdown = call(conn, "memory_brief")["result"]["markdown"]
    described = _id_arguments()
    assert ("attachment_verify", "id", "att_") in described
    for tool, argument, prefix in described:
        assert re.search(rf"\b{prefix}[0-9a-f]", markdown), (tool, argument)


_SUPERSEDES_HINT = (
    "give the id (mem-...) of the entry this one replaces, from memory_search (the brief's "
    "text shows no ids; search for the line's words), or leave it out (or pass null)"
)
_THREAD_HINT = "give a thread id (thr- and 12 hex digits) or its title, or leave it out"


@pytest.mark.parametrize(
    ("method", "params", "field", "says"),
    [
        (
            "memory_store",
            {"type": "fact", "content": "abc", "supersedes": ""},
            "supersedes",
            f"memory_store: supersedes must not be empty: {_SUPERSEDES_HINT}",
        ),
        (
            "memory_store",
            {"type": "fact", "content": "abc", "supersedes": "  "},
            "supersedes",
            f"memory_store: supersedes must not be only white space: {_SUPERSEDES_HINT}",
        ),
        ("memory_delete", {"id": " "}, "id", "memory_delete: id must not be only white space"),
        ("memory_related", {"id": ""}, "id", "memory_related: id must not be empty: give the id"),
        ("dig", {"id": ""}, "id", "dig: id must not be empty: give a memory id (mem-...)"),
        (
            "claim_verify",
            {"id": ""},
            "id",
            "claim_verify: id must not be empty: give the claim's id (clm-...)",
        ),
        (
            "attachment_verify",
            {"id": ""},
            "id",
            "attachment_verify: id must not be empty: give the receipt's id (att_...)",
        ),
        ("handoff_read", {"thread": ""}, "thread", "handoff_read: thread must not be empty: "),
        (
            "handoff_write",
            {"thread": "", "markdown": "- [ ] ship"},
            "thread",
            f"handoff_write: thread must not be empty: {_THREAD_HINT}",
        ),
        ("exchange_search", {"thread": " "}, "thread", "exchange_search: thread must not be"),
        ("attachment_list", {"thread": ""}, "thread", "attachment_list: thread must not be "),
        (
            "claim_propose",
            {"text": "a b c", "kind": "fact", "sources": [{"kind": "handoff", "thread": ""}]},
            "sources.0.thread",
            "claim_propose: sources.0.thread must not be empty: give the thread id (thr- and 12 "
            "hex digits) or title of a cited handoff, as thread_list shows them",
        ),
    ],
)
def test_an_empty_id_is_invalid_params_saying_what_goes_there(
    conn: Connection,
    service: MemoryService,
    method: str,
    params: dict[str, Any],
    field: str,
    says: str,
) -> None:
    # An empty supersedes was looked up and came back as -32005 "cannot supersede :
    # no such entry"; an empty claim or receipt id as -32002 "no claim  in group".
    reply = call(conn, method, params)
    code, data = error_of(reply)
    message = reply["error"]["message"]
    assert (code, data["code"], data["field"], data["rule"]) == (
        ErrorCode.INVALID_PARAMS,
        "invalid_params",
        field,
        "minLength",
    )
    assert message.startswith(says), message
    if field == "thread":
        assert message.endswith(_THREAD_HINT), message
    assert entry_rows(service) == []
    # MCP's tools/call answers the same, as a tool error.
    result = mcp_tool_call(service, method, params)
    assert result["isError"] and result["content"][0]["text"] == f"invalid_params: {message}"


@pytest.mark.parametrize("thread", ["", "  "])
def test_hello_with_an_empty_thread_names_the_thread(
    dispatcher: Dispatcher, token: str, thread: str
) -> None:
    # It was read as a new thread's title: field "title", "title must not be empty".
    reply = call(dispatcher.connect(), "hello", {"token": token, "thread": thread})
    code, data = error_of(reply)
    assert (code, data["field"], data["rule"]) == (ErrorCode.INVALID_PARAMS, "thread", "minLength")
    assert reply["error"]["message"].endswith(_THREAD_HINT)


def test_a_null_supersedes_is_none(conn: Connection) -> None:
    stored = call(conn, "memory_store", {"type": "fact", "content": "abc", "supersedes": None})
    assert stored["result"]["created"] is True and stored["result"]["superseded"] is None


def test_ingest_text_stores_markers(conn: Connection, service: MemoryService) -> None:
    result = call(conn, "ingest_text", {"text": "[MEMORY:timing:nas] Boots in 3 minutes\nhi"})
    assert result["result"]["markers"] == 1 and len(result["result"]["stored"]) == 1


def test_the_rate_limit_is_an_application_error(data_dir: DataDir, token: str) -> None:
    svc = MemoryService(data_dir, Config(rate_stores_per_hour=2))
    try:
        conn = agent_dispatcher(svc).connect()
        call(conn, "hello", {"token": token})
        for i in range(2):
            call(conn, "memory_store", {"type": "fact", "content": f"fact {i}"})
        code, data = error_of(call(conn, "memory_store", {"type": "fact", "content": "one more"}))
        assert code == RateLimited.rpc_code and data["limit"] == "stores"
    finally:
        svc.close()


def test_notifications_run_but_are_never_answered(conn: Connection, service: MemoryService) -> None:
    reply = conn.handle_line(frame("memory_store", {"type": "fact", "content": "quiet"}, ...))
    assert reply.frame is None and reply.ok
    assert len(entry_rows(service)) == 1
    failed = conn.handle_line(frame("memory_store", {"type": "nope"}, ...))
    assert failed.frame is None and not failed.ok
    assert conn.handle_line(b"   \r").frame is None  # keep-alive


def test_registered_methods_and_internal_errors(dispatcher: Dispatcher, token: str) -> None:
    def boom(conn: Connection, params: dict[str, Any]) -> Any:
        raise RuntimeError("bug")

    dispatcher.register_method("thread_ping", lambda c, p: {"group": c.caller.group})
    dispatcher.register_method("status", lambda c, p: "up", needs_session=False)
    dispatcher.register_method("boom", boom)
    with pytest.raises(ValueError, match="already registered"):
        dispatcher.register_method("hello", boom)
    conn = dispatcher.connect()
    assert call(conn, "status")["result"] == "up"
    assert error_of(call(conn, "thread_ping"))[0] == Unauthorized.rpc_code
    call(conn, "hello", {"token": token})
    assert call(conn, "thread_ping")["result"] == {"group": "main"}
    assert error_of(call(conn, "boom"))[0] == ErrorCode.INTERNAL_ERROR
    assert "result" in call(conn, "memory_search", {})  # the connection still works


def test_run_tool_refuses_anything_but_the_memory_tools(
    service: MemoryService, conn: Connection
) -> None:
    with pytest.raises(NotFound):
        run_tool(service, conn.caller, "settings_set", {})


ARGS = st.dictionaries(
    st.sampled_from(["type", "content", "tags", "id", "query", "limit", "supersedes", "x"]),
    JSON,
    max_size=4,
)
FRAMES = st.one_of(
    st.binary(max_size=120),
    JSON.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda m, p, i: json.dumps({"jsonrpc": "2.0", "method": m, "params": p, "id": i}).encode(),
        st.sampled_from(["memory_store", "memory_delete", "hello", "session_end", "memory_x"]),
        ARGS | JSON,
        st.integers() | st.text(max_size=5) | st.none() | st.booleans(),
    ),
    # Nested far past the limit, closed or not, inside a valid store's arguments.
    st.builds(
        lambda depth, closed, opener: (
            b'{"jsonrpc":"2.0","id":3,"method":"memory_store","params":{"type":"fact",'
            b'"content":"deep","tags":' + opener * depth + (b"]" * depth if closed else b"") + b"}}"
        ),
        st.integers(min_value=MAX_NESTING_DEPTH - 2, max_value=3000),
        st.booleans(),
        st.just(b"["),
    ),
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(FRAMES, max_size=8))
def test_hostile_frames_never_raise_nor_write(
    dispatcher: Dispatcher, service: MemoryService, frames: list[bytes]
) -> None:
    before = entry_rows(service)
    conn = dispatcher.connect()
    conn.handle_line(frame("hello", {"token": read_token(dispatcher.token_file)}))
    for line in frames:
        if re.search(rb'"type": "(preference|fact|instruction|context|correction)"', line):
            continue  # possibly a valid store: valid calls may write
        reply = conn.handle_line(line)
        if reply.frame is not None:
            decoded = json.loads(reply.frame)
            assert ("result" in decoded) != ("error" in decoded)
    conn.close()
    assert entry_rows(service) == before


# -- auth --------------------------------------------------------------------------


def test_the_token_file_is_private_and_regeneration_replaces_it(tmp_path: Path) -> None:
    path = tmp_path / "agent.token"
    with pytest.raises(Unauthorized, match="ambry token"):
        read_token(path)
    first = load_or_create_token(path)
    assert len(first) >= 40 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_token(path) == first == read_token(path)
    second = regenerate_token(path)
    assert second != first and read_token(path) == second
    path.chmod(0o644)
    read_token(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_token_comparison_takes_any_input() -> None:
    assert token_matches("abc", "abc")
    assert not token_matches("abc", "abd")
    assert not token_matches("abc", None)
    assert not token_matches("abc", "\ud800é")


def test_regenerating_the_token_shuts_out_new_hellos_at_once(
    dispatcher: Dispatcher, conn: Connection, token: str
) -> None:
    regenerate_token(dispatcher.token_file)
    assert error_of(call(dispatcher.connect(), "hello", {"token": token}))[0] == -32001
    assert "result" in call(conn, "memory_search", {})  # open sessions keep working


def test_ambry_token_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "d"
    data.mkdir()
    assert cli_main(["--data-dir", str(data), "token"]) == 0
    path = Path(capsys.readouterr().out.strip())
    assert path == data / "agent.token" and path.exists()
    first = read_token(path)
    assert cli_main(["--data-dir", str(data), "--json", "token", "--regenerate"]) == 0
    said = capsys.readouterr()
    assert json.loads(said.out)["regenerated"] is True and said.err == ""
    second = read_token(path)
    assert second != first
    # The path alone on stdout, so `cat "$(ambry token --regenerate)"` reads the token;
    # before, stdout held a second line saying a new token was written.
    assert cli_main(["--data-dir", str(data), "token", "--regenerate"]) == 0
    said = capsys.readouterr()
    assert said.out == f"{path}\n"
    assert said.err == (
        "note: new token written; agents must read it again before their next hello\n"
    )
    assert read_token(path) != second


# -- the client's error mapping --------------------------------------------------------


def test_error_replies_become_the_service_error_classes() -> None:
    err = error_from_reply(
        {"code": -32602, "message": "bad", "data": {"code": "invalid_params", "field": "content"}}
    )
    assert type(err) is InvalidParams and err.field == "content"
    group = error_from_reply({"code": -32602, "message": "g", "data": {"code": "invalid_group"}})
    assert type(group) is InvalidGroup
    limited = error_from_reply(
        {"code": -32003, "message": "slow down", "data": {"code": "rate_limited", "allowed": 20}}
    )
    assert type(limited) is RateLimited and limited.data == {"allowed": 20}
    unknown = error_from_reply({"code": -32601, "message": "no", "data": {"code": "x"}})
    assert type(unknown) is RemoteError and unknown.rpc_code == -32601
    assert isinstance(error_from_reply("garbage"), RemoteError)


# -- documentation -------------------------------------------------------------------


def test_every_tool_argument_is_documented_in_its_section() -> None:
    # memory_store's section named no `privacy`, which the schema has, nor that
    # private and secret need the OS keyring (key_unavailable otherwise).
    text = DOCS.read_text(encoding="utf-8")
    for name, tool in load_manifest().items():
        found = re.search(rf"^### `{name}`\n(.*?)(?=^##|\Z)", text, re.S | re.M)
        assert found, f"docs/protocol.md has no section for {name}"
        missing = [arg for arg in tool.schema["properties"] if f"`{arg}`" not in found[1]]
        assert missing == [], f"docs/protocol.md's {name} section omits {missing}"
    store = re.search(r"^### `memory_store`\n(.*?)(?=^##)", text, re.S | re.M)
    assert store is not None
    section = " ".join(store[1].split())
    assert "`public` (default), `private` or `secret`" in section
    assert "`-32010` `key_unavailable`" in section and "OS keyring" in section


@pytest.mark.parametrize("privacy", ["private", "secret"])
def test_a_sealed_store_without_a_keyring_is_key_unavailable_as_documented(
    conn: Connection, service: MemoryService, privacy: str, no_keyring: None
) -> None:
    reply = call(
        conn, "memory_store", {"type": "fact", "content": "Lives in Lyon", "privacy": privacy}
    )
    code, data = error_of(reply)
    assert (code, data["code"]) == (errors.StorageError.rpc_code, "key_unavailable")
    assert "OS keyring" in reply["error"]["message"] and entry_rows(service) == []
    described = load_manifest()["memory_store"].schema["properties"]["privacy"]["description"]
    assert "need the OS keyring" in described and "(key_unavailable)" in described


def test_every_method_and_error_code_is_documented(dispatcher: Dispatcher) -> None:
    text = DOCS.read_text(encoding="utf-8")
    for name in dispatcher.method_names:
        assert f"### `{name}`" in text, f"docs/protocol.md does not document {name}"
    codes = {c.value for c in ErrorCode} | {
        cls.rpc_code for cls in (errors.Unauthorized, NotFound, RateLimited, errors.TooLarge)
    }
    codes |= {errors.Conflict.rpc_code, errors.Refused.rpc_code, errors.StorageError.rpc_code}
    for code in codes:
        assert f"`{code}`" in text, f"docs/protocol.md does not list error code {code}"
