"""The agent protocol without a transport: framing, JSON-RPC 2.0 and dispatch.

A transport (the Qt socket server in ``desktop/``, a test, a future pipe) feeds
bytes into a :class:`FrameBuffer`, hands each complete line to its
:class:`Connection` and writes back the reply frame, if any. Nothing here
blocks, owns a socket or imports Qt, so every rule is testable without one.

Decisions (docs/protocol.md is the reference for agents):

* One JSON-RPC 2.0 object per line, UTF-8, at most :data:`MAX_FRAME_BYTES`
  before the newline. A longer line is :class:`FrameTooLarge`: the transport
  sends one error and closes, as it cannot find where the next frame starts
  without reading the rest of a hostile stream.
* Batches (JSON arrays) are refused with -32600. Line framing already lets a
  client pipeline requests, and a batch would let one frame fan out into
  unbounded work with a single combined reply.
* Requests on a connection run one at a time in arrival order and replies come
  back in that order; clients still match replies by ``id``.
* Notifications (no ``id``) run but are never answered, not even with an error.
* ``hello`` must open a session before any other method; the session's id and
  group are the provenance of every write and no call argument can change them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from core import __version__
from core.auth import read_token, token_matches
from core.errors import AmbryError, Conflict, InvalidParams, NotFound, TooLarge, Unauthorized
from core.model import Actor
from core.paths import DEFAULT_GROUP, validate_group

if TYPE_CHECKING:
    from core.service import Caller, MemoryService

log = logging.getLogger(__name__)

#: Largest frame accepted, in bytes, not counting the newline that ends it.
MAX_FRAME_BYTES: Final = 1 << 20
#: Wrong tokens tolerated on one connection before the server hangs up.
MAX_FAILED_HELLOS: Final = 3
#: Longest ``text`` accepted by ``ingest_text``, in characters.
MAX_INGEST_CHARS: Final = 100_000
#: Longest client name kept in the sessions table.
MAX_CLIENT_CHARS: Final = 200
#: Bumped when a change would break existing clients.
PROTOCOL_VERSION: Final = 1

MEMORY_TOOLS: Final = ("memory_store", "memory_search", "memory_brief", "memory_delete")

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

    orjson writes it: for a page of search results that is ten times faster
    than the json module, and a tenth of a search's round trip. What orjson
    refuses goes through the json module instead: a lone surrogate (legal in a
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


def parse_request(line: bytes) -> Request:
    """Decode and check one frame.

    Raises:
        RpcError: -32700 for bytes that are not UTF-8 JSON, -32600 for JSON that
            is not a single request object, -32602 for params that are not an object.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RpcError(
            ErrorCode.PARSE_ERROR, f"parse error: invalid UTF-8 at byte {exc.start}"
        ) from None
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise RpcError(ErrorCode.PARSE_ERROR, f"parse error: {str(exc)[:200]}") from None
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
        raise invalid("unexpected member(s): " + ", ".join(_short(k) for k in extra))
    params = obj.get("params", {})
    if isinstance(params, list):
        raise RpcError(
            ErrorCode.INVALID_PARAMS,
            f"{_short(method)}: params must be an object (named parameters)",
            request_id,
            {"code": InvalidParams.code, "field": "params", "rule": "type"},
        )
    if not isinstance(params, dict):
        raise invalid("params must be an object")
    return Request(method, params, request_id, notification)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _short(text: str, limit: int = 64) -> str:
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


# -- parameters of the methods not in the manifest -------------------------------


@dataclass(frozen=True)
class StringParam:
    name: str
    required: bool = False
    max_length: int | None = None


def check_string_params(
    method: str, params: dict[str, Any], spec: Iterable[StringParam]
) -> dict[str, str]:
    """Validate string-only params the way the manifest's validator reports errors.

    Raises:
        InvalidParams: naming the field and the rule it broke.
    """
    spec = list(spec)
    extra = sorted(set(params) - {p.name for p in spec})
    if extra:
        raise InvalidParams(
            f"{method}: unknown argument(s): " + ", ".join(_short(k) for k in extra),
            field=extra[0][:64],
            rule="additionalProperties",
        )
    values: dict[str, str] = {}
    for p in spec:
        if p.name not in params:
            if p.required:
                raise InvalidParams(
                    f"{method}: {p.name} is required", field=p.name, rule="required"
                )
            continue
        value = params[p.name]
        if not isinstance(value, str):
            raise InvalidParams(
                f"{method}: {p.name} must be of type string", field=p.name, rule="type"
            )
        if p.max_length is not None and len(value) > p.max_length:
            raise InvalidParams(
                f"{method}: {p.name} must be at most {p.max_length} characters",
                field=p.name,
                rule="maxLength",
            )
        values[p.name] = value
    return values


