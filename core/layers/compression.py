"""The compression pass: day summaries from turns, weeks from days, months from weeks.

Idempotent and resumable. Every summary records what it was built from
(``source_key``: the count and last id of its turns, or its children's ids and
keys); a pass rebuilds only what differs, each day summary in its own short write
transaction, oldest first in batches of about :data:`BATCH_CHARS` of text (so the
first day is written at once however long the history), and a pass that is
stopped (``should_stop``, a killed process) leaves finished summaries in place and
the rest for the next pass. Running it twice in a row writes nothing the second time.
A deleted summary's links go with it (core.storage.link_rows); each pass sweeps
away those an earlier version left.

Summaries follow their sources out, at once: a summary quotes its turns
verbatim, so whatever deletes a turn (``forget``, ``clear``, the TTL policy,
``episodic_ttl_days``) calls :func:`drop_lost` in the same transaction, which
deletes each day summary that drew on a deleted turn, with its week and month.
The next pass draws those days again from the turns that are left. Compression
itself never deletes a turn.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Final

from core.layers import links
from core.layers.keywords import term_counts
from core.layers.summaries import Child, Draft, SourceTurn, draft_day, draft_rollup
from core.model.entries import iso
from core.model.times import local_day_span
from core.storage.link_rows import drop_links, has_dead_links, sweep
from core.storage.scrub import Index, scrub
from core.storage.store import GroupStore

#: Meta key: when the last complete pass finished.
LAST_PASS_KEY: Final = "layers_compressed_at"
#: Meta key: the days summaries are drawn on. Without it (an earlier Ambry drew them
#: on UTC days), the next pass redraws every summary, as a rebuild does.
DAYS_KEY: Final = "layers_days"
LOCAL_DAYS: Final = "local"


@dataclass(frozen=True)
class PassResult:
    days: int
    rollups: int
    removed: int
    turns: int
    seconds: float
    #: False when ``should_stop`` cut the pass short (the rest is done next time).
    complete: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "days": self.days,
            "rollups": self.rollups,
            "removed": self.removed,
            "turns": self.turns,
            "seconds": round(self.seconds, 3),
            "complete": self.complete,
        }


def summary_id(level: str, thread_id: str | None, session_id: str | None, period: str) -> str:
    """A summary's id, derived from its key so that every pass names it the same."""
    key = f"{level}\x1f{thread_id or ''}\x1f{session_id or ''}\x1f{period}"
    return "sum-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def week_of(day: str) -> str:
    y, w, _ = date.fromisoformat(day).isocalendar()
    return f"{y}-W{w:02d}"


def month_of_week(week: str) -> str:
    """The month holding the week's Thursday (so each week belongs to one month)."""
    y, w = week.split("-W")
    thursday = date.fromisocalendar(int(y), int(w), 4)
    return f"{thursday.year}-{thursday.month:02d}"


@dataclass(frozen=True)
class _Day:
    thread_id: str | None
    session_id: str
    period: str
    count: int
    last_seq: int
    #: The length of its turns' text, which the work of counting and drawing follows.
    chars: int

    @property
    def id(self) -> str:
        return summary_id("day", self.thread_id, self.session_id, self.period)

    @property
    def key(self) -> str:
        return f"{self.count}:{self.last_seq}"


#: A day is the machine's local calendar day (``local_day``, core.storage.db), as
#: a question naming a day reads it: a turn at 23:30 belongs to that evening.
#: A day's turns: the range of its times finds them by the index of times (a local
#: day's test alone read every turn, in Python, once per day drawn).
_DAY_SCOPE = (
    "coalesce(thread_id, '') = coalesce(:thread, '') AND session_id = :session "
    "AND said_at >= :start AND said_at < :end AND local_day(said_at) = :day"
)


