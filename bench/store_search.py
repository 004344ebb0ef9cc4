"""Store and search figures at 1K, 10K and 100K entries, printed as JSON.

Usage: python bench/store_search.py [--sizes 1000,10000,100000] [--queries 200]

Each size runs in a fresh subprocess (so peak RSS is per size) on a fresh
temporary data dir, through the real service and the real apsw store.

With ``--semantic`` each size is then embedded by the background worker (the
backfill rate is reported) and searched again in ``auto`` mode, bm25 and the
vector scan fused, each query embedded afresh (none is asked twice).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, pct, per_size, setup_path

setup_path()


def run_size(n: int, query_count: int, semantic: bool = False) -> dict[str, object]:
    from _corpus import memories, queries

    from core.model.entries import Actor, EntryFilter
    from core.service import MemoryService
    from core.storage.fts import build_match
    from core.storage.paths import DataDir
    from core.storage.store import BM25

    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)))
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        requests = [svc.parse_store_args(m) for m in memories(n)]
        t0 = time.perf_counter()
        batch = 1000
        ids: list[str] = []
        for start in range(0, n, batch):
            outs = svc.store_entries(op, requests[start : start + batch])
            ids += [o.entry.id for o in outs]
        ingest_s = time.perf_counter() - t0

        single = []
        for i in range(50):
            t = time.perf_counter()
            svc.store(op, {"type": "fact", "content": f"single write latency probe {i}"})
            single.append(time.perf_counter() - t)

        qs = queries(query_count)
        store = svc.store_for("bench")
        flt = EntryFilter()
        for q in qs[:20]:  # warm the page cache and statement cache
            svc.search_entries("bench", q, flt, 20)
        search, floor, hits = [], [], []
        for q in qs:
            t = time.perf_counter()
            res = svc.search_entries("bench", q, flt, 20)
            search.append(time.perf_counter() - t)
            hits.append(len(res))
            match = build_match(q)
            t = time.perf_counter()
            if match:
                store.conn.execute(
                    "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
                    f"ORDER BY {BM25} LIMIT 20",
                    (match,),
                ).fetchall()
            floor.append(time.perf_counter() - t)

        audited = []
        for q in qs[:100]:
            t = time.perf_counter()
            svc.search(op, {"query": q, "limit": 20})
            audited.append(time.perf_counter() - t)

        gets = []
        for entry_id in ids[:: max(1, n // 500)]:
            t = time.perf_counter()
            svc.get("bench", entry_id)
            gets.append(time.perf_counter() - t)

        listing = []
        for _ in range(5):
            t = time.perf_counter()
            svc.list_ids("bench", flt)
            listing.append(time.perf_counter() - t)

        hybrid: dict[str, object] = {}
        if semantic:
            hybrid = _hybrid_figures(svc, n, qs)

        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db_path = store.path
        size = db_path.stat().st_size
        svc.close()

    search_p50, floor_p50 = pct(search, 0.5), pct(floor, 0.5)
    return {
        "entries": n,
        "ingest_entries_per_s": round(n / ingest_s),
        "single_store": ms(single),
        "search": ms(search),
        "search_audited": ms(audited),
        "fts_floor": ms(floor),
        "search_over_floor_p50": round(search_p50 / floor_p50, 2) if floor_p50 else None,
        "search_over_floor_p95": round(pct(search, 0.95) / pct(floor, 0.95), 2),
        "mean_hits": round(statistics.mean(hits), 1),
        "get_by_id": ms(gets),
        "list_all_ids": ms(listing),
        "db_bytes": size,
        "db_mb": round(size / 1e6, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **hybrid,
    }


def _hybrid_figures(svc: Any, n: int, qs: list[str]) -> dict[str, object]:
    """Backfill every entry's vector, then time ``auto`` searches over them."""
    from core.model.entries import EntryFilter
    from core.semantic import hybrid
    from core.semantic.hybrid import Mode

    t0 = time.perf_counter()
    svc.start_embedding()
    if not svc.embedding.wait_idle(4 * 3600):
        raise SystemExit("the backfill did not finish")
    backfill_s = time.perf_counter() - t0
    flt = EntryFilter()
    svc.search_entries("bench", "warm the vector copy", flt, 20, mode=Mode.AUTO)
    timed = []
    for q in dict.fromkeys(qs):  # each query once
        hybrid._query_vectors.clear()  # its vector computed, not taken from the cache
        t = time.perf_counter()
        svc.search_entries("bench", q, flt, 20, mode=Mode.AUTO)
        timed.append(time.perf_counter() - t)
    return {
        "backfill_entries_per_s": round((n + 50) / backfill_s),
        "search_auto_embedded": ms(timed),
        "peak_rss_mb_embedded": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--semantic", action="store_true", help="also embed every entry and time auto searches"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.queries, args.semantic)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    extra = ["--queries", str(args.queries), *(["--semantic"] if args.semantic else [])]
    per_size(__file__, sizes, extra, "store_search")


if __name__ == "__main__":
    main()
