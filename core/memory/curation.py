"""What only the person may do: review candidates, bulk delete, undo a delete or an accept, pin.

These functions back the GUI and the CLI. None of them is reachable from the
agent protocol, and each refuses an agent caller as well (defence in depth).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from core.memory.acceptance import Acceptance, activate
from core.memory.confidence import effective_confidence
from core.memory.versions import Restored, put_back
from core.model.changes import Changes
from core.model.entries import Actor, EntryFilter, MemoryEntry, Status, iso, parse_iso, utc_now
from core.model.errors import Conflict, Forbidden, NotFound
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import Place
from core.storage.rows import where_clause
from core.storage.scrub import Index, scrub

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


class Decision(StrEnum):
    ACCEPT = "accept"
    REJECT = "reject"
    DEFER = "defer"


@dataclass(frozen=True)
class Returned:
    """What :func:`return_to_review` did.

    Attributes:
        changes: the change record.
        returned: the entries awaiting review again.
        left: the accepted entries that changed since (deleted, replaced, or the entry
            they replaced is no longer replaced by them) and were left as they are.
    """

    changes: Changes
    returned: tuple[str, ...]
    left: tuple[str, ...]


def require_operator(caller: Caller, what: str) -> None:
    if caller.actor is Actor.AGENT:
        raise Forbidden(f"{what} is for the person, in the app or the CLI, not for an agent")


def candidate_ids(store: GroupStore) -> list[str]:
    """Every entry awaiting review: fresh ones first, deferred ones last, each in
    the order they were stored (entries stored in the same millisecond included)."""
    # The same filter as the inbox badge's count, so the two always agree.
    where, params = where_clause(EntryFilter(statuses=(Status.CANDIDATE,)))
    return [
        r[0]
        for r in store.execute(
            f"SELECT e.id FROM memory_entries e WHERE {where} "
            "ORDER BY e.deferred_at IS NOT NULL, e.created_at, e.seq",
            params,
        )
    ]


def candidates(service: Workspace, group: str) -> list[MemoryEntry]:
    """The entries of :func:`candidate_ids`, readable (private content decrypted)."""
    ids = candidate_ids(service.store_for(group))
    found = service.entries(group, ids)
    return [found[i] for i in ids if i in found]


def review(
    service: Workspace, caller: Caller, entry_ids: Sequence[str], decision: Decision
) -> Changes:
    """Accept (make active), reject (delete) or defer candidates, all or none."""
    return _decide(service, caller, entry_ids, decision)[0]


def accept(
    service: Workspace, caller: Caller, entry_ids: Sequence[str]
) -> tuple[Changes, list[Acceptance]]:
    """Accept candidates, all or none; returns what each accept changed, to undo it."""
    return _decide(service, caller, entry_ids, Decision.ACCEPT)


def _decide(
    service: Workspace, caller: Caller, entry_ids: Sequence[str], decision: Decision
) -> tuple[Changes, list[Acceptance]]:
    require_operator(caller, "reviewing memories")
    store = service.store_for(caller.group)
    now = iso(utc_now())
    accepted: list[Acceptance] = []
    with store.transaction():
        for entry_id in entry_ids:
            entry = store.get(entry_id)
            if entry is None:
                raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
            if entry.status is not Status.CANDIDATE:
                raise Conflict(f"{entry_id} is not awaiting review (it is {entry.status})")
            match decision:
                case Decision.ACCEPT:
                    # Audited there, with what `ambry review return` puts back.
                    accepted.append(activate(store, caller, entry, now))
                case Decision.REJECT:
                    store.delete(entry_id)
                    _record(store, caller, Action.REVIEW_REJECT, entry)
                case Decision.DEFER:
                    store.update_fields(entry_id, deferred_at=now)
                    _record(store, caller, Action.REVIEW_DEFER, entry)
    if decision is Decision.REJECT:
        scrub(store, (Index.ENTRIES,))
    replaced = tuple(a.superseded for a in accepted if a.superseded)
    changes = service.emit(
        Changes(
            group=store.group,
            entries=True,
            review=True,
            audit=True,
            entry_ids=tuple(dict.fromkeys((*entry_ids, *replaced))),
        )
    )
    return changes, accepted


def _record(store: GroupStore, caller: Caller, action: Action, entry: MemoryEntry) -> None:
    audit.record(
        store,
        action,
        caller.actor,
        session_id=caller.session_id,
        entry_ids=[entry.id],
        reason=entry.review_reason,
    )


def return_to_review(
    service: Workspace, caller: Caller, accepted: Sequence[Acceptance]
) -> Returned:
    """Take accepts back (undo), in one transaction: each entry awaits review again.

    An entry gets back its reason, deferral and pending supersession, and an entry
    its accept replaced is current again. Only where nothing changed since: the
    accepted entry still exists, is active and not replaced, and the entry it
    replaced is still replaced by it. The others are left as they are and listed
    in :attr:`Returned.left`.
    """
    require_operator(caller, "returning memories to review")
    store = service.store_for(caller.group)
    now = iso(utc_now())
    returned: list[str] = []
    left: list[str] = []
    with store.transaction():
        found = store.get_many([a.entry_id for a in accepted])
        replaced = store.get_many([a.superseded for a in accepted if a.superseded])
        # Current again by an accept taken back here: of a batch that accepted two
        # versions of one fact, the later accept is taken back first.
        again: set[str] = set()
        for a in reversed(accepted):
            entry = found.get(a.entry_id)
            old = replaced.get(a.superseded) if a.superseded else None
            unchanged = (
                entry is not None
                and entry.status is Status.ACTIVE
                and (entry.superseded_by is None or entry.id in again)
                and (a.superseded is None or (old is not None and old.superseded_by == a.entry_id))
            )
            if not unchanged:
                left.append(a.entry_id)
                continue
            store.update_fields(
                a.entry_id,
                status=Status.CANDIDATE.value,
                review_reason=a.review_reason,
                deferred_at=a.deferred_at,
                pending_supersedes=a.pending_supersedes,
                updated_at=now,
            )
            if a.superseded:
                store.unmark_superseded(a.superseded, now)
                again.add(a.superseded)
            returned.append(a.entry_id)
        returned.reverse()
        left.reverse()
        again -= set(returned)
        current = [a.superseded for a in accepted if a.superseded and a.superseded in again]
        if returned:
            audit.record(
                store,
                Action.REVIEW_UNDO,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=[*returned, *current],
                count=len(returned),
                current_again=len(current) or None,
            )
    if not returned:
        return Returned(Changes(group=store.group), (), tuple(left))
    changes = service.emit(
        Changes(
            group=store.group,
            entries=True,
            review=True,
            audit=True,
            entry_ids=(*returned, *current),
        )
    )
    return Returned(changes, tuple(returned), tuple(left))


def recorded_acceptances(store: GroupStore, entry_ids: Sequence[str]) -> list[Acceptance]:
    """What the newest accept of each of ``entry_ids`` changed, as its audit row says,
    for :func:`return_to_review` from a command (``ambry review return``), which has no
    undo stack to keep it in.

    An accept recorded before the audit row kept its deferral gives the entry back
    undeferred; the entry it replaced is then read from the supersede row written
    just before it, in the same transaction.

    Raises:
        NotFound: no such entry, or it was never accepted from review.
        Conflict: it awaits review already.
    """
    found = store.get_many(entry_ids)
    out: list[Acceptance] = []
    for entry_id in entry_ids:
        entry = found.get(entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
        if entry.status is Status.CANDIDATE:
            raise Conflict(f"{entry_id} awaits review already; nothing to take back", field="id")
        row = store.execute(
            "SELECT id, detail FROM audit_log WHERE action = ? AND entry_ids = ? "
            "ORDER BY id DESC LIMIT 1",
            (Action.REVIEW_ACCEPT.value, json.dumps([entry_id])),
        ).fetchone()
        if row is None:
            raise NotFound(
                f"{entry_id} was never accepted from review (it was stored active): "
                "nothing to take back; `ambry delete` deletes it",
                field="id",
            )
        detail = json.loads(row[1])
        superseded = detail.get("superseded")
        if superseded is None:  # an accept recorded before its row named it
            before = store.execute(
                "SELECT entry_ids FROM audit_log WHERE id = ? AND action = ?",
                (row[0] - 1, Action.SUPERSEDE.value),
            ).fetchone()
            replaced = json.loads(before[0]) if before else []
            if len(replaced) == 2 and replaced[1] == entry_id:
                superseded = replaced[0]
        pending = detail.get("pending_supersedes", superseded)
        out.append(
            Acceptance(
                entry_id, detail.get("reason"), detail.get("deferred_at"), pending, superseded
            )
        )
    return out


@dataclass(frozen=True)
class Deleted:
    """Memories deleted together, as they were, in the order they were deleted, and
    where each stood among its versions: what :func:`core.memory.bulk.restore_all` needs to undo it.

    Attributes:
        entries: the memories deleted.
        places: where each stood in its version chain, by id.
    """

    entries: tuple[MemoryEntry, ...]
    places: Mapping[str, Place] = field(default_factory=dict)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(e.id for e in self.entries)

    @property
    def current_again(self) -> tuple[str, ...]:
        """The earlier versions the delete made current, of those it left."""
        gone = set(self.ids)
        again = (p.current_again for p in self.places.values())
        return tuple(i for i in dict.fromkeys(again) if i is not None and i not in gone)


def delete_recorded(
    store: GroupStore, caller: Caller, entry_ids: Sequence[str], **details: Any
) -> dict[str, Place]:
    """Delete ``entry_ids`` inside the caller's transaction, with one audit row
    (``details`` added to it); the caller scrubs once the transaction is over.

    Returns:
        Where each stood among its versions, which are relinked around it.
    """
    places = store.delete_many(entry_ids, iso(utc_now()))
    again = [
        p.current_again
        for p in places.values()
        if p.current_again is not None and p.current_again not in places
    ]
    audit.record(
        store,
        Action.DELETE,
        caller.actor,
        session_id=caller.session_id,
        entry_ids=list(entry_ids),
        count=len(entry_ids),
        current_again=again or None,
        **details,
    )
    return places


def delete_many(
    service: Workspace, caller: Caller, entry_ids: Sequence[str]
) -> tuple[Changes, Deleted]:
    """Delete entries in one transaction; returns them so the caller can offer undo."""
    require_operator(caller, "bulk deletion")
    store = service.store_for(caller.group)
    found = store.get_many(entry_ids)
    missing = [i for i in entry_ids if i not in found]
    if missing:
        raise NotFound(f"no entry {missing[0]} in group {store.group}", field="id")
    with store.transaction():
        places = delete_recorded(store, caller, entry_ids)
    deleted = Deleted(tuple(found[i] for i in entry_ids), places)
    scrub(store, (Index.ENTRIES,))
    changes = service.emit(
        Changes(
            group=store.group,
            entries=True,
            review=True,
            audit=True,
            entry_ids=(*entry_ids, *deleted.current_again),
        )
    )
    return changes, deleted


def detach_joins(store: GroupStore, detach: Sequence[tuple[str, str]], now: str) -> None:
    """Make each (version, kept) pair a near-duplicate keep joined current again, if
    still so joined (see :func:`core.memory.bulk.restore_all`); inside the caller's transaction."""
    for version, kept in detach:
        if store.execute(
            "SELECT 1 FROM memory_entries WHERE id = ? AND superseded_by = ?", (version, kept)
        ).fetchone():
            store.unmark_superseded(version, now)


