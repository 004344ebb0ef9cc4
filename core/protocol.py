"""The agent protocol without a transport: JSON-RPC 2.0 requests dispatched to the service.

A transport (the Qt socket server in ``desktop/``, a test, a future pipe) feeds
bytes into a :class:`~core.framing.FrameBuffer` (the wire format is in
:mod:`core.framing`), hands each complete line to its :class:`Connection` and
writes back the reply frame, if any. Nothing here blocks, owns a socket or
imports Qt, so every rule is testable without one.

Decisions (docs/protocol.md is the reference for agents):

* One JSON-RPC 2.0 object per line, UTF-8, at most :data:`~core.framing.MAX_FRAME_BYTES`
  before the newline. A longer line is :class:`~core.framing.FrameTooLarge`: the transport
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

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from core import __version__
from core.auth import read_token, token_matches
from core.errors import AmbryError, Conflict, InvalidParams, NotFound, Unauthorized
from core.framing import (
    ErrorCode,
    RpcError,
    check_unicode,
    error_frame,
    parse_request,
    result_frame,
    short_repr,
)
from core.model import Actor
from core.paths import DEFAULT_GROUP, validate_group

if TYPE_CHECKING:
    from core.service import Caller, MemoryService

log = logging.getLogger(__name__)

#: Wrong tokens tolerated on one connection before the server hangs up.
MAX_FAILED_HELLOS: Final = 3
#: Longest ``text`` accepted by ``ingest_text``, in characters.
MAX_INGEST_CHARS: Final = 100_000
#: Longest client name kept in the sessions table.
MAX_CLIENT_CHARS: Final = 200
#: Bumped when a change would break existing clients.
PROTOCOL_VERSION: Final = 1

MEMORY_TOOLS: Final = (
    "memory_store",
    "memory_search",
    "memory_brief",
    "memory_delete",
    "memory_related",
)

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
            f"{method}: unknown argument(s): " + ", ".join(short_repr(k) for k in extra),
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
                    f"unknown method {short_repr(request.method)}; available: "
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
        case "memory_related":
            return {"results": [r.to_dict() for r in service.related(caller, args)]}
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
