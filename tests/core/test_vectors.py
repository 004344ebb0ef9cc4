"""The in-memory vector copy stays equal to the table through inserts, replacements, deletes."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import numpy as np

from core.semantic.vectors import LOAD_CHUNK, MEMORIES, VectorIndex, to_blob
from core.storage.db import open_database


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _put(conn: apsw.Connection, seq: int, vector: np.ndarray, model: str = "m") -> None:
    conn.execute(
        "INSERT OR REPLACE INTO memory_vectors (entry_seq, model, vector) VALUES (?, ?, ?)",
        (seq, model, to_blob(vector)),
    )


def _brute(conn: apsw.Connection, query: np.ndarray, k: int) -> list[int]:
    rows = conn.execute("SELECT entry_seq, vector FROM memory_vectors WHERE model = 'm'")
    scored = [(float(np.frombuffer(b, "<f4") @ query), int(s)) for s, b in rows]
    return [s for _, s in sorted(scored, reverse=True)[:k]]


def test_index_follows_the_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    conn = open_database(tmp_path / "g.sqlite")
    try:
        index = VectorIndex(MEMORIES, "m", 384)
        data = _unit(rng, 1200)
        for seq, vec in enumerate(data[:1000]):
            _put(conn, seq, vec)
        _put(conn, 5000, data[0], model="other")  # another model's row is not loaded
        query = _unit(rng, 1)[0]
        index.refresh(conn)
        assert len(index) == 1000
        assert [s for s, _ in index.nearest(query, 10)] == _brute(conn, query, 10)
        for seq, vec in enumerate(data[1000:], start=1000):  # one at a time, as writes come
            _put(conn, seq, vec)
            index.refresh(conn)
        _put(conn, 3, data[1100])  # re-embedded
        conn.execute("DELETE FROM memory_vectors WHERE entry_seq IN (7, 8)")
        index.refresh(conn)
        assert len(index) == 1198
        assert [s for s, _ in index.nearest(query, 25)] == _brute(conn, query, 25)
        vec = index.vector_of(3)
        assert vec is not None and np.allclose(vec, data[1100])
        assert index.vector_of(7) is None
        sims = index.similarities([3, 7, 1199], query)
        assert set(sims) == {3, 1199}
    finally:
        conn.close()


def test_a_large_first_load_is_read_in_chunks_into_one_buffer(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    conn = open_database(tmp_path / "g.sqlite")
    try:
        data = _unit(rng, 2 * LOAD_CHUNK + 100)  # three chunks, the last one short
        with conn:
            for seq, vec in enumerate(data):
                _put(conn, seq, vec)
        index = VectorIndex(MEMORIES, "m", 384)
        index.refresh(conn)
        assert len(index) == len(data)
        assert index.capacity == len(data)  # reserved once, never grown
        query = _unit(rng, 1)[0]
        assert [s for s, _ in index.nearest(query, 20)] == _brute(conn, query, 20)
        for seq in (0, LOAD_CHUNK - 1, LOAD_CHUNK, len(data) - 1):  # both sides of each chunk
            vec = index.vector_of(seq)
            assert vec is not None and np.array_equal(vec, data[seq])
    finally:
        conn.close()


def test_a_load_can_be_spread_over_several_steps(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    conn = open_database(tmp_path / "g.sqlite")
    try:
        data = _unit(rng, 2500)
        with conn:
            for seq, vec in enumerate(data):
                _put(conn, seq, vec)
            _put(conn, 9000, data[0], model="other")  # another model's row: not counted as new
        index = VectorIndex(MEMORIES, "m", 384)
        assert index.refresh(conn, at_most=1000) and index.loading and len(index) == 1000
        assert index.refresh(conn, at_most=1000) and len(index) == 2000
        assert not index.refresh(conn, at_most=1000) and not index.loading
        assert len(index) == 2500 and index.capacity == 2501  # room reserved for every row
        query = _unit(rng, 1)[0]
        assert [s for s, _ in index.nearest(query, 15)] == _brute(conn, query, 15)
        assert not index.refresh(conn)  # nothing new: a plain refresh stays cheap
        assert len(index) == 2500
    finally:
        conn.close()


def test_one_index_serves_two_threads_with_their_own_connections(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    data = _unit(rng, 3000)
    query = _unit(rng, 1)[0]
    path = tmp_path / "g.sqlite"
    open_database(path).close()
    index = VectorIndex(MEMORIES, "m", 384)
    failures: list[BaseException] = []
    done = threading.Event()

    def writer() -> None:
        conn = open_database(path)
        try:
            for start in range(0, len(data), 100):
                with conn:
                    for seq in range(start, start + 100):
                        _put(conn, seq, data[seq])
                index.refresh(conn)
        except BaseException as exc:  # reported by the test thread
            failures.append(exc)
        finally:
            done.set()
            conn.close()

    def reader() -> None:
        conn = open_database(path)
        try:
            while not done.is_set():
                index.refresh(conn)
                found = index.nearest(query, 10)
                # Whatever was loaded when the scan began, ranked best first.
                sims = [sim for _, sim in found]
                assert sims == sorted(sims, reverse=True)
                assert all(0 <= seq < len(data) for seq, _ in found)
        except BaseException as exc:
            failures.append(exc)
        finally:
            conn.close()

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not failures
    conn = open_database(path)
    try:
        index.refresh(conn)
        assert len(index) == len(data)
        assert [s for s, _ in index.nearest(query, 20)] == _brute(conn, query, 20)
    finally:
        conn.close()


def test_a_refresh_waits_for_one_under_way_on_another_thread(tmp_path: Path) -> None:
    conn = open_database(tmp_path / "g.sqlite")
    try:
        _put(conn, 1, _unit(np.random.default_rng(5), 1)[0])
        index = VectorIndex(MEMORIES, "m", 384)
        with index._lock:  # as a refresh on another thread holds it
            other = threading.Thread(target=index.refresh, args=(conn,))
            other.start()
            other.join(0.2)
            assert other.is_alive() and len(index) == 0
        other.join(10)
        assert len(index) == 1
    finally:
        conn.close()
