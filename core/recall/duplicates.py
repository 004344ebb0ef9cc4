"""Near-duplicates: current memories so close in meaning that one of them could go.

An agent that rephrases stores "User prefers dark mode in the editor" and "The user
prefers dark mode in editors" as two memories; both stay current and both reach
the brief. This finds such pairs for the person to resolve (it is not an agent
tool: what to keep is the person's call), and groups pairs that share a memory
into one cluster.

Two entries are near-duplicates when the cosine similarity of their stored
vectors is at least :data:`DUPLICATE_COSINE` and their words do not tell them
apart (:func:`told_apart`): a different name, number, weekday or month on each
side, a negation or "used to" on one side only, a word and its opposite, a
comparison turned round, or a word swapped for another in an otherwise equal
sentence (:mod:`core.recall.wording`).
Cosine alone does not
separate them: "Meeting on Monday" and "Meeting on Tuesday" score 0.937, above
most paraphrases (docs/search.md, "Near-duplicates", has the measured pairs).

Only entries with a vector are compared, all against all with one matrix
product per block of rows of the in-memory index search uses. Public entries
have vectors once embedded (those waiting are counted); private and secret ones
never have one (docs/search.md, "Private and secret entries"), so they are
counted and not compared. Secret entries are left out even if a vector were
found for them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from core.model.entries import Privacy, Status
from core.recall.wording import told_apart
from core.semantic import hybrid, vectors
from core.semantic.embedding import shared_embedder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from core.semantic.embedding import Embedder
    from core.storage.store import GroupStore

#: Cosine similarity from which two entries may be near-duplicates (measured).
DUPLICATE_COSINE: Final = 0.85
#: The lowest threshold a person may ask for: below it nearly everything pairs up.
MIN_THRESHOLD: Final = 0.5
#: Rows of the index compared with all others per matrix product (4 MB of floats
#: per 1,000 vectors of the other side).
BLOCK: Final = 1024


@dataclass(frozen=True)
class Cluster:
    """Memories close enough to be the same memory said twice.

    Attributes:
        ids: the entries, oldest first.
        similarity: the highest cosine similarity of each entry to another of the
            cluster, by id.
        lowest: the lowest similarity of the pairs that joined the cluster.
    """

    ids: tuple[str, ...]
    similarity: dict[str, float] = field(hash=False)
    lowest: float


@dataclass(frozen=True)
class Survey:
    """What :func:`near_duplicates` found and what it could not compare.

    Attributes:
        clusters: most similar first.
        compared: current public entries compared.
        waiting: current public entries without a vector yet (not compared).
        sealed: current private and secret entries (never compared: no vector).
        off: the model could not be loaded, so nothing was compared.
    """

    clusters: tuple[Cluster, ...]
    compared: int
    waiting: int
    sealed: int
    off: bool = False


def near_duplicates(
    store: GroupStore, *, threshold: float = DUPLICATE_COSINE, model_dir: str = ""
) -> Survey:
    """The clusters of near-duplicate current memories of ``store``."""
    current = _current(store)
    public = {seq: row for seq, row in current.items() if row[2] == Privacy.PUBLIC.value}
    sealed = len(current) - len(public)
    embedder = shared_embedder(model_dir)
    if embedder is None:
        return Survey((), 0, len(public), sealed, off=True)
    index = hybrid.vector_index(store, vectors.MEMORIES, embedder)
    keys, matrix = index.live()
    import numpy as np

    wanted = np.fromiter(public, dtype=np.int64, count=len(public))
    mask = np.isin(keys, wanted)
    keys, matrix = keys[mask], matrix[mask]
    pairs = _close_pairs(keys, matrix, threshold)

    @functools.cache
    def unreadable(seq: int) -> bool:
        # Once per entry, not per pair: an entry can be in hundreds of close pairs.
        return embedder.unknown_share(public[seq][1]) > hybrid.UNREADABLE

    kept: list[tuple[int, int, float]] = []
    for a, b, cosine in pairs:
        if unreadable(a) or unreadable(b):
            continue  # the model cannot read it: such texts all have nearly one vector
        if not told_apart(public[a][1], public[b][1]):
            kept.append((a, b, cosine))
    clusters = _clusters(kept, {seq: row[0] for seq, row in public.items()})
    return Survey(tuple(clusters), len(keys), len(public) - len(keys), sealed)


class Rewordings:
    """Tells the brief which candidate says what a line it shows says, in other words.

    The test of :func:`near_duplicates` (stored vectors at :data:`DUPLICATE_COSINE`,
    not :func:`told_apart`, both readable by the model), asked of one entry at a
    time against the few already shown, so its cost follows the lines of the
    brief, not the size of the store. An entry without a vector (waiting to be
    embedded, private, secret) is never a rewording of anything, nor is anything a
    rewording of it. Vectors are read from the store once per entry; the model is
    loaded only when two vectors are close, to check that it can read both texts.
    """

    def __init__(
        self, store: GroupStore, *, threshold: float = DUPLICATE_COSINE, model_dir: str = ""
    ) -> None:
        self._store = store
        self._threshold = threshold
        self._model_dir = model_dir
        self._known: dict[str, tuple[str, str, npt.NDArray[np.float32]] | None] = {}
        self._readable: dict[str, bool] = {}
        self._embedder: Embedder | None = None
        self._loaded = False

    def _vector(self, entry_id: str) -> tuple[str, str, npt.NDArray[np.float32]] | None:
        """The entry's model, search text and stored vector; None without one."""
        if entry_id not in self._known:
            import numpy as np

            row = self._store.execute(
                "SELECT v.model, e.search_text, v.vector FROM memory_entries e "
                "JOIN memory_vectors v ON v.entry_seq = e.seq "
                "WHERE e.id = ? AND e.privacy = ?",
                (entry_id, Privacy.PUBLIC.value),
            ).fetchone()
            self._known[entry_id] = (
                None
                if row is None
                else (str(row[0]), str(row[1]), np.frombuffer(row[2], dtype="<f4"))
            )
        return self._known[entry_id]

    def _can_read(self, model: str, text: str) -> bool:
        if not self._loaded:
            self._embedder, self._loaded = shared_embedder(self._model_dir), True
        embedder = self._embedder
        if embedder is None:
            return False  # the model cannot be loaded: nothing is a rewording
        if embedder.model_id != model:
            return False  # made by another model, not yet embedded again
        if text not in self._readable:
            self._readable[text] = embedder.unknown_share(text) <= hybrid.UNREADABLE
        return self._readable[text]

    def of(self, entry_id: str, shown: Sequence[str]) -> str | None:
        """The first of ``shown`` that ``entry_id`` rewords, or None."""
        mine = self._vector(entry_id)
        if mine is None:
            return None
        model, text, vector = mine
        for other_id in shown:
            other = self._vector(other_id)
            if other is None or other[0] != model or other[2].shape != vector.shape:
                continue
            if float(vector @ other[2]) < self._threshold or told_apart(text, other[1]):
                continue
            if self._can_read(model, text) and self._can_read(model, other[1]):
                return other_id
        return None


