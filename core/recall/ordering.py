"""The browser's other orders (by type, content, source, confidence, age, status) and tag counts.

The default orders (newest first, best match first) are :func:`core.recall.search.list_ids`;
this module sorts the same selection by a column the person clicked. Without
search text the database sorts the filtered rows; with search text the matched
ids are sorted by one query over them, so a search and a sort compose.
"""

from __future__ import annotations

import json
from enum import StrEnum

from core.model.entries import EntryFilter
from core.recall.search import list_ids
from core.storage.rows import filtered_source
from core.storage.store import GroupStore
from core.storage.workspace import Workspace


class SortKey(StrEnum):
    """A column the browser can be sorted by."""

    TYPE = "type"
    CONTENT = "content"
    TAGS = "tags"
    SOURCE = "source"
    CONFIDENCE = "confidence"
    AGE = "age"
    STATUS = "status"

    @property
    def sql(self) -> str:
        """The ORDER BY expression (on ``e``), ascending; ties fall back to newest first."""
        match self:
            case SortKey.TYPE:
                return "e.type"
            case SortKey.CONTENT:
                return "e.search_text COLLATE NOCASE"
            case SortKey.TAGS:
                return "e.tags = '[]', e.tags COLLATE NOCASE"
            case SortKey.SOURCE:
                return (
                    "CASE e.trust WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END, e.source_type"
                )
            case SortKey.CONFIDENCE:
                return "e.confidence"
            case SortKey.AGE:
                # Ascending age is newest first.
                return "e.created_at DESC"
            case SortKey.STATUS:
                return "e.status, e.stale, e.pinned DESC"


def sorted_ids(
    ws: Workspace,
    group: str,
    flt: EntryFilter,
    query: str,
    key: SortKey,
    *,
    descending: bool = False,
) -> list[str]:
    """Ids of what :func:`list_ids` finds, in the order of ``key``."""
    store = ws.store_for(group)
    order = _order(key.sql, descending)
    if not query.strip():
        source, where, params = filtered_source(flt)
        sql = f"SELECT e.id FROM {source} WHERE {where} ORDER BY {order}, e.seq DESC"
        return [r[0] for r in store.execute(sql, params)]
    found = list_ids(ws, group, flt, query)
    sql = (
        "SELECT e.id FROM memory_entries e WHERE e.id IN (SELECT value FROM json_each(?)) "
        f"ORDER BY {order}, e.seq DESC"
    )
    return [r[0] for r in store.execute(sql, (json.dumps(found),))]


def _order(sql: str, descending: bool) -> str:
    """``sql`` (an ascending ORDER BY list), reversed part by part when ``descending``."""
    parts = []
    for part in (p.strip() for p in sql.split(",")):
        base = part.removesuffix(" DESC")
        desc = (base != part) != descending
        parts.append(f"{base} DESC" if desc else base)
    return ", ".join(parts)


def current_tag_counts(store: GroupStore) -> list[tuple[str, int]]:
    """``(tag, count)`` over the entries the browser lists by default (no old versions)."""
    rows = store.execute(
        "SELECT t.tag, count(*) FROM memory_tags t JOIN memory_entries e ON e.seq = t.entry_seq "
        "WHERE e.superseded_by IS NULL GROUP BY t.tag COLLATE NOCASE ORDER BY t.tag COLLATE NOCASE"
    )
    return [(r[0], r[1]) for r in rows]
