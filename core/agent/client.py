"""A small blocking client for the agent socket.

It uses the standard library's sockets, Ambry's own path rules (the same
socket and token locations the server uses) and wire format
(:mod:`core.agent.framing`), and never loads Qt or the MCP SDK, so an agent, a script
or a test can talk to a running Ambry in a few lines::

    with AmbryClient() as ambry:
        ambry.hello(group="main", client="my-agent")
        ambry.store("preference", "Prefers concise answers", tags=["style"])
        hits = ambry.search("concise")

Errors come back as the same :mod:`core.model.errors` classes the service raises
(``InvalidParams`` with ``field`` and ``rule``, ``RateLimited``, ...), or as
:class:`RemoteError` for protocol errors that have no class of their own.

Only Unix domain sockets (Linux, macOS) are supported: the standard library
cannot open the Windows named pipe the server listens on there.
"""

from __future__ import annotations

import itertools
import os
import socket
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from core.agent.auth import read_token
from core.agent.framing import MAX_FRAME_BYTES, FrameBuffer, RequestId, decode_json, encode_frame
from core.model import errors
from core.model.errors import AmbryError, InvalidParams, TooLarge
from core.storage.file_safety import peer_uid
from core.storage.paths import DEFAULT_GROUP, DataDir, default_socket_path, resolve_data_dir

#: Seconds to wait for the server before a call fails with ``Timeout``.
DEFAULT_TIMEOUT = 30.0


class RemoteError(AmbryError):
    """An error reply with no matching class here (parse error, unknown method, ...).

    ``rpc_code`` is the JSON-RPC code the server sent.
    """

    code = "remote_error"

    def __init__(self, rpc_code: int, message: str, data: Any = None) -> None:
        super().__init__(message, **(data if isinstance(data, dict) else {"data": data}))
        self.rpc_code = rpc_code


class ServerUnavailable(AmbryError):
    """No server answers on the socket, or it hung up."""

    code = "server_unavailable"


def _error_classes() -> dict[str, type[AmbryError]]:
    found: dict[str, type[AmbryError]] = {}
    pending: list[type[AmbryError]] = [AmbryError]
    while pending:
        cls = pending.pop()
        if cls.__module__ == errors.__name__:
            found.setdefault(cls.code, cls)
        pending.extend(cls.__subclasses__())
    return found


_BY_CODE = _error_classes()


def error_from_reply(error: Any) -> AmbryError:
    """Turn a JSON-RPC error object back into the exception the server raised."""
    if not isinstance(error, dict):
        return RemoteError(-32603, f"malformed error reply: {error!r}"[:300])
    rpc_code = error.get("code")
    message = str(error.get("message", "error"))
    data = error.get("data")
    name = data.get("code") if isinstance(data, dict) else None
    cls = _BY_CODE.get(name) if isinstance(name, str) else None
    if cls is None or cls is AmbryError or cls.rpc_code != rpc_code:
        return RemoteError(rpc_code if isinstance(rpc_code, int) else -32603, message, data)
    assert isinstance(data, dict)
    extra = {k: v for k, v in data.items() if k != "code"}
    if issubclass(cls, InvalidParams):
        return cls(message, field=extra.get("field"), rule=extra.get("rule"))
    return cls(message, **extra)


