"""The agent socket: a QLocalServer in front of :mod:`core.agent.protocol`.

The same object serves agents inside the GUI and headless under ``ambry serve``
(a QCoreApplication). All the protocol rules live in ``core.agent.protocol``; this
module only moves bytes, keeps one :class:`~core.agent.dispatch.Connection` per
client, and shares the event loop fairly.

Fairness and back-pressure: each turn of the event loop runs at most one call,
taking clients in round-robin order, so a client that pipelines a thousand
requests cannot stall the GUI or the other clients for longer than one call.
A client that sends faster than it is served stops being read (Qt's read buffer
is capped, so the kernel pushes back on it); one that stops reading its replies
stops being served until they drain.

Only one server may own a socket path. On POSIX an exclusive ``flock`` on
``<socket>.lock`` says so: the kernel drops it when the owner dies, so a socket
file left behind by a crash is recognised as stale and replaced.
"""

from __future__ import annotations

import logging
import os
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.framing import FrameBuffer, FrameTooLarge, error_frame, too_large_frame
from core.agent.protocol import agent_dispatcher
from core.model.caller import Caller
from core.model.errors import AmbryError, RateLimited, StorageError
from core.service import MemoryService
from core.storage.file_safety import (
    check_socket_folder,
    is_socket,
    refuse_live_socket,
    refuse_non_socket,
    socket_path_too_long,
)
from core.storage.paths import (
    DataDir,
    default_socket_path,
    runtime_socket_path,
    socket_origin,
)
from core.storage.worker import release_freed_memory

log = logging.getLogger(__name__)

#: Clients connected at once; one more is told so and disconnected.
MAX_CLIENTS = 64
#: Complete frames queued per client before the server stops reading from it.
MAX_QUEUED_FRAMES = 64
#: Bytes Qt may buffer per client before the kernel has to hold the rest.
READ_BUFFER_BYTES = 256 * 1024
#: Unsent reply bytes per client above which its requests wait.
MAX_UNSENT_BYTES = 4 * 1024 * 1024
#: How long after the last reply the audit rows of reads are written.
AUDIT_FLUSH_MS = 50
#: How long calls must have stopped before freed memory is handed back.
TRIM_AFTER_QUIET_MS = 2000
#: How long a connection being closed gets to take its last reply.
CLOSE_GRACE_MS = 2000


@dataclass(frozen=True)
class CallInfo:
    """The last call the server handled, for the agent indicator."""

    method: str
    group: str
    ok: bool
    at: datetime


@dataclass(eq=False)
class _Client:
    socket: QLocalSocket
    conn: Connection
    frames: FrameBuffer = field(default_factory=FrameBuffer)
    lines: deque[bytes] = field(default_factory=deque)
    #: In the server's round-robin queue.
    queued: bool = False
    #: Waiting for its unsent replies to drain.
    blocked: bool = False
    #: Being closed by the server: nothing more is read or run.
    closing: bool = False
    #: The peer hung up; lines already received still run.
    gone: bool = False
    finished: bool = False
    last_call: CallInfo | None = None


