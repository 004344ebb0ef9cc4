"""A change of a memory's tags, written as a new version that carries all else over.

The one write under every tag change (core.memory.tagging, the batched *Add tag*
and *Remove tag* of core.memory.bulk, keeping one of near-duplicates in
core.memory.merging): :func:`new_version` supersedes the entry with a copy that
differs only in its tags, keeping its status, source and trust, confidence as
last seen and staleness, privacy and pin. What each change did is kept as a
:class:`TagChange`, so the app's Ctrl+Z can take it back exactly
(core.memory.tag_undo).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.model.changes import Changes
from core.model.entries import MemoryEntry, Provenance, new_entry_id
from core.model.errors import Conflict, NotFound
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import follow_pending
from core.storage.crypto import KeyMissing
from core.storage.workspace import LOCKED_MASK, MISSING_KEY_MASK, missing_key_message

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

#: Columns a tag edit copies from the version it replaces, beyond the entry's fields:
#: the cached decay (so a stale memory stays out of the brief) and the review state.
_CARRIED = ("confidence", "last_seen_at", "effective_confidence", "stale", "deferred_at")


@dataclass(frozen=True)
class TagChange:
    """One memory's change of tags, as its undo needs it.

    Attributes:
        old: the version the change replaced.
        new: the version it wrote.
        tags: the tags it gave the new version.
        updated_at: when the old version was last changed before it (the change
            marked it replaced, which moved that time).
    """

    old: str
    new: str
    tags: tuple[str, ...]
    updated_at: str


@dataclass(frozen=True)
class Tagged:
    """What a tag change did.

    Attributes:
        changes: the change record.
        done: each memory given a new version, in the order asked.
        unchanged: how many of those asked already had the tags (or were gone).
    """

    changes: Changes
    done: tuple[TagChange, ...]
    unchanged: int = 0

    @property
    def versions(self) -> tuple[tuple[str, str], ...]:
        """(old id, new id) for each memory given a new version."""
        return tuple((c.old, c.new) for c in self.done)


def change_of(old: MemoryEntry, new: MemoryEntry) -> TagChange:
    """What writing ``new`` in place of ``old`` did, read before it was written."""
    return TagChange(old.id, new.id, new.tags, old.provenance.updated_at)


def current_entries(store: GroupStore, ids: Sequence[str], instead: str) -> dict[str, MemoryEntry]:
    """The entries ``ids``, each still current, by id.

    Raises:
        NotFound: one of them does not exist.
        Conflict: one was replaced meanwhile; ``instead`` says what to do then.
    """
    found = store.get_many(list(ids))
    for entry_id in ids:
        entry = found.get(entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
        if entry.superseded_by is not None:
            raise Conflict(
                f"{entry_id} was replaced by {entry.superseded_by} meanwhile; {instead}",
                current=entry.superseded_by,
            )
    return found


def new_version(
    service: Workspace,
    store: GroupStore,
    caller: Caller,
    entry: MemoryEntry,
    tags: tuple[str, ...],
    now: str,
) -> MemoryEntry:
    """Write ``entry`` again with ``tags`` as a new version superseding it; not audited
    (see :func:`record`). Runs inside the caller's transaction."""
    clear = service.readable(entry, reveal=True)
    if clear.content in (LOCKED_MASK, MISSING_KEY_MASK):
        raise KeyMissing(missing_key_message(service.data_dir.root, [store.group]))
    new = replace(
        clear,
        id=new_entry_id(),
        tags=tags,
        superseded_by=None,
        superseded_at=None,
        provenance=Provenance(caller.session_id, store.group, now, now),
    )
    store.insert(service.row_for(new))
    columns = ", ".join(_CARRIED)
    store.execute(
        f"UPDATE memory_entries SET ({columns}, pending_supersedes) = "
        f"(SELECT {columns}, pending_supersedes FROM memory_entries WHERE id = ?) WHERE id = ?",
        (entry.id, new.id),
    )
    store.mark_superseded(entry.id, new.id, now)
    # Candidates written to replace the old version now wait to replace this one.
    follow_pending(store, entry.id, new.id)
    found = store.get(new.id)
    assert found is not None
    return found


def record(store: GroupStore, caller: Caller, versions: Sequence[tuple[str, str]]) -> None:
    """One audit row for a batch of tag changes: each old id and its new version."""
    if versions:
        audit.record(
            store,
            Action.UPDATE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[i for pair in versions for i in pair],
            count=len(versions),
            field="tags",
            versions=True,
        )
