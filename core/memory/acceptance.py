"""Taking a candidate out of review: what the person's accept (core.memory.curation)
and a trusted write of the same text (core.memory.writing) both do.

A candidate written to replace an entry (``pending_supersedes``) replaces its
chain's current version when it becomes active: the entry it named, or the
version that replaced that entry while it waited. So accepting it never leaves two
current versions of one fact (core.storage.chains).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.model.entries import MemoryEntry, Status
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import later_versions

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore


@dataclass(frozen=True)
class Acceptance:
    """What accepting one candidate changed, so it can be taken back
    (core.memory.curation.return_to_review).

    Attributes:
        entry_id: the accepted entry.
        review_reason: why it awaited review.
        deferred_at: when it was deferred, if it was.
        pending_supersedes: the entry it was written to replace once accepted.
        superseded: the entry the accept did replace, if any: ``pending_supersedes``,
            or the version that replaced it while the candidate waited.
    """

    entry_id: str
    review_reason: str | None
    deferred_at: str | None
    pending_supersedes: str | None
    superseded: str | None

    @property
    def replaced_since(self) -> bool:
        """The accept replaced a version written after the one the candidate named."""
        return self.superseded is not None and self.superseded != self.pending_supersedes


@dataclass(frozen=True)
class OnAccept:
    """What a candidate will replace once accepted, as things stand.

    Attributes:
        pending_supersedes: the entry it was written to replace.
        current: that entry's current version, which it will replace (``None``: the
            entry is gone, and it will replace nothing).
    """

    pending_supersedes: str
    current: str | None

    @property
    def replaced_since(self) -> bool:
        return self.current is not None and self.current != self.pending_supersedes


def waiting_state(store: GroupStore, entry_id: str) -> tuple[str | None, str | None]:
    """A candidate's ``deferred_at`` and ``pending_supersedes`` (not on :class:`MemoryEntry`)."""
    row = store.execute(
        "SELECT deferred_at, pending_supersedes FROM memory_entries WHERE id = ?", (entry_id,)
    ).fetchone()
    return (row[0], row[1]) if row else (None, None)


def current_version(store: GroupStore, entry_id: str) -> str | None:
    """The current version of ``entry_id``'s chain (itself when nothing replaced it),
    or ``None`` when there is no such entry."""
    versions = later_versions(store, entry_id)
    return versions[-1] if versions else None


def on_accept(store: GroupStore, entry_id: str) -> OnAccept | None:
    """What candidate ``entry_id`` will replace once accepted; ``None``: nothing."""
    _, pending = waiting_state(store, entry_id)
    if pending is None:
        return None
    current = current_version(store, pending)
    return OnAccept(pending, None if current == entry_id else current)


def activate(
    store: GroupStore, caller: Caller, entry: MemoryEntry, now: str, **detail: Any
) -> Acceptance:
    """Make candidate ``entry`` active, in the caller's transaction, and audit it as
    an accept (``detail`` added to the row); it replaces the current version of the
    entry it was written to replace.

    The row keeps ids and a time, no content: what ``ambry review return`` puts back.
    """
    assert entry.status is Status.CANDIDATE, "only a candidate is accepted"
    deferred_at, pending = waiting_state(store, entry.id)
    store.update_fields(
        entry.id,
        status=Status.ACTIVE.value,
        review_reason=None,
        deferred_at=None,
        pending_supersedes=None,
        updated_at=now,
    )
    superseded = _replace_current(store, caller, entry.id, pending, now)
    audit.record(
        store,
        Action.REVIEW_ACCEPT,
        caller.actor,
        session_id=caller.session_id,
        entry_ids=[entry.id],
        reason=entry.review_reason,
        deferred_at=deferred_at,
        pending_supersedes=pending,
        superseded=superseded,
        **detail,
    )
    return Acceptance(entry.id, entry.review_reason, deferred_at, pending, superseded)


def _replace_current(
    store: GroupStore, caller: Caller, entry_id: str, pending: str | None, now: str
) -> str | None:
    """The accepted entry replaces the current version of ``pending``'s chain, if it
    is still kept; returns the id of the version it replaced."""
    if pending is None:
        return None
    current = current_version(store, pending)
    if current is None or current == entry_id:
        return None  # deleted meanwhile: the accepted entry simply stands
    store.mark_superseded(current, entry_id, now)
    audit.record(
        store,
        Action.SUPERSEDE,
        caller.actor,
        session_id=caller.session_id,
        entry_ids=[current, entry_id],
    )
    return current
