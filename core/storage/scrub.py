"""Making deleted text leave the disk, not just the tables.

``PRAGMA secure_delete`` zeroes a deleted row's bytes in the database file,
but three copies outlive it. The full-text indexes of entries and turns (and
their gram indexes, of words inside Chinese, Japanese and Korean text) are
contentless with ``contentless_delete``: a delete only adds a tombstone, and
the words stay in the index segments until those are merged (so do the words
of deleted rows in the layers' index of summaries, which keeps its text). The
write-ahead log keeps old page images until a checkpoint copies them back and
the log is truncated. And ``ANALYZE`` (which ``PRAGMA optimize`` runs) keeps
sample keys of indexes in ``sqlite_stat4``, tags and keywords among them.
A claim keeps a quote of each source it cites (core.claims), a copy that
would outlive the turn, memory, handoff or receipt it was taken from.

:func:`scrub` runs after a forget, a rejection in review, a delete, a
thread's deletion or new title, or a clear: it empties the quotes of sources that are gone
(the claim keeps its handle and hash, and verifies as ``source_missing``),
merges the affected indexes into fresh segments (FTS5
``optimize``, which drops deleted rows; ``rebuild`` is not available on a
contentless index), analyses the word-keyed tables behind them again, and
checkpoints the log with ``TRUNCATE``. Measured on 10,000 entries
(``bench/policy.py``), the rewrite and the checkpoint together cost about 40 ms.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.storage import index_levels
from core.storage.db import waiting_at_most
from core.storage.store import GroupStore

log = logging.getLogger(__name__)

#: How long the checkpoint waits for readers before leaving the log for later.
CHECKPOINT_WAIT_MS = 2_000


class Index(StrEnum):
    """The full-text indexes of a group database."""

    ENTRIES = "memory_fts"
    EXCHANGES = "exchanges_fts"
    #: The layers' summaries of turns (core.layers): it keeps its text, unlike the
    #: others, but its segments hold deleted rows' words all the same.
    LAYERS = "layer_fts"
    CLAIMS = "claims_fts"


#: The gram indexes of words inside Chinese, Japanese and Korean text, which hold
#: pieces of the same rows' text (contentless too) and are merged with them.
_BESIDE: dict[Index, tuple[str, ...]] = {
    Index.ENTRIES: ("memory_grams",),
    Index.EXCHANGES: ("exchange_grams",),
}


#: B-trees keyed by words of the text an index holds. ``ANALYZE`` (run by ``PRAGMA
#: optimize``) copies sample keys of each into ``sqlite_stat4``, where they stay
#: after the rows go until these are analysed again.
_SAMPLED: dict[Index, tuple[str, ...]] = {
    Index.ENTRIES: ("memory_tags",),
    Index.EXCHANGES: ("idx_exchanges_name_said", "idx_threads_title"),
    Index.LAYERS: ("layer_vocab",),
    Index.CLAIMS: ("idx_claims_text_key",),
}


#: The index of thread titles: a thread deleted or renamed leaves its old title among
#: this index's samples until it is analysed again.
THREAD_TITLES = ("idx_threads_title",)


#: Empties the quote of every claim source whose turn, memory, handoff version or
#: receipt no longer exists, whatever deleted it (a memory in the trash is gone
#: too: its quote does not come back with it).
_LOST_QUOTES = """
    UPDATE claim_sources SET quote = '' WHERE quote != '' AND CASE kind
        WHEN 'exchange' THEN NOT EXISTS (SELECT 1 FROM exchanges WHERE seq = CAST(ref AS INTEGER))
        WHEN 'memory' THEN NOT EXISTS (SELECT 1 FROM memory_entries WHERE id = ref)
        WHEN 'handoff' THEN NOT EXISTS (SELECT 1 FROM thread_handoffs
            WHERE thread_id || '@' || version = ref)
        WHEN 'attachment' THEN NOT EXISTS (SELECT 1 FROM attachment_receipts WHERE id = ref)
        ELSE 0 END
"""


@dataclass(frozen=True)
class ScrubReport:
    """What a scrub did, for logs and the benchmark."""

    indexes: tuple[Index, ...]
    #: True when the log was emptied (no reader held an old snapshot).
    checkpointed: bool
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "indexes": [i.value for i in self.indexes],
            "checkpointed": self.checkpointed,
            "ms": round(self.seconds * 1000, 2),
        }


def scrub(
    store: GroupStore,
    indexes: tuple[Index, ...] = tuple(Index),
    *,
    analyse: tuple[str, ...] = (),
) -> ScrubReport:
    """Rewrite ``indexes`` without their deleted rows, then empty the write-ahead log.

    ``analyse`` names more word-keyed indexes to analyse again, for a change that
    touched no full-text index (:data:`THREAD_TITLES` after a thread's deletion or
    new title).

    Call it after the deleting transaction has committed. It never raises for a
    busy log: a reader holding an old snapshot keeps the log until the next
    scrub or checkpoint, and the report says so.
    """
    started = time.perf_counter()
    with store.transaction():
        store.execute(_LOST_QUOTES)
        tables = tuple(t for index in indexes for t in (index.value, *_BESIDE.get(index, ())))
        for table in tables:
            store.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
        # Each merge leaves a level behind in a contentless index: refill one that
        # nears FTS5's limit before it stops reading (core.storage.index_levels).
        index_levels.keep_levels(store, tuple(t for t in tables if t in index_levels.REFILL))
        if store.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat4'").fetchone():
            sampled = [name for index in indexes for name in _SAMPLED[index]]
            for name in dict.fromkeys([*sampled, *analyse]):
                store.execute(f"ANALYZE {name}")
    checkpointed = checkpoint(store)
    return ScrubReport(indexes, checkpointed, time.perf_counter() - started)


def checkpoint(store: GroupStore) -> bool:
    """Copy the write-ahead log into the database and truncate it to zero bytes.

    Returns:
        Whether the log was fully checkpointed and truncated.
    """
    conn = store.conn
    with waiting_at_most(conn, store.path, CHECKPOINT_WAIT_MS):
        busy, _frames, _done = store.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
    if busy:
        log.warning(
            "the write-ahead log of group %s is still in use by a reader; deleted text "
            "leaves it at the next checkpoint",
            store.group,
        )
    return not busy
