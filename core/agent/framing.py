"""The agent protocol's wire format: line frames of JSON-RPC 2.0, parsed and written.

Shared by the server side (:mod:`core.agent.dispatch`) and the client
(:mod:`core.agent.client`); it depends on nothing else of Ambry's but its errors, so
a client needs no more than this module to speak to the server.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Final

import orjson

from core.model.errors import InvalidParams, TooLarge

#: Largest frame accepted, in bytes, not counting the newline that ends it.
MAX_FRAME_BYTES: Final = 1 << 20
#: Deepest nesting of objects and arrays accepted in a frame; the request object
#: itself is level 1, so ``params`` is 2 and a tool's arguments start at 2 or 3.
MAX_NESTING_DEPTH: Final = 32

RequestId = str | int | None


class ErrorCode(IntEnum):
    """The JSON-RPC 2.0 codes; application codes are ``AmbryError.rpc_code``."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603


class FrameTooLarge(TooLarge):
    """A frame passed :data:`MAX_FRAME_BYTES`; the connection cannot be resynchronised."""


class RpcError(Exception):
    """A protocol-level failure, answered with ``code`` and the request's id."""

    def __init__(
        self, code: int, message: str, request_id: RequestId = None, data: Any = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        # A string code in ``data`` too, as application errors carry one.
        self.data = data if data is not None else {"code": ErrorCode(code).name.lower()}


# -- framing -------------------------------------------------------------------


class FrameBuffer:
    """Collects bytes as they arrive and returns them as complete lines.

    A line is returned without its ``\\n`` (and without a ``\\r`` before it).
    Once the limit is passed the buffer refuses every later byte.

    Args:
        limit: the largest line accepted, in bytes, not counting ``\\n``.
    """

    def __init__(self, limit: int = MAX_FRAME_BYTES) -> None:
        self.limit = limit
        self._buf = bytearray()
        # Bytes before this offset are known to hold no newline, so a frame that
        # arrives in many small pieces is scanned once, not once per piece.
        self._scanned = 0
        self._overflowed = False

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back until its newline arrives."""
        return len(self._buf)

    def feed(self, data: bytes) -> list[bytes]:
        """Add ``data``; return the lines it completed, oldest first.

        Raises:
            FrameTooLarge: a line (complete or not) is longer than the limit.
        """
        if self._overflowed:
            raise FrameTooLarge("the connection already sent a frame over the size limit")
        self._buf += data
        lines: list[bytes] = []
        start = 0
        while (end := self._buf.find(b"\n", max(start, self._scanned))) >= 0:
            if end - start > self.limit:
                self._overflow()
            line = bytes(self._buf[start:end])
            lines.append(line[:-1] if line.endswith(b"\r") else line)
            start = end + 1
        del self._buf[:start]
        self._scanned = len(self._buf)
        if len(self._buf) > self.limit:
            self._overflow()
        return lines

    def _overflow(self) -> None:
        self._overflowed = True
        self._buf.clear()
        raise FrameTooLarge(
            f"frame larger than {self.limit} bytes; send one JSON object per line, "
            f"each at most {self.limit} bytes"
        )


def encode_frame(message: dict[str, Any]) -> bytes:
    """One line of UTF-8 JSON.

    orjson writes it: a page of twenty search results takes 5 µs, against
    53 µs with the json module. What orjson refuses goes through the json
    module instead: a lone surrogate (legal in a
    JSON string escape, illegal in UTF-8) goes out as a ``\\udXXX`` escape,
    which decodes back to the same string, and an integer past 64 bits as
    itself. (orjson writes a NaN as null; Ambry produces none.)
    """
    try:
        return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8", "backslashreplace") + b"\n"


def result_frame(request_id: RequestId, result: Any) -> bytes:
    return encode_frame({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_frame(request_id: RequestId, code: int, message: str, data: Any = None) -> bytes:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return encode_frame({"jsonrpc": "2.0", "id": request_id, "error": error})


def too_large_frame(exc: FrameTooLarge) -> bytes:
    """The last frame a connection gets before the transport closes it."""
    return error_frame(None, exc.rpc_code, exc.message, {"code": exc.code})


# -- parsing -------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    method: str
    params: dict[str, Any]
    id: RequestId
    #: No ``id`` member: run it, never answer it.
    notification: bool


_MEMBERS = frozenset({"jsonrpc", "id", "method", "params"})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


# orjson reads an integer past 64 bits as a float, where the json module keeps it
# whole. A frame with 19 digits in a row goes to the json module; bytes.translate
# and a substring search find such a run ten times faster than a regex.
_DIGITS_ONLY = bytes(ord("0") if 0x30 <= b <= 0x39 else ord(" ") for b in range(256))
_LONG_RUN = b"0" * 19


def decode_json(data: bytes) -> Any:
    """One UTF-8 JSON document, as ``json.loads`` reads it with NaN and Infinity refused.

    orjson parses it, twice as fast. The json module parses what orjson refuses
    (a lone surrogate escape, very deep nesting, bad JSON: it accepts it or
    raises its usual ``ValueError``) and any frame with a run of 19 digits,
    which may hold an integer orjson would turn into a float.
    """
    if _LONG_RUN not in data.translate(_DIGITS_ONLY):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data.decode("utf-8"), parse_constant=_reject_constant)


def parse_request(line: bytes) -> Request:
    """Decode and check one frame.

    Raises:
        RpcError: -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that
            is not a single request object, -32602 for params that are not an object.
    """
    return request_from(decode_frame(line))


def decode_frame(line: bytes) -> Any:
    """The JSON value of one frame, not yet checked to be a request.

    Raises:
        RpcError: -32700 for bytes that are not UTF-8 JSON, -32602 for a value
            nested past :data:`MAX_NESTING_DEPTH`.
    """
    try:
        line.decode("utf-8")  # checked first, so the error can name the byte
    except UnicodeDecodeError as exc:
        raise RpcError(
            ErrorCode.PARSE_ERROR, f"parse error: invalid UTF-8 at byte {exc.start + 1}"
        ) from None
    try:
        obj = decode_json(line)
    except (ValueError, RecursionError) as exc:
        if bracket_depth(line) > MAX_NESTING_DEPTH:
            raise too_deep(None) from None
        raise RpcError(ErrorCode.PARSE_ERROR, f"parse error: {str(exc)[:200]}") from None
    if nesting_depth(obj) > MAX_NESTING_DEPTH:
        raise too_deep(_known_id(obj))
    return obj


def request_from(obj: Any) -> Request:
    """Check one decoded JSON value as a single request or notification.

    Raises:
        RpcError: -32600 for a value that is not a single request object,
            -32602 for params that are not an object.
    """
    if isinstance(obj, list):
        raise RpcError(
            ErrorCode.INVALID_REQUEST,
            "batch requests are not supported; send one request object per line",
        )
    if not isinstance(obj, dict):
        raise RpcError(ErrorCode.INVALID_REQUEST, "a request must be a JSON object")
    notification = "id" not in obj
    request_id = obj.get("id")
    if not (request_id is None or isinstance(request_id, str) or _is_int(request_id)):
        raise RpcError(ErrorCode.INVALID_REQUEST, "id must be a string, an integer or null")

    def invalid(message: str) -> RpcError:
        return RpcError(ErrorCode.INVALID_REQUEST, message, request_id)

    if obj.get("jsonrpc") != "2.0":
        raise invalid('jsonrpc must be "2.0"')
    method = obj.get("method")
    if not isinstance(method, str) or not method:
        raise invalid("method must be a non-empty string")
    extra = sorted(set(obj) - _MEMBERS)
    if extra:
        raise invalid("unexpected member(s): " + ", ".join(short_repr(k) for k in extra))
    params = obj.get("params", {})
    if isinstance(params, list):
        raise RpcError(
            ErrorCode.INVALID_PARAMS,
            f"{short_repr(method)}: params must be an object (named parameters)",
            request_id,
            {"code": InvalidParams.code, "field": "params", "rule": "type"},
        )
    if not isinstance(params, dict):
        raise invalid("params must be an object")
    return Request(method, params, request_id, notification)


def too_deep(request_id: RequestId) -> RpcError:
    """The -32602 error for a frame nested past :data:`MAX_NESTING_DEPTH`."""
    return RpcError(
        ErrorCode.INVALID_PARAMS,
        f"frame nested deeper than {MAX_NESTING_DEPTH} levels of objects and arrays; "
        "flatten the arguments",
        request_id,
        {"code": InvalidParams.code, "field": "params", "rule": "maxDepth"},
    )


def nesting_depth(value: Any, limit: int = MAX_NESTING_DEPTH) -> int:
    """Levels of objects and arrays in a decoded value, counted up to ``limit + 1``.

    Iterative and stopped early, so a hostile value costs no more than its size.
    """
    if not isinstance(value, dict | list):
        return 0
    deepest = 1
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, dict | list):
                if depth == deepest:
                    deepest += 1
                    if deepest > limit:
                        return deepest
                stack.append((child, depth + 1))
    return deepest


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_OPENERS = frozenset(b"[{")


def bracket_depth(data: bytes, limit: int = MAX_NESTING_DEPTH) -> int:
    """The bracket nesting of raw bytes that may not be valid JSON, up to ``limit + 1``.

    Strings are skipped, so brackets inside them do not count. Used on frames
    the decoder refused, to tell "nested too deep" from "not JSON".
    """
    depth = deepest = 0
    for b in _STRING.sub(b"", data).translate(None, _NOT_BRACKETS):
        if b in _OPENERS:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    break
        else:
            depth -= 1
    return deepest


def _known_id(obj: Any) -> RequestId:
    if isinstance(obj, dict):
        request_id = obj.get("id")
        if isinstance(request_id, str) or _is_int(request_id):
            return request_id
    return None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def short_repr(text: str, limit: int = 64) -> str:
    """``text`` quoted for an error message, cut to ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "…")


def check_unicode(value: Any) -> None:
    """Refuse lone surrogates, which no UTF-8 database or file can hold.

    Iterative, so a deeply nested hostile value cannot exhaust the stack.

    Raises:
        InvalidParams: naming the first field that holds one.
    """
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        match item:
            case str():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    field = path or "(arguments)"
                    raise InvalidParams(
                        f"{field} contains a lone surrogate (not valid Unicode text)",
                        field=field,
                        rule="unicode",
                    ) from None
            case dict():
                for key, child in item.items():
                    stack.append((path, key))
                    stack.append((f"{path}.{key}".lstrip("."), child))
            case list():
                stack.extend((f"{path}.{i}".lstrip("."), child) for i, child in enumerate(item))
            case _:
                pass