class AgentServer(QObject):
    """Serves the agent protocol on a local socket.

    Args:
        service: the service every call goes through (used from this thread only).
        data_dir: where the agent token lives.
        socket_path: the socket (default: ``AMBRY_SOCKET`` or the runtime dir's).
        parent: the owning QObject.
        named_by: the option that gave ``socket_path`` (``--socket``), for a refusal
            to name; by default ``AMBRY_SOCKET`` when it is set, else the runtime dir.

    Signals:
        clients_changed(int): the number of connected clients changed.
        call_handled(str, str, bool): a frame was handled: method ('' when the
            frame named none that exists), group ('' before hello), success.
    """

    clients_changed = Signal(int)
    call_handled = Signal(str, str, bool)

    def __init__(
        self,
        service: MemoryService,
        data_dir: DataDir,
        socket_path: Path | None = None,
        parent: QObject | None = None,
        named_by: str | None = None,
    ) -> None:
        super().__init__(parent)
        self._service = service
        self._data_dir = data_dir
        self._path = socket_path or default_socket_path()
        self._named_by = named_by or socket_origin()
        self.dispatcher = agent_dispatcher(service, data_dir.token_file)
        self._server: QLocalServer | None = None
        self._lock_fd: int | None = None
        self._clients: list[_Client] = []
        self._ready: deque[_Client] = deque()
        self._last_call: CallInfo | None = None
        self._pump_timer = QTimer(self)
        self._pump_timer.setSingleShot(True)
        self._pump_timer.setInterval(0)
        self._pump_timer.timeout.connect(self._pump)
        # Audit rows of reads are written once the replies are out (see GroupStore.audit_read).
        service.defer_read_audit(True)
        self._audit_timer = QTimer(self)
        self._audit_timer.setSingleShot(True)
        self._audit_timer.setInterval(AUDIT_FLUSH_MS)
        self._audit_timer.timeout.connect(self._flush_audit)
        # Once calls stop for a while, the heap's freed pages go back to the system:
        # a burst from many clients should not set the server's size for hours.
        self._trim_timer = QTimer(self)
        self._trim_timer.setSingleShot(True)
        self._trim_timer.setInterval(TRIM_AFTER_QUIET_MS)
        self._trim_timer.timeout.connect(release_freed_memory)

    # -- public --------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._path

    @property
    def token_file(self) -> Path:
        return self._data_dir.token_file

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def sessions(self) -> list[tuple[Caller | None, CallInfo | None]]:
        """Each connected client's session (None before ``hello``) and last call."""
        return [(c.conn.session, c.last_call) for c in self._clients if not c.finished]

    @property
    def is_listening(self) -> bool:
        return self._server is not None and self._server.isListening()

    @property
    def last_call(self) -> CallInfo | None:
        return self._last_call

    def start(self) -> None:
        """Listen on :attr:`path`.

        Raises:
            StorageError: another instance serves this socket, or it cannot be created.
        """
        if self._server is not None:
            return
        path = self._path
        too_long = socket_path_too_long(path, self._named_by)
        if too_long is not None:
            raise StorageError(too_long)
        try:
            made = not path.parent.exists()
            if made:
                path.parent.mkdir(parents=True, mode=0o700)
            check_socket_folder(path.parent, own=made or path == runtime_socket_path())
            self._data_dir.ensure()
            load_or_create_token(self._data_dir.token_file)
        except OSError as exc:
            raise StorageError(f"cannot prepare the agent socket {path}: {exc}") from exc
        self._acquire_lock()
        try:
            self._listen()
        except BaseException:
            self._release_lock()
            raise
        log.info("serving agents on %s", path)

    def stop(self) -> None:
        """Disconnect every client (their sessions end ungracefully) and stop listening."""
        self._pump_timer.stop()
        for client in list(self._clients):
            client.closing = True
            client.lines.clear()
            client.socket.abort()
            self._finish(client)
        self._ready.clear()
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None
            if is_socket(self._path):
                self._path.unlink()
        self._release_lock()
        self._audit_timer.stop()
        self._flush_audit()

    # -- listening -------------------------------------------------------------

    def _acquire_lock(self) -> None:
        if os.name != "posix":
            self._refuse_if_live()
            return
        import fcntl

        lock_path = self._path.with_name(self._path.name + ".lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            pid = f" (pid {owner})" if owner.isdigit() else ""
            raise StorageError(
                f"another Ambry{pid} is already serving agents on {self._path}; "
                "quit it first, or set AMBRY_SOCKET to use another socket"
            ) from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._lock_fd = fd

    def _release_lock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            # The file stays: unlinking it would let a newcomer lock a fresh inode
            # while a third process still waits on the old one.
            os.close(fd)

    def _refuse_if_live(self) -> None:
        """Without flock (Windows), a server that answers a connect is live."""
        probe = QLocalSocket()
        probe.connectToServer(str(self._path))
        live = probe.waitForConnected(500)
        probe.abort()
        if live:
            raise StorageError(
                f"another Ambry is already serving agents on {self._path}; quit it first, "
                "or set AMBRY_SOCKET to use another socket"
            )

    def _listen(self) -> None:
        # We hold the lock, so a socket there was left by a crash, unless another
        # program listens on it; anything else is someone's file and is never deleted.
        refuse_non_socket(self._path)
        if os.name == "posix":
            refuse_live_socket(self._path)
        QLocalServer.removeServer(str(self._path))
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(str(self._path)):
            message = server.errorString()
            server.deleteLater()
            raise StorageError(f"cannot listen on {self._path}: {message}")
        if os.name == "posix":
            os.chmod(self._path, 0o600)
        server.newConnection.connect(self._on_new_connection)
        self._server = server

    # -- connections -----------------------------------------------------------

    def _on_new_connection(self) -> None:
        assert self._server is not None
        while self._server.hasPendingConnections():
            sock = self._server.nextPendingConnection()
            if len(self._clients) >= MAX_CLIENTS:
                busy = RateLimited(f"too many agent connections (limit {MAX_CLIENTS}); retry later")
                sock.write(error_frame(None, busy.rpc_code, busy.message, {"code": busy.code}))
                sock.disconnected.connect(sock.deleteLater)
                _hang_up(sock)
                continue
            sock.setReadBufferSize(READ_BUFFER_BYTES)
            client = _Client(sock, self.dispatcher.connect())
            self._clients.append(client)
            sock.readyRead.connect(lambda c=client: self._read(c))
            sock.bytesWritten.connect(lambda _n, c=client: self._on_bytes_written(c))
            sock.disconnected.connect(lambda c=client: self._on_disconnected(c))
            self.clients_changed.emit(len(self._clients))
            # Bytes may have arrived before the signals were connected.
            self._read(client)

    def _read(self, client: _Client) -> None:
        sock = client.socket
        if client.closing or not sock.isOpen():
            return  # nothing more from this client runs
        while len(client.lines) < MAX_QUEUED_FRAMES and sock.bytesAvailable() > 0:
            data = bytes(sock.read(READ_BUFFER_BYTES).data())
            try:
                client.lines.extend(client.frames.feed(data))
            except FrameTooLarge as exc:
                log.warning("agent connection closed: %s", exc.message)
                self._send(client, too_large_frame(exc))
                self._close(client)
                return
        if client.lines:
            self._schedule(client)

    def _on_bytes_written(self, client: _Client) -> None:
        if client.blocked and client.socket.bytesToWrite() < MAX_UNSENT_BYTES // 2:
            client.blocked = False
            self._schedule(client)

    def _on_disconnected(self, client: _Client) -> None:
        client.gone = True
        self._read(client)
        if not client.lines or client.closing:
            self._finish(client)

    def _close(self, client: _Client) -> None:
        """Hang up once the last reply is out (or after a grace period)."""
        client.closing = True
        client.lines.clear()
        if not client.gone:
            _hang_up(client.socket)

    def _finish(self, client: _Client) -> None:
        if client.finished:
            return
        client.finished = True
        self._clients.remove(client)
        try:
            client.conn.close()
        except AmbryError as exc:
            log.error("could not end the session of a disconnected agent: %s", exc.message)
        sock = client.socket
        # The lambdas hold this server; dropping them now, not inside the socket's
        # destructor, keeps the server from being freed while its child is half-deleted.
        for signal_ in (sock.readyRead, sock.bytesWritten, sock.disconnected):
            signal_.disconnect()
        sock.deleteLater()
        self.clients_changed.emit(len(self._clients))

    # -- calls -----------------------------------------------------------------

    def _schedule(self, client: _Client) -> None:
        if not client.queued and not client.finished:
            client.queued = True
            self._ready.append(client)
        if not self._pump_timer.isActive():
            self._pump_timer.start()

    def _pump(self) -> None:
        """Run one call for the client at the head of the queue, then yield."""
        if not self._ready:
            return
        client = self._ready.popleft()
        client.queued = False
        if client.finished or client.closing:
            pass
        elif not client.gone and client.socket.bytesToWrite() > MAX_UNSENT_BYTES:
            client.blocked = True
        elif client.lines:
            self._run(client, client.lines.popleft())
            if len(client.lines) < MAX_QUEUED_FRAMES:
                self._read(client)
            if client.lines and not client.closing:
                self._schedule(client)
            elif client.gone:
                self._finish(client)
        if self._ready:
            self._pump_timer.start()
        elif not self._audit_timer.isActive():
            self._audit_timer.start()

    def _flush_audit(self) -> None:
        self._trim_timer.start()
        try:
            self._service.flush_read_audit()
        except AmbryError as exc:  # a full disk: the next write reports it to its caller
            log.warning("could not write the audit rows of reads: %s", exc)

    def _run(self, client: _Client, line: bytes) -> None:
        group_before = client.conn.group
        reply = client.conn.handle_line(line)
        if reply.frame is not None:
            self._send(client, reply.frame)
        if reply.close:
            self._close(client)
        if reply.method is None and reply.frame is None:
            return  # a blank keep-alive line
        method = reply.method or ""
        group = client.conn.group or group_before
        self._last_call = client.last_call = CallInfo(method, group, reply.ok, datetime.now(UTC))
        self.call_handled.emit(method, group, reply.ok)

    def _send(self, client: _Client, frame: bytes) -> None:
        if client.gone or client.finished:
            return  # nobody to read it
        client.socket.write(frame)
        client.socket.flush()


def _hang_up(sock: QLocalSocket) -> None:
    """Disconnect once pending replies are written; abort if the peer will not take them."""
    # The timer is the socket's child, so it dies with the socket and never fires late.
    timer = QTimer(sock)
    timer.setSingleShot(True)
    timer.timeout.connect(lambda: sock.abort())  # abort() is not a slot: wrap it
    timer.start(CLOSE_GRACE_MS)
    sock.disconnectFromServer()
