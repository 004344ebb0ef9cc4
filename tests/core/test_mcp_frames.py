"""``ambry mcp`` answers every line it cannot use with a JSON-RPC error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.framing import MAX_NESTING_DEPTH, ErrorCode
from core.mcp_frames import check_line

AMBRY = Path(sys.executable).with_name("ambry")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def refused(line: bytes) -> tuple[Any, int, dict[str, Any]]:
    check = check_line(line)
    assert not check.forward and check.reply is not None
    reply = json.loads(check.reply)
    assert reply["jsonrpc"] == "2.0" and check.reply.count(b"\n") == 1
    return reply["id"], reply["error"]["code"], reply["error"].get("data") or {}


@pytest.mark.parametrize(
    ("line", "request_id", "code"),
    [
        (b"not json", None, ErrorCode.PARSE_ERROR),
        (b"\xff\xfe{}", None, ErrorCode.PARSE_ERROR),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', None, ErrorCode.PARSE_ERROR),
        (b"[" * 100_000, None, ErrorCode.INVALID_PARAMS),
        (b"[1, 2]", None, ErrorCode.INVALID_REQUEST),
        (b"7", None, ErrorCode.INVALID_REQUEST),
        (b'{"id": 3}', 3, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": "a"}', "a", ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}', 3, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', None, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 4, "method": 5}', 4, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 4, "method": ""}', 4, ErrorCode.INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "x", "params": [1]}', 4, ErrorCode.INVALID_PARAMS),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "x", "params": 3}', 4, ErrorCode.INVALID_PARAMS),
    ],
)
def test_unusable_lines_get_the_right_error(line: bytes, request_id: Any, code: int) -> None:
    got_id, got_code, _ = refused(line)
    assert (got_id, got_code) == (request_id, code)


def test_frames_nested_past_the_limit_are_invalid_params() -> None:
    for levels in (MAX_NESTING_DEPTH, 1000, 5000):
        line = '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"memory_store",'
        line += '"arguments":{"tags":' + deep(levels) + "}}}"
        request_id, code, data = refused(line.encode())
        assert code == ErrorCode.INVALID_PARAMS and data["rule"] == "maxDepth"
        assert request_id == (8 if levels <= 1000 else None)


def test_blank_lines_are_skipped_and_messages_go_on() -> None:
    assert check_line(b"") == check_line(b"  \t") and not check_line(b"").forward
    assert check_line(b"").reply is None
    for message in (
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "r1", "result": {}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -1, "message": "no"}},
    ):
        check = check_line(json.dumps(message).encode())
        assert check.forward and check.reply is None


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3)
    ),
    max_leaves=10,
)
MESSAGES = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | JSON,
        "id": st.integers() | st.text(max_size=4) | JSON,
        "method": st.sampled_from(["ping", "tools/list", ""]) | JSON,
        "params": st.dictionaries(st.text(max_size=5), JSON, max_size=3) | JSON,
        "result": JSON,
    },
)


@given(
    st.binary(max_size=150)
    | JSON.map(lambda v: json.dumps(v).encode())
    | MESSAGES.map(lambda m: json.dumps(m).encode())
)
def test_every_line_is_either_answered_or_readable_by_the_sdk(line: bytes) -> None:
    """Nothing falls between the two: what is forwarded, the SDK can parse."""
    check = check_line(line)
    if check.reply is not None:
        assert not check.forward
        reply = json.loads(check.reply)
        assert reply["error"]["code"] in {c.value for c in ErrorCode}
        return
    if not check.forward:
        assert not line.strip()
        return
    message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    decoded = json.loads(line)
    if "method" in decoded:
        # A request stays a request (and gets its reply), a notification stays one.
        kind = mcp_types.JSONRPCRequest if "id" in decoded else mcp_types.JSONRPCNotification
        assert isinstance(message, kind)


def test_ambry_mcp_answers_every_unparseable_frame(tmp_path: Path) -> None:
    lines = [
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
        b"not json",
        b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory_store",'
        b'"arguments":{"type":"fact","content":"x","tags":' + deep(1000).encode() + b"}}}",
        b"[" * 5000,
        b'{"id": 12}',
        b'{"jsonrpc": "2.0", "id": 13, "method": "tools/list", "params": [1]}',
        b"\xff\xfe",
        b'{"jsonrpc": "2.0", "id": 14, "method": "ping"}',
    ]
    proc = subprocess.run(
        [str(AMBRY), "--data-dir", str(tmp_path / "data"), "mcp"],
        input=b"\n".join(lines) + b"\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    # MCP replies need not come in order; each line gets exactly one.
    codes = [(r["id"], r["error"]["code"] if "error" in r else "ok") for r in replies]
    assert sorted(codes, key=str) == sorted(
        [
            (1, "ok"),
            (None, ErrorCode.PARSE_ERROR),
            (11, ErrorCode.INVALID_PARAMS),
            (None, ErrorCode.INVALID_PARAMS),
            (12, ErrorCode.INVALID_REQUEST),
            (13, ErrorCode.INVALID_PARAMS),
            (None, ErrorCode.PARSE_ERROR),
            (14, "ok"),
        ],
        key=str,
    )
    assert b"Traceback" not in proc.stderr
