"""The agent socket end to end: a real QLocalServer, real Unix sockets, real clients.

The server lives on the Qt main thread, as in the app; the blocking clients run
in worker threads while ``qtbot.waitUntil`` spins the event loop.
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

import desktop.server.agent_server
from core.agent.auth import read_token
from core.agent.client import AmbryClient, ServerUnavailable
from core.agent.framing import MAX_FRAME_BYTES, FrameBuffer
from core.model.config import Config
from core.model.entries import EntryFilter
from core.model.errors import StorageError
from core.service import MemoryService
from core.storage.paths import DataDir
from desktop.server.agent_server import AgentServer
from tests.desktop.conftest import AMBRY, start_serve

T = TypeVar("T")


@pytest.fixture
def service(data_dir: DataDir) -> Iterator[MemoryService]:
    # Roomy rate limits: these tests are about the transport, not the write policy.
    svc = MemoryService(data_dir, Config(rate_stores_per_hour=10_000, rate_stores_per_day=10_000))
    yield svc
    svc.close()


@pytest.fixture
def server(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> Iterator[AgentServer]:
    srv = AgentServer(service, data_dir, sock_dir / "run" / "agent.sock")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=8) as executor:
        yield executor


@pytest.fixture
def run(qtbot: QtBot, pool: ThreadPoolExecutor) -> Callable[..., Any]:
    """Run a blocking function in a worker thread while the Qt loop serves it."""

    def runner(fn: Callable[..., T], *args: Any, timeout: float = 30) -> T:
        future: Future[T] = pool.submit(fn, *args)
        qtbot.waitUntil(future.done, timeout=int(timeout * 1000))
        return future.result()

    return runner


def client_for(server: AgentServer, data_dir: DataDir) -> AmbryClient:
    return AmbryClient(server.path, data_dir=data_dir.root, timeout=30)


def raw_connect(server: AgentServer) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(30)
    sock.connect(str(server.path))
    return sock


class Replies:
    """Reply lines from a raw socket, keeping a partial line for the next read."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.frames = FrameBuffer()
        self.lines: list[bytes] = []

    def read(self, count: int | None = None) -> list[dict[str, Any]]:
        """``count`` replies, or every reply until the server hangs up."""
        while count is None or len(self.lines) < count:
            try:
                data = self.sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            self.lines += self.frames.feed(data)
        taken = self.lines if count is None else self.lines[:count]
        self.lines = self.lines[len(taken) :]
        return [json.loads(line) for line in taken]


def read_lines(sock: socket.socket, count: int | None = None) -> list[dict[str, Any]]:
    return Replies(sock).read(count)


def request(method: str, params: Any = None, request_id: Any = 1) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "id": request_id}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode() + b"\n"


def session_states(service: MemoryService, group: str = "main") -> dict[str, str]:
    return dict(service.store_for(group).execute("SELECT id, end_state FROM sessions"))


# -- the Qt binding ------------------------------------------------------------------


def test_qt_calls_keep_their_references_to_none(qapp: Any) -> None:
    # PySide6 6.12.0 on CPython 3.11 drops a reference to None (and True/False)
    # on calls such as QTimer.start: a server aborts after a few thousand
    # requests ("deallocating None"). CPython 3.12+ makes None immortal, and
    # PySide6 6.11 keeps its references.
    timer = QTimer()
    before = sys.getrefcount(None)
    for _ in range(1000):
        timer.start(0)
        timer.stop()
    assert sys.getrefcount(None) > before - 100, "PySide6 leaks references to None"


# -- basics ------------------------------------------------------------------------