# -- dispatch --------------------------------------------------------------------

Handler = Callable[["Connection", dict[str, Any]], Any]


@dataclass(frozen=True)
class Method:
    name: str
    handler: Handler
    #: False only for methods an unauthenticated connection may call (``hello``).
    needs_session: bool


@dataclass(frozen=True)
class Reply:
    """What the transport does after one frame."""

    #: The frame to send back; None for notifications and blank lines.
    frame: bytes | None
    #: The method the frame named, when it named a known one.
    method: str | None = None
    ok: bool = True
    #: Hang up once ``frame`` is written (repeated wrong tokens).
    close: bool = False


class Dispatcher:
    """The method registry shared by every connection of one server.

    Later features add their methods with :meth:`register_method`; a handler
    gets the :class:`Connection` (for ``service`` and ``caller``) and the
    params object, and returns a JSON-serialisable result or raises an
    :class:`~core.errors.AmbryError`.

    Args:
        service: the service layer every call goes through.
        token_file: where the agent token lives (read on every ``hello``).
    """

    def __init__(self, service: MemoryService, token_file: Path | None = None) -> None:
        self.service = service
        self.token_file = token_file or service.data_dir.token_file
        self._methods: dict[str, Method] = {}
        register_core_methods(self)
        # Imported here: these modules import this one for the Dispatcher type.
        from core import rpc_attachments, rpc_continuity

        rpc_attachments.register(self)
        rpc_continuity.register(self)

    def register_method(self, name: str, handler: Handler, *, needs_session: bool = True) -> None:
        if name in self._methods:
            raise ValueError(f"method {name!r} is already registered")
        self._methods[name] = Method(name, handler, needs_session)

    def method(self, name: str) -> Method | None:
        return self._methods.get(name)

    @property
    def method_names(self) -> list[str]:
        return sorted(self._methods)

    def connect(self) -> Connection:
        """State for one new client connection."""
        return Connection(self)


class Connection:
    """One client's protocol state: its session (after ``hello``) and its replies.

    Args:
        dispatcher: the registry and service this connection calls into.
    """

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        self.service = dispatcher.service
        self.session: Caller | None = None
        self.failed_hellos = 0
        self.closed = False

    @property
    def caller(self) -> Caller:
        """The session opened by ``hello``."""
        if self.session is None:
            raise Unauthorized("no session on this connection: call hello first")
        return self.session

    @property
    def group(self) -> str:
        return self.session.group if self.session else ""

    def handle_line(self, line: bytes) -> Reply:
        """Run one frame and build its reply. Never raises."""
        if not line.strip():
            return Reply(None)  # blank lines are keep-alives
        try:
            request = parse_request(line)
        except RpcError as exc:
            return Reply(error_frame(exc.request_id, exc.code, exc.message, exc.data), ok=False)
        method = self.dispatcher.method(request.method)
        name = method.name if method else None
        try:
            if method is None:
                raise RpcError(
                    ErrorCode.METHOD_NOT_FOUND,
                    f"unknown method {_short(request.method)}; available: "
                    + ", ".join(self.dispatcher.method_names),
                    request.id,
                )
            if method.needs_session and self.session is None:
                raise Unauthorized(f"call hello before {method.name}")
            check_unicode(request.params)
            result = method.handler(self, request.params)
            frame = None if request.notification else result_frame(request.id, result)
            return Reply(frame, name)
        except RpcError as exc:
            frame = error_frame(request.id, exc.code, exc.message, exc.data)
        except AmbryError as exc:
            data = {k: v for k, v in exc.to_dict().items() if k != "message"}
            frame = error_frame(request.id, exc.rpc_code, exc.message, data)
        except Exception:
            # A bug, not the client's fault: log it whole, answer briefly, keep serving.
            log.exception("internal error in %s", name)
            frame = error_frame(
                request.id, ErrorCode.INTERNAL_ERROR, f"internal error in {name} (see the log)"
            )
        close = self.failed_hellos >= MAX_FAILED_HELLOS
        return Reply(None if request.notification else frame, name, ok=False, close=close)

    def close(self) -> None:
        """The client went away: an open session ends ungracefully, its writes stay."""
        if self.closed:
            return
        self.closed = True
        session, self.session = self.session, None
        if session is not None:
            self.service.end_session(session, graceful=False)


