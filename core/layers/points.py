"""The points of day summaries with the turns they came from, read-only.

A day summary records, for each of its points, the turn it was drawn from and
the span of the kept sentence in that turn's text (``point_sources``).
:func:`day_points` hands them out with each turn's text as it is now, for
claims extraction, which the service composes: layers knows nothing of claims.

* A point whose turn is gone (expired, cleared) or whose text is no longer the
  text the point was drawn from (its hash differs) is left out and counted as
  stale; the next pass draws that day again.
* A day summary built before point sources were recorded has none until the
  next pass draws it again (the schema step that added them makes that pass due
  at once); it is counted as unsourced.
* Weeks and months are left out: their points are their days' hooks, and a
  point must lead to a verbatim turn.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.model.text import sha256_text
from core.storage.store import GroupStore


@dataclass(frozen=True)
class DayPoint:
    summary_id: str
    thread_id: str | None
    #: The point's place in its summary's points.
    position: int
    #: The turn (its exchange id), who said it and its text now.
    exchange_seq: int
    speaker: str
    turn_text: str
    #: The kept sentence's span in ``turn_text``.
    start: int
    end: int


@dataclass(frozen=True)
class DayPoints:
    points: tuple[DayPoint, ...]
    #: Day summaries read.
    summaries: int
    #: Day summaries with points but no recorded sources yet.
    unsourced: int
    #: Points left out: their turn is gone or says something else now.
    stale: int


def day_points(store: GroupStore, thread_id: str | None = None) -> DayPoints:
    """The sourced points of every day summary (of one thread when ``thread_id`` is given).

    In the order the summaries start, then the order of their points.
    """
    scope, params = ("AND s.thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())
    summaries, unsourced = store.execute(
        "SELECT count(*), coalesce(sum(s.point_sources = '[]' AND s.points != '[]'), 0) "
        f"FROM layer_summaries s WHERE s.level = 'day' {scope}",
        params,
    ).fetchone()
    rows = store.execute(
        "SELECT s.id, s.thread_id, p.key, json_extract(p.value, '$.seq'), "
        "json_extract(p.value, '$.start'), json_extract(p.value, '$.end'), "
        "json_extract(p.value, '$.sha256'), e.speaker, e.text "
        "FROM layer_summaries s JOIN json_each(s.point_sources) p "
        "LEFT JOIN exchanges e ON e.seq = json_extract(p.value, '$.seq') "
        f"WHERE s.level = 'day' {scope} ORDER BY s.start_at, s.id, p.key",
        params,
    ).fetchall()
    points: list[DayPoint] = []
    stale = 0
    for sid, thread, position, seq, start, end, digest, speaker, text in rows:
        if text is None or sha256_text(text) != digest or not 0 <= start < end <= len(text):
            stale += 1
            continue
        points.append(
            DayPoint(sid, thread, int(position), int(seq), speaker, text, int(start), int(end))
        )
    return DayPoints(tuple(points), int(summaries), int(unsourced), stale)
