"""Memory search: bm25-ranked matches, or the most recent entries when there is no query."""

from __future__ import annotations

from core.model.entries import MAX_SEARCH_LIMIT, EntryFilter, EntryType, SearchResult
from core.storage.fts import query_terms, typed_terms
from core.storage.rows import Hit, decode_tags
from core.storage.workspace import Workspace

_BEHAVIORAL_TYPES = frozenset(t.value for t in EntryType if t.behavioral)


def relevance_scores(bm25_scores: list[float]) -> list[float]:
    """Map bm25 scores (lower is better) onto 0..1 relative to the best match.

    bm25 has no fixed scale (it depends on corpus size and term rarity), so the
    best result scores 1.0 and the others their fraction of it.
    """
    strengths = [max(0.0, -s) for s in bm25_scores]
    best = max(strengths, default=0.0)
    if best <= 0.0:
        return [1.0 for _ in strengths]
    return [round(s / best, 4) for s in strengths]


def to_search_result(hit: Hit, content: str, score: float) -> SearchResult:
    """A search result from its stored columns and its readable ``content``."""
    return SearchResult(
        id=hit.id,
        type=hit.type,
        content=content,
        behavioral=hit.type in _BEHAVIORAL_TYPES,
        tags=list(decode_tags(hit.tags)),
        created_at=hit.created_at,
        relevance_score=score,
        status=hit.status,
        superseded_by=hit.superseded_by,
        trust=hit.trust,
    )


def search_entries(
    ws: Workspace, group: str, query: str, flt: EntryFilter, limit: int = 20
) -> list[SearchResult]:
    """Entries of ``group`` matching ``query`` best first (no audit row: callers decide)."""
    limit = max(1, min(limit, MAX_SEARCH_LIMIT))
    store = ws.store_for(group)
    if query.strip():
        hits = store.search(query_terms(query), flt, limit)
        scores = relevance_scores([h.score for h in hits])
    else:
        hits = store.recent_hits(flt, limit)
        scores = [0.0] * len(hits)
    return [
        to_search_result(h, ws.readable_content(h.id, h.privacy, h.content), score)
        for h, score in zip(hits, scores, strict=True)
    ]


def list_ids(ws: Workspace, group: str, flt: EntryFilter, query: str = "") -> list[str]:
    """Ordered ids for the browser (most recent first, or best match first)."""
    store = ws.store_for(group)
    if not query.strip():
        return store.ids(flt)
    terms, typing = typed_terms(query)
    return store.browse_ids(flt, terms, prefix_last=typing)
