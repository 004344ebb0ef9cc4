"""Building the brief from a store, and keeping staleness up to date.

The brief must be cheap at any store size, so the database keeps each entry's
effective (decayed) confidence and a stale flag in columns, refreshed by
:func:`refresh_decay` when a store opens and when an agent session starts; the
brief is then an index scan over ``max_brief_entries + 1`` rows (more only when
entries too long for the room left, or saying what a line shown says, were
skipped: core.recall.brief).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

import apsw

from core.memory.confidence import EFFECTIVE_CONFIDENCE_SQL
from core.model.config import Config
from core.model.entries import MemoryEntry, Privacy, iso, parse_iso
from core.model.errors import Timeout
from core.recall.brief import (
    BRIEF_CANDIDATES,
    LEFT_OUT_LISTED,
    MemoryBrief,
    build_brief,
    prefetch_limit,
)
from core.recall.duplicates import Rewordings
from core.storage.rows import ENTRY_COLUMNS, entry_from_row
from core.storage.store import GroupStore

#: Decay moves in whole weeks, so refreshing more often than this changes nothing useful.
DECAY_REFRESH_INTERVAL = timedelta(hours=1)
#: The brief's time budget (seed 000: the core gives getBrief five seconds).
BRIEF_BUDGET_SECONDS = 5.0


def _meta(store: GroupStore, key: str) -> str | None:
    row = store.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _set_meta(store: GroupStore, key: str, value: str) -> None:
    store.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )


def refresh_decay(store: GroupStore, config: Config, now: datetime, *, force: bool = False) -> int:
    """Recompute effective confidence and staleness; returns how many entries changed.

    Idempotent: the stored confidence (as of ``last_seen_at``) is never changed,
    only the cached effective value and flag derived from it. Skipped when it ran
    less than :data:`DECAY_REFRESH_INTERVAL` ago with the same constants.
    """
    fingerprint = f"{config.decay_grace_days}/{config.decay_per_week}/{config.stale_threshold}"
    last_at, last_fp = _meta(store, "decay_at"), _meta(store, "decay_config")
    if (
        not force
        and last_fp == fingerprint
        and last_at is not None
        and now - parse_iso(last_at) < DECAY_REFRESH_INTERVAL
    ):
        return 0
    with store.transaction():
        changed = recompute_decay(store, config, now)
        _set_meta(store, "decay_at", iso(now))
        _set_meta(store, "decay_config", fingerprint)
    return changed


def recompute_decay(store: GroupStore, config: Config, now: datetime) -> int:
    """Bring every entry's cached effective confidence and stale flag up to ``now``.

    The write behind :func:`refresh_decay`, for a caller already inside a
    transaction that has just written entries with their own ``last_seen_at``
    (an import): they are right at once, not after the next hourly refresh.
    Returns how many entries changed.
    """
    params = {
        "now": iso(now),
        "decay_grace_days": config.decay_grace_days,
        "decay_per_week": config.decay_per_week,
        "threshold": config.stale_threshold,
    }
    expr = EFFECTIVE_CONFIDENCE_SQL
    store.execute(
        f"UPDATE memory_entries SET effective_confidence = {expr}, "
        f"stale = ({expr} < :threshold) "
        f"WHERE effective_confidence IS NOT {expr} OR stale IS NOT ({expr} < :threshold)",
        params,
    )
    return int(store.conn.changes())


@contextlib.contextmanager
def deadline(store: GroupStore, seconds: float) -> Iterator[None]:
    """Abort the store's SQLite work that runs past ``seconds`` with :class:`Timeout`."""
    end = time.monotonic() + seconds
    store.conn.set_progress_handler(lambda: time.monotonic() > end, 1000)
    try:
        yield
    except apsw.InterruptError as exc:
        raise Timeout(
            f"building the brief took longer than {seconds:g} s; the agent can go on "
            "without it and call memory_brief or memory_search later"
        ) from exc
    finally:
        store.conn.set_progress_handler(None)


def brief_privacy(config: Config) -> tuple[Privacy, ...]:
    """Secret entries never reach the brief; private ones only if the person allows it."""
    if config.include_private_in_brief:
        return (Privacy.PUBLIC, Privacy.PRIVATE)
    return (Privacy.PUBLIC,)


def build_group_brief(
    store: GroupStore,
    config: Config,
    now: datetime,
    *,
    extra_sections: Sequence[tuple[str, str]] = (),
    budget_seconds: float = BRIEF_BUDGET_SECONDS,
    readable: Callable[[MemoryEntry], MemoryEntry] | None = None,
    list_left_out: bool = False,
) -> MemoryBrief:
    """The brief of one group: active, current, non-stale entries, within the limits.

    ``readable`` turns a stored entry into one whose content can be shown (the
    service decrypts private entries with it when the person allows them).
    ``list_left_out`` looks at more candidates than the text needs, so that
    ``left_out`` names up to :data:`LEFT_OUT_LISTED` of them (for a person; an
    agent is not told), and costs a second query when the entry limit cut the brief.
    """
    privacy = brief_privacy(config)
    marks = ", ".join("?" * len(privacy))
    end = time.monotonic() + budget_seconds

    def candidates(limit: int) -> tuple[list[MemoryEntry], int]:
        with deadline(store, end - time.monotonic()):
            rows = store.execute(
                # The planner may not know (without statistics) that this index is the plan.
                f"SELECT {ENTRY_COLUMNS} FROM memory_entries INDEXED BY idx_entries_brief "
                "WHERE superseded_by IS NULL AND status = 'active' AND stale = 0 "
                f"AND privacy IN ({marks}) "
                "ORDER BY behavioral DESC, effective_confidence DESC, updated_at DESC, id "
                # An integer, not bound: see the note on LIMIT in core.storage.store.
                f"LIMIT {int(limit)}",
                tuple(p.value for p in privacy),
            ).fetchall()
            entry_count = store.current_count()
        entries = [entry_from_row(r) for r in rows]
        if readable is not None:
            entries = [readable(e) for e in entries]
        return entries, entry_count

    # One per brief: the vectors it reads serve every build below.
    rewordings = Rewordings(store, model_dir=config.embedding_model_dir)

    def build(entries: Sequence[MemoryEntry], entry_count: int) -> MemoryBrief:
        return build_brief(
            entries,
            entry_count=entry_count,
            config=config,
            now=now,
            extra_sections=extra_sections,
            rewording_of=rewordings.of,
        )

    limit = prefetch_limit(config)
    entries, entry_count = candidates(limit)
    brief = build(entries, entry_count)
    # Candidates were skipped and the brief is not full (or is, with its last row,
    # so it cannot tell that the entry limit cut it): ones further down may fill it,
    # so look at more. Past a limit of size, shorter ones may be anywhere: all that
    # may be passed, at once. Past (re)worded duplicates only, twice as many each
    # time, so that a few of them cost a few more rows, not thousands.
    while (
        brief.skipped
        and len(entries) == limit < BRIEF_CANDIDATES
        and (brief.brief_count < config.max_brief_entries or brief.truncated_by is None)
    ):
        limit = BRIEF_CANDIDATES if brief.truncated_by else min(BRIEF_CANDIDATES, 2 * limit)
        entries, entry_count = candidates(limit)
        brief = build(entries, entry_count)
    if list_left_out and len(entries) == limit and len(brief.left_out) < LEFT_OUT_LISTED:
        wider = build(*candidates(limit + LEFT_OUT_LISTED))
        # The same text from more candidates: its list of what was left out is longer.
        if wider.markdown == brief.markdown:
            brief = replace(brief, left_out=wider.left_out)
    return brief
