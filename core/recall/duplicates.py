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

Only entries with a vector are compared: all against all with one matrix product
per block of rows of the in-memory index search uses, up to
:data:`EXACT_UP_TO` of them; above that, at the thresholds near-duplicates are
looked for at, each against those in its nearest groups of meaning
(:func:`_clustered_arrays`), which finds the same pairs in a fraction of the
time (docs/search.md, "Near-duplicates", has the figures). Public entries
have vectors once embedded (those waiting are counted); private and secret ones
never have one (docs/search.md, "Private and secret entries"), so they are
counted and not compared. Secret entries are left out even if a vector were
found for them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from core.model.entries import Privacy, Status
from core.recall.wording import Wording, differ, told_apart
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
#: Rows of the index compared with all others per matrix product, at most.
BLOCK: Final = 1024
#: Similarities one matrix product holds at most (64 MB of floats): fewer rows a
#: block the more vectors there are, so memory stays bounded at any size.
BLOCK_FLOATS: Final = 16 * 1024 * 1024

#: Close pairs turned into Python values at a time.
PAIR_CHUNK: Final = 65536

#: Vectors compared all against all, at most; above, each is compared with the
#: entries of its :data:`PROBES` nearest groups (``√n`` groups, measured below).
EXACT_UP_TO: Final = 20_000
#: The lowest threshold the grouped search is used at: below it close pairs span
#: groups too often (at 0.7 it found 0.97 of the pairs, at 0.5 0.77).
CLUSTERED_FROM: Final = 0.8
#: Nearest groups each vector is compared within (at 0.8, 0.9999 of the pairs; at
#: 0.85 and 0.9, all of them, on 30,000 and 100,000 generated facts).
PROBES: Final = 8
#: Vectors the groups are drawn from, and the rounds drawing them takes.
CLUSTER_SAMPLE: Final = 20_000
CLUSTER_ROUNDS: Final = 8

#: Told after each block: comparisons done, comparisons in all.
Progress = Callable[[int, int], None]


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
    store: GroupStore,
    *,
    threshold: float = DUPLICATE_COSINE,
    model_dir: str = "",
    progress: Progress | None = None,
) -> Survey:
    """The clusters of near-duplicate current memories of ``store``.

    ``progress`` hears how many of the comparisons are done (see :func:`_close_arrays`),
    then, all done, again after each chunk of close pairs whose words are read (a
    third of the time at 85,000 memories); an exception it raises stops the search,
    which is how a caller cancels it.
    """
    current = _current(store)
    public = {seq: row for seq, row in current.items() if row[2] == Privacy.PUBLIC.value}
    sealed = len(current) - len(public)
    embedder = shared_embedder(model_dir)
    if embedder is None:
        return Survey((), 0, len(public), sealed, off=True)
    index = hybrid.vector_index(store, vectors.MEMORIES, embedder)
    import numpy as np

    wanted = np.fromiter(public, dtype=np.int64, count=len(public))
    keys, matrix = index.live(wanted)
    compared = len(keys)
    heard = [0]

    def told(done: int, total: int) -> None:
        heard[0] = total
        if progress is not None:
            progress(done, total)

    pairs = _close_arrays(keys, matrix, threshold, told)
    del matrix

    @functools.cache
    def unreadable(seq: int) -> bool:
        # Once per entry, not per pair: an entry can be in hundreds of close pairs.
        return embedder.unknown_share(public[seq][1]) > hybrid.UNREADABLE

    @functools.cache
    def wording(seq: int) -> Wording:
        return Wording(public[seq][1])

    total = heard[0]  # the comparisons made: fewer than all pairs above EXACT_UP_TO
    kept: list[tuple[int, int, float]] = []
    for chunk in _pair_chunks(*pairs):
        if progress is not None:
            progress(total, total)  # a chance to stop between chunks of words
        for a, b, cosine in chunk:
            if unreadable(a) or unreadable(b):
                continue  # the model cannot read it: such texts all have nearly one vector
            if not differ(wording(a), wording(b)):
                kept.append((a, b, cosine))
    clusters = _clusters(kept, {seq: row[0] for seq, row in public.items()})
    return Survey(tuple(clusters), compared, len(public) - compared, sealed)


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


