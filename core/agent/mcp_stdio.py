"""MCP's stdio transport: JSON-RPC lines on stdin, replies on stdout, one thread.

Messages are read a chunk at a time and run in arrival order. Before a chunk's
requests run, its ``notifications/cancelled`` are collected, so a request
cancelled before Ambry started it is skipped and never answered, as MCP asks.
A request that has started runs to the end (every call is a short, atomic
database transaction) and is answered; the client ignores that late answer.

A JSON array of messages is a batch: revision 2025-03-26 requires a server to
accept one, so in a session of that revision its requests run in order and their
replies go back as one array; any other revision dropped batches (or never had
them), and there the array gets a single -32600.

A line over :data:`~core.agent.framing.MAX_FRAME_BYTES` gets one error and is
skipped up to its newline (stdio cannot be reconnected, so the stream is
resynchronised instead of closed). SIGTERM, SIGINT and SIGHUP stop the server
between two requests, never inside one, and the session ends gracefully, as it
does when the client closes stdin.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any

from core.agent.framing import (
    MAX_FRAME_BYTES,
    ErrorCode,
    FrameTooLarge,
    Request,
    RpcError,
    decode_frame,
    decode_json,
    error_frame,
    request_from,
    result_frame,
    too_large_frame,
)
from core.agent.mcp_bridge import BATCH_VERSIONS, McpSession
from core.agent.signals import STOP_SIGNALS
from core.model.errors import AmbryError

if TYPE_CHECKING:
    from core.service import MemoryService

log = logging.getLogger(__name__)


class _Stop(Exception):
    """A signal arrived while the server waited for input."""


def run_stdio(
    service: MemoryService, group: str, client: str | None = None, thread: str | None = None
) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin or a signal arrives."""
    session = McpSession(service, group, client, thread)
    server = StdioServer(session, sys.stdin.fileno(), sys.stdout.fileno())
    # Anything printed by mistake must not corrupt the protocol stream.
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        server.serve()
    finally:
        sys.stdout = stdout
        session.close()
    return 0


class StdioServer:
    """The read-run-reply loop over two file descriptors.

    Args:
        session: the MCP session state that runs each request.
        in_fd: where requests come from (stdin).
        out_fd: where replies go (stdout).
    """

    def __init__(self, session: McpSession, in_fd: int, out_fd: int) -> None:
        self.session = session
        self.in_fd = in_fd
        self.out_fd = out_fd
        self._buf = bytearray()
        self._skipping = False
        self._reading = False
        self._stop = False

    def serve(self) -> None:
        previous = self._install_signals()
        try:
            while not self._stop:
                try:
                    self._reading = True
                    if self._stop:
                        break
                    chunk = os.read(self.in_fd, 1 << 16)
                except _Stop:
                    break
                finally:
                    self._reading = False
                if not chunk:
                    # A last message without its newline still counts.
                    if self._buf.strip() and not self._skipping:
                        self._run([bytes(self._buf)])
                    break
                self._run(self._lines(chunk))
        except BrokenPipeError:
            log.info("the MCP client closed stdout; stopping")
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    # -- signals ------------------------------------------------------------------------

    def _install_signals(self) -> dict[int, Any]:
        if threading.current_thread() is not threading.main_thread():
            return {}
        return {s: signal.signal(s, self._on_signal) for s in STOP_SIGNALS}

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        log.info("received %s; closing the MCP session", signal.Signals(signum).name)
        self._stop = True
        if self._reading:
            raise _Stop
        # Otherwise a request is running: it finishes, then the loop stops.

    # -- framing ------------------------------------------------------------------------

    def _lines(self, chunk: bytes) -> list[bytes]:
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            chunk, self._skipping = chunk[end + 1 :], False
        self._buf += chunk
        *complete, rest = self._buf.split(b"\n")
        self._buf = bytearray(rest)
        lines: list[bytes] = []
        for line in complete:
            if len(line) > MAX_FRAME_BYTES:
                self._too_large()
            else:
                lines.append(bytes(line[:-1] if line.endswith(b"\r") else line))
        if len(self._buf) > MAX_FRAME_BYTES:
            self._buf.clear()
            self._skipping = True
            self._too_large()
        return lines

    def _too_large(self) -> None:
        exc = FrameTooLarge(
            f"message larger than {MAX_FRAME_BYTES} bytes; it was skipped up to its newline"
        )
        self._write(too_large_frame(exc))

    # -- running ------------------------------------------------------------------------

    def _run(self, lines: list[bytes]) -> None:
        parsed: list[Request | RpcError | _Batch] = []
        cancelled: set[Any] = set()
        for line in lines:
            if not line.strip():
                continue
            try:
                message = decode_frame(line)
            except RpcError as exc:
                parsed.append(exc)
                continue
            if isinstance(message, list):
                items = [_parse(m, cancelled) for m in message]
                parsed.append(_Batch([i for i in items if i is not None], empty=not message))
            elif (item := _parse(message, cancelled)) is not None:
                parsed.append(item)
        for entry in parsed:
            if self._stop:
                return
            if isinstance(entry, _Batch):
                self._run_batch(entry, cancelled)
            elif (frame := self._reply(entry, cancelled)) is not None:
                self._write(frame)

    def _run_batch(self, batch: _Batch, cancelled: set[Any]) -> None:
        """A JSON array of messages: one array of replies, as revision 2025-03-26 asks."""
        version = self.session.version
        if version is None or version not in BATCH_VERSIONS:
            where = "before initialize" if version is None else f"in MCP {version}"
            self._write(
                error_frame(
                    None,
                    ErrorCode.INVALID_REQUEST,
                    f"batch requests are not accepted {where} (only in MCP "
                    f"{', '.join(BATCH_VERSIONS)}, after initialize); "
                    "send one request object per line",
                )
            )
            return
        if batch.empty:
            self._write(error_frame(None, ErrorCode.INVALID_REQUEST, "a batch must not be empty"))
            return
        frames: list[bytes] = []
        for item in batch.items:
            if self._stop:
                break
            if isinstance(item, Request) and item.method == "initialize":
                item = RpcError(
                    ErrorCode.INVALID_REQUEST, "initialize must not be part of a batch", item.id
                )
            if (frame := self._reply(item, cancelled)) is not None:
                frames.append(frame.rstrip(b"\n"))
        if frames:
            # Each frame is one line of JSON, so joined they are one line too.
            self._write(b"[" + b",".join(frames) + b"]\n")

    def _reply(self, item: Request | RpcError, cancelled: set[Any]) -> bytes | None:
        if isinstance(item, RpcError):
            return error_frame(item.request_id, item.code, item.message, item.data)
        if item.notification:
            return None  # initialized, cancelled, progress: nothing to answer
        if _request_id(item.id) in cancelled:
            log.info("request %r was cancelled before it started", item.id)
            return None
        return self._answer(item)

    def _answer(self, request: Request) -> bytes:
        try:
            return result_frame(request.id, self.session.handle(request.method, request.params))
        except RpcError as exc:
            return error_frame(request.id, exc.code, exc.message, exc.data)
        except AmbryError as exc:
            # initialize failing to open the session: storage, an unknown --thread.
            data = {k: v for k, v in exc.to_dict().items() if k != "message"}
            return error_frame(request.id, exc.rpc_code, exc.message, data)
        except Exception:
            log.exception("internal error in %s", request.method)
            return error_frame(
                request.id, ErrorCode.INTERNAL_ERROR, f"internal error in {request.method}"
            )

    def _write(self, frame: bytes) -> None:
        _write_all(self.out_fd, frame)