def _day_scope(day: _Day) -> dict[str, str | None]:
    """The parameters of :data:`_DAY_SCOPE` for ``day``."""
    try:
        start, end = local_day_span(day.period)
    except ValueError:  # filed under a text that is no date: its own test finds it
        start, end = "", "\uffff"
    return {
        "thread": day.thread_id,
        "session": day.session_id,
        "day": day.period,
        "start": start,
        "end": end,
    }


def _days(store: GroupStore) -> list[_Day]:
    rows = store.execute(
        "SELECT thread_id, session_id, local_day(said_at) AS day, count(*), max(seq), "
        "sum(length(text)) FROM exchanges GROUP BY thread_id, session_id, day"
    ).fetchall()
    return [_Day(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5] or 0)) for r in rows]


def _turns(store: GroupStore, day: _Day) -> list[SourceTurn]:
    rows = store.execute(
        f"SELECT seq, speaker, name, text, said_at FROM exchanges WHERE {_DAY_SCOPE} "
        "ORDER BY said_at, seq",
        _day_scope(day),
    ).fetchall()
    return [SourceTurn(int(r[0]), r[1], r[2], r[3], r[4]) for r in rows]


def _fts_text(draft: Draft) -> str:
    return "\n".join([draft.hook, *draft.points, *draft.quotes, " ".join(draft.keywords)])


def _write(
    store: GroupStore,
    sid: str,
    level: str,
    thread_id: str | None,
    session_id: str | None,
    period: str,
    draft: Draft,
    source_key: str,
    now: str,
) -> None:
    seq = store.execute(
        "INSERT INTO layer_summaries (id, level, thread_id, session_id, period, start_at, "
        "end_at, hook, points, quotes, keywords, turn_count, terms, source_key, built_at, "
        "point_sources) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET "
        "start_at = excluded.start_at, end_at = excluded.end_at, hook = excluded.hook, "
        "points = excluded.points, quotes = excluded.quotes, keywords = excluded.keywords, "
        "turn_count = excluded.turn_count, terms = excluded.terms, "
        "source_key = excluded.source_key, built_at = excluded.built_at, "
        "point_sources = excluded.point_sources RETURNING seq",
        (
            sid,
            level,
            thread_id,
            session_id,
            period,
            draft.start_at,
            draft.end_at,
            draft.hook,
            json.dumps(draft.points),
            json.dumps(draft.quotes),
            json.dumps(draft.keywords),
            draft.turn_count,
            json.dumps(draft.terms),
            source_key,
            now,
            json.dumps([p.to_dict() for p in draft.point_sources]),
        ),
    ).fetchall()[0][0]
    store.execute("DELETE FROM layer_fts WHERE rowid = ?", (seq,))
    store.execute("INSERT INTO layer_fts (rowid, text) VALUES (?, ?)", (seq, _fts_text(draft)))


def _count_terms(store: GroupStore, terms: Iterable[str], delta: int) -> None:
    for term in terms:
        store.execute(
            "INSERT INTO layer_vocab (term, docs) VALUES (?, max(0, ?)) "
            "ON CONFLICT (term) DO UPDATE SET docs = max(0, docs + ?)",
            (term, delta, delta),
        )
    store.execute("DELETE FROM layer_vocab WHERE docs = 0")


#: Day summaries built from more turns than are left: each deleted turn takes its
#: ``layer_sources`` row with it (a trigger), and a day records all its turns there.
_LOST_DAYS = (
    "SELECT id, terms FROM layer_summaries AS s WHERE level = 'day' AND turn_count > "
    "(SELECT count(*) FROM layer_sources WHERE summary_id = s.id)"
)


