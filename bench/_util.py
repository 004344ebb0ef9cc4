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
