"""``ambry mcp`` answers every line it cannot use with a JSON-RPC error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from core.agent.framing import MAX_NESTING_DEPTH, ErrorCode

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


def answers(lines: list[bytes], tmp_path: Path) -> list[tuple[Any, Any, dict[str, Any]]]:
    """Run the real ``ambry mcp`` on ``lines`` after a handshake; (id, code, data) per reply."""
    handshake = [
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc": "2.0", "method": "notifications/initialized"}',
    ]
    proc = subprocess.run(
        [str(AMBRY), "--data-dir", str(tmp_path / "data"), "--create", "mcp"],
        input=b"\n".join(handshake + lines) + b"\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr
    replies = [json.loads(line) for line in proc.stdout.splitlines()]
    assert replies[0]["id"] == 1 and "result" in replies[0]
    return [
        (
            r["id"],
            r["error"]["code"] if "error" in r else "ok",
            (r.get("error") or {}).get("data") or {},
        )
        for r in replies[1:]
    ]


UNUSABLE: list[tuple[bytes, Any, int]] = [
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
    (b'{"jsonrpc": "2.0", "id": 4, "method": "x", "params": 3}', 4, ErrorCode.INVALID_REQUEST),
]


def test_unusable_lines_get_the_right_error(tmp_path: Path) -> None:
    got = answers([line for line, _, _ in UNUSABLE], tmp_path)
    # Each line gets exactly one reply, in the order sent.
    assert [(i, c) for i, c, _ in got] == [(i, c) for _, i, c in UNUSABLE]


def test_frames_nested_past_the_limit_are_invalid_params(tmp_path: Path) -> None:
    lines = []
    for levels in (MAX_NESTING_DEPTH + 1, 1000, 5000):
        line = '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"memory_store",'
        line += '"arguments":{"tags":' + deep(levels) + "}}}"
        lines.append(line.encode())
    for request_id, code, data in answers(lines, tmp_path):
        assert code == ErrorCode.INVALID_PARAMS and data.get("rule") == "maxDepth"
        assert request_id in (8, None)


def test_blank_lines_are_skipped_and_messages_go_on(tmp_path: Path) -> None:
    lines = [
        b"",
        b"  \t",
        b'{"jsonrpc": "2.0", "id": "r1", "result": {}}',
        b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}',
    ]
    assert [(i, c) for i, c, _ in answers(lines, tmp_path)] == [(9, "ok")]


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
        [str(AMBRY), "--data-dir", str(tmp_path / "data"), "--create", "mcp"],
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