def _close_pairs(
    keys: object, matrix: object, threshold: float, progress: Progress | None = None
) -> list[tuple[int, int, float]]:
    """Every pair (seq, seq, cosine) at or above ``threshold``, each once, best first."""
    return [
        pair
        for chunk in _pair_chunks(*_close_arrays(keys, matrix, threshold, progress))
        for pair in chunk
    ]


def _pair_chunks(
    firsts: npt.NDArray[np.int64], seconds: npt.NDArray[np.int64], cosines: npt.NDArray[np.float32]
) -> Iterator[list[tuple[int, int, float]]]:
    """The pairs as Python values a chunk at a time: millions of them at once would be
    hundreds of megabytes of tuples."""
    for start in range(0, len(cosines), PAIR_CHUNK):
        end = start + PAIR_CHUNK
        yield list(
            zip(
                firsts[start:end].tolist(),
                seconds[start:end].tolist(),
                cosines[start:end].tolist(),
                strict=True,
            )
        )


def _close_arrays(
    keys: object, matrix: object, threshold: float, progress: Progress | None = None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Every pair at or above ``threshold`` as arrays (seqs, seqs, cosines), best first.

    Equal cosines keep the order of the pairs' rows (first, then second), so the
    grouped search and the full one list the pairs they both find alike.
    """
    import numpy as np

    k: npt.NDArray[np.int64] = np.asarray(keys)
    m: npt.NDArray[np.float32] = np.asarray(matrix)
    if len(k) > EXACT_UP_TO and threshold >= CLUSTERED_FROM:
        firsts, seconds, cosines = _clustered_arrays(m, threshold, progress)
    else:
        firsts, seconds, cosines = _all_arrays(m, threshold, progress)
    order = np.lexsort((seconds, firsts, -cosines))
    return k[firsts[order]], k[seconds[order]], cosines[order]


Rows = tuple["npt.NDArray[np.int64]", "npt.NDArray[np.int64]", "npt.NDArray[np.float32]"]


def _all_arrays(m: npt.NDArray[np.float32], threshold: float, progress: Progress | None) -> Rows:
    """Every close pair of rows (i < j), comparing each row with every later one.

    One matrix product per block of rows against the rows from the block's first
    on, never a Python loop over pairs and never the whole similarity matrix: a
    block holds at most :data:`BLOCK_FLOATS` similarities (64 MB), however many
    vectors there are (at 100,000 a block of 1,024 rows was 400 MB, and twice that
    with its upper triangle copied). ``progress`` hears after each block how many
    of the comparisons are done.
    """
    import numpy as np

    n = len(m)
    rows_per = max(1, min(BLOCK, BLOCK_FLOATS // max(n, 1)))
    total = n * (n - 1) // 2
    found: list[Rows] = [_no_rows()]
    for start in range(0, n, rows_per):
        block = m[start : start + rows_per]
        sims = block @ m[start:].T
        rows, cols = np.nonzero(sims >= threshold)
        # Only each pair's upper half (j > i), not an entry with itself.
        upper = cols > rows
        rows, cols = rows[upper], cols[upper]
        found.append((start + rows, start + cols, sims[rows, cols]))
        del sims
        if progress is not None:
            left = n - min(start + rows_per, n)
            progress(total - left * (left - 1) // 2, total)
    return _joined(found)


def _clustered_arrays(
    m: npt.NDArray[np.float32], threshold: float, progress: Progress | None
) -> Rows:
    """The close pairs of rows (i < j) found within groups of meaning.

    The rows are drawn into ``√n`` groups (spherical k-means on a sample, seeded so
    that a search repeats), each row belongs to the group it is nearest to, and is
    compared with the rows of its :data:`PROBES` nearest groups. Two close rows
    nearly always share one of those: at 100,000 vectors this compares about a
    fortieth of the pairs. ``progress`` hears after each group how many of the
    comparisons are done.
    """
    import numpy as np

    n = len(m)
    centres = _centres(m, max(PROBES, round(n**0.5)))
    groups = len(centres)
    probes = min(PROBES, groups)
    home = np.empty(n, dtype=np.int64)
    near = np.empty((n, probes), dtype=np.int64)
    for start in range(0, n, BLOCK):
        sims = m[start : start + BLOCK] @ centres.T
        home[start : start + BLOCK] = np.argmax(sims, axis=1)
        near[start : start + BLOCK] = np.argpartition(-sims, probes - 1, axis=1)[:, :probes]
    members = _by_group(home, groups)
    askers = _by_group(near.ravel(), groups, np.repeat(np.arange(n, dtype=np.int64), probes))
    total = sum(len(a) * len(b) for a, b in zip(askers, members, strict=True))
    done = 0
    found: list[Rows] = [_no_rows()]
    for asking, group in zip(askers, members, strict=True):
        # However a group is drawn, a product holds at most BLOCK_FLOATS similarities
        # and copies at most 4 * BLOCK rows of each side.
        for first in range(0, len(group), 4 * BLOCK):
            held = group[first : first + 4 * BLOCK]
            rows_per = max(1, min(4 * BLOCK, BLOCK_FLOATS // len(held)))
            against = m[held].T
            for start in range(0, len(asking), rows_per):
                ask = asking[start : start + rows_per]
                sims = m[ask] @ against
                rows, cols = np.nonzero(sims >= threshold)
                a, b = ask[rows], held[cols]
                keep = a != b
                values = sims[rows, cols][keep]
                a, b = a[keep], b[keep]
                found.append((np.minimum(a, b), np.maximum(a, b), values))
                del sims
        done += len(asking) * len(group)
        if progress is not None:
            progress(done, total)
    firsts, seconds, cosines = _joined(found)
    # A pair found from both sides, or from two groups, is listed once.
    _, once = np.unique(firsts * n + seconds, return_index=True)
    return firsts[once], seconds[once], cosines[once]


def _centres(m: npt.NDArray[np.float32], groups: int) -> npt.NDArray[np.float32]:
    """``groups`` unit-length centres of ``m``'s rows (spherical k-means on a sample)."""
    import numpy as np

    rng = np.random.default_rng(0)
    sample = m[rng.choice(len(m), min(CLUSTER_SAMPLE, len(m)), replace=False)]
    centres = sample[rng.choice(len(sample), groups, replace=False)].copy()
    for _ in range(CLUSTER_ROUNDS):
        nearest = np.argmax(sample @ centres.T, axis=1)
        order = np.argsort(nearest, kind="stable")
        chosen, starts = np.unique(nearest[order], return_index=True)
        sums = np.zeros_like(centres)
        sums[chosen] = np.add.reduceat(sample[order], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0  # a centre nobody chose stays where it was
        centres[filled] = sums[filled] / norms[filled, None]
    return centres


def _by_group(
    group: npt.NDArray[np.int64], groups: int, rows: npt.NDArray[np.int64] | None = None
) -> list[npt.NDArray[np.int64]]:
    """The rows (``rows``, or each position) in each group, in order."""
    import numpy as np

    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(groups + 1))
    which = order if rows is None else rows[order]
    return [which[bounds[g] : bounds[g + 1]] for g in range(groups)]


def _no_rows() -> Rows:
    import numpy as np

    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)


def _joined(found: list[Rows]) -> Rows:
    import numpy as np

    return (
        np.concatenate([f[0] for f in found]),
        np.concatenate([f[1] for f in found]),
        np.concatenate([f[2] for f in found]),
    )


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
