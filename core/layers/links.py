"""Links between memories and summaries, and ``dig``: following them without loops.

A link is strong (same topic: stored in both directions) or weak (related: one
direction). The compression pass derives them from what is already recorded, so
no write path has to know about them:

=====================  ========  ===============================================
when                   strength  between
=====================  ========  ===============================================
an entry supersedes    strong    the new entry and the one it replaced
stored in the same     strong    entries of one session stored at the same
turn                             instant (one ``memory_store`` batch)
an entry is            weak      the day summary of the session that saw it
reinforced                       again -> the entry
an entry is stored     weak      the day summary of its session -> the entry
``[[id]]`` in text     weak      the entry or day summary holding the text -> id
=====================  ========  ===============================================

A summary is also joined to its rollups (``part_of``: a day to its week and its
month) and its children (``contains``), which ``dig`` follows like strong links,
rollups first so that a summary's many links never crowd them out of the node
budget; a link to an entry or summary that was deleted is never followed, and
goes with it (core.storage.link_rows). Watermarks in ``meta``
(the audit log's and the entries' last ids seen) make the derivation incremental.
A day summary may not exist yet when its entries pass the watermark (``dig``
syncs at any time); :func:`link_day`, which the pass calls for every day it
draws, makes that day's links then, so a sync can never skip them for good.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from core.model.entries import iso, utc_now
from core.model.errors import InvalidParams, NotFound
from core.model.times import local_day, local_day_span
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.storage.workspace import Workspace

MAX_DEPTH: Final = 3
#: A dig stops adding nodes past this many (a month contains dozens of days).
MAX_NODES: Final = 60
_REFERENCE = re.compile(r"\[\[\s*((?:mem|sum)-[0-9A-Za-z-]{6,40})\s*\]\]")
_AUDIT_KEY, _ENTRY_KEY, _TURN_KEY = "links_audit_id", "links_entry_seq", "links_turn_seq"


#: Entries stored together are linked as one turn's only up to this many.
SAME_TURN_MAX = 8


def _meta(store: GroupStore, key: str) -> int:
    row = store.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return 0 if row is None else int(row[0])


def _set_meta(store: GroupStore, key: str, value: int) -> None:
    store.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def add_link(store: GroupStore, src: str, dst: str, strength: str, reason: str, at: str) -> None:
    """Record a link (a strong one both ways); an existing link is kept as it is."""
    if src == dst:
        return
    pairs = [(src, dst), (dst, src)] if strength == "strong" else [(src, dst)]
    for a, b in pairs:
        store.execute(
            "INSERT INTO layer_links (src, dst, strength, reason, created_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (src, dst) DO NOTHING",
            (a, b, strength, reason, at),
        )


def _day_summary(store: GroupStore, session_id: str | None, at: str) -> str | None:
    if not session_id:
        return None
    row = store.execute(
        "SELECT id FROM layer_summaries WHERE level = 'day' AND session_id = ? AND period = ?",
        (session_id, local_day(at)),
    ).fetchone()
    return None if row is None else str(row[0])


def _exists(store: GroupStore, ref: str) -> bool:
    table = "memory_entries" if ref.startswith("mem-") else "layer_summaries"
    return store.execute(f"SELECT 1 FROM {table} WHERE id = ?", (ref,)).fetchone() is not None


def link_day(store: GroupStore, summary: str, session_id: str, day: str, at: str) -> None:
    """Link the day summary ``summary`` (of ``session_id`` on ``day``, YYYY-MM-DD) to
    the entries stored or reinforced in that session that day and to the ids its
    turns name. Call it in the transaction that (re)draws the day."""
    # Times are ISO 8601 in UTC ("2026-03-01T12:00:00.000Z"): a range keeps the index.
    start, end = local_day_span(day)
    span = {"session": session_id, "from": start, "to": end}
    for (entry_id,) in store.execute(
        "SELECT id FROM memory_entries WHERE created_at >= :from AND created_at < :to "
        "AND session_id = :session ORDER BY seq",
        span,
    ).fetchall():
        add_link(store, summary, entry_id, "weak", "stored_in_session", at)
    for (ids,) in store.execute(
        "SELECT entry_ids FROM audit_log WHERE action = 'dedup' AND at >= :from "
        "AND at < :to AND session_id = :session ORDER BY id",
        span,
    ).fetchall():
        entry_ids = [i for i in json.loads(ids) if isinstance(i, str)]
        if entry_ids and _exists(store, entry_ids[0]):
            add_link(store, summary, entry_ids[0], "weak", "reinforced", at)
    for (text,) in store.execute(
        "SELECT e.text FROM exchanges e JOIN layer_sources s ON s.exchange_seq = e.seq "
        "WHERE s.summary_id = ? AND e.text LIKE '%[[%' ORDER BY e.seq",
        (summary,),
    ).fetchall():
        for ref in references(text):
            if _exists(store, ref):
                add_link(store, summary, ref, "weak", "mentions", at)


def references(text: str) -> list[str]:
    """The ids named as ``[[id]]`` in ``text``, in order, without repeats."""
    return list(dict.fromkeys(_REFERENCE.findall(text)))


def sync(store: GroupStore, at: str) -> int:
    """Derive the links recorded since the last call; returns how many were looked at."""
    audit_from, entry_from, turn_from = (
        _meta(store, _AUDIT_KEY),
        _meta(store, _ENTRY_KEY),
        _meta(store, _TURN_KEY),
    )
    seen = 0
    with store.transaction():
        audit_to = audit_from
        for row_id, action, session_id, ids, when in store.execute(
            "SELECT id, action, session_id, entry_ids, at FROM audit_log WHERE id > ? "
            "AND action IN ('supersede', 'dedup') ORDER BY id",
            (audit_from,),
        ).fetchall():
            audit_to, seen = int(row_id), seen + 1
            entry_ids = [i for i in json.loads(ids) if isinstance(i, str)]
            # The audit log outlives the entries it names: a deleted one gets no link.
            named = entry_ids if action == "supersede" else entry_ids[:1]
            if not all(_exists(store, i) for i in named):
                continue
            if action == "supersede" and len(entry_ids) == 2:
                add_link(store, entry_ids[1], entry_ids[0], "strong", "supersedes", at)
            elif action == "dedup" and entry_ids:
                summary = _day_summary(store, session_id, when)
                if summary is not None:
                    add_link(store, summary, entry_ids[0], "weak", "reinforced", at)
        last = store.execute("SELECT max(id) FROM audit_log").get
        _set_meta(store, _AUDIT_KEY, max(audit_to, int(last or 0)))

        entry_to = entry_from
        # Entries written in one call share their time; a handful is one turn's, but a
        # batch (an import, a bulk store) is no conversation: linking it would cost n².
        together: dict[tuple[str | None, str], list[str]] = {}
        for session_id, created, ids in store.execute(
            "SELECT session_id, created_at, group_concat(id, ' ') FROM memory_entries "
            "WHERE (session_id, created_at) IN (SELECT session_id, created_at "
            "FROM memory_entries WHERE seq > ?) GROUP BY session_id, created_at "
            f"HAVING count(*) BETWEEN 2 AND {SAME_TURN_MAX}",
            (entry_from,),
        ).fetchall():
            together[(session_id, created)] = str(ids).split(" ")
        for seq, entry_id, session_id, created, text in store.execute(
            "SELECT seq, id, session_id, created_at, search_text FROM memory_entries "
            "WHERE seq > ? ORDER BY seq",
            (entry_from,),
        ).fetchall():
            entry_to, seen = int(seq), seen + 1
            for other in together.get((session_id, created), ()):
                if other != entry_id:
                    add_link(store, entry_id, other, "strong", "same_turn", at)
            summary = _day_summary(store, session_id, created)
            if summary is not None:
                add_link(store, summary, entry_id, "weak", "stored_in_session", at)
            for ref in references(text):
                if _exists(store, ref):
                    add_link(store, entry_id, ref, "weak", "mentions", at)
        _set_meta(store, _ENTRY_KEY, entry_to)

        turn_to = turn_from
        for seq, summary, text in store.execute(
            "SELECT e.seq, s.summary_id, e.text FROM exchanges e "
            "JOIN layer_sources s ON s.exchange_seq = e.seq WHERE e.seq > ? "
            "AND e.text LIKE '%[[%' ORDER BY e.seq",
            (turn_from,),
        ).fetchall():
            turn_to, seen = max(turn_to, int(seq)), seen + 1
            for ref in references(text):
                if _exists(store, ref):
                    add_link(store, summary, ref, "weak", "mentions", at)
        last_turn = store.execute("SELECT max(exchange_seq) FROM layer_sources").get
        _set_meta(store, _TURN_KEY, max(turn_to, int(last_turn or 0)))
    return seen


@dataclass(frozen=True)
class Edge:
    src: str
    dst: str
    strength: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"from": self.src, "to": self.dst, "strength": self.strength, "reason": self.reason}


#: Links whose far end still exists: a deleted entry's or summary's are never followed
#: (an entry in the trash keeps its links until it is emptied, core.storage.link_rows).
_LIVE_LINKS = (
    "SELECT l.dst, l.strength, l.reason FROM layer_links AS l WHERE l.src = ? "
    "AND (EXISTS (SELECT 1 FROM memory_entries AS m WHERE m.id = l.dst) "
    "OR EXISTS (SELECT 1 FROM layer_summaries AS s WHERE s.id = l.dst)) "
    "ORDER BY l.strength, l.dst"
)


def edges_from(store: GroupStore, node: str) -> list[Edge]:
    """Every link leaving ``node`` to an entry or summary that exists, in a stable order:
    a summary's rollups first (``part_of``: its week, then its month), then the
    strong links, the weak ones, and last its children (``contains``, by time)."""
    out: list[Edge] = []
    if node.startswith("sum-"):
        out += [
            Edge(node, r[0], "strong", "part_of")
            for r in store.execute(
                "WITH RECURSIVE up(id, hops) AS (SELECT parent_id, 1 FROM layer_children "
                "WHERE child_id = ? UNION SELECT c.parent_id, up.hops + 1 FROM layer_children "
                "AS c JOIN up ON c.child_id = up.id WHERE up.hops < 3) "
                "SELECT id FROM up GROUP BY id ORDER BY min(hops), id",
                (node,),
            )
        ]
    out += [Edge(node, r[0], r[1], r[2]) for r in store.execute(_LIVE_LINKS, (node,))]
    if node.startswith("sum-"):
        out += [
            Edge(node, r[0], "strong", "contains")
            for r in store.execute(
                "SELECT c.child_id FROM layer_children c JOIN layer_summaries s "
                "ON s.id = c.child_id WHERE c.parent_id = ? ORDER BY s.start_at",
                (node,),
            )
        ]
    return out


def describe(service: Workspace, group: str, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What a person or agent sees of each node: an entry's content or a summary's hook."""
    wanted = list(ids)
    store = service.store_for(group)
    found: dict[str, dict[str, Any]] = {}
    for entry_id, e in service.entries(group, [i for i in wanted if i.startswith("mem-")]).items():
        found[entry_id] = {
            "id": entry_id,
            "kind": "memory",
            "type": e.type.value,
            "content": e.content,
            "status": e.status.value,
            "superseded_by": e.superseded_by,
        }
    for sid in (i for i in wanted if i.startswith("sum-")):
        r = store.execute(
            "SELECT level, period, thread_id, hook, start_at, end_at, turn_count "
            "FROM layer_summaries WHERE id = ?",
            (sid,),
        ).fetchone()
        if r is not None:
            found[sid] = {
                "id": sid,
                "kind": "summary",
                "level": r[0],
                "period": r[1],
                "thread_id": r[2],
                "hook": r[3],
                "start_at": r[4],
                "end_at": r[5],
                "turn_count": r[6],
            }
    return found