# -- the core methods ------------------------------------------------------------


def run_tool(service: MemoryService, caller: Caller, name: str, args: dict[str, Any]) -> Any:
    """Call one manifest tool; the socket and the MCP bridge share this.

    Raises:
        NotFound: ``name`` is not one of :data:`MEMORY_TOOLS`.
        AmbryError: whatever the service refuses.
    """
    match name:
        case "memory_store":
            return service.store(caller, args).to_dict()
        case "memory_search":
            return {"results": [r.to_dict() for r in service.search(caller, args)]}
        case "memory_brief":
            return service.brief(caller, args).to_dict()
        case "memory_delete":
            service.delete_tool(caller, args)
            return {"deleted": args["id"]}
        case _:
            raise NotFound(f"unknown tool {name!r}; known: {', '.join(MEMORY_TOOLS)}")


def _hello(conn: Connection, params: dict[str, Any]) -> Any:
    args = check_string_params(
        "hello",
        params,
        (
            StringParam("token", required=True),
            StringParam("group"),
            StringParam("client", max_length=MAX_CLIENT_CHARS),
            StringParam("thread", max_length=250),
        ),
    )
    if conn.session is not None:
        raise Conflict(
            f"this connection already has session {conn.session.session_id}; "
            "call session_end first or open another connection",
            session_id=conn.session.session_id,
        )
    token_file = conn.dispatcher.token_file
    if not token_matches(read_token(token_file), args["token"]):
        conn.failed_hellos += 1
        log.warning("agent hello refused: wrong token (%d on this connection)", conn.failed_hellos)
        raise Unauthorized(f"wrong token; use the one in {token_file}")
    group = validate_group(args.get("group", DEFAULT_GROUP))
    from core import continuity

    session = conn.service.open_session(group, Actor.AGENT, args.get("client", ""))
    try:
        entry = continuity.enter_thread(conn.service, session, args.get("thread"))
    except AmbryError:
        # A bad thread fails the hello as a whole: no half-open session is left.
        conn.service.end_session(session, graceful=False)
        raise
    conn.session = entry.caller
    return {
        "session_id": session.session_id,
        "group": session.group,
        "server_version": __version__,
        "protocol_version": PROTOCOL_VERSION,
        "thread": None if entry.thread is None else entry.thread.to_dict(),
        "session_handoff": (
            None if entry.session_handoff is None else entry.session_handoff.to_dict()
        ),
    }


def _tools_list(conn: Connection, params: dict[str, Any]) -> Any:
    check_string_params("tools/list", params, ())
    # Imported here so core.client, which shares the framing above, stays stdlib-only.
    from core.manifest import load_manifest

    return {"tools": [tool.to_dict() for tool in load_manifest().values()]}


def _tool(name: str) -> Handler:
    def handler(conn: Connection, params: dict[str, Any]) -> Any:
        return run_tool(conn.service, conn.caller, name, params)

    return handler


def _ingest_text(conn: Connection, params: dict[str, Any]) -> Any:
    args = check_string_params(
        "ingest_text", params, (StringParam("text", required=True, max_length=MAX_INGEST_CHARS),)
    )
    return conn.service.ingest_text(conn.caller, args["text"]).to_dict()


def _session_end(conn: Connection, params: dict[str, Any]) -> Any:
    from core import session_handoffs

    # The handoff's size limit (64 KiB of UTF-8) is checked by session_handoffs: TooLarge.
    args = check_string_params("session_end", params, (StringParam("handoff"),))
    caller = conn.caller
    stored = session_handoffs.end_session_with_handoff(conn.service, caller, args.get("handoff"))
    conn.session = None
    return {"session_id": caller.session_id, "ended": True, "handoff_stored": stored is not None}


def register_core_methods(dispatcher: Dispatcher) -> None:
    dispatcher.register_method("hello", _hello, needs_session=False)
    dispatcher.register_method("tools/list", _tools_list)
    for name in MEMORY_TOOLS:
        dispatcher.register_method(name, _tool(name))
    dispatcher.register_method("ingest_text", _ingest_text)
    dispatcher.register_method("session_end", _session_end)
