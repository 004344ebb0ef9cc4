"""Sentence vectors in a group's SQLite file, and the nearest-neighbour scan over them.

Vectors are derived data, like the FTS index: one row per embedded memory
entry (``memory_vectors``) or exchange (``exchange_vectors``), a float32 BLOB
labelled with the model that made it. Triggers drop a vector when its text
changes or its row goes, and the background worker (:mod:`core.semantic.backfill`) makes
the missing ones.

What gets a vector follows what gets an FTS entry: a memory's ``search_text``,
which is empty for private and secret entries (their content is ciphertext at
rest), so their plaintext never reaches an unencrypted vector. Exchanges are
stored and indexed as plain text already; their vectors add nothing a reader of
the file could not see.

Search scans every vector with one matrix product (:class:`VectorIndex`): at
10,000 vectors of 384 dimensions that is about a millisecond, faster than
sqlite-vec's brute-force ``vec0`` scan at these sizes (``bench/vectors.py``).
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from core.storage.worker import release_freed_memory

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from core.semantic.embedding import Vectors


@dataclass(frozen=True)
class VectorTable:
    """One kind of embedded row: where its text is and where its vectors go."""

    table: str
    key: str
    source: str
    text: str
    #: Rows of ``source`` that should have a vector.
    eligible: str


#: Vectors read from the database per step when loading an index.
LOAD_CHUNK: Final = 4096
#: A load of at least this many vectors hands the freed row objects' pages back.
RELEASE_AFTER: Final = 10_000
#: Rows marked gone before the copy is compacted (or a quarter of it, if more).
GONE_BEFORE_COMPACTING: Final = 1024

MEMORIES: Final = VectorTable(
    table="memory_vectors",
    key="entry_seq",
    source="memory_entries",
    text="search_text",
    eligible="s.search_text != ''",
)
EXCHANGES: Final = VectorTable(
    table="exchange_vectors",
    key="exchange_seq",
    source="exchanges",
    text="text",
    eligible="1",
)
TABLES: Final = (MEMORIES, EXCHANGES)


def to_blob(vector: npt.NDArray[np.float32]) -> bytes:
    import numpy as np

    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def pending(conn: Any, kind: VectorTable, model_id: str, limit: int) -> list[tuple[int, str]]:
    """Up to ``limit`` rows still without a vector of ``model_id``, oldest first."""
    rows = conn.execute(
        f"SELECT s.seq, s.{kind.text} FROM {kind.source} s WHERE {kind.eligible} "
        f"AND NOT EXISTS (SELECT 1 FROM {kind.table} v WHERE v.{kind.key} = s.seq "
        f"AND v.model = ?) ORDER BY s.seq LIMIT {int(limit)}",
        (model_id,),
    ).fetchall()
    return [(int(r[0]), str(r[1])) for r in rows]


def pending_count(conn: Any, kind: VectorTable, model_id: str) -> int:
    return int(
        conn.execute(
            f"SELECT count(*) FROM {kind.source} s WHERE {kind.eligible} "
            f"AND NOT EXISTS (SELECT 1 FROM {kind.table} v WHERE v.{kind.key} = s.seq "
            "AND v.model = ?)",
            (model_id,),
        ).get
    )


#: A group's :func:`fingerprint`.
Fingerprint = tuple[int, ...]


def fingerprint(conn: Any) -> Fingerprint:
    """What moves whenever a row may have lost its vector or not have one yet.

    A new memory or turn raises its table's highest ``seq``; a deleted vector (an
    edit, a deleted row, a rebuild) lowers its table's count, so a new row that
    reuses the ``seq`` of a deleted newest one moves it too. Two seeks and two
    counts of the vectors' small key index, which a search's refresh of its copy
    of the vectors reads next anyway (:class:`VectorIndex`). Counting the rows
    themselves was left out: at 100,000 memories it walked an index of theirs
    for 2 ms after another connection's commit. What none of this sees: a
    private entry made public, or a deleted private newest entry whose ``seq`` a
    new one reuses, in a process without a worker; such a row waits for the next
    change, as it did before.
    """
    parts = ", ".join(
        f"(SELECT coalesce(max(seq), 0) FROM {k.source}), (SELECT count(*) FROM {k.table})"
        for k in TABLES
    )
    return tuple(int(v) for v in conn.execute(f"SELECT {parts}").fetchone())


def eligible_count(conn: Any, kind: VectorTable) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {kind.source} s WHERE {kind.eligible}").get)


def write(
    conn: Any, kind: VectorTable, model_id: str, rows: list[tuple[int, str]], vectors: Vectors
) -> int:
    """Store the vectors of ``rows`` whose text is still what was embedded; returns how many.

    The caller holds a write transaction. A row edited or deleted while the model
    ran is skipped: its text no longer matches, and a later pass embeds it anew.
    """
    written = 0
    for (seq, text), vector in zip(rows, vectors, strict=True):
        current = conn.execute(
            f"SELECT {kind.text} FROM {kind.source} WHERE seq = ?", (seq,)
        ).fetchone()
        if current is None or current[0] != text:
            continue
        conn.execute(
            f"INSERT OR REPLACE INTO {kind.table} ({kind.key}, model, vector) VALUES (?, ?, ?)",
            (seq, model_id, to_blob(vector)),
        )
        written += 1
    return written


class VectorIndex:
    """An in-memory copy of one table's vectors, kept fresh incrementally.

    Rows only ever get a higher ``id``; a refresh reads those above the last one
    seen. When the row count no longer adds up (a vector deleted, or another
    model's replaced by this one's), the keys say which rows went, and only those
    leave the copy: the vectors are not read again.

    One copy serves every thread of the process that searches the same file: each
    call passes its own thread's connection. A lock keeps a refresh whole; a scan
    reads the rows loaded when it began, outside the lock, so two searches do not
    wait on each other's matrix product. (A statement outside a transaction reads
    the newest commit, so a later refresh never sees fewer rows than an earlier one
    on another connection.)
    """

    def __init__(self, kind: VectorTable, model_id: str, dimensions: int) -> None:
        import numpy as np

        self.kind = kind
        self.model_id = model_id
        self._dims = dimensions
        # Rows are appended into spare capacity (a quarter more each time), so a store that grows
        # one row at a time does not copy the whole matrix each time.
        self._buffer: Vectors = np.zeros((0, dimensions), dtype=np.float32)
        self._key_buffer: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._size = 0
        #: Rows marked gone (key -1) and not yet compacted away.
        self._gone = 0
        self._rows: dict[int, int] = {}
        self._last_id = 0
        #: Rows of another model (before a re-index replaces them): not loaded.
        self._other_models = 0
        #: Some rows are not loaded yet: the last refresh stopped at its ``at_most``.
        self.loading = False
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def capacity(self) -> int:
        """Vectors the buffer has room for."""
        return len(self._buffer)

    def refresh(self, conn: Any, *, at_most: int | None = None) -> bool:
        """Load the vectors added since the last call (all of them when some went).

        ``at_most`` loads that many at the most, so a large first load can be
        spread over several calls with other work between them. Returns whether
        some may still be unloaded (only ever with ``at_most``).
        """
        with self._lock:
            return self._refresh(conn, at_most)

    def _refresh(self, conn: Any, at_most: int | None) -> bool:
        k = self.kind
        if not self._size:
            # The first load: room for all of them at once, not grown step by step.
            self._reserve(int(conn.execute(f"SELECT count(*) FROM {k.table}").get))
        bound = "" if at_most is None else f" LIMIT {int(at_most)}"
        loaded = self._load(
            conn.execute(
                f"SELECT id, {k.key}, vector FROM {k.table} WHERE id > ? AND model = ? "
                f"ORDER BY id{bound}",
                (self._last_id, self.model_id),
            )
        )
        self.loading = at_most is not None and loaded >= at_most
        if self.loading:
            return True
        # count(*) reads the small key index, not the vectors.
        total = int(conn.execute(f"SELECT count(*) FROM {k.table}").get)
        if total != len(self._rows) + self._other_models and not conn.in_transaction:
            # Some went, or another model's rows were replaced by ours (a model switch).
            # The keys alone (the same small index) say which of ours are gone. Not in a
            # transaction: an older snapshot would lack rows loaded since, and a row
            # dropped here is never read again.
            import numpy as np

            present = np.fromiter(
                (r[0] for r in conn.execute(f"SELECT {k.key} FROM {k.table}")), dtype=np.int64
            )
            self._keep_only(present)
            self._other_models = max(0, total - len(self._rows))
        if loaded >= RELEASE_AFTER:
            # Reading them went through tens of megabytes of row objects.
            release_freed_memory()
        return False

    def _load(self, cursor: Any) -> int:
        """Append the rows of ``cursor`` a chunk at a time; returns how many."""
        count = 0
        while chunk := list(itertools.islice(cursor, LOAD_CHUNK)):
            self._append(chunk)
            count += len(chunk)
        return count

    def _reserve(self, rows: int) -> None:
        """Make room for ``rows`` vectors in all (nothing when there is room already)."""
        import numpy as np

        if rows <= len(self._buffer):
            return
        grown = np.zeros((rows, self._dims), dtype=np.float32)
        grown[: self._size] = self._buffer[: self._size]
        grown_keys = np.zeros(rows, dtype=np.int64)
        grown_keys[: self._size] = self._key_buffer[: self._size]
        self._buffer, self._key_buffer = grown, grown_keys

    @property
    def _matrix(self) -> Vectors:
        return self._buffer[: self._size]

    @property
    def _keys(self) -> npt.NDArray[np.int64]:
        return self._key_buffer[: self._size]

    def _keep_only(self, present: npt.NDArray[np.int64]) -> None:
        """Mark the rows whose key is not in ``present`` as gone (key -1), in place;
        their room is reclaimed once gone rows are a quarter of the copy."""
        import numpy as np

        keys = self._keys
        gone = np.flatnonzero(~np.isin(keys, present) & (keys >= 0))
        if not len(gone):
            return
        for key in keys[gone].tolist():
            del self._rows[key]
        # A scan under way on another thread reads these keys after its product,
        # so it leaves out a row marked now (or returns it, its row already deleted).
        self._key_buffer[gone] = -1
        self._gone += len(gone)
        if self._gone > max(GONE_BEFORE_COMPACTING, self._size // 4):
            self._compact()

    def _compact(self) -> None:
        """The live rows into new arrays (a scan under way keeps reading the old ones)."""
        import numpy as np

        kept = np.flatnonzero(self._keys >= 0)
        spare = len(self._buffer) - self._size
        buffer = np.zeros((len(kept) + spare, self._dims), dtype=np.float32)
        buffer[: len(kept)] = self._matrix[kept]
        keys = np.zeros(len(buffer), dtype=np.int64)
        keys[: len(kept)] = self._keys[kept]
        self._buffer, self._key_buffer, self._size = buffer, keys, len(kept)
        self._rows = {int(key): row for row, key in enumerate(keys[: len(kept)].tolist())}
        self._gone = 0

    def _append(self, rows: list[Any]) -> None:
        if not rows:
            return
        import numpy as np

        blobs = b"".join(r[2] for r in rows)
        added = np.frombuffer(blobs, dtype="<f4").reshape(len(rows), self._dims)
        keys = np.fromiter((int(r[1]) for r in rows), dtype=np.int64, count=len(rows))
        replaced = [i for i, key in enumerate(keys.tolist()) if key in self._rows]
        if replaced:
            # A re-embedded row: overwrite its old place rather than keep two.
            for i in replaced:
                self._buffer[self._rows[int(keys[i])]] = added[i]
            fresh = np.ones(len(rows), dtype=bool)
            fresh[replaced] = False
            added, keys = added[fresh], keys[fresh]
        start, end = self._size, self._size + len(keys)
        if end > len(self._buffer):
            self._reserve(max(end, len(self._buffer) * 5 // 4, len(self._buffer) + 1024))
        self._buffer[start:end] = added
        self._key_buffer[start:end] = keys
        self._size = end
        for offset, key in enumerate(keys.tolist()):
            self._rows[key] = start + offset
        self._last_id = int(rows[-1][0])

    def nearest(
        self, query: npt.NDArray[np.float32], k: int, *, among: Iterable[int] | None = None
    ) -> list[tuple[int, float]]:
        """The ``k`` most similar rows as (seq, cosine similarity), best first;
        ``among``: the most similar of these seqs only (a search filtered by a
        field the vectors do not hold), not the most similar of all, filtered after."""
        import numpy as np

        with self._lock:
            # Views of the rows loaded now: a later append writes past them, a growth
            # or a compaction makes new arrays and leaves these as they are (only a
            # re-embedded row is overwritten in place, and a gone one marked).
            matrix, keys, gone = self._matrix, self._keys, self._gone
            rows = None
            if among is not None:
                # Read under the lock: a compaction moves the rows.
                places = self._rows
                rows = np.fromiter((places[s] for s in among if s in places), dtype=np.int64)
        if not len(keys) or k <= 0:
            return []
        sims = matrix @ query
        if rows is not None:
            sims, keys = sims[rows], keys[rows]
            if not len(keys):
                return []
        want = min(k + gone, len(sims))  # the best k live rows are among these
        top = np.argpartition(-sims, want - 1)[:want]
        top = top[np.argsort(-sims[top])]
        found = [(int(keys[i]), float(sims[i])) for i in top]
        return [(key, sim) for key, sim in found if key >= 0][:k]

    def similarities(self, seqs: list[int], query: npt.NDArray[np.float32]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each of ``seqs`` that has a vector."""
        with self._lock:
            known = [(seq, self._rows[seq]) for seq in seqs if seq in self._rows]
            if not known:
                return {}
            rows = self._matrix[[row for _, row in known]]
        sims = rows @ query
        return {seq: float(sim) for (seq, _), sim in zip(known, sims.tolist(), strict=True)}

    def live(
        self, among: npt.NDArray[np.int64] | None = None
    ) -> tuple[npt.NDArray[np.int64], Vectors]:
        """The keys and vectors of every row loaded now (gone ones left out), for a
        scan of all against all (:mod:`core.recall.duplicates`); ``among``: only the
        rows of these keys, copied once (at 100,000 rows a copy is 150 MB)."""
        import numpy as np

        with self._lock:
            matrix, keys = self._matrix, self._keys
        kept = keys >= 0
        if among is not None:
            kept &= np.isin(keys, among)
        return keys[kept], matrix[kept]

    def vector_of(self, seq: int) -> npt.NDArray[np.float32] | None:
        with self._lock:
            row = self._rows.get(seq)
            return None if row is None else self._matrix[row].copy()
