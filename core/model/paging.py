"""Paging a ranked search: one list per search, cut into pages.

A search ranks a pool of candidates sized for the results asked for, so a page
ranked from a deeper pool could bring in a result that ranks above ones an
earlier page showed, repeating some and skipping others. :func:`tiered_page`
builds one list for every page of a search instead.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def tiered_page(
    rank: Callable[[int], Sequence[T]],
    key: Callable[[T], Hashable],
    *,
    limit: int,
    offset: int,
    deepest: int,
) -> tuple[list[T], bool]:
    """Results ``offset`` to ``offset + limit`` of one list, and whether more follow.

    Args:
        rank: the ``depth`` best results for a depth, and one more when more
            follow (ranked from a pool sized for ``depth``).
        key: what makes two results the same one.
        deepest: the deepest pool ranked.

    The list's first ``limit`` results are ``rank(limit)``'s. Each stretch after
    them ranks a pool twice as deep as the last, up to ``deepest``, and lists its
    best results not listed yet. The pages of one search (one ``limit``) are cuts
    of that list, so reading on neither repeats nor skips a result while the
    store is unchanged.
    """
    listed: list[T] = []
    depth = limit
    while True:
        ranked = rank(depth)
        shown = {key(r) for r in listed}
        listed += [r for r in ranked if key(r) not in shown][: depth - len(listed)]
        more = len(ranked) > depth
        if not more or len(listed) >= offset + limit or depth >= deepest:
            break
        depth = min(2 * depth, deepest)
    return listed[offset : offset + limit], more or len(listed) > offset + limit


def next_page(offset: int, limit: int, more: bool, deepest: int) -> tuple[int | None, bool]:
    """Where the page after ``offset``/``limit`` starts, and whether more results
    match than paging reaches: a next offset past ``deepest`` (the highest offset
    accepted) is not given, so a client is never handed one it would be refused."""
    if not more:
        return None, False
    if offset + limit > deepest:
        return None, True
    return offset + limit, False


def page_fields(next_offset: int | None, truncated: bool) -> dict[str, Any]:
    """A page's paging as a search result carries it: ``next_offset`` when another
    page follows, ``truncated`` when more match than paging reaches."""
    if next_offset is not None:
        return {"next_offset": next_offset}
    return {"truncated": True} if truncated else {}


@dataclass(frozen=True)
class Page(Generic[T]):
    """Rows ``offset`` to ``offset + limit`` of a listing, and what follows them."""

    rows: list[T]
    #: Where the next page starts; None when none follows or paging cannot reach it.
    next_offset: int | None
    #: More rows follow than the largest offset reaches.
    truncated: bool

    def paging(self) -> dict[str, Any]:
        """``next_offset`` or ``truncated`` as a tool's result carries them."""
        return page_fields(self.next_offset, self.truncated)


def read_page(
    fetch: Callable[[int, int], list[T]], limit: int, offset: int, deepest: int | None = None
) -> Page[T]:
    """The page ``fetch(n, skip)`` gives at ``offset`` of a listing in a fixed order.

    One row more than the page is read, so the page can say that more follow without
    counting them all. ``deepest`` is the highest offset accepted (None: no ceiling).
    """
    rows = fetch(limit + 1, offset)
    more = len(rows) > limit
    if deepest is None:
        return Page(rows[:limit], offset + limit if more else None, False)
    following, truncated = next_page(offset, limit, more, deepest)
    return Page(rows[:limit], following, truncated)
