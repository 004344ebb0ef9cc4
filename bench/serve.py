"""Agent socket figures at 10K entries, printed as JSON.

Usage: python bench/serve.py [--entries 10000] [--round-trips 500] [--seconds 3]

Runs a real ``ambry serve`` subprocess on a temporary data dir seeded with
synthetic entries, and talks to it with ``core.agent.client`` over its Unix socket:

* round trip p50/p95 of ``memory_search`` and ``memory_store`` from one client;
* requests per second (``memory_search``) with 1 and 8 clients, each client
  its own process so client-side Python does not share one GIL;
* the same search called in-process on the service, and a round trip that never
  reaches the service (an unknown method), to show what the socket itself adds;
* seconds from launching ``ambry mcp`` (on the same 10K group) to its answer to
  ``initialize``: MCP clients give up on slow servers. Target <= 1 s.

Rate limits are raised in the run's own config.json so thousands of stores fit
in one session. Target: search round trip p50 <= 1 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import setup_path

setup_path()

from _corpus import queries  # noqa: E402
from _util import (  # noqa: E402
    mcp_initialize_seconds,
    pct,
    seed_unlimited,
    start_serve,
    wait_for_vectors,
)

from core.agent.client import AmbryClient  # noqa: E402
from core.model.entries import Actor, EntryFilter  # noqa: E402
from core.service import MemoryService  # noqa: E402
from core.storage.paths import DataDir  # noqa: E402

GROUP = "bench"


def ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(pct(values, 0.50) * 1000, 3),
        "p95_ms": round(pct(values, 0.95) * 1000, 3),
        "mean_ms": round(statistics.mean(values) * 1000, 3),
    }


def seed(data: DataDir, entries: int) -> dict[str, object]:
    """Fill the bench group and time the in-process search for comparison."""
    seed_unlimited(data, GROUP, entries)
    svc = MemoryService(data)
    try:
        agent = svc.open_session(GROUP, Actor.AGENT, "bench-inprocess")
        timings = []
        for q in queries(300):
            t = time.perf_counter()
            svc.search(agent, {"query": q, "limit": 20})
            timings.append(time.perf_counter() - t)
        raw = []
        for q in queries(300):
            t = time.perf_counter()
            svc.search_entries(GROUP, q, EntryFilter(), 20)
            raw.append(time.perf_counter() - t)
        return {"in_process_search": ms(timings), "in_process_search_unaudited": ms(raw)}
    finally:
        svc.close()


def round_trips(client: AmbryClient, count: int) -> dict[str, object]:
    qs = queries(count, seed=23)
    for q in qs[:50]:  # warm caches and the connection
        client.search(q, limit=20)
    search = []
    for q in qs:
        t = time.perf_counter()
        client.search(q, limit=20)
        search.append(time.perf_counter() - t)
    # The transport alone: an unknown method is parsed, dispatched and answered
    # with an error without touching the service.
    floor = []
    for _ in range(count):
        t = time.perf_counter()
        client.call_many([("no_such_method", None)])
        floor.append(time.perf_counter() - t)
    store = []
    for i in range(count):
        t = time.perf_counter()
        client.store("fact", f"Benchmark observation number {i} about round trips")
        store.append(time.perf_counter() - t)
    return {
        "search_round_trip": ms(search),
        "store_round_trip": ms(store),
        "transport_floor_round_trip": ms(floor),
    }


def worker(sock: str, data: str, seconds: float) -> None:
    """One client process: connect, wait for 'go' on stdin, search for ``seconds``."""
    qs = queries(500, seed=31)
    with AmbryClient(sock, data_dir=data) as client:
        client.hello(GROUP, "bench-worker")
        print("ready", flush=True)
        sys.stdin.readline()
        done = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            client.search(qs[done % len(qs)], limit=20)
            done += 1
        client.end_session()
    print(json.dumps({"requests": done, "seconds": elapsed}), flush=True)


def throughput(sock: Path, data: DataDir, clients: int, seconds: float) -> dict[str, object]:
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", str(sock), str(data.root), str(seconds)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(clients)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    t = time.perf_counter()
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, _ = p.communicate()
        results.append(json.loads(out))
    wall = time.perf_counter() - t
    total = sum(r["requests"] for r in results)
    return {
        "clients": clients,
        "requests": total,
        "requests_per_s": round(total / max(r["seconds"] for r in results)),
        "wall_s": round(wall, 2),
    }


def mcp_initialize(data: DataDir, launches: int = 5) -> dict[str, object]:
    """Seconds from launching ``ambry mcp`` to its answer to ``initialize`` (target <= 1 s)."""
    timings = mcp_initialize_seconds(data, GROUP, launches)
    return {
        "launches": launches,
        "p50_s": round(pct(timings, 0.5), 3),
        "max_s": round(max(timings), 3),
        "target_le_1s": pct(timings, 0.5) <= 1.0,
    }


def serve_memory(pid: int, data: DataDir, timeout: float = 600.0) -> dict[str, object]:
    """Resident memory of the server once its backfill has embedded every entry."""
    embedded, total, backfill_s = wait_for_vectors(data.group_db(GROUP), timeout)
    status = Path(f"/proc/{pid}/status")
    fields = {}
    if status.exists():
        for line in status.read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = round(int(value.split()[0]) / 1024, 1)
    return {
        "embedded": embedded,
        "entries": total,
        "backfill_wait_s": backfill_s,
        "rss_mb": fields.get("VmRSS"),
        "peak_rss_mb": fields.get("VmHWM"),
        "target_rss_le_250mb": (fields.get("VmRSS") or 0) <= 250,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--round-trips", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], float(args.worker[2]))
        return
    with tempfile.TemporaryDirectory(prefix="ambry-bench-") as tmp:
        data = DataDir(Path(tmp) / "data")
        data.ensure()
        sock = Path(tmp) / "agent.sock"
        figures: dict[str, object] = {"entries": args.entries, "cpus": os.cpu_count()}
        figures.update(seed(data, args.entries))
        server = start_serve(data, sock, data.root / "serve.log")
        try:
            with AmbryClient(sock, data_dir=data.root) as client:
                client.hello(GROUP, "bench")
                # The hello opens the group: the server embeds its entries in the
                # background; the round trips below are timed once that is done.
                figures["serve_memory_with_model"] = serve_memory(server.pid, data)
                figures.update(round_trips(client, args.round_trips))
                client.end_session()
            figures["throughput_search"] = [throughput(sock, data, n, args.seconds) for n in (1, 8)]
            figures["mcp_initialize"] = mcp_initialize(data)
            figures["serve_memory_after_searches"] = serve_memory(server.pid, data)
            # The next start, with every entry embedded already: the resident
            # memory a person sees from then on.
            server.terminate()
            server.wait(timeout=30)
            server = start_serve(data, sock, data.root / "serve.log")
            with AmbryClient(sock, data_dir=data.root) as client:
                client.hello(GROUP, "bench")
                for q in queries(50):
                    client.search(q, limit=10)
                figures["serve_memory_next_start"] = serve_memory(server.pid, data)
        finally:
            server.terminate()
            server.wait(timeout=30)
            if server.returncode not in (0, -15):
                sys.stderr.write((data.root / "serve.log").read_text())
        search_p50 = figures["search_round_trip"]["p50_ms"]  # type: ignore[index]
        figures["target_search_p50_le_1ms"] = search_p50 <= 1.0
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
