"""``ambry mcp`` figures at 10K entries, beside the agent socket's, printed as JSON.

Usage: python bench/mcp.py [--entries 10000] [--round-trips 400] [--launches 10]

* ``initialize``: seconds from launching ``ambry mcp`` to its answer, p50 of
  ``--launches`` cold launches on the seeded group (target <= 0.3 s);
* ``memory_search`` and ``memory_store`` round trips (p50/p95) over MCP's stdio
  from a minimal line client, and the same calls over the agent socket of a real
  ``ambry serve`` (``core.agent.client``), interleaved call by call so that load
  from other processes falls on both alike (target: MCP p50 <= 1.5x the socket's);
* a ``ping`` round trip: what the stdio transport itself costs;
* with ``--load``, the same round trips again while one busy process per CPU
  competes for the machine: each figure's slowdown, and the milliseconds added.

Rate limits are raised in the run's own config.json so the stores fit in one
session. Figures from a shared machine move by 10-20 % between runs: repeat.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import setup_path

setup_path()

from _corpus import queries  # noqa: E402
from _util import (  # noqa: E402
    AMBRY,
    INITIALIZE,
    mcp_initialize_seconds,
    ms,
    pct,
    seed_unlimited,
    start_serve,
    wait_for_vectors,
)

from core.agent.client import AmbryClient  # noqa: E402
from core.storage.paths import DataDir  # noqa: E402

GROUP = "bench"


class McpPipe:
    """``ambry mcp`` spoken to in raw lines: the least a client can add."""

    def __init__(self, data: DataDir) -> None:
        env = {**os.environ, "AMBRY_DATA_DIR": str(data.root)}
        self.proc = subprocess.Popen(
            [str(AMBRY), "--group", GROUP, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        assert "result" in reply, reply
        return reply["result"]

    def tool(self, name: str, arguments: dict[str, Any]) -> Any:
        result = self.call("tools/call", {"name": name, "arguments": arguments})
        assert not result["isError"], result
        return result["structuredContent"]

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()


def initialize_times(data: DataDir, launches: int) -> dict[str, object]:
    timings = mcp_initialize_seconds(data, GROUP, launches)
    p50 = pct(timings, 0.5)
    return {
        "launches": launches,
        "p50_s": round(p50, 3),
        "min_s": round(min(timings), 3),
        "max_s": round(max(timings), 3),
        "target_p50_le_0_3s": p50 <= 0.3,
    }


def round_trips(mcp: McpPipe, sock: AmbryClient, count: int) -> dict[str, object]:
    qs = queries(count, seed=23)
    for q in qs[:50]:  # warm both: caches, prepared statements, jsonschema
        mcp.tool("memory_search", {"query": q, "limit": 20})
        sock.search(q, limit=20)
    timed: dict[str, list[float]] = {
        k: [] for k in ("mcp_search", "socket_search", "mcp_store", "socket_store", "mcp_ping")
    }

    def clock(key: str, fn: Any, *args: Any) -> None:
        t = time.perf_counter()
        fn(*args)
        timed[key].append(time.perf_counter() - t)

    for i, q in enumerate(qs):
        # Alternate which door goes first, so neither always follows the other.
        pair: list[tuple[Any, ...]] = [
            ("mcp_search", mcp.tool, "memory_search", {"query": q, "limit": 20}),
            ("socket_search", lambda text: sock.search(text, limit=20), q),
        ]
        for key, fn, *args in pair if i % 2 else reversed(pair):
            clock(key, fn, *args)
    for i in range(count):
        text = f"Benchmark observation number {i} about round trips"
        pair = [
            ("mcp_store", mcp.tool, "memory_store", {"type": "fact", "content": "MCP " + text}),
            ("socket_store", sock.store, "fact", "Socket " + text),
        ]
        for key, fn, *args in pair if i % 2 else reversed(pair):
            clock(key, fn, *args)
        clock("mcp_ping", mcp.call, "ping")
    figures: dict[str, object] = {key: ms(values) for key, values in timed.items()}
    for op in ("search", "store"):
        ratio = pct(timed[f"mcp_{op}"], 0.5) / pct(timed[f"socket_{op}"], 0.5)
        figures[f"{op}_p50_ratio_mcp_to_socket"] = round(ratio, 2)
        figures[f"target_{op}_ratio_le_1_5"] = ratio <= 1.5
    return figures


def under_load(
    mcp: McpPipe, sock: AmbryClient, count: int, quiet: dict[str, Any]
) -> dict[str, object]:
    """The round trips again beside one busy process per CPU: slowdown and ms added."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 1)
    ]
    try:
        time.sleep(0.5)
        loaded = round_trips(mcp, sock, count)
    finally:
        for proc in burners:
            proc.kill()
            proc.wait()
    out: dict[str, object] = {"busy_processes": len(burners)}
    for key in ("mcp_search", "socket_search", "mcp_store", "socket_store", "mcp_ping"):
        before, after = quiet[key]["p50_ms"], loaded[key]["p50_ms"]  # type: ignore[index]
        out[key] = {
            "p50_ms": after,
            "p95_ms": loaded[key]["p95_ms"],  # type: ignore[index]
            "slowdown": round(after / before, 2),
            "added_ms": round(after - before, 3),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--round-trips", type=int, default=400)
    parser.add_argument("--launches", type=int, default=10)
    parser.add_argument("--load", action="store_true", help="repeat under a CPU load")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ambry-bench-") as tmp:
        data = DataDir(Path(tmp) / "data")
        data.ensure()
        sock_path = Path(tmp) / "agent.sock"
        seed_unlimited(data, GROUP, args.entries)
        figures: dict[str, object] = {"entries": args.entries, "cpus": os.cpu_count()}
        figures["initialize"] = initialize_times(data, args.launches)
        server = start_serve(data, sock_path)
        mcp = McpPipe(data)
        try:
            mcp.call("initialize", INITIALIZE["params"])
            with AmbryClient(sock_path, data_dir=data.root) as sock:
                sock.hello(GROUP, "bench")
                figures["backfill_wait_s"] = wait_for_vectors(data.group_db(GROUP))[2]
                figures.update(round_trips(mcp, sock, args.round_trips))
                if args.load:
                    figures["under_load"] = under_load(mcp, sock, args.round_trips, figures)
                sock.end_session()
        finally:
            mcp.close()
            server.terminate()
            server.wait(timeout=30)
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
