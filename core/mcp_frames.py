"""The first look ``ambry mcp`` takes at every line a client sends on stdin.

The MCP SDK drops a line it cannot read as a JSON-RPC message: it logs the
error and answers nothing, so the client waits for a reply until it times out.
Every line therefore passes :func:`check_line` before the SDK sees it. A line
that is not a JSON-RPC 2.0 message is answered here with the error JSON-RPC
prescribes (-32700 for bytes that are not JSON, -32600 for JSON that is not a
message, -32602 for params that are not an object or a frame nested deeper
than :data:`~core.framing.MAX_NESTING_DEPTH`), with the request's id when it
can be read. Only lines that pass go on to the SDK.

The checks are those of the socket's :func:`~core.framing.parse_request`,
except that MCP lines may also be responses (to requests a server makes) and
may carry members JSON-RPC does not name; the SDK judges those itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.framing import (
    MAX_NESTING_DEPTH,
    ErrorCode,
    RequestId,
    bracket_depth,
    decode_json,
    error_frame,
    nesting_depth,
    too_deep,
)


@dataclass(frozen=True)
class LineCheck:
    """What to do with one line: hand it to the SDK, answer it, or skip it."""

    forward: bool
    #: The error frame to send back instead, when the line is refused.
    reply: bytes | None = None


_FORWARD = LineCheck(True)
_SKIP = LineCheck(False)


def _refuse(request_id: RequestId, code: ErrorCode, message: str, **data: Any) -> LineCheck:
    details = {"code": code.name.lower(), **data}
    return LineCheck(False, error_frame(request_id, code, message, details))


def _valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_line(line: bytes) -> LineCheck:
    """Decide what happens to one line of stdin (without its newline).

    Blank lines are skipped, as keep-alives. Never raises.
    """
    if not line.strip():
        return _SKIP
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _refuse(
            None, ErrorCode.PARSE_ERROR, f"parse error: invalid UTF-8 at byte {exc.start}"
        )
    try:
        obj = decode_json(line)
    except (ValueError, RecursionError) as exc:
        if bracket_depth(line) > MAX_NESTING_DEPTH:
            return _too_deep(None)
        return _refuse(None, ErrorCode.PARSE_ERROR, f"parse error: {str(exc)[:200]}")
    request_id = obj.get("id") if isinstance(obj, dict) else None
    if not _valid_id(request_id):
        request_id = None
    if nesting_depth(obj) > MAX_NESTING_DEPTH:
        return _too_deep(request_id)
    if isinstance(obj, list):
        return _refuse(
            None,
            ErrorCode.INVALID_REQUEST,
            "batch requests are not supported; send one JSON-RPC message per line",
        )
    if not isinstance(obj, dict):
        return _refuse(None, ErrorCode.INVALID_REQUEST, "a message must be a JSON object")
    if "id" in obj and obj["id"] is not None and not _valid_id(obj["id"]):
        return _refuse(None, ErrorCode.INVALID_REQUEST, "id must be a string or an integer")
    if obj.get("jsonrpc") != "2.0":
        return _refuse(request_id, ErrorCode.INVALID_REQUEST, 'jsonrpc must be "2.0"')
    if "method" in obj:
        return _check_call(obj, request_id)
    if ("result" in obj or "error" in obj) and "id" in obj:
        # A response to a request of the server's: never answered, even when wrong.
        return _FORWARD
    return _refuse(
        request_id,
        ErrorCode.INVALID_REQUEST,
        "a message must be a request (method, id, params), a notification (method, "
        "params) or a response (id with result or error)",
    )


def _check_call(obj: dict[str, Any], request_id: RequestId) -> LineCheck:
    method = obj["method"]
    if not isinstance(method, str) or not method:
        return _refuse(request_id, ErrorCode.INVALID_REQUEST, "method must be a non-empty string")
    if "id" in obj and obj["id"] is None:
        return _refuse(
            None,
            ErrorCode.INVALID_REQUEST,
            "id must be a string or an integer; leave it out for a notification",
        )
    params = obj.get("params")
    if params is not None and not isinstance(params, dict):
        return _refuse(
            request_id,
            ErrorCode.INVALID_PARAMS,
            f"{method[:64]!r}: params must be an object (named parameters)",
            field="params",
            rule="type",
        )
    return _FORWARD


def _too_deep(request_id: RequestId) -> LineCheck:
    exc = too_deep(request_id)
    return LineCheck(False, error_frame(exc.request_id, exc.code, exc.message, exc.data))
