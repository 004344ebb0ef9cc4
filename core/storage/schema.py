"""The schema migration ladder for a group database.

Each step moves ``PRAGMA user_version`` from ``n`` to ``n + 1`` and runs in its
own transaction. Steps are append-only: a released step is never edited.
"""

from __future__ import annotations

from core.storage.migrations import agents, claims, continuity, entries, grams, layers, semantic

#: ``PRAGMA application_id`` marking a file as an Ambry group database ("AMBR").
APPLICATION_ID = 0x414D4252

MIGRATIONS: tuple[str, ...] = (
    # 0 -> 1: memory entries, their search index, sessions and the audit log.
    entries.ENTRIES,
    # 1 -> 2: cached effective confidence and staleness, so the brief is an index scan.
    entries.BRIEF_CACHE,
    # 2 -> 3: continuity (threads, handoffs, exchanges) and attachment receipts.
    continuity.CONTINUITY,
    # 3 -> 4: the count of current entries, kept by triggers (the brief's header needs it).
    entries.CURRENT_COUNT,
    # 4 -> 5: rate windows per agent, and the trash agent deletes go to.
    agents.RATES_AND_TRASH,
    # 5 -> 6: claims with source handles, the person's decisions on them, the claims mode.
    claims.CLAIMS,
    # 6 -> 7: sentence vectors for semantic search (derived data, filled in the
    # background), exchange speaker names and original times, and an index for the
    # purge of superseded entries.
    semantic.VECTORS,
    # 7 -> 8: layers (docs/layers.md): rule-based summaries of exchanges per thread
    # (a DAG: day -> week -> month), their source turns, the group's keyword
    # statistics and links between memories and summaries. All derived from the
    # exchanges and entries, rebuilt by `ambry layers --rebuild`.
    layers.LAYERS,
    # 8 -> 9: day-summary points' sources (docs/layers.md); old days are drawn again at once.
    layers.POINT_SOURCES,
    # 9 -> 10: a named speaker's turns indexed by when they were said (docs/search.md).
    semantic.SPEAKER_TIMES,
    # 10 -> 11: words inside Chinese, Japanese and Korean text (docs/search.md): the
    # pairs of characters of each memory and turn, and their own index.
    grams.GRAMS,
    # 11 -> 12: turn and session-handoff ids are never given again (core/storage/fresh_ids.py).
    continuity.FRESH_IDS,
)

SCHEMA_VERSION = len(MIGRATIONS)