def dig(service: Workspace, group: str, start: str, depth: int = 2) -> dict[str, Any]:
    """Nodes reachable from ``start`` in at most ``depth`` hops, each once (no loops)."""
    if not isinstance(depth, int) or not 0 <= depth <= MAX_DEPTH:
        raise InvalidParams.bounds("depth", depth, 0, MAX_DEPTH)
    store = service.store_for(group)
    if not start.startswith(("mem-", "sum-")) or not _exists(store, start):
        raise NotFound(f"no memory or summary {start} in group {group}", field="id")
    # What was recorded since the last compression pass (a supersede a moment ago,
    # say) is linked now, not only at the next pass.
    sync(store, iso(utc_now()))
    level = {start: 0}
    edges: list[Edge] = []
    frontier = [start]
    truncated = False
    for hop in range(1, depth + 1):
        nxt: list[str] = []
        for node in frontier:
            for edge in edges_from(store, node):
                if edge.dst in level:
                    if level[edge.dst] >= hop - 1:
                        edges.append(edge)
                    continue
                if len(level) >= MAX_NODES:
                    truncated = True
                    continue
                level[edge.dst] = hop
                edges.append(edge)
                nxt.append(edge.dst)
        frontier = nxt
    info = describe(service, group, level)
    nodes = [{**info[n], "depth": d} for n, d in level.items() if n in info]
    kept = {n["id"] for n in nodes}
    return {
        "root": start,
        "depth": depth,
        "nodes": nodes,
        "edges": [e.to_dict() for e in edges if e.src in kept and e.dst in kept],
        "truncated": truncated,
    }
