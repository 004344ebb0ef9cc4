"""Nearest-neighbour scan: BLOB column + numpy vs sqlite-vec's vec0, at 1K/10K/100K, as JSON.

Usage: python bench/vectors.py [--sizes 1000,10000,100000] [--queries 100]

Both are exact (brute force) top-10 by cosine over 384-dimensional unit
vectors. The numpy side times what a search pays: one matrix product over an
in-memory copy (``core.semantic.vectors.VectorIndex``), plus loading that copy once. The
sqlite-vec side runs a ``vec0`` KNN query per search. sqlite-vec is not an
Ambry dependency; install it (``pip install sqlite-vec``) to compare.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, setup_path

setup_path()

DIMS = 384


def run(n: int, queries: int) -> dict[str, object]:
    import apsw

    from core.semantic.vectors import MEMORIES, VectorIndex, to_blob

    rng = np.random.default_rng(5)
    data = rng.standard_normal((n, DIMS)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    qs = data[rng.choice(n, queries)] + 0.1 * rng.standard_normal((queries, DIMS)).astype(
        np.float32
    )
    out: dict[str, object] = {"vectors": n}
    with tempfile.TemporaryDirectory() as tmp:
        conn = apsw.Connection(str(Path(tmp) / "v.sqlite"))
        conn.execute(
            "CREATE TABLE memory_vectors (id INTEGER PRIMARY KEY AUTOINCREMENT, "
            "entry_seq INTEGER NOT NULL UNIQUE, model TEXT NOT NULL, vector BLOB NOT NULL)"
        )
        with conn:
            conn.executemany(
                "INSERT INTO memory_vectors (entry_seq, model, vector) VALUES (?, 'm', ?)",
                ((i, to_blob(v)) for i, v in enumerate(data)),
            )
        index = VectorIndex(MEMORIES, "m", DIMS)
        t = time.perf_counter()
        index.refresh(conn)
        out["numpy_load_ms"] = round((time.perf_counter() - t) * 1000, 2)
        times = []
        for q in qs:
            t = time.perf_counter()
            index.refresh(conn)
            index.nearest(q, 10)
            times.append(time.perf_counter() - t)
        out["numpy_query"] = ms(times)
        try:
            import sqlite_vec
        except ImportError:
            out["sqlite_vec"] = "not installed"
            return out
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.execute(
            f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{DIMS}] distance_metric=cosine)"
        )
        with conn:
            conn.executemany(
                "INSERT INTO vec (rowid, embedding) VALUES (?, ?)",
                ((i, to_blob(v)) for i, v in enumerate(data)),
            )
        times = []
        for q in qs:
            t = time.perf_counter()
            conn.execute(
                "SELECT rowid, distance FROM vec WHERE embedding MATCH ? AND k = 10",
                (to_blob(q),),
            ).fetchall()
            times.append(time.perf_counter() - t)
        out["sqlite_vec_query"] = ms(times)
        conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    results = [run(int(n), args.queries) for n in args.sizes.split(",")]
    print(json.dumps({"benchmark": "vector_scan", "results": results}, indent=2))


if __name__ == "__main__":
    main()