def test_round_trip_with_signals_and_provenance(
    server: AgentServer,
    data_dir: DataDir,
    service: MemoryService,
    run: Callable[..., Any],
    qtbot: QtBot,
) -> None:
    counts: list[int] = []
    calls: list[tuple[str, str, bool]] = []
    server.clients_changed.connect(counts.append)
    server.call_handled.connect(lambda m, g, ok: calls.append((m, g, ok)))

    def agent() -> dict[str, Any]:
        with client_for(server, data_dir) as c:
            hello = c.hello("main", "round-trip")
            stored = c.store("preference", "Answers in French", tags=["language"])
            hits = c.search("french")
            brief = c.brief()
            tools = c.call("tools/list")["tools"]
            c.end_session()
            return {"hello": hello, "stored": stored, "hits": hits, "brief": brief, "tools": tools}

    out = run(agent)
    entry = service.get("main", out["stored"]["id"])
    assert entry.provenance.session_id == out["hello"]["session_id"]
    assert [h["id"] for h in out["hits"]] == [entry.id]
    assert "Answers in French" in out["brief"]["markdown"]
    assert len(out["tools"]) >= 4
    assert session_states(service)[out["hello"]["session_id"]] == "ended"
    assert calls[:2] == [("hello", "main", True), ("memory_store", "main", True)]
    assert calls[-1] == ("session_end", "main", True)
    assert server.last_call is not None and server.last_call.method == "session_end"
    qtbot.waitUntil(lambda: server.client_count == 0)
    assert counts == [1, 0]


