"""``ambry mcp`` on the wire: protocol versions, cancellation, bad input and signals.

These talk raw JSON lines to the real subprocess, for what an SDK client will
not send on purpose (a cancellation that races its request, a broken frame).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.agent.framing import MAX_FRAME_BYTES
from core.agent.mcp_bridge import PROTOCOL_VERSIONS
from core.service import MemoryService
from core.storage.paths import DataDir

AMBRY = Path(sys.executable).with_name("ambry")


class Wire:
    """One ``ambry mcp`` process spoken to in raw lines."""

    def __init__(self, data: Path) -> None:
        self.proc = subprocess.Popen(
            [str(AMBRY), "--data-dir", str(data), "--create", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        )

    def send(self, *messages: dict[str, Any] | list[Any] | bytes) -> None:
        """Write all ``messages`` in one write, so the server reads them together."""
        assert self.proc.stdin is not None
        raw = b"".join(
            m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages
        )
        self.proc.stdin.write(raw)
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the server closed stdout"
        decoded: dict[str, Any] = json.loads(line)
        return decoded

    def request(self, id_: int, method: str, params: dict[str, Any] | None = None) -> Any:
        self.send(request(id_, method, params))
        return self.reply()

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        answer = self.request(0, "initialize", init_params(version))
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result: dict[str, Any] = answer["result"]
        return result

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        return code


def request(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    return message


def init_params(version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }


@pytest.fixture
def wire(tmp_path: Path) -> Iterator[Wire]:
    w = Wire(tmp_path / "mcp-data")
    yield w
    if w.proc.poll() is None:
        w.proc.kill()
        w.proc.wait()
    for stream in (w.proc.stdin, w.proc.stdout):
        if stream is not None and not stream.closed:
            stream.close()


def entry_count(data: Path) -> int:
    svc = MemoryService(DataDir(data))
    try:
        [(count,)] = svc.store_for("main").execute("SELECT count(*) FROM memory_entries")
        return int(count)
    finally:
        svc.close()


@pytest.mark.parametrize("version", PROTOCOL_VERSIONS)
def test_each_protocol_version_gets_the_fields_it_knows(wire: Wire, version: str) -> None:
    assert wire.initialize(version)["protocolVersion"] == version
    tools = wire.request(1, "tools/list")["result"]["tools"]
    store = next(t for t in tools if t["name"] == "memory_store")
    structured = version >= "2025-06-18"
    assert ("outputSchema" in store, "title" in store) == (structured, structured)
    assert ("annotations" in store) == (version >= "2025-03-26")
    called = wire.request(2, "tools/call", {"name": "memory_search", "arguments": {}})
    assert ("structuredContent" in called["result"]) == structured
    assert json.loads(called["result"]["content"][0]["text"]) == {"results": [], "claims": []}
    assert wire.close() == 0


def test_an_unknown_version_is_answered_with_the_newest(wire: Wire) -> None:
    assert wire.initialize("1999-01-01")["protocolVersion"] == PROTOCOL_VERSIONS[0]
    assert wire.close() == 0


def test_a_request_cancelled_before_it_ran_is_skipped_and_never_answered(
    wire: Wire, tmp_path: Path
) -> None:
    wire.initialize()
    store = {"name": "memory_store", "arguments": {"type": "fact", "content": "Never stored"}}
    cancel = {"requestId": 5, "reason": "the user gave up"}
    wire.send(
        request(5, "tools/call", store),
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel},
        request(6, "ping"),
    )
    assert wire.reply() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    # A cancellation for a request already answered, or never sent, changes nothing.
    wire.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}})
    assert wire.request(7, "ping")["id"] == 7
    assert wire.close() == 0
    assert entry_count(tmp_path / "mcp-data") == 0


def test_bad_input_gets_precise_errors_and_the_server_goes_on(wire: Wire) -> None:
    before = wire.request(1, "tools/list")["error"]
    assert (before["code"], before["message"]) == (-32600, "send initialize before 'tools/list'")
    assert wire.request(2, "ping")["result"] == {}  # ping works before initialize
    wire.initialize()
    again = wire.request(3, "initialize", init_params("2025-11-25"))["error"]
    assert again["code"] == -32600 and "already" in again["message"]
    assert wire.request(4, "logging/setLevel", {"level": "info"})["error"]["code"] == -32601
    assert wire.request(5, "server/discover")["error"]["code"] == -32601
    wire.send(b"{not json\n")
    assert wire.reply()["error"]["code"] == -32700
    wire.send(b'[{"jsonrpc": "2.0", "id": 6, "method": "ping"}]\n')
    assert wire.reply()["error"]["code"] == -32600
    cursor = wire.request(7, "tools/list", {"cursor": "abc"})["error"]
    assert (cursor["code"], cursor["data"]["field"]) == (-32602, "cursor")
    args = wire.request(8, "tools/call", {"name": "memory_search", "arguments": [1]})["result"]
    assert args["isError"] and "arguments must be an object" in args["content"][0]["text"]
    surrogate = {"name": "memory_store", "arguments": {"type": "fact", "content": "\ud800"}}
    bad = wire.request(9, "tools/call", surrogate)["result"]
    assert bad["isError"] and "lone surrogate" in bad["content"][0]["text"]
    prompt = wire.request(10, "prompts/get", {"name": "memory_brief", "arguments": {"x": "1"}})
    assert prompt["error"]["data"]["field"] == "arguments"
    # A reply to a request the server never sent is ignored, not answered.
    wire.send({"jsonrpc": "2.0", "id": 99, "result": {}})
    # An oversized line gets one error and is skipped; the stream resynchronises.
    wire.send(b'{"jsonrpc": "2.0", "id": 11, "x": "' + b"a" * (MAX_FRAME_BYTES + 10) + b'"}\n')
    assert wire.reply()["error"]["code"] == -32004
    assert wire.request(12, "ping") == {"jsonrpc": "2.0", "id": 12, "result": {}}
    assert wire.close() == 0


def test_a_batch_is_answered_with_an_array_in_revision_2025_03_26(
    wire: Wire, tmp_path: Path
) -> None:
    # That revision says a server MUST accept JSON-RPC batches; they were refused.
    wire.initialize("2025-03-26")
    store = {"name": "memory_store", "arguments": {"type": "fact", "content": "Ships Friday"}}
    wire.send(
        [
            request(1, "tools/call", store),
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}},
            request(2, "ping"),
            request(3, "no/such/method"),
            {"jsonrpc": "2.0", "id": 4},  # neither a request nor a response
            request(5, "initialize", init_params("2025-03-26")),
        ]
    )
    assert wire.proc.stdout is not None
    stored, pong, unknown, broken, init = json.loads(wire.proc.stdout.readline())
    assert stored["id"] == 1 and not stored["result"]["isError"]
    assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert (unknown["id"], unknown["error"]["code"]) == (3, -32601)
    assert broken["error"]["code"] == -32600
    assert init["error"] == {
        "code": -32600,
        "message": "initialize must not be part of a batch",
        "data": {"code": "invalid_request"},
    }
    # Notifications alone get no reply at all; an empty array gets one error.
    wire.send([{"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}])
    wire.send([])
    assert wire.reply()["error"]["code"] == -32600
    assert wire.close() == 0
    assert entry_count(tmp_path / "mcp-data") == 1


@pytest.mark.parametrize("version", [v for v in PROTOCOL_VERSIONS if v != "2025-03-26"])
def test_a_batch_is_refused_where_the_revision_has_none(wire: Wire, version: str) -> None:
    wire.initialize(version)
    wire.send([request(1, "ping")])
    error = wire.reply()["error"]
    assert error["code"] == -32600 and f"in MCP {version}" in error["message"]
    assert wire.request(2, "ping")["result"] == {}
    assert wire.close() == 0


def test_a_refusal_never_breaks_the_tools_output_schema(wire: Wire) -> None:
    # Clients check structuredContent against outputSchema even when isError is
    # set (the TypeScript SDK does), so an error object there turned every
    # refusal into a client-side schema failure that hid the message.
    wire.initialize()
    tools = wire.request(1, "tools/list")["result"]["tools"]
    for n, tool in enumerate(tools, start=2):
        call = {"name": tool["name"], "arguments": {"no_such_argument": 1}}
        result = wire.request(n, "tools/call", call)["result"]
        assert result["isError"], tool["name"]
        assert result["content"][0]["text"].startswith("invalid_params: "), tool["name"]
        structured = result.get("structuredContent")
        if structured is not None:
            errors = list(Draft202012Validator(tool["outputSchema"]).iter_errors(structured))
            assert not errors, (tool["name"], errors[0].message)
    assert wire.close() == 0


def test_a_missing_name_or_uri_is_named_as_missing(wire: Wire) -> None:
    # Before, these read "unknown tool 'None'" and, for a resource, a -32002
    # not-found error, as if a tool or resource called None had been asked for.
    wire.initialize()
    for n, (method, params, field) in enumerate(
        [
            ("tools/call", {"arguments": {}}, "name"),
            ("tools/call", {"name": 7}, "name"),
            ("prompts/get", {}, "name"),
            ("resources/read", {}, "uri"),
        ],
        start=1,
    ):
        error = wire.request(n, method, params)["error"]
        assert (error["code"], error["data"]["field"]) == (-32602, field), method
        problem = "must be a string" if params.get("name") == 7 else "is required"
        assert error["message"].startswith(f"{method}: params.{field} ("), error
        assert error["message"].endswith(problem), error
    assert wire.request(9, "ping")["result"] == {}
    assert wire.close() == 0


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_stop_signal_ends_the_session_gracefully(
    wire: Wire, tmp_path: Path, signum: signal.Signals
) -> None:
    # SIGHUP (the terminal that started it closing) used to kill it on the spot,
    # its session left open.
    assert wire.initialize()["serverInfo"]["name"] == "ambry"
    wire.proc.send_signal(signum)
    assert wire.proc.wait(timeout=30) == 0
    svc = MemoryService(DataDir(tmp_path / "mcp-data"))
    try:
        states = list(svc.store_for("main").execute("SELECT end_state FROM sessions"))
        assert states == [("ended",)]
    finally:
        svc.close()


def test_nothing_heavy_is_imported() -> None:
    # `ambry mcp` needs neither Qt nor the MCP SDK; jsonschema waits for the first
    # call that validates, after `initialize` has been answered.
    probe = (
        "import sys, core.cli.main, core.cli.commands, core.agent.mcp_stdio, core.agent.client; "
        "print(sorted(m for m in ('mcp', 'PySide6', 'anyio', 'pydantic', 'jsonschema') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "[]"


def test_an_mcp_server_that_cannot_start_answers_with_the_reason(tmp_path: Path) -> None:
    # Before, it exited at once, and the reason was on stderr only, which few
    # clients show: the person saw a server that "disconnected".
    missing = tmp_path / "no-such-dir"
    asked = [
        json.dumps(request(0, "initialize", init_params("2025-11-25"))),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps(request(1, "tools/list")),
        "not json",
        json.dumps({"jsonrpc": "2.0", "id": 2}),  # no method: still answered
    ]
    done = subprocess.run(
        [str(AMBRY), "mcp"],
        input="\n".join(asked) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "AMBRY_DATA_DIR": str(missing)},
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [0, 1, 2]
    assert all(str(missing) in r["error"]["message"] for r in replies)
    assert "add --create" in replies[0]["error"]["message"]
    # A setting to fix, answered with a code docs/protocol.md lists (not -32000 "error").
    assert {r["error"]["code"] for r in replies} == {-32602}
    assert replies[0]["error"]["data"] == {
        "code": "invalid_params",
        "field": "AMBRY_DATA_DIR",
        "rule": "exists",
    }
    assert done.returncode == 1 and not missing.exists()
    done = subprocess.run(
        [str(AMBRY), "--data-dir", str(missing), "mcp"],
        input=asked[0] + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    [reply] = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["error"]["data"]["field"] == "data_dir" and not missing.exists()


@pytest.mark.parametrize(
    ("variable", "value"), [("AMBRY_LOG_DIR", "logs"), ("AMBRY_DATA_DIR", "store")]
)
def test_an_mcp_server_with_a_relative_folder_answers_with_the_reason(
    tmp_path: Path, variable: str, value: str
) -> None:
    # The client starts `ambry mcp` in a folder of its choosing: a relative
    # AMBRY_LOG_DIR is refused there, as a relative AMBRY_DATA_DIR is.
    done = subprocess.run(
        [str(AMBRY), "mcp"],
        input=json.dumps(request(0, "initialize", init_params("2025-11-25"))) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, variable: value},
    )
    [reply] = [json.loads(line) for line in done.stdout.splitlines()]
    assert reply["error"]["message"].startswith(f"{variable}={value} is a relative path")
    # A setting to fix (-32602, as a bad argument is), not a fault of the disk (-32010).
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"] == {
        "code": "invalid_params",
        "field": variable,
        "rule": "absolute",
    }
    assert done.returncode == 1 and not (tmp_path / value).exists()
