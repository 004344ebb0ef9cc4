"""What ``memory_search``, ``exchange_search`` and ``memory_related`` return, built
in one place.

The agent tools and the CLI's ``ambry --json search``, ``ambry --json exchanges``
and ``ambry --json related`` print these results, so a key one of them gains
(paging, claims, the vectors still pending) reaches the other too. Each front end
runs the search its own way (a connection resolves its session's thread; a
one-shot command embeds new rows itself) and hands the parts here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.model.paging import page_fields
from core.semantic.hybrid import parse_mode

if TYPE_CHECKING:
    from core.continuity.episodes import ExchangePage
    from core.model.caller import Caller
    from core.model.entries import SearchResult
    from core.recall.search import SearchPage
    from core.service import MemoryService


@dataclass(frozen=True)
class MemorySearch:
    """A page of ``memory_search``, with the claims that match its words."""

    page: SearchPage
    claims: list[dict[str, Any]]
    #: ``pending_vectors`` and ``note`` while rows wait for their vectors, else empty.
    vectors: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """``memory_search``'s result."""
        return {
            "results": [r.to_dict() for r in self.page.results],
            **page_fields(self.page.next_offset, self.page.truncated),
            "claims": self.claims,
            **self.vectors,
        }


def search_memories(
    service: MemoryService,
    caller: Caller,
    args: dict[str, Any],
    vectors: dict[str, Any] | None = None,
) -> MemorySearch:
    """Run ``memory_search`` with ``args``; ``vectors`` replaces what the embedding
    worker says of the rows it has not embedded yet (a command runs no worker).

    Raises:
        InvalidParams: ``args`` break the tool's schema.
    """
    page = service.search_page(caller, args)
    claims = service.claims_matching(caller.group, str(args.get("query") or ""))
    if vectors is None:
        vectors = service.vectors_note(caller.group, parse_mode(args.get("mode")))
    return MemorySearch(page, claims, vectors)


@dataclass(frozen=True)
class ExchangeSearch:
    """A page of ``exchange_search``."""

    page: ExchangePage
    #: ``pending_vectors`` and ``note`` while rows wait for their vectors, else empty.
    vectors: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """``exchange_search``'s result."""
        return {**self.page.to_dict(), **self.vectors}


@dataclass(frozen=True)
class RelatedMemories:
    """The memories nearest in meaning to one memory: ``memory_related``."""

    results: list[SearchResult]

    def to_dict(self) -> dict[str, Any]:
        """``memory_related``'s result."""
        return {"results": [r.to_dict() for r in self.results]}


def related_memories(
    service: MemoryService, caller: Caller, args: dict[str, Any]
) -> RelatedMemories:
    """Run ``memory_related`` with ``args``.

    Raises:
        InvalidParams: ``args`` break the tool's schema.
        NotFound: no such memory.
        Forbidden: a secret memory, which is never compared.
    """
    return RelatedMemories(service.related(caller, args))
