"""Near-duplicate scan at 1K/10K memories of distinct generated facts, as JSON.

Usage: python bench/duplicates.py [--sizes 1000,10000] [--grouped]

The facts (bench/_facts.py) share names, relations and values but no two say the
same thing; the generator gives one first name with and without an initial
("Freya", "Freya G.") to different people, which a reader cannot tell apart
either. The figure counts the clusters that differ by nothing else. Times the scan cold (the
vectors loaded into memory first, as on the first use after start) and warm.

``--grouped`` measures the search used above 20,000 vectors against the full
comparison: on the generator's 30,000 facts, and on 100,000 vectors made of
those and rotated copies of them (a rotation keeps every cosine within a copy,
and copies are as unlike each other as unrelated texts): time of each, and the
share of the full comparison's pairs the grouped search finds.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, setup_path, unlimited_config

setup_path()


def run_size(n: int) -> dict[str, object]:
    from _facts import facts

    from core.model.entries import Actor
    from core.recall.duplicates import near_duplicates
    from core.semantic import backfill, hybrid
    from core.semantic.embedding import shared_embedder
    from core.service import MemoryService
    from core.storage.paths import DataDir

    corpus = facts(n)
    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)), unlimited_config())
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        requests = [svc.parse_store_args({"type": "fact", "content": f.content}) for f in corpus]
        for start in range(0, n, 1000):
            svc.store_entries(op, requests[start : start + 1000])
        store = svc.store_for("bench")
        model = shared_embedder()
        assert model is not None, "the embedding model is not installed"
        backfill.reindex(store.conn, store.path, "bench", model)
        hybrid.release_model("")  # drop the loaded copy of the vectors: a cold scan
        model = shared_embedder()
        assert model is not None
        started = time.perf_counter()
        survey = near_duplicates(store)
        cold = time.perf_counter() - started
        warm: list[float] = []
        for _ in range(5):
            started = time.perf_counter()
            near_duplicates(store)
            warm.append(time.perf_counter() - started)
        from core.recall.duplicates import _close_pairs
        from core.semantic import vectors

        keys, matrix = hybrid.vector_index(store, vectors.MEMORIES, model).live()
        scans: list[float] = []
        for _ in range(3):
            started = time.perf_counter()
            pairs = _close_pairs(keys, matrix, 0.9)
            scans.append(time.perf_counter() - started)
        initial = re.compile(r" [A-Z]\.(?=[ '])")
        same_but_initial = sum(
            len({initial.sub("", store.get(i).content) for i in c.ids}) == 1  # type: ignore[union-attr]
            for c in survey.clusters
        )
        listed = [
            [store.get(i).content for i in c.ids]  # type: ignore[union-attr]
            for c in survey.clusters[:8]
        ]
        svc.close()
    return {
        "memories": n,
        "compared": survey.compared,
        "clusters": len(survey.clusters),
        "first_clusters": listed,
        "pairs_at_threshold": len(pairs),
        "clusters_differing_by_an_initial_only": same_but_initial,
        "matrix_scan_ms": ms(scans),
        "cold_s": round(cold, 3),
        "warm_ms": ms(warm),
    }


def grouped(n: int = 30_000) -> list[dict[str, object]]:
    import numpy as np
    from _facts import facts

    from core.recall import duplicates
    from core.semantic.embedding import shared_embedder

    model = shared_embedder()
    assert model is not None, "the embedding model is not installed"
    texts = [f.content for f in facts(n)]
    base = np.concatenate([model.encode(texts[s : s + 256]) for s in range(0, n, 256)])
    rng = np.random.default_rng(3)
    copies = [base]
    while sum(len(c) for c in copies) < 100_000:
        rotation, _ = np.linalg.qr(rng.standard_normal((base.shape[1], base.shape[1])))
        copies.append((base @ rotation).astype(np.float32))
    out: list[dict[str, object]] = []
    for matrix in (base, np.concatenate(copies)[:100_000]):
        keys = np.arange(len(matrix), dtype=np.int64)
        row: dict[str, object] = {"vectors": len(matrix)}
        for threshold in (0.85, 0.8):
            started = time.perf_counter()
            found = duplicates._close_arrays(keys, matrix, threshold)
            took = time.perf_counter() - started
            limit = duplicates.EXACT_UP_TO
            duplicates.EXACT_UP_TO = len(matrix)  # type: ignore[misc]
            started = time.perf_counter()
            every = duplicates._close_arrays(keys, matrix, threshold)
            full = time.perf_counter() - started
            duplicates.EXACT_UP_TO = limit  # type: ignore[misc]
            have = set(zip(found[0].tolist(), found[1].tolist(), strict=True))
            want = set(zip(every[0].tolist(), every[1].tolist(), strict=True))
            row[str(threshold)] = {
                "pairs_full": len(want),
                "pairs_grouped_found": len(have & want),
                "share_found": round(len(have & want) / max(1, len(want)), 5),
                "grouped_s": round(took, 2),
                "full_s": round(full, 2),
            }
        out.append(row)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--grouped", action="store_true")
    args = parser.parse_args()
    if args.grouped:
        print(json.dumps(grouped(), indent=2))
        return
    out = [run_size(int(s)) for s in args.sizes.split(",")]
    print(json.dumps(out, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