def drop_lost(store: GroupStore, changed: Sequence[int] = ()) -> int:
    """Delete every day summary that drew on a deleted turn, or on one of the turns
    ``changed`` (by seq: a forget took the speaker's name off them, and a point
    reads "name: ..."), and the rollups above it.

    Call it in the write transaction that deleted or changed the turns, before the
    indexes are scrubbed (core.storage.scrub), so no hook, point, quote or keyword
    of a deleted turn outlives it in a summary, the summaries' full-text index or
    the group's keyword counts. The days are drawn again from their remaining turns
    by the next pass, which this makes due at once.

    Returns:
        How many summaries were deleted (days, weeks and months).
    """
    if changed:
        # A day missing one of its turns' sources counts as lost, below.
        store.execute(
            "DELETE FROM layer_sources WHERE exchange_seq IN (SELECT value FROM json_each(?))",
            (json.dumps(list(changed)),),
        )
    lost = store.execute(_LOST_DAYS).fetchall()
    if not lost:
        return 0
    gone = {str(r[0]) for r in lost}
    for _, terms in lost:
        _count_terms(store, json.loads(terms), -1)
    # A week shows its days' hooks and quotes, a month its weeks'.
    frontier = set(gone)
    while frontier:
        parents = {
            str(r[0])
            for sid in frontier
            for r in store.execute(
                "SELECT parent_id FROM layer_children WHERE child_id = ?", (sid,)
            )
        }
        frontier = parents - gone
        gone |= parents
    for sid in sorted(gone):
        store.execute("DELETE FROM layer_summaries WHERE id = ?", (sid,))
    drop_links(store, gone)
    store.execute("DELETE FROM meta WHERE key = ?", (LAST_PASS_KEY,))
    return len(gone)


#: A pass counts the terms of the days it is about to build, up to this many
#: characters of their turns (at least one day, about 50 ms of work), before it weighs
#: any of them; then the next batch. Counting a whole imported history first (12,000
#: turns) kept the first day unwritten for seconds, so a short `ambry mcp` session
#: stopped every pass before it wrote one.
BATCH_CHARS: Final = 200_000


def _batches(dirty: Sequence[_Day]) -> Iterator[list[_Day]]:
    """The dirty days, oldest first, in batches of about :data:`BATCH_CHARS`."""
    batch: list[_Day] = []
    size = 0
    for day in sorted(dirty, key=lambda d: (d.period, d.thread_id or "", d.session_id)):
        if batch and size + day.chars > BATCH_CHARS:
            yield batch
            batch, size = [], 0
        batch.append(day)
        size += day.chars
    if batch:
        yield batch


def _build_days(
    store: GroupStore,
    dirty: Sequence[_Day],
    old_terms: dict[str, list[str]],
    now: str,
    should_stop: Callable[[], bool],
) -> tuple[int, int, bool]:
    """Build the dirty days, each in its own transaction; returns (summaries, turns,
    complete). Stopped, it keeps every day it finished."""
    built = turns_seen = 0
    for batch in _batches(dirty):
        # The group's counts (days built so far included), then this batch's days', so
        # a batch's weights do not depend on the order of its days.
        df: Counter[str] = Counter(dict(store.execute("SELECT term, docs FROM layer_vocab")))
        total = int(store.execute("SELECT count(*) FROM layer_summaries WHERE level = 'day'").get)
        loaded: list[tuple[_Day, list[SourceTurn]]] = []
        for day in batch:
            turns = _turns(store, day)
            df.subtract(old_terms.get(day.id, []))
            df.update(term_counts(t.text for t in turns)[0].keys())
            total += 0 if day.id in old_terms else 1
            loaded.append((day, turns))
        for day, turns in loaded:
            if should_stop():
                return built, turns_seen, False
            _write_day(store, day, draft_day(turns, df, total), old_terms, now)
            built += 1
            turns_seen += len(turns)
    return built, turns_seen, True


def _write_day(
    store: GroupStore,
    day: _Day,
    draft: Draft,
    old_terms: dict[str, list[str]],
    now: str,
) -> None:
    """Write one day summary, its sources and its links: one short transaction."""
    with store.transaction():
        _count_terms(store, old_terms.get(day.id, []), -1)
        _count_terms(store, draft.terms, +1)
        _write(store, day.id, "day", day.thread_id, day.session_id, day.period, draft, day.key, now)
        store.execute("DELETE FROM layer_sources WHERE summary_id = ?", (day.id,))
        store.execute(
            f"INSERT INTO layer_sources (summary_id, exchange_seq) SELECT :id, seq "
            f"FROM exchanges WHERE {_DAY_SCOPE}",
            {"id": day.id, **_day_scope(day)},
        )
        links.link_day(store, day.id, day.session_id, day.period, now)