def _current(store: GroupStore) -> dict[int, tuple[str, str, str]]:
    """Current active entries by seq: (id, search text, privacy), oldest first."""
    return {
        int(r[0]): (str(r[1]), str(r[2]), str(r[3]))
        for r in store.execute(
            "SELECT seq, id, search_text, privacy FROM memory_entries "
            "WHERE superseded_by IS NULL AND status = ? ORDER BY seq",
            (Status.ACTIVE.value,),
        )
    }


def _close_pairs(keys: object, matrix: object, threshold: float) -> list[tuple[int, int, float]]:
    """Every pair (seq, seq, cosine) at or above ``threshold``, each once, best first.

    One matrix product per block of rows, against the rows after the block's
    first: 10,000 vectors are 50 million similarities, never a Python loop.
    """
    import numpy as np

    k: npt.NDArray[np.int64] = np.asarray(keys)
    m: npt.NDArray[np.float32] = np.asarray(matrix)
    found: list[tuple[int, int, float]] = []
    for start in range(0, len(k), BLOCK):
        block = m[start : start + BLOCK]
        sims = block @ m[start:].T
        # Only each pair's upper half (j > i), not an entry with itself.
        sims = np.triu(sims, k=1)
        rows, cols = np.nonzero(sims >= threshold)
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            found.append((int(k[start + i]), int(k[start + j]), float(sims[i, j])))
    found.sort(key=lambda p: -p[2])
    return found


def _clusters(pairs: list[tuple[int, int, float]], ids: dict[int, str]) -> list[Cluster]:
    """Pairs joined into clusters in which every entry is a near-duplicate of every other.

    Best pairs first; two clusters join only when each entry of one pairs with each
    of the other, so a chain (a like b, b like c, a not like c) never puts a and c
    together: "Leah edits text in Neovim" and "Leah C. ..." may join, but never with
    "Chloe D. ..." through a third.
    """
    close = {(min(a, b), max(a, b)): cosine for a, b, cosine in pairs}
    of: dict[int, list[int]] = {}
    for a, b, _ in pairs:  # best first
        ca, cb = of.setdefault(a, [a]), of.setdefault(b, [b])
        if ca is cb or not all((min(x, y), max(x, y)) in close for x in ca for y in cb):
            continue
        ca.extend(cb)
        for seq in cb:
            of[seq] = ca
    out: list[Cluster] = []
    for members in {id(c): c for c in of.values() if len(c) > 1}.values():
        seqs = sorted(members)
        within = [close[(x, y)] for n, x in enumerate(seqs) for y in seqs[n + 1 :]]
        best = {s: max(close[(min(s, t), max(s, t))] for t in seqs if t != s) for s in seqs}
        out.append(
            Cluster(
                tuple(ids[s] for s in seqs),
                {ids[s]: hybrid.rounded(best[s]) for s in seqs},
                hybrid.rounded(min(within)),
            )
        )
    out.sort(key=lambda c: (-max(c.similarity.values()), c.ids))
    return out
