"""Recall of paraphrased questions over a fact corpus, at 2K and 10K memories, as JSON.

Usage: python bench/recall.py [--sizes 2000,10000] [--questions 300]  (sizes up to about 30,000:
the fact templates hold no more distinct facts)

Each size runs in a fresh process on a fresh data dir through the real service:
the facts (bench/_facts.py) are stored, embedded by the backfill (timed), and
then asked about in other words. Reported beside the targets:

- hit@1 and hit@5 of paraphrased questions, in ``auto`` mode and with the
  keyword ranking of before (bm25 with its 500-most-recent window, :func:`windowed_bm25`);
- hit@5 of keyword queries (words taken from the fact), before and now;
- query p50/p95 (query embedding included), ``memory_store`` round trip p50 with
  the background worker running, backfill rate, and peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, pct, per_size, setup_path

setup_path()

TARGETS: dict[str, Any] = {"paraphrase_hit@5": {"2000": 0.98, "10000": 0.95}, "query_p95_ms": 30.0}


#: The old keyword search ranked only this many of the most recent matches of a common query.
RECENT_WINDOW = 500


def windowed_bm25(store: Any, terms: list[str], limit: int) -> list[str]:
    """The keyword ranking memory search had before hybrid search: the baseline figures.

    Exact bm25 when the terms match at most 1,000 entries, else bm25 over the
    500 most recent matches only (the window hybrid search removed).
    """
    from core.storage.fts import match_expression
    from core.storage.store import BM25

    if not terms:
        return []
    kept, exact = store.plan(terms)
    order = "score" if exact else "rowid DESC"
    window = max(4 * limit, 64) if exact else RECENT_WINDOW
    rows = store.execute(
        f"SELECT e.id FROM (SELECT rowid, {BM25} AS score FROM memory_fts "
        f"WHERE memory_fts MATCH ? ORDER BY {order} LIMIT {int(window)}) AS f "
        "CROSS JOIN memory_entries e ON e.seq = f.rowid "
        "WHERE e.superseded_by IS NULL AND e.status = 'active' "
        f"ORDER BY f.score LIMIT {int(limit)}",
        (match_expression(kept),),
    ).fetchall()
    return [r[0] for r in rows]


def run_size(n: int, question_count: int) -> dict[str, object]:
    from _facts import facts, keyword_queries

    from core.model.entries import Actor, EntryFilter
    from core.semantic import backfill
    from core.semantic.embedding import shared_embedder
    from core.semantic.hybrid import Mode
    from core.service import MemoryService
    from core.storage.fts import query_terms
    from core.storage.paths import DataDir

    corpus = facts(n)
    rng = random.Random(3)
    asked = rng.sample(range(n), min(question_count, n))
    questions = [(rng.choice(corpus[i].questions), i) for i in asked]
    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)))
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        requests = [svc.parse_store_args({"type": "fact", "content": f.content}) for f in corpus]
        ids: list[str] = []
        for start in range(0, n, 1000):
            ids += [o.entry.id for o in svc.store_entries(op, requests[start : start + 1000])]
        store = svc.store_for("bench")
        load_started = time.perf_counter()
        model = shared_embedder()
        assert model is not None, "the embedding model is not installed"
        load_s = time.perf_counter() - load_started
        started = time.perf_counter()
        backfill.reindex(store.conn, store.path, "bench", model)
        backfill_s = time.perf_counter() - started
        flt = EntryFilter()

        def hits(query: str, mode: Mode) -> list[str]:
            return [r.id for r in svc.search_entries("bench", query, flt, 10, mode=mode)]

        def before(query: str) -> list[str]:
            return windowed_bm25(store, query_terms(query), 10)

        for q, _ in questions[:10]:  # warm caches, as a running server has them
            hits(q, Mode.AUTO)
        latencies: list[float] = []
        rank_now: list[int] = []
        for q, i in questions:
            t = time.perf_counter()
            got = hits(q, Mode.AUTO)
            latencies.append(time.perf_counter() - t)
            rank_now.append(got.index(ids[i]) if ids[i] in got else 99)
        rank_kw_mode = [
            (got.index(ids[i]) if ids[i] in (got := hits(q, Mode.KEYWORD)) else 99)
            for q, i in questions
        ]
        rank_before = [
            (got.index(ids[i]) if ids[i] in (got := before(q)) else 99) for q, i in questions
        ]
        kw = keyword_queries(corpus, question_count)
        kw_now = [ids[i] in hits(q, Mode.AUTO)[:5] for q, i in kw]
        kw_before = [ids[i] in before(q)[:5] for q, i in kw]

        svc.start_embedding()
        stores = []
        for k in range(100):
            t = time.perf_counter()
            svc.store(op, {"type": "fact", "content": f"Round trip probe {k}: Mei likes kites"})
            stores.append(time.perf_counter() - t)
        assert svc.embedding is not None
        svc.embedding.wait_idle(120)
        svc.close()

    def rate(ranks: list[int], k: int) -> float:
        return round(sum(r < k for r in ranks) / len(ranks), 3)

    return {
        "memories": n,
        "questions": len(questions),
        "paraphrase_hit@1": rate(rank_now, 1),
        "paraphrase_hit@5": rate(rank_now, 5),
        "paraphrase_hit@5_target": TARGETS["paraphrase_hit@5"].get(str(n)),
        "paraphrase_hit@5_keyword_mode": rate(rank_kw_mode, 5),
        "paraphrase_hit@5_before": rate(rank_before, 5),
        "keyword_query_hit@5": round(sum(kw_now) / len(kw_now), 3),
        "keyword_query_hit@5_before": round(sum(kw_before) / len(kw_before), 3),
        "query": ms(latencies),
        "query_p95_target_ms": TARGETS["query_p95_ms"],
        "store_round_trip_p50_ms": round(pct(stores, 0.5) * 1000, 3),
        "store_round_trip": ms(stores),
        "model_load_s": round(load_s, 3),
        "backfill_entries_per_s": round(n / backfill_s, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="2000,10000")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.questions)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    per_size(__file__, sizes, ["--questions", str(args.questions)], "paraphrase_recall")


if __name__ == "__main__":
    main()