def put_back_deleted(
    service: Workspace,
    store: GroupStore,
    caller: Caller,
    entry: MemoryEntry,
    places: Mapping[str, Place],
    now: str,
) -> Restored:
    """Insert the deleted ``entry`` again, where ``places`` says it stood among its
    versions; not audited. Runs inside the caller's transaction.

    Raises:
        Conflict: an entry with its id exists.
    """
    if store.get(entry.id) is not None:
        raise Conflict(f"{entry.id} already exists; nothing to restore")
    # Re-sealed from the clear text, so the dedup key is the right one again.
    row = service.row_for(service.readable(entry, reveal=True))
    store.insert(row)
    # An entry deleted without its place (a reject) goes before its next version.
    later = (entry.superseded_by,) if entry.superseded_by else ()
    place = places.get(entry.id) or Place(later=later)
    return put_back(store, caller, entry.id, place, (row.content_key,), entry.type, now)


def restored_detail(done: Sequence[Restored]) -> dict[str, Any]:
    """The audit detail of a restore: how many, and what went current or behind."""
    return {
        "count": len(done),
        "current_again": [r.replaced for r in done if r.replaced] or None,
        "duplicate_of": [r.duplicate_of for r in done if r.duplicate_of] or None,
    }


def restored_changes(group: str, ids: Sequence[str], done: Sequence[Restored]) -> Changes:
    """The change record of a restore of ``ids``."""
    others = (i for r in done for i in (r.replaced, r.duplicate_of) if i)
    return Changes(
        group=group,
        entries=True,
        review=True,
        audit=True,
        entry_ids=tuple(dict.fromkeys((*ids, *others))),
    )


def set_pinned(service: Workspace, caller: Caller, entry_id: str, pinned: bool) -> Changes:
    """Pin (exempt from decay) or unpin an entry."""
    if caller.actor is Actor.AGENT:
        raise Forbidden("pinning is for the person, in the app or the CLI")
    store = service.store_for(caller.group)
    now = iso(utc_now())
    with store.transaction():
        entry = store.get(entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
        store.update_fields(entry_id, pinned=int(pinned))
        # Unpinning restarts the clock, so the entry does not drop at once.
        current = effective_confidence(replace(entry, pinned=False), parse_iso(now), service.config)
        value = entry.confidence if pinned else current
        store.reinforce(entry_id, value, now)
        audit.record(
            store,
            Action.UPDATE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[entry_id],
            field="pinned",
            value=pinned,
        )
    return service.emit(Changes(group=store.group, entries=True, audit=True, entry_ids=(entry_id,)))