def test_socket_token_and_folder_are_owner_only(server: AgentServer, data_dir: DataDir) -> None:
    assert stat.S_ISSOCK(server.path.stat().st_mode)
    assert stat.S_IMODE(server.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(server.path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(data_dir.token_file.stat().st_mode) == 0o600


def test_a_second_server_on_the_same_socket_refuses_to_start(
    server: AgentServer, service: MemoryService, data_dir: DataDir, run: Callable[..., Any]
) -> None:
    second = AgentServer(service, data_dir, server.path)
    with pytest.raises(StorageError, match=f"pid {os.getpid()}.*already serving agents"):
        second.start()
    assert not second.is_listening
    assert run(lambda: client_for(server, data_dir).connect().close()) is None


def test_a_stale_socket_from_a_crash_is_replaced(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path, run: Callable[..., Any]
) -> None:
    path = sock_dir / "agent.sock"
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(path))
    leftover.close()  # the file stays, nothing listens: what a crash leaves
    with pytest.raises(ServerUnavailable):
        AmbryClient(path).connect()
    srv = AgentServer(service, data_dir, path)
    srv.start()
    try:

        def hello() -> str:
            with AmbryClient(path, data_dir=data_dir.root) as c:
                return str(c.hello()["session_id"])

        assert run(hello).startswith("sess-")
    finally:
        srv.stop()
    assert not path.exists()


def test_a_socket_path_too_long_is_a_clear_error(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> None:
    with pytest.raises(StorageError, match="AMBRY_SOCKET"):
        AgentServer(service, data_dir, sock_dir / ("x" * 120)).start()


# -- sessions ----------------------------------------------------------------------


def test_a_client_that_vanishes_leaves_an_abandoned_session_and_its_writes(
    server: AgentServer,
    data_dir: DataDir,
    service: MemoryService,
    run: Callable[..., Any],
    qtbot: QtBot,
) -> None:
    def agent() -> tuple[str, str]:
        c = client_for(server, data_dir).connect()
        session = c.hello()["session_id"]
        entry = c.store("fact", "The NAS is in the hall cupboard")["id"]
        c.close()  # no session_end
        return session, entry

    session_id, entry_id = run(agent)
    qtbot.waitUntil(lambda: session_states(service).get(session_id) == "abandoned")
    assert service.get("main", entry_id).provenance.session_id == session_id


def test_requests_sent_just_before_hanging_up_still_run(
    server: AgentServer,
    data_dir: DataDir,
    service: MemoryService,
    run: Callable[..., Any],
    qtbot: QtBot,
) -> None:
    token = read_token(data_dir.token_file)
    frames = request("hello", {"token": token}) + b"".join(
        json.dumps(
            {"jsonrpc": "2.0", "method": "memory_store", "params": {"type": "fact", "content": c}}
        ).encode()
        + b"\n"
        for c in ("fire and forget one", "fire and forget two")
    )
    frames += request("session_end", {}, 2)

    def fire() -> None:
        with raw_connect(server) as sock:
            sock.sendall(frames)

    run(fire)
    qtbot.waitUntil(lambda: "ended" in session_states(service).values())
    contents = {r.content for r in service.search_entries("main", "forget", EntryFilter())}
    assert contents == {"fire and forget one", "fire and forget two"}


def test_stop_ends_open_sessions_ungracefully_and_removes_the_socket(
    server: AgentServer, data_dir: DataDir, service: MemoryService, run: Callable[..., Any]
) -> None:
    c = client_for(server, data_dir)
    try:
        session_id = run(lambda: c.connect().hello()["session_id"])
        server.stop()
        assert session_states(service)[session_id] == "abandoned"
        assert not server.path.exists() and not server.is_listening
        with pytest.raises(ServerUnavailable):
            c.call("memory_search", {})
    finally:
        c.close()


def test_too_many_clients_are_told_so(
    server: AgentServer,
    data_dir: DataDir,
    run: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(desktop.server.agent_server, "MAX_CLIENTS", 1)

    def two() -> list[dict[str, Any]]:
        with client_for(server, data_dir) as first, raw_connect(server) as second:
            first.hello()
            return read_lines(second)  # told, then hung up on

    [reply] = run(two)
    assert reply["error"]["code"] == -32003
    assert "too many agent connections" in reply["error"]["message"]


# -- framing over the wire ------------------------------------------------------------


def test_pipelined_requests_are_answered_in_order(
    server: AgentServer, data_dir: DataDir, run: Callable[..., Any]
) -> None:
    token = read_token(data_dir.token_file)

    def pipeline() -> list[dict[str, Any]]:
        with raw_connect(server) as sock:
            frames = request("hello", {"token": token}, "h")
            frames += b"".join(
                request("memory_store", {"type": "fact", "content": f"pipelined {i}"}, i)
                for i in range(50)
            )
            sock.sendall(frames)
            return read_lines(sock, 51)

    replies = run(pipeline)
    assert [r["id"] for r in replies] == ["h", *range(50)]
    assert all("result" in r for r in replies)

    def many() -> list[Any]:
        with client_for(server, data_dir) as c:
            c.hello()
            return c.call_many([("memory_search", {"query": f"pipelined {i}"}) for i in range(20)])

    assert all(len(r["results"]) >= 1 for r in run(many))


def test_a_frame_dribbled_byte_by_byte_is_reassembled(
    server: AgentServer, data_dir: DataDir, run: Callable[..., Any]
) -> None:
    token = read_token(data_dir.token_file)

    def dribble() -> list[dict[str, Any]]:
        with raw_connect(server) as sock:
            for byte in request("hello", {"token": token, "client": "slow typist"}):
                sock.send(bytes([byte]))
                time.sleep(0.0005)
            return read_lines(sock, 1)

    assert run(dribble)[0]["result"]["session_id"].startswith("sess-")


def test_an_oversized_frame_closes_only_that_connection(
    server: AgentServer, data_dir: DataDir, run: Callable[..., Any]
) -> None:
    def oversized() -> list[dict[str, Any]]:
        with raw_connect(server) as sock:
            sock.sendall(b"x" * (MAX_FRAME_BYTES + 1))
            return read_lines(sock)  # until the server hangs up

    with client_for(server, data_dir) as bystander:
        run(bystander.hello)
        replies = run(oversized)
        assert run(bystander.search) == []
    assert len(replies) == 1 and replies[0]["error"]["code"] == -32004
    assert replies[0]["id"] is None


def test_repeated_wrong_tokens_hang_up(server: AgentServer, run: Callable[..., Any]) -> None:
    def guess() -> list[dict[str, Any]]:
        with raw_connect(server) as sock:
            sock.sendall(b"".join(request("hello", {"token": f"g{i}"}, i) for i in range(10)))
            return read_lines(sock)

    replies = run(guess)
    assert [r["error"]["code"] for r in replies] == [-32001] * 3


# -- load -----------------------------------------------------------------------------


def test_eight_clients_writing_at_once_lose_nothing(
    server: AgentServer,
    data_dir: DataDir,
    service: MemoryService,
    pool: ThreadPoolExecutor,
    qtbot: QtBot,
) -> None:
    writes = 200

    def agent(n: int) -> tuple[str, list[str]]:
        with client_for(server, data_dir) as c:
            session = c.hello("main", f"writer-{n}")["session_id"]
            ids = [c.store("fact", f"writer {n} observation {i}")["id"] for i in range(writes)]
            c.end_session()
            return session, ids

    futures = [pool.submit(agent, n) for n in range(8)]
    qtbot.waitUntil(lambda: all(f.done() for f in futures), timeout=120_000)
    results = [f.result() for f in futures]
    rows = list(
        service.store_for("main").execute("SELECT id, session_id, content FROM memory_entries")
    )
    assert len(rows) == 8 * writes
    by_id = {r[0]: r for r in rows}
    for n, (session, ids) in enumerate(results):
        assert len(set(ids)) == writes
        assert {by_id[i][1] for i in ids} == {session}
        assert {by_id[i][2] for i in ids} == {f"writer {n} observation {i}" for i in range(writes)}


# -- hostile input ----------------------------------------------------------------------


def _hostile_frames(rng: random.Random, count: int) -> list[bytes]:
    """Malformed, truncated, wrong-typed, out-of-order and oversized-field frames.

    None is a valid write: every store or delete breaks the schema somewhere.
    """
    methods = [
        "memory_store",
        "memory_delete",
        "memory_search",
        "hello",
        "session_end",
        "ingest_text",
        "tools/list",
        "memory_brief",
        "rpc.discover",
        "",
        "\u202e",
    ]
    junk_values: list[Any] = [
        None,
        True,
        0,
        -1,
        2**70,
        1.5,
        "",
        "x" * 3000,
        [],
        {},
        [1, "a"],
        {"$ref": "#"},
        "\ud800",
        "☃" * 700,
    ]

    def good() -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": rng.randrange(10**6),
            "method": "memory_store",
            "params": {"type": "fact", "content": "never stored"},
        }

    def bad_store_params() -> dict[str, Any]:
        params = {
            "type": rng.choice(["fact", "opinion", 3, None]),
            "content": rng.choice([*junk_values, "y" * 2001]),
            "tags": rng.choice([["t"] * 11, "t", [1], ["z" * 51], None]),
        }
        if rng.random() < 0.3:
            params[rng.choice(["group", "session_id", "provenance", "id"])] = "main"
        return params

    frames: list[bytes] = []
    for _ in range(count):
        kind = rng.randrange(12)
        msg: Any
        match kind:
            case 0:
                frames.append(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
                continue
            case 1:
                whole = json.dumps(good()).encode()
                frames.append(whole[: rng.randrange(1, len(whole))])
                continue
            case 2:
                msg = [good() for _ in range(rng.randrange(0, 3))]
            case 3:
                msg = good()
                msg["params"] = bad_store_params()
            case 4:
                msg = good()
                msg["params"] = bad_store_params()
                msg[rng.choice(["jsonrpc", "method", "id", "params"])] = rng.choice(junk_values)
            case 5:
                msg = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": rng.choice(methods),
                    "params": rng.choice(junk_values),
                }
            case 6:
                msg = {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "memory_delete",
                    "params": {"id": rng.choice([*junk_values[:9], "mem-nope"])},
                }
            case 7:
                msg = good()
                msg["params"] = bad_store_params()
                del msg["id"]  # a bad notification: no reply at all
            case 8:
                frames.append(b"[" * rng.randrange(1, 50_000))
                continue
            case 9:
                # Never a string token: three wrong ones would (rightly) end the connection.
                msg = {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "hello",
                    "params": {
                        "token": rng.choice([None, 7, [], {}, "\ud800"]),
                        "group": "../../etc",
                    },
                }
            case 10:
                msg = {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "ingest_text",
                    "params": {"text": rng.choice([5, None, "m" * 100_001])},
                }
            case _:
                frames.append(
                    rng.choice(
                        [
                            b"",
                            b"\r",
                            b"{}",
                            b"null",
                            b"1e999999",
                            b'"\\ud800"',
                            b'{"jsonrpc":"2.0","id":1,"method":"x"}garbage',
                        ]
                    )
                )
                continue
        frames.append(json.dumps(msg).encode())
    return frames


def _dump(service: MemoryService, skip_sessions: set[str]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table; the fuzz connection's own session rows left out."""
    store = service.store_for("main")
    tables = [
        r[0]
        for r in store.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    dump: dict[str, list[tuple[Any, ...]]] = {}
    for table in tables:
        rows = list(store.execute(f'SELECT * FROM "{table}"'))
        if table in ("sessions", "audit_log"):
            column = 0 if table == "sessions" else 4  # sessions.id, audit_log.session_id
            rows = [r for r in rows if r[column] not in skip_sessions]
        dump[table] = sorted(rows, key=repr)
    return dump


def test_thousands_of_hostile_frames_change_nothing(
    server: AgentServer,
    data_dir: DataDir,
    service: MemoryService,
    run: Callable[..., Any],
    pool: ThreadPoolExecutor,
    qtbot: QtBot,
) -> None:
    token = read_token(data_dir.token_file)

    def setup() -> None:
        with client_for(server, data_dir) as c:
            c.hello()
            for i in range(10):
                c.store("fact", f"baseline fact {i}", tags=["base"])
            c.end_session()

    run(setup)
    fuzzer = raw_connect(server)
    stranger = raw_connect(server)
    try:
        fuzzer.sendall(request("hello", {"token": token, "client": "fuzzer"}, "hi"))
        fuzz_session = run(read_lines, fuzzer, 1)[0]["result"]["session_id"]
        before = _dump(service, {fuzz_session})

        def attack(sock: socket.socket, seed: int) -> int:
            rng = random.Random(seed)
            replies = Replies(sock)
            answered = 0
            for batch in range(15):
                frames = _hostile_frames(rng, 100)
                stream = b"\n".join(frames) + b"\n" + request("tools/list", None, f"sync-{batch}")
                pos = 0
                while pos < len(stream):  # odd-sized writes split frames anywhere
                    step = rng.randrange(1, 4096)
                    sock.sendall(stream[pos : pos + step])
                    pos += step
                # Replies come in request order, so the sync reply is the batch's last.
                while True:
                    [reply] = replies.read(1)
                    answered += 1
                    if reply.get("id") == f"sync-{batch}":
                        break
            return answered

        def oversize() -> list[dict[str, Any]]:
            with raw_connect(server) as sock:
                head = b'{"jsonrpc":"2.0","id":1,"method":"memory_store","params":{"x":"'
                sock.sendall(head + b"a" * (MAX_FRAME_BYTES + 1 - len(head)))
                return read_lines(sock)

        attacks = [pool.submit(attack, fuzzer, 1), pool.submit(attack, stranger, 2)]
        oversized = [pool.submit(oversize) for _ in range(2)]
        qtbot.waitUntil(lambda: all(f.done() for f in attacks + oversized), timeout=120_000)
        answered = [f.result() for f in attacks]
        closings = [f.result() for f in oversized]
    finally:
        fuzzer.close()
        stranger.close()
    assert min(answered) > 1000
    assert [[r["error"]["code"] for r in c] for c in closings] == [[-32004], [-32004]]

    def still_serving() -> int:
        with client_for(server, data_dir) as c:
            c.hello()
            return len(c.search("baseline", limit=50))

    assert run(still_serving) == 10
    # A fuzzed frame may have been a valid session_end; either way the session is over.
    qtbot.waitUntil(lambda: session_states(service).get(fuzz_session) != "open")
    assert _dump(service, {fuzz_session} | _sessions_since(service, before)) == before


def _sessions_since(service: MemoryService, before: dict[str, Any]) -> set[str]:
    """Sessions opened after the snapshot by valid hellos (the final check's own)."""
    known = {r[0] for r in before["sessions"]}
    return {s for s in session_states(service) if s not in known}


# -- headless ---------------------------------------------------------------------------


@pytest.mark.slow
def test_ambry_serve_runs_headless_refuses_a_twin_and_stops_on_sigterm(
    tmp_path: Path, sock_dir: Path
) -> None:
    served = start_serve(tmp_path, sock_dir)
    proc, data, sock, env = served.proc, served.data, served.sock, served.env
    try:
        client = AmbryClient(sock, data_dir=data)
        with client:
            session_id = client.hello("main", "headless")["session_id"]
            client.store("fact", "Served without a display")
            twin = subprocess.run(
                [str(AMBRY), "serve"], env=env, capture_output=True, text=True, timeout=60
            )
            assert twin.returncode == 1
            assert "already serving agents" in twin.stderr and str(sock) in twin.stderr
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0
    assert f"serving agents on {sock}" in stderr and "agent.token" in stderr
    assert not sock.exists()
    svc = MemoryService(DataDir(data))
    try:
        assert session_states(svc)[session_id] == "abandoned"
        hits = svc.search_entries("main", "display", EntryFilter())
        assert [r.content for r in hits] == ["Served without a display"]
    finally:
        svc.close()


@pytest.mark.slow
def test_ambry_serve_stops_cleanly_when_its_terminal_hangs_up(
    tmp_path: Path, sock_dir: Path
) -> None:
    # SIGHUP (the terminal or ssh login that started it going away) used to end it
    # on the spot: exit status -1, the socket file left behind, sessions left open.
    served = start_serve(tmp_path, sock_dir)
    proc, data, sock = served.proc, served.data, served.sock
    try:
        with AmbryClient(sock, data_dir=data) as client:
            session_id = client.hello("main", "hung-up")["session_id"]
            client.store("fact", "Written before the hang-up")
            client.search("hang-up")
            proc.send_signal(signal.SIGHUP)
            _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert stderr.rstrip().endswith("stopped")
    assert not sock.exists()
    _ended_cleanly(data, session_id)


def _ended_cleanly(data: Path, session_id: str) -> None:
    """The stop ended the agent's session and wrote the audit rows of its last calls."""
    svc = MemoryService(DataDir(data))
    try:
        assert session_states(svc)[session_id] == "abandoned"
        actions = {a for (a,) in svc.store_for("main").execute("SELECT action FROM audit_log")}
        assert {"store", "search"} <= actions
    finally:
        svc.close()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX stop signals")
@pytest.mark.parametrize("stop", ["SIGTERM", "SIGHUP"])
def test_the_app_closes_cleanly_on_a_stop_signal(tmp_path: Path, sock_dir: Path, stop: str) -> None:
    # A logout or `kill` used to end the app on the spot: its agents' sessions were
    # left open, the socket file behind and the last reads unaudited.
    data = tmp_path / "app-data"
    data.mkdir()
    sock = sock_dir / "app.sock"
    env = {
        **os.environ,
        "AMBRY_SOCKET": str(sock),
        "AMBRY_DATA_DIR": str(data),
        "QT_QPA_PLATFORM": "offscreen",
    }
    proc = subprocess.Popen(
        [str(AMBRY)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with AmbryClient(sock, data_dir=data) as client:
            session_id = client.hello("main", "logged-out")["session_id"]
            client.store("fact", "Written before the logout")
            client.search("logout")
            proc.send_signal(getattr(signal, stop))
            _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stderr
    assert not sock.exists()
    _ended_cleanly(data, session_id)
