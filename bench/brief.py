"""Brief build time at 1K, 10K and 100K active entries, and marker ingestion rate.

Usage: python bench/brief.py [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import fill, ms, per_size, setup_path, unlimited_config

setup_path()


def run_size(n: int) -> dict[str, object]:
    from _corpus import memories

    from core.model.entries import Actor
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)))
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        fill(svc, op, n, memories)
        agent = svc.open_session("bench", Actor.AGENT, "bench")

        t = time.perf_counter()
        svc.refresh_decay("bench", force=True)
        decay_s = time.perf_counter() - t

        cold = time.perf_counter()
        svc.build_brief("bench")
        cold_s = time.perf_counter() - cold
        builds, audited = [], []
        for _ in range(100):
            t = time.perf_counter()
            brief = svc.build_brief("bench")
            builds.append(time.perf_counter() - t)
        for _ in range(30):
            t = time.perf_counter()
            svc.brief(agent)
            audited.append(time.perf_counter() - t)

        lines = [
            f"[MEMORY:{cat}:svc{i % 40}] observation {i} about {cat} of service {i % 40} "
            f"with detail {i * 7919 % 1000}"
            for i, cat in zip(
                range(2000),
                ["timing", "dependency", "behavior", "remediation", "maintenance"] * 400,
                strict=True,
            )
        ]
        lines += ["plain output line without a marker"] * 2000
        svc.config = unlimited_config()
        chunks = ["\n".join(lines[i : i + 500]) for i in range(0, len(lines), 500)]
        markers = stored = reinforced = 0
        t = time.perf_counter()
        for chunk in chunks:
            result = svc.ingest_text(agent, chunk)
            markers += result.markers
            stored += len(result.stored)
            reinforced += len(result.reinforced)
        ingest_s = time.perf_counter() - t
        svc.close()

    return {
        "entries": n,
        "brief_build": ms(builds),
        "brief_cold_ms": round(cold_s * 1000, 3),
        "brief_via_tool_audited": ms(audited),
        "brief_count": brief.brief_count,
        "brief_chars": brief.char_count,
        "decay_refresh_ms": round(decay_s * 1000, 2),
        "ingest_lines": len(lines),
        "ingest_markers": markers,
        "ingest_stored": stored,
        "ingest_reinforced": reinforced,
        "ingest_lines_per_s": round(len(lines) / ingest_s),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one)))
        return
    per_size(__file__, [int(s) for s in args.sizes.split(",")], [], "brief")


if __name__ == "__main__":
    main()
