"""How entries are read from rows: the columns, their decoding, and filter clauses.

Shared by the store (:mod:`core.storage.store`) and the queries outside it (the brief,
the search results), so a column is named in one place.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.model.entries import (
    EntryFilter,
    EntryType,
    MemoryEntry,
    Privacy,
    Provenance,
    Source,
    SourceType,
    Status,
    Trust,
)

ENTRY_COLUMNS = (
    "id, type, content, tags, status, review_reason, superseded_by, superseded_at, "
    "confidence, pinned, privacy, source_type, trust, session_id, group_name, "
    "created_at, updated_at, last_seen_at, effective_confidence, stale"
)
_N_COLUMNS = 20

#: :data:`ENTRY_COLUMNS` of the table aliased ``e``, for queries that join.
E_COLUMNS = ", ".join(f"e.{c.strip()}" for c in ENTRY_COLUMNS.split(","))


class Hit(NamedTuple):
    """The columns a search result shows, as stored (a slimmer read than a whole entry).

    Searching is the hot path of an agent's turn; decoding twenty whole entries
    costs more than the query that found them, so search reads only these.
    """

    id: str
    type: str
    content: str
    tags: str
    created_at: str
    status: str
    superseded_by: str | None
    trust: str
    privacy: str
    #: Decayed below the stale threshold as last refreshed: out of the brief, still found.
    stale: int
    score: float


#: The stored columns of a :class:`Hit` (its score comes from the query).
HIT_COLUMNS = ", ".join(f"e.{name}" for name in Hit._fields[:-1])


# Plain dict lookups: calling an enum class per column is the costliest part of a row.
_TYPES = {t.value: t for t in EntryType}
_STATUSES = {s.value: s for s in Status}
_PRIVACY = {p.value: p for p in Privacy}


@functools.cache
def _source(source_type: str, trust: str) -> Source:
    return Source(SourceType(source_type), Trust(trust))


def decode_tags(stored: str) -> tuple[str, ...]:
    """The tags column (a JSON array) as a tuple; most entries have none."""
    return () if stored == "[]" else tuple(json.loads(stored))


def entry_from_row(row: Sequence[Any]) -> MemoryEntry:
    (
        id_,
        type_,
        content,
        tags,
        status,
        reason,
        sup_by,
        sup_at,
        confidence,
        pinned,
        privacy,
        source_type,
        trust,
        session_id,
        group,
        created,
        updated,
        last_seen,
        effective,
        stale,
    ) = row[:_N_COLUMNS]
    return MemoryEntry(
        id=id_,
        type=_TYPES[type_],
        content=content,
        tags=decode_tags(tags),
        status=_STATUSES[status],
        review_reason=reason,
        superseded_by=sup_by,
        superseded_at=sup_at,
        confidence=float(confidence),
        pinned=bool(pinned),
        privacy=_PRIVACY[privacy],
        source=_source(source_type, trust),
        provenance=Provenance(session_id, group, created, updated),
        last_seen_at=last_seen,
        effective_confidence=float(effective),
        stale=bool(stale),
    )


@dataclass(frozen=True)
class NewRow:
    """Everything the store needs to insert an entry."""

    entry: MemoryEntry
    search_text: str
    content_key: str


def where_clause(flt: EntryFilter, alias: str = "e") -> tuple[str, list[Any]]:
    """The WHERE clause (on the table aliased ``alias``) and parameters of a filter."""
    clauses: list[str] = []
    params: list[Any] = []
    if flt.statuses:
        clauses.append(f"{alias}.status IN ({', '.join('?' * len(flt.statuses))})")
        params.extend(s.value for s in flt.statuses)
    if flt.only_superseded:
        clauses.append(f"{alias}.superseded_by IS NOT NULL")
    elif not flt.include_superseded:
        clauses.append(f"{alias}.superseded_by IS NULL")
    if flt.types:
        clauses.append(f"{alias}.type IN ({', '.join('?' * len(flt.types))})")
        params.extend(t.value for t in flt.types)
    if flt.privacy:
        clauses.append(f"{alias}.privacy IN ({', '.join('?' * len(flt.privacy))})")
        params.extend(p.value for p in flt.privacy)
    if flt.stale is not None:
        clauses.append(f"{alias}.stale = ?")
        params.append(int(flt.stale))
    if flt.behavioral is not None:
        clauses.append(f"{alias}.behavioral = ?")
        params.append(int(flt.behavioral))
    for tag in flt.tags:
        clauses.append(f"{alias}.seq IN (SELECT entry_seq FROM memory_tags WHERE tag = ?)")
        params.append(tag)
    return (" AND ".join(clauses) or "1"), params


def filtered_source(flt: EntryFilter) -> tuple[str, str, list[Any]]:
    """FROM clause, WHERE clause and parameters for a listing without text search.

    With a tag filter the rows are found through the tag index (a tag is far
    more selective than a date order), whatever the planner's statistics say.
    """
    where, params = where_clause(flt)
    if not flt.tags:
        return "memory_entries e", where, params
    source = "memory_tags t CROSS JOIN memory_entries e ON e.seq = t.entry_seq"
    return source, f"t.tag = ? AND {where}", [flt.tags[0], *params]


#: One audit row (the store batches read-audit rows with it; core.storage.audit writes the rest).
AUDIT_INSERT_SQL = (
    "INSERT INTO audit_log (at, action, actor, session_id, entry_ids, count, size, detail) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)
