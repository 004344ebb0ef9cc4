"""Shared helpers for the benchmark scripts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def setup_path() -> None:
    for p in (str(ROOT), str(ROOT / "bench")):
        if p not in sys.path:
            sys.path.insert(0, p)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(values: list[float]) -> dict[str, float]:
    """p50, p95 and max of durations in seconds, as milliseconds."""
    return {
        "p50_ms": round(pct(values, 0.50) * 1000, 4),
        "p95_ms": round(pct(values, 0.95) * 1000, 4),
        "max_ms": round(max(values) * 1000, 4),
    }


def wait_for_vectors(db: Path, timeout: float = 600.0) -> tuple[int, int, float]:
    """Wait until a server's background worker has embedded every entry of ``db``:
    figures taken during that backfill would measure the backfill.

    Returns (embedded, entries, seconds waited).
    """
    import time

    import apsw

    started = time.perf_counter()
    embedded = total = 0
    while time.perf_counter() - started < timeout:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            total = int(conn.execute("SELECT count(*) FROM memory_entries").get)
            embedded = int(conn.execute("SELECT count(*) FROM memory_vectors").get)
        finally:
            conn.close()
        if embedded >= total:
            break
        time.sleep(1.0)
    return embedded, total, round(time.perf_counter() - started, 1)


def per_size(script: str, sizes: list[int], extra: list[str], name: str) -> None:
    """Run ``script --one N`` in a fresh process per size and print the JSON together."""
    results: list[Any] = []
    for n in sizes:
        out = subprocess.run(
            [sys.executable, script, "--one", str(n), *extra],
            check=True,
            capture_output=True,
            text=True,
        )
        results.append(json.loads(out.stdout))
    print(json.dumps({"benchmark": name, "results": results}, indent=2))


def fill(
    service: Any, caller: Any, count: int, make: Callable[[int], list[dict[str, object]]]
) -> None:
    requests = [service.parse_store_args(m) for m in make(count)]
    for start in range(0, count, 1000):
        service.store_entries(caller, requests[start : start + 1000])


# -- a real `ambry serve` / `ambry mcp` on a seeded data dir -------------------------------

#: The installed command next to this Python (the venv's).
AMBRY = Path(sys.executable).with_name("ambry")
#: The MCP ``initialize`` request a client sends first.
INITIALIZE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def unlimited_config() -> Any:
    """Default settings with every agent rate limit at its highest (a bench makes
    thousands of writes in one session)."""
    from core.model.config import Config
    from core.policy.ratelimit import rate_fields

    return Config().with_changes(**dict.fromkeys(rate_fields(), 1_000_000))


def seed_unlimited(data: Any, group: str, entries: int) -> None:
    """Lift the rate limits in ``data``'s config (thousands of stores in one session)
    and store ``entries`` generated memories in ``group``."""
    from _corpus import memories

    from core.model.config import save_config
    from core.model.entries import Actor
    from core.service import MemoryService

    save_config(data.config_file, unlimited_config())
    service = MemoryService(data)
    try:
        fill(service, service.open_session(group, Actor.OPERATOR, "bench"), entries, memories)
    finally:
        service.close()


def start_serve(data: Any, sock: Path, log: Path | None = None) -> subprocess.Popen[bytes]:
    """``ambry serve`` on ``data``, listening on ``sock`` once this returns."""
    import os
    import time

    env = {**os.environ, "AMBRY_DATA_DIR": str(data.root), "AMBRY_SOCKET": str(sock)}
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    with log.open("wb") if log else open(os.devnull, "wb") as err:
        proc = subprocess.Popen([str(AMBRY), "serve"], env=env, stderr=err)
    deadline = time.monotonic() + 60
    while not sock.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"ambry serve did not start (exit {proc.poll()})")
        time.sleep(0.05)
    return proc


def mcp_initialize_seconds(data: Any, group: str, launches: int) -> list[float]:
    """Seconds from launching ``ambry mcp`` to its answer to ``initialize``, per launch."""
    import os
    import time

    env = {**os.environ, "AMBRY_DATA_DIR": str(data.root)}
    timings = []
    for _ in range(launches):
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(AMBRY), "--group", group, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        timings.append(time.perf_counter() - started)
        assert "result" in reply, reply
        proc.stdin.close()  # EOF: the server ends its session and exits
        proc.wait(timeout=30)
        proc.stdout.close()
    return timings
