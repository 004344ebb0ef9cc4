"""Related memories: the nearest neighbours of one entry by meaning.

An entry's own stored vector is the query when it has one (public entries).
A private entry has no stored vector, so the service passes its decrypted
text, which is embedded in memory for this call and never written. Secret
entries are never compared: nothing about their content may leak through
what they resemble.
"""

from __future__ import annotations

from typing import Final

from core.model.entries import EntryFilter
from core.recall import memory_recall
from core.semantic import hybrid, vectors
from core.semantic.embedding import EmbeddingUnavailable, shared_embedder
from core.storage.store import GroupStore

DEFAULT_RELATED: Final = 5
MAX_RELATED: Final = 20
#: Below this cosine similarity an entry is not "related", only nearest.
MIN_RELATED: Final = 0.35


def related(
    store: GroupStore,
    entry_id: str,
    text: str,
    flt: EntryFilter,
    *,
    limit: int = DEFAULT_RELATED,
    model_dir: str = "",
) -> list[memory_recall.RankedHit] | None:
    """Entries nearest in meaning to ``entry_id`` (whose readable content is ``text``).

    Each hit's score is its cosine similarity to the entry (from :data:`MIN_RELATED`
    up), on the scale of :mod:`core.recall.duplicates`. Returns None when semantic
    search is off (no model): the caller says so.
    """
    embedder = shared_embedder(model_dir)
    if embedder is None:
        return None
    if embedder.unknown_share(text) > hybrid.UNREADABLE:
        # Mostly tokens the model does not know (CJK, emoji): its vector is nearly
        # every such text's, so its "nearest" would be any of them.
        return []
    seq = store.execute("SELECT seq FROM memory_entries WHERE id = ?", (entry_id,)).fetchone()
    index = hybrid.vector_index(store, vectors.MEMORIES, embedder)
    own = None if seq is None else index.vector_of(int(seq[0]))
    try:
        query = own if own is not None else embedder.encode([text])[0]
    except EmbeddingUnavailable:  # the model failed on this text: it is off, logged once
        return None
    import numpy as np

    query = np.asarray(query, dtype=np.float32)
    out: list[memory_recall.RankedHit] = []
    k = 4 * limit + 1
    while True:
        near = [(s, c) for s, c in index.nearest(query, k) if c >= MIN_RELATED]
        rows = memory_recall.rows_for(store, [s for s, _ in near], flt)
        out = [
            memory_recall.RankedHit(
                memory_recall.hit_of(rows[s]),
                # The cosine itself: the scale `ambry duplicates` uses, so one pair
                # reads the same in both (search's 0..1 strength said 1.00 from 0.8).
                hybrid.rounded(c),
                (hybrid.Signal.SEMANTIC.value,),
            )
            for s, c in near
            if s in rows and rows[s][0] != entry_id
        ]
        if len(out) >= limit or len(near) < k:
            return out[:limit]
        k *= 8