class AmbryClient:
    """A connection to the agent socket; use it from one thread.

    Args:
        socket_path: the socket (default: ``AMBRY_SOCKET`` or the runtime dir's).
        token: the agent token (default: read from the data dir's ``agent.token``).
        data_dir: where to find the token (default: ``AMBRY_DATA_DIR`` or the platform's).
        timeout: seconds to wait for a reply.

    Raises:
        InvalidParams: no ``socket_path`` was given and ``AMBRY_SOCKET`` is a relative
            path, which the server, started elsewhere, would not have resolved alike.
    """

    def __init__(
        self,
        socket_path: str | os.PathLike[str] | None = None,
        token: str | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.socket_path = Path(socket_path) if socket_path else default_socket_path()
        self._token = token
        self._data_dir = data_dir
        self.timeout = timeout
        self.session_id: str | None = None
        self.group: str | None = None
        self._sock: socket.socket | None = None
        self._frames = FrameBuffer()
        self._replies: deque[bytes] = deque()
        self._ids = itertools.count(1)

    # -- connection ----------------------------------------------------------

    def connect(self) -> AmbryClient:
        """Open the socket. Raises :class:`ServerUnavailable` when nothing listens."""
        if self._sock is not None:
            return self
        if not hasattr(socket, "AF_UNIX"):
            raise ServerUnavailable(
                "this client needs Unix domain sockets; on Windows use `ambry mcp` instead"
            )
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(str(self.socket_path))
        except (FileNotFoundError, ConnectionRefusedError) as exc:
            sock.close()
            raise ServerUnavailable(
                f"no Ambry server on {self.socket_path} ({exc.strerror}); "
                "start the Ambry app or `ambry serve`"
            ) from exc
        except OSError:
            sock.close()
            raise
        # The token goes only to the person's own server: on a shared machine another
        # user could listen on the path first (a socket folder under /tmp).
        owner = peer_uid(sock, self.socket_path)
        if os.name == "posix" and owner is not None and owner != os.geteuid():
            sock.close()
            raise ServerUnavailable(
                f"the program listening on {self.socket_path} runs as another user "
                f"(uid {owner}), so Ambry will not send it your token; set XDG_RUNTIME_DIR, "
                "or AMBRY_SOCKET to a path in a folder of your own, and start Ambry again"
            )
        self._sock = sock
        return self

    def close(self) -> None:
        """Close the socket; a session still open is ended ungracefully by the server."""
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()

    def __enter__(self) -> AmbryClient:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- calls ---------------------------------------------------------------

    def hello(self, group: str = DEFAULT_GROUP, client: str = "ambry-client") -> dict[str, Any]:
        """Open a session in ``group``; every later write carries its id."""
        token = self._token
        if token is None:
            token = read_token(DataDir(resolve_data_dir(self._data_dir)).token_file)
        result: dict[str, Any] = self.call(
            "hello", {"token": token, "group": group, "client": client}
        )
        self.session_id = result["session_id"]
        self.group = result["group"]
        return result

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send one request and wait for its result.

        Raises:
            AmbryError: the server's error, as its :mod:`core.model.errors` class.
        """
        outcome = self.call_many([(method, params)])[0]
        if isinstance(outcome, AmbryError):
            raise outcome
        return outcome

    def call_many(
        self, calls: Sequence[tuple[str, dict[str, Any] | None]]
    ) -> list[Any | AmbryError]:
        """Send every request at once (pipelined), then collect the replies.

        Returns each call's result, or the error it got, in the order given.
        """
        ids: list[int] = []
        frames: list[bytes] = []
        for method, params in calls:
            request_id = next(self._ids)
            ids.append(request_id)
            frames.append(self._request(method, params, request_id))
        self._send(b"".join(frames))
        pending = set(ids)
        outcomes: dict[RequestId, Any | AmbryError] = {}
        while pending:
            reply = self._read_reply()
            reply_id = reply.get("id")
            if reply_id not in pending:
                if "error" in reply and reply_id is None:
                    # The server could not tie this error to a request: it is about the stream.
                    raise error_from_reply(reply["error"])
                continue
            pending.discard(reply_id)
            outcomes[reply_id] = (
                error_from_reply(reply["error"]) if "error" in reply else reply.get("result")
            )
        return [outcomes[i] for i in ids]

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification: the server runs it and never replies."""
        self._send(self._request(method, params, None))

    def end_session(self, handoff: str | None = None) -> dict[str, Any]:
        params = {} if handoff is None else {"handoff": handoff}
        result: dict[str, Any] = self.call("session_end", params)
        self.session_id = None
        return result

    # -- the memory tools ----------------------------------------------------

    def store(
        self,
        entry_type: str,
        content: str,
        tags: Sequence[str] = (),
        supersedes: str | None = None,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"type": entry_type, "content": content, "tags": list(tags)}
        if supersedes is not None:
            params["supersedes"] = supersedes
        result: dict[str, Any] = self.call("memory_store", params)
        return result

    def search(self, query: str = "", **filters: Any) -> list[dict[str, Any]]:
        results: list[dict[str, Any]] = self.call("memory_search", {"query": query, **filters})[
            "results"
        ]
        return results

    def brief(self, include_provenance: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = self.call(
            "memory_brief", {"include_provenance": include_provenance}
        )
        return result

    def delete(self, entry_id: str) -> dict[str, Any]:
        result: dict[str, Any] = self.call("memory_delete", {"id": entry_id})
        return result

    # -- wire ----------------------------------------------------------------

    @staticmethod
    def _request(method: str, params: dict[str, Any] | None, request_id: int | None) -> bytes:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if request_id is not None:
            message["id"] = request_id
        frame = encode_frame(message)
        if len(frame) - 1 > MAX_FRAME_BYTES:
            raise TooLarge(
                f"{method}: request is {len(frame) - 1} bytes; the limit is {MAX_FRAME_BYTES}"
            )
        return frame

    def _connected(self) -> socket.socket:
        if self._sock is None:
            raise ServerUnavailable("not connected: call connect() first")
        return self._sock

    def _send(self, data: bytes) -> None:
        try:
            self._connected().sendall(data)
        except TimeoutError as exc:
            raise errors.Timeout(f"the server did not read within {self.timeout} s") from exc
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ServerUnavailable("the server closed the connection") from exc

    def _read_reply(self) -> dict[str, Any]:
        sock = self._connected()
        while not self._replies:
            try:
                data = sock.recv(1 << 16)
            except TimeoutError as exc:
                raise errors.Timeout(f"no reply within {self.timeout} s") from exc
            except ConnectionResetError as exc:
                raise ServerUnavailable("the server closed the connection") from exc
            if not data:
                raise ServerUnavailable("the server closed the connection")
            self._replies.extend(self._frames.feed(data))
        reply = decode_json(self._replies.popleft())
        if not isinstance(reply, dict):
            raise RemoteError(-32603, "the server sent something that is not a reply")
        return reply
