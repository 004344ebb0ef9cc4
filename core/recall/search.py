"""Memory search: bm25 and meaning fused (:mod:`~core.recall.memory_recall`), else the newest."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from core.model.entries import (
    MAX_SEARCH_LIMIT,
    MAX_SEARCH_OFFSET,
    EntryFilter,
    EntryType,
    SearchResult,
    utc_now,
)
from core.model.paging import next_page, tiered_page
from core.recall import memory_recall
from core.semantic.hybrid import Mode
from core.storage.fts import searchable, typed_terms, unspaced_grams
from core.storage.rows import Hit, decode_tags
from core.storage.workspace import Workspace

_BEHAVIORAL_TYPES = frozenset(t.value for t in EntryType if t.behavioral)


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
        stale=bool(hit.stale),
    )


def search_entries(
    ws: Workspace,
    group: str,
    query: str,
    flt: EntryFilter,
    limit: int = 20,
    *,
    mode: Mode = Mode.AUTO,
) -> list[SearchResult]:
    """Entries of ``group`` matching ``query`` best first: bm25 and meaning fused.

    With no query, the most recent entries; with punctuation or symbols alone
    (:func:`~core.storage.fts.searchable`), none. No audit row: callers decide.
    """
    return search_page(ws, group, query, flt, limit, mode=mode).results


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of a search, and where the next one starts (``None``: no more)."""

    results: list[SearchResult]
    next_offset: int | None
    #: More results match than paging reaches (past ``MAX_SEARCH_OFFSET``).
    truncated: bool = False


def search_page(
    ws: Workspace,
    group: str,
    query: str,
    flt: EntryFilter,
    limit: int = 20,
    *,
    offset: int = 0,
    mode: Mode = Mode.AUTO,
) -> SearchPage:
    """:func:`search_entries` from the ``offset``-th result on.

    The pages of one search (one ``limit``) are cuts of one list
    (:func:`~core.model.paging.tiered_page`), the first of them the ranking of the
    ``limit`` best alone, so reading on neither repeats nor skips a memory.
    """
    limit = max(1, min(limit, MAX_SEARCH_LIMIT))
    offset = max(0, min(offset, MAX_SEARCH_OFFSET))
    store = ws.store_for(group)
    if query.strip() and not searchable(query):
        # Punctuation alone ("%", "?"): no word to match, and its meaning is noise.
        return SearchPage([], None)
    if query.strip():
        now = utc_now()

        def rank(depth: int) -> list[memory_recall.RankedHit]:
            return memory_recall.search(
                store, query, flt, depth + 1, mode=mode, config=ws.config, now=now
            )

        page, more = tiered_page(
            rank,
            lambda r: r.hit.id,
            limit=limit,
            offset=offset,
            deepest=MAX_SEARCH_OFFSET + limit,
        )
        after, truncated = next_page(offset, limit, more, MAX_SEARCH_OFFSET)
        return SearchPage(to_results(ws, page), after, truncated)
    # A listing, not a ranking: every entry matches an empty query fully (as
    # exchange_search says too), newest first.
    hits = store.recent_hits(flt, limit + 1, offset)
    ranked = [memory_recall.RankedHit(h, 1.0, ()) for h in hits]
    after, truncated = next_page(offset, limit, len(ranked) > limit, MAX_SEARCH_OFFSET)
    return SearchPage(to_results(ws, ranked[:limit]), after, truncated)


def to_results(ws: Workspace, ranked: Iterable[memory_recall.RankedHit]) -> list[SearchResult]:
    """Search results from ranked hits: readable content, score and the signals that found them."""
    results = []
    for r in ranked:
        content = ws.readable_content(r.hit.id, r.hit.privacy, r.hit.content)
        result = to_search_result(r.hit, content, r.score)
        results.append(replace(result, signals=r.signals) if r.signals else result)
    return results


def list_ids(
    ws: Workspace, group: str, flt: EntryFilter, query: str = "", limit: int | None = None
) -> list[str]:
    """Ordered ids for the browser (most recent first, or best match first); with
    ``limit``, the first ones only (a screenful comes back at once at any size)."""
    store = ws.store_for(group)
    if not query.strip():
        return store.ids(flt, limit=limit)
    terms, typing = typed_terms(query)
    found = store.browse_ids(flt, terms, prefix_last=typing, limit=limit)
    grams = unspaced_grams(query)
    if not grams:
        return found
    # Words inside unspaced text (Chinese, Japanese) are no index terms: found by
    # their pieces in the gram index, most held first, before the index's own matches.
    within = store.ids_of(list(store.unspaced_matches(flt, grams, limit)))
    listed = set(within)
    return [*within, *(i for i in found if i not in listed)][:limit]
