"""What ``thread_list``, ``attachment_list`` and ``claim_search`` return, built in one place.

The agent tools and the CLI's ``ambry --json threads``, ``ambry --json attachments``
and ``ambry --json claims list`` print these results, so paging (``next_offset``,
``truncated``) or a key one of them gains reaches the other too, as
:mod:`core.agent.search_results` does for the searches. Each front end checks its
own arguments (a tool its schema, a command its options, within the same bounds)
and hands them here.

A page is read one row longer than asked, so it can say that more follow without
counting them all. These are listings in a fixed order (a claim search ranks every
match, ties broken by age), so ``LIMIT``/``OFFSET`` over the same order cuts one list
into pages that neither repeat nor skip a row while the store is unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from core.attachments.receipts import Receipt, list_receipts
from core.claims import records
from core.claims.model import Claim, ClaimKind, ClaimStatus
from core.claims.modes import current_mode
from core.continuity import threads
from core.continuity.threads import Thread
from core.model.paging import Page, read_page
from core.policy.manifest import tool_maximum

if TYPE_CHECKING:
    from core.service import MemoryService

T = TypeVar("T")


def _read(tool: str, fetch: Callable[[int, int], list[T]], limit: int, offset: int) -> Page[T]:
    """A page of the listing ``tool`` reads, up to the tool's largest offset."""
    return read_page(fetch, limit, offset, tool_maximum(tool, "offset"))


def thread_list(
    service: MemoryService, group: str, current: str | None, *, limit: int, offset: int
) -> tuple[Page[Thread], dict[str, Any]]:
    """A page of ``thread_list`` and its result; ``current`` is the session's thread."""
    page = _read(
        "thread_list", lambda n, skip: threads.list_threads(service, group, n, skip), limit, offset
    )
    result = {"threads": [t.to_dict() for t in page.rows], **page.paging(), "current": current}
    return page, result


def attachment_list(
    service: MemoryService, group: str, thread: str | None, *, limit: int, offset: int
) -> tuple[Page[Receipt], dict[str, Any]]:
    """A page of ``attachment_list`` and its result; ``thread`` is an id or a title.

    Raises:
        NotFound: ``thread`` names no thread.
    """
    thread_id = None if thread is None else threads.find_thread(service, group, thread).id
    store = service.store_for(group)
    page = _read(
        "attachment_list",
        lambda n, skip: list_receipts(store, thread_id, n, skip),
        limit,
        offset,
    )
    return page, {"receipts": [r.to_dict() for r in page.rows], **page.paging()}


def claim_search(
    service: MemoryService,
    group: str,
    *,
    query: str,
    status: str | None,
    kind: str | None,
    limit: int,
    offset: int,
) -> tuple[Page[Claim], dict[str, Any]]:
    """A page of ``claim_search`` and its result (no audit: the tool records its reads)."""
    store = service.store_for(group)
    page = _read(
        "claim_search",
        lambda n, skip: records.list_claims(
            store,
            query=query,
            statuses=[ClaimStatus(status)] if status else [],
            kinds=[ClaimKind(kind)] if kind else [],
            limit=n,
            offset=skip,
        ),
        limit,
        offset,
    )
    result = {
        "claims": [c.to_dict() for c in page.rows],
        **page.paging(),
        "mode": current_mode(store).value,
    }
    return page, result