def _write_all(fd: int, frame: bytes) -> None:
    """Write all of ``frame`` to ``fd`` (a pipe may take less than asked at once)."""
    view = memoryview(frame)
    while view:
        view = view[os.write(fd, view) :]


def refuse_stdio(exc: AmbryError, in_fd: int = 0, out_fd: int = 1) -> None:
    """Answer every request on stdin with ``exc`` until the client closes it.

    For an ``ambry mcp`` that cannot start (its data dir refused): a client shows
    the error it is answered with, where a server that just exits leaves only a
    line on stderr that few clients show.
    """
    data = {k: v for k, v in exc.to_dict().items() if k != "message"}
    pending = b""
    while chunk := os.read(in_fd, 1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        if len(pending) > MAX_FRAME_BYTES:
            pending = b""
        for line in lines:
            try:
                message = decode_json(line)
            except (ValueError, RecursionError):
                continue
            answered = isinstance(message, dict) and ("result" in message or "error" in message)
            if isinstance(message, dict) and "id" in message and not answered:
                _write_all(out_fd, error_frame(message["id"], exc.rpc_code, exc.message, data))


def _request_id(value: Any) -> Any:
    # JSON ids 1 and "1" are different requests; keep their types apart.
    return (type(value).__name__, value)


@dataclass(frozen=True)
class _Batch:
    """The messages of one JSON array, each parsed (responses to Ambry left out)."""

    items: list[Request | RpcError]
    #: ``[]``: JSON-RPC answers an empty batch with one error.
    empty: bool


def _parse(message: Any, cancelled: set[Any]) -> Request | RpcError | None:
    """One decoded message as a request to run or an error to send; None to ignore it.

    A ``notifications/cancelled`` adds the id it names to ``cancelled``.
    """
    try:
        request = request_from(message)
    except RpcError as exc:
        return None if _is_response(message) else exc
    if not request.notification and request.id is None:
        # MCP requires a string or integer id; a null one could never be matched.
        return RpcError(
            ErrorCode.INVALID_REQUEST, "a request id must be a string or an integer, not null", None
        )
    if request.method == "notifications/cancelled":
        cancelled.add(_request_id(request.params.get("requestId")))
    return request


def _is_response(message: Any) -> bool:
    """A reply to a server request (Ambry sends none): ignored, never answered."""
    return (
        isinstance(message, dict)
        and "method" not in message
        and ("result" in message or "error" in message)
    )
