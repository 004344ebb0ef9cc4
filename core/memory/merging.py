"""Keeping one of several near-duplicates: the others go, their tags stay.

The person picks the memory to keep (see ``core.recall.duplicates`` for how the
candidates are found). In one transaction:

- the kept memory gets the tags of the others it lacks, as a new version that
  supersedes it (a tag change, core.memory.tagging: its status, source, confidence
  and privacy stay; its id changes, as any edit's does). With no tag to add it is left as it is.
- it takes what else the others held that it lacks: a pin (the person pinned
  that fact) and the highest confidence among them (each was an observation of
  it), as of now;
- the others are deleted, as a bulk delete of the person's is, and returned so a
  front end can offer undo (:func:`core.memory.bulk.restore_all`). Their earlier
  versions become earlier versions of the kept memory (a delete would make them
  current again: a stale wording of the same fact).

Undo brings the deleted memories back; the tags the kept memory took from them
stay on it (its history holds the version before).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from core.memory.confidence import effective_confidence
from core.memory.curation import Deleted, delete_recorded, require_operator
from core.memory.tag_versions import current_entries, new_version, record
from core.memory.writing import writing
from core.model.changes import Changes
from core.model.entries import MemoryEntry, Privacy, iso, parse_iso, utc_now
from core.model.errors import InvalidParams
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import Place, follow_pending
from core.storage.scrub import Index, scrub

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


@dataclass(frozen=True)
class Kept:
    """What :func:`keep_one` did.

    Attributes:
        changes: the change record.
        kept: the memory kept, as stored now (a new version when tags were added).
        deleted: the memories deleted, as they were (to restore on undo).
        tags_added: the tags the kept memory took from them.
        carried: what else it took from them (their pin, their higher confidence).
        joined: earlier versions of the deleted memories, now earlier versions of the
            kept one (rather than current again).
    """

    changes: Changes
    kept: MemoryEntry
    deleted: Deleted
    tags_added: tuple[str, ...]
    carried: tuple[Carried, ...] = ()
    joined: tuple[str, ...] = ()

    def undo_joins(self) -> tuple[tuple[str, str], ...]:
        """What :func:`core.memory.bulk.restore_all` detaches before it puts the
        deleted memories back: (earlier version, kept memory) for each join."""
        return tuple((version, self.kept.id) for version in self.joined)


class Carried(StrEnum):
    """What else the kept memory took from the ones deleted (besides their tags)."""

    PIN = "pin"
    CONFIDENCE = "confidence"


def keep_one(service: Workspace, caller: Caller, keep_id: str, others: Sequence[str]) -> Kept:
    """Keep ``keep_id``, delete ``others`` and move their tags onto the kept one, all or none.

    Raises:
        NotFound: one of them no longer exists.
        Conflict: one of them was replaced by a newer version meanwhile.
        InvalidParams: the kept memory is among ``others``, or it is secret.
    """
    require_operator(caller, "resolving near-duplicates")
    others = list(dict.fromkeys(others))
    if keep_id in others:
        raise InvalidParams(f"{keep_id} is both kept and deleted", field="id")
    store = service.store_for(caller.group)
    now = iso(utc_now())
    with writing(service, store, caller):
        found = current_entries(store, [keep_id, *others], "look for near-duplicates again")
        keep = found[keep_id]
        if keep.privacy is Privacy.SECRET:
            raise InvalidParams("secret entries are not compared with others", field="id")
        deleted = tuple(found[i] for i in others)
        have = {t.casefold() for t in keep.tags}
        added: list[str] = []
        for entry in deleted:
            for tag in entry.tags:
                if tag.casefold() not in have:
                    have.add(tag.casefold())
                    added.append(tag)
        changes = Changes(
            group=store.group, entries=True, review=True, audit=True, entry_ids=tuple(others)
        )
        kept = keep
        if added:
            # A tag change: the new version keeps the kept memory's status, source,
            # confidence and privacy (core.memory.tagging).
            new = new_version(service, store, caller, keep, (*keep.tags, *added), now)
            record(store, caller, [(keep.id, new.id)])
            kept = new
            changes = changes | Changes(
                group=store.group, entries=True, audit=True, entry_ids=(new.id, keep.id)
            )
        # A new version starts at its source's confidence: the one it replaces counts too.
        sources = deleted if kept.id == keep.id else (*deleted, keep)
        carried = _carry_over(service, store, kept, sources, now)
        places = delete_recorded(store, caller, others, kept=kept.id, carried=list(carried) or None)
        joined = _join(store, caller, kept.id, places, now)
        kept = store.get(kept.id) or kept
    scrub(store, (Index.ENTRIES,))
    return Kept(
        service.emit(replace(changes, entry_ids=(*changes.entry_ids, *joined))),
        service.readable(kept),
        Deleted(deleted, places),
        tuple(added),
        carried,
        joined,
    )


def _join(
    store: GroupStore, caller: Caller, kept_id: str, places: Mapping[str, Place], now: str
) -> tuple[str, ...]:
    """Put the earlier versions of the copies deleted behind the kept memory: they
    are versions of its fact, and must not be current again (the delete made them so)."""
    joined = tuple(
        again
        for p in places.values()
        if (again := p.current_again) is not None and again not in places
    )
    for version in joined:
        store.mark_superseded(version, kept_id, now)
        follow_pending(store, version, kept_id)
        audit.record(
            store,
            Action.SUPERSEDE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[version, kept_id],
            reason="an earlier version of a near-duplicate deleted in favour of it",
        )
    return joined


def _carry_over(
    service: Workspace,
    store: GroupStore,
    kept: MemoryEntry,
    sources: Sequence[MemoryEntry],
    now: str,
) -> tuple[Carried, ...]:
    """Give ``kept`` what ``sources`` (the copies deleted, and the version it
    replaced) held that it lacks: a pin (the person pinned that fact), and the
    highest confidence among them (each copy was an observation of it), as of ``now``."""
    carried: list[Carried] = []
    if not kept.pinned and any(e.pinned for e in sources):
        store.update_fields(kept.id, pinned=1)
        carried.append(Carried.PIN)
    at = parse_iso(now)
    best = max(effective_confidence(e, at, service.config) for e in sources)
    if best > effective_confidence(kept, at, service.config):
        store.reinforce(kept.id, best, now)
        carried.append(Carried.CONFIDENCE)
    return tuple(carried)
