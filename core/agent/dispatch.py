"""Dispatch without a transport: the method table, parameter checks and one connection's state.

:mod:`core.agent.protocol` builds the table the socket serves; each ``rpc_*``
module registers its methods on it. A handler gets the :class:`Connection` (for
``service`` and ``caller``) and the params object.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from core.agent.framing import (
    ErrorCode,
    RpcError,
    check_unicode,
    error_frame,
    parse_request,
    result_frame,
    short_repr,
)
from core.model.errors import AmbryError, InvalidParams, Unauthorized

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.service import MemoryService

log = logging.getLogger(__name__)

#: Wrong tokens tolerated on one connection before the server hangs up.
MAX_FAILED_HELLOS: Final = 3

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
    :class:`~core.model.errors.AmbryError`.

    Args:
        service: the service layer every call goes through.
        token_file: where the agent token lives (read on every ``hello``).
    """

    def __init__(self, service: MemoryService, token_file: Path | None = None) -> None:
        self.service = service
        self.token_file = token_file or service.data_dir.token_file
        self._methods: dict[str, Method] = {}

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
            result = self.call(method, request.params)
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

    def call(self, method: Method, params: Any) -> Any:
        """Run ``method`` with the data dir's current settings (socket and MCP alike)."""
        self.service.follow_config()
        return method.handler(self, params)

    def close(self) -> None:
        """The client went away: an open session ends ungracefully, its writes stay."""
        if self.closed:
            return
        self.closed = True
        session, self.session = self.session, None
        if session is not None:
            self.service.end_session(session, graceful=False)
