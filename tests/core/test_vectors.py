"""The in-memory vector copy stays equal to the table through inserts, replacements, deletes."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import numpy as np
import pytest

from core.semantic import vectors
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


def _brute(
    conn: apsw.Connection, query: np.ndarray, k: int, among: set[int] | None = None
) -> list[int]:
    rows = conn.execute("SELECT entry_seq, vector FROM memory_vectors WHERE model = 'm'")
    scored = [(float(np.frombuffer(b, "<f4") @ query), int(s)) for s, b in rows]
    return [s for _, s in sorted(scored, reverse=True) if among is None or s in among][:k]


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
        # The nearest among some rows: those the best of all may leave out, and none
        # of the rest (gone ones, and ones with no vector, are not among them).
        among = {*range(0, 1200, 40), 7, 5000, 99_999}
        found = [s for s, _ in index.nearest(query, 20, among=among)]
        assert found == _brute(conn, query, 20, among) and len(found) == 20
        assert index.nearest(query, 5, among=set()) == []
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


class _Recording:
    """A connection that notes every statement it runs (to see what a refresh reads)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.statements: list[str] = []

    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def execute(self, sql: str, *args: object) -> apsw.Cursor:
        self.statements.append(sql)
        return self.conn.execute(sql, *args)


def test_deletes_and_a_model_switch_leave_the_other_vectors_unread(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    conn = open_database(tmp_path / "g.sqlite")
    try:
        data = _unit(rng, 300)
        with conn:
            for seq in range(200):
                _put(conn, seq, data[seq], model="old")  # before the switch
            for seq in range(200, 300):
                _put(conn, seq, data[seq])
        index = VectorIndex(MEMORIES, "m", 384)
        recording = _Recording(conn)
        index.refresh(recording)
        assert len(index) == 100
        query = _unit(rng, 1)[0]
        # The worker replaces the old model's rows with this one's, a batch at a time;
        # rows are deleted meanwhile. Each refresh reads only the rows new to it.
        for start in range(0, 200, 50):
            recording.statements.clear()
            with conn:
                for seq in range(start, start + 50):
                    _put(conn, seq, data[seq])
                conn.execute("DELETE FROM memory_vectors WHERE entry_seq = ?", (250 + start // 50,))
            index.refresh(recording)
            reads = [sql for sql in recording.statements if "vector FROM" in sql]
            assert reads and all("id > ?" in sql for sql in reads)
            assert [s for s, _ in index.nearest(query, 20)] == _brute(conn, query, 20)
        assert len(index) == 296
        assert index.vector_of(250) is None and index.vector_of(0) is not None
    finally:
        conn.close()


def test_a_refresh_inside_an_older_snapshot_loses_no_rows(tmp_path: Path) -> None:
    rng = np.random.default_rng(6)
    path = tmp_path / "g.sqlite"
    writer, reader = open_database(path), open_database(path)
    try:
        data = _unit(rng, 200)
        with writer:
            for seq in range(100):
                _put(writer, seq, data[seq])
        index = VectorIndex(MEMORIES, "m", 384)
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM memory_vectors").get == 100  # snapshot
        with writer:
            for seq in range(100, 200):
                _put(writer, seq, data[seq])
        index.refresh(writer)
        assert len(index) == 200
        index.refresh(reader)  # sees 100 rows of the 200 loaded: none is taken for gone
        assert len(index) == 200
        reader.execute("COMMIT")
        index.refresh(reader)
        query = _unit(rng, 1)[0]
        assert [s for s, _ in index.nearest(query, 30)] == _brute(writer, query, 30)
        assert len(index) == 200
    finally:
        reader.close()
        writer.close()


def test_gone_rows_are_compacted_away_once_they_are_many(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "GONE_BEFORE_COMPACTING", 0)  # a quarter of the copy
    rng = np.random.default_rng(8)
    conn = open_database(tmp_path / "g.sqlite")
    try:
        data = _unit(rng, 100)
        with conn:
            for seq in range(100):
                _put(conn, seq, data[seq])
        index = VectorIndex(MEMORIES, "m", 384)
        index.refresh(conn)
        query = _unit(rng, 1)[0]
        for gone in (range(0, 20), range(20, 30)):  # 20 marked; 30 > 25: compacted
            conn.execute(
                f"DELETE FROM memory_vectors WHERE entry_seq IN ({','.join(map(str, gone))})"
            )
            index.refresh(conn)
            assert [s for s, _ in index.nearest(query, 100)] == _brute(conn, query, 100)
        assert len(index) == 70 and index._size == 70  # the gone rows' room is reclaimed
        _put(conn, 5, data[5])  # a gone row comes back
        index.refresh(conn)
        assert [s for s, _ in index.nearest(query, 100)] == _brute(conn, query, 100)
        vec = index.vector_of(5)
        assert vec is not None and np.allclose(vec, data[5])
    finally:
        conn.close()