def _children(
    store: GroupStore, level: str
) -> dict[tuple[str | None, str], list[tuple[str, str, Child]]]:
    """Summaries of ``level`` grouped by (thread, parent period)."""
    groups: dict[tuple[str | None, str], list[tuple[str, str, Child]]] = {}
    for r in store.execute(
        "SELECT id, thread_id, period, hook, quotes, keywords, start_at, end_at, turn_count, "
        "source_key FROM layer_summaries WHERE level = ?",
        (level,),
    ):
        parent = week_of(r[2]) if level == "day" else month_of_week(r[2])
        child = Child(r[3], tuple(json.loads(r[4])), tuple(json.loads(r[5])), r[6], r[7], int(r[8]))
        groups.setdefault((r[1], parent), []).append((r[0], r[9], child))
    return groups


def _roll_up(
    store: GroupStore, level: str, child_level: str, now: str, should_stop: Callable[[], bool]
) -> tuple[int, int, bool]:
    """Rebuild the rollups of ``level`` whose children changed, each in its own
    transaction; drop childless ones. Returns (built, dropped, complete)."""
    existing = dict(
        store.execute("SELECT id, source_key FROM layer_summaries WHERE level = ?", (level,))
    )
    built = 0
    wanted: set[str] = set()
    for (thread_id, period), kids in sorted(
        _children(store, child_level).items(), key=lambda kv: (kv[0][0] or "", kv[0][1])
    ):
        sid = summary_id(level, thread_id, None, period)
        wanted.add(sid)
        kids.sort(key=lambda k: k[0])
        key = hashlib.sha256("|".join(f"{i}:{k}" for i, k, _ in kids).encode()).hexdigest()[:16]
        if existing.get(sid) == key:
            continue
        if should_stop():
            return built, 0, False
        draft = draft_rollup([c for _, _, c in kids])
        with store.transaction():
            _write(store, sid, level, thread_id, None, period, draft, key, now)
            store.execute("DELETE FROM layer_children WHERE parent_id = ?", (sid,))
            for child_id, _, _ in kids:
                store.execute(
                    "INSERT INTO layer_children (parent_id, child_id) VALUES (?, ?)",
                    (sid, child_id),
                )
        built += 1
    gone = [sid for sid in existing if sid not in wanted]
    if gone:
        with store.transaction():
            for sid in gone:
                store.execute("DELETE FROM layer_summaries WHERE id = ?", (sid,))
            drop_links(store, gone)
    return built, len(gone), True


def _start_rebuild(store: GroupStore) -> None:
    """Mark every summary as changed, and the pass as not complete.

    The old summaries stay until their new ones replace them, one day at a time, so
    a rebuild stopped part way leaves whole summaries, still found, and the rest for
    the next pass. The keyword counts and the summaries' full-text index derive
    from the summaries: they are recounted from them here rather than trusted.
    """
    store.execute("UPDATE layer_summaries SET source_key = ''")
    store.execute("DELETE FROM meta WHERE key = ?", (LAST_PASS_KEY,))
    store.execute("DELETE FROM layer_vocab")
    store.execute(
        "INSERT INTO layer_vocab (term, docs) SELECT t.value, count(*) "
        "FROM layer_summaries AS s, json_each(s.terms) AS t WHERE s.level = 'day' "
        "GROUP BY t.value"
    )
    store.execute("DELETE FROM layer_fts WHERE rowid NOT IN (SELECT seq FROM layer_summaries)")


def compress(
    store: GroupStore,
    now: datetime,
    *,
    rebuild: bool = False,
    should_stop: Callable[[], bool] = lambda: False,
) -> PassResult:
    """One pass over ``store`` (see the module notes). ``rebuild`` redoes every summary
    (see :func:`_start_rebuild`); stopped part way, the next pass goes on with it.

    A pass that deleted summaries (or all of them, to rebuild) rewrites the
    summaries' full-text index without them and empties the write-ahead log.
    """
    started = time.perf_counter()
    stamp = iso(now)
    dropped = 0
    if not on_local_days(store):
        with store.transaction():
            # Summaries an earlier Ambry drew on UTC days: drawn again on local ones.
            if store.execute("SELECT 1 FROM layer_summaries LIMIT 1").fetchone():
                rebuild = True
            store.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (DAYS_KEY, LOCAL_DAYS),
            )
    # Turns deleted without drop_lost (by an earlier version) left their summaries.
    if rebuild or store.execute(f"{_LOST_DAYS} LIMIT 1").fetchone():
        with store.transaction():
            dropped = drop_lost(store)
            if rebuild:
                _start_rebuild(store)
    # Links to entries and summaries deleted by an earlier version, which kept them.
    if has_dead_links(store):
        with store.transaction():
            sweep(store)
    stored = {
        r[0]: (r[1], json.loads(r[2]))
        for r in store.execute(
            "SELECT id, source_key, terms FROM layer_summaries WHERE level = 'day'"
        )
    }
    days = _days(store)
    dirty = [d for d in days if stored.get(d.id, ("", []))[0] != d.key]
    old_terms = {d.id: stored[d.id][1] for d in dirty if d.id in stored}
    built, turns, complete = _build_days(store, dirty, old_terms, stamp, should_stop)
    live = {d.id for d in days}
    stale = [sid for sid in stored if sid not in live]
    if stale:
        with store.transaction():
            for sid in stale:
                _count_terms(store, stored[sid][1], -1)
                store.execute("DELETE FROM layer_summaries WHERE id = ?", (sid,))
            drop_links(store, stale)
    rollups = removed = 0
    if complete:
        rollups, removed, complete = _roll_up(store, "week", "day", stamp, should_stop)
    if complete:
        months, months_gone, complete = _roll_up(store, "month", "week", stamp, should_stop)
        rollups, removed = rollups + months, removed + months_gone
    if complete:
        links.sync(store, stamp)
        with store.transaction():
            store.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (LAST_PASS_KEY, stamp),
            )
    if dropped or stale or removed or (rebuild and complete):
        # Deleted summaries' words stay in the index segments until they merge.
        scrub(store, (Index.LAYERS,))
    return PassResult(
        built,
        rollups,
        dropped + removed + len(stale),
        turns,
        time.perf_counter() - started,
        complete,
    )


def last_pass(store: GroupStore) -> str | None:
    row = store.execute("SELECT value FROM meta WHERE key = ?", (LAST_PASS_KEY,)).fetchone()
    return None if row is None else str(row[0])


def redraw_pending(store: GroupStore) -> bool:
    """Whether summaries are marked to be drawn again (a rebuild stopped part way)."""
    return (
        store.execute("SELECT 1 FROM layer_summaries WHERE source_key = '' LIMIT 1").fetchone()
        is not None
    )


def on_local_days(store: GroupStore) -> bool:
    """Whether the summaries are drawn on local days (else the next pass redraws them)."""
    row = store.execute("SELECT value FROM meta WHERE key = ?", (DAYS_KEY,)).fetchone()
    return row is not None and row[0] == LOCAL_DAYS


def is_due(store: GroupStore, now: datetime, interval: timedelta) -> bool:
    """No complete pass yet, summaries drawn on UTC days, or the last pass is
    ``interval`` old."""
    last = last_pass(store)
    return (
        last is None
        or not on_local_days(store)
        or now - datetime.fromisoformat(last.replace("Z", "+00:00")) >= interval
    )
