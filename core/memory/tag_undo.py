"""Taking back a change of tags: the app's Ctrl+Z after *Add tag* or *Remove tag*.

A change of tags wrote a new version of each memory, superseding the one before
(core.memory.tagging). Its undo deletes that new version for good (not into
the trash: it only ever held the same text with other tags), and the relink of
the chain (core.storage.chains) makes the version before current again, with
its own id, and its candidates waiting to replace it wait for it again. That
version gets back the time it was last changed before the tag, and the
columns that move on without being a change of the memory (confidence as last
seen, staleness, a deferral, the memory a candidate waits to replace) come
back to it from the new version, so a re-observation since is kept.

A memory changed since the tag is left as it is, with the reason
(:class:`Since`): its new version deleted, replaced (edited, tagged again,
kept of near-duplicates), changed in place (accepted, pinned, tags merged in
by a write of the same text), or its chain changed around it. Taking the new
version away then would take that change with it.

One undo, however many memories and batches, is one audit row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from core.memory.batching import AT_ONCE, Batched, Batching, OneRow
from core.memory.curation import require_operator
from core.memory.tag_versions import TagChange
from core.model.changes import Changes
from core.model.entries import MemoryEntry, Status, iso, utc_now
from core.storage.audit import Action
from core.storage.scrub import Index, scrub

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

#: What a tag change carried over to its new version that may move on without a
#: change of the memory, carried back by its undo (core.memory.tag_versions._CARRIED).
_CARRIED = (
    "confidence",
    "last_seen_at",
    "effective_confidence",
    "stale",
    "deferred_at",
    "pending_supersedes",
)


class Since(StrEnum):
    """Why a memory's change of tags was not taken back."""

    DELETED = "deleted since"
    REPLACED = "edited or tagged again since"
    CHANGED = "changed since (accepted, pinned or given other tags)"
    RELINKED = "its versions changed since"


@dataclass(frozen=True)
class Untagged:
    """What an undo of a change of tags did.

    Attributes:
        changes: the change record.
        undone: the changes taken back: each ``old`` is current again.
        left: the changes left, each with why.
    """

    changes: Changes
    undone: tuple[TagChange, ...] = ()
    left: tuple[tuple[TagChange, Since], ...] = ()


def undo_tags(
    service: Workspace,
    caller: Caller,
    done: Sequence[TagChange],
    batching: Batching = AT_ONCE,
) -> Batched[Untagged]:
    """Take back the changes of tags ``done``, in their order, batch by batch.

    Stopped early, the changes not yet looked at are ``done[result.done:]``.
    """
    require_operator(caller, "taking back a change of tags")
    store = service.store_for(caller.group)
    row = OneRow(store, caller, Action.UPDATE, len(done))
    undone: list[TagChange] = []
    left: list[tuple[TagChange, Since]] = []
    candidate = False

    def batch(chunk: Sequence[TagChange], count: int) -> None:
        nonlocal undone, left, candidate
        now = iso(utc_now())
        with store.transaction():
            found = store.get_many([i for c in chunk for i in (c.old, c.new)])
            keys = _content_keys(store, found)
            back: list[TagChange] = []
            kept: list[tuple[TagChange, Since]] = []
            for change in chunk:
                why = _changed_since(store, change, found, keys)
                if why is None:
                    back.append(change)
                else:
                    kept.append((change, why))
            _take_back(store, back, found, now)
            so_far, all_left = [*undone, *back], [*left, *kept]
            if so_far:
                row.write(
                    count + len(chunk),
                    [i for c in so_far for i in (c.old, c.new)],
                    len(so_far),
                    field="tags",
                    undo=True,
                    left=[c.new for c, _ in all_left] or None,
                )
        undone, left = so_far, all_left
        candidate = candidate or any(found[c.old].status is Status.CANDIDATE for c in back)

    count, error = batching.run(done, batch)
    changes = Changes(group=store.group)
    if undone:
        # The new versions' words leave the index, not just the table.
        scrub(store, (Index.ENTRIES,))
        changes = service.emit(
            Changes(
                group=store.group,
                entries=True,
                review=candidate,
                audit=True,
                entry_ids=tuple(i for c in undone for i in (c.old, c.new)),
            )
        )
    return Batched(Untagged(changes, tuple(undone), tuple(left)), count, len(done), error)


def _content_keys(store: GroupStore, found: Mapping[str, MemoryEntry]) -> dict[str, str]:
    """The stored content key of each of ``found``: an edit of the text in place changes it."""
    rows = store.execute(
        "SELECT id, content_key FROM memory_entries WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(found)),),
    )
    return {str(r[0]): str(r[1]) for r in rows}


def _changed_since(
    store: GroupStore,
    change: TagChange,
    found: Mapping[str, MemoryEntry],
    keys: Mapping[str, str],
) -> Since | None:
    """Why ``change`` may not be taken back, or ``None`` when nothing changed since."""
    old, new = found.get(change.old), found.get(change.new)
    if new is None:
        return Since.DELETED
    if new.superseded_by is not None:
        return Since.REPLACED
    if old is None or old.superseded_by != new.id:
        return Since.RELINKED
    same = (
        new.tags == change.tags
        and keys.get(new.id) == keys.get(old.id)
        and (new.type, new.status, new.review_reason, new.privacy, new.pinned, new.source)
        == (old.type, old.status, old.review_reason, old.privacy, old.pinned, old.source)
    )
    if not same:
        return Since.CHANGED
    # A version put behind it since (a restore of the same text) would become current
    # in place of the old one.
    behind = store.execute(
        "SELECT 1 FROM memory_entries WHERE superseded_by = ? AND id != ? LIMIT 1",
        (new.id, old.id),
    ).fetchone()
    return Since.RELINKED if behind else None


def _take_back(
    store: GroupStore, back: Sequence[TagChange], found: Mapping[str, MemoryEntry], now: str
) -> None:
    """Make each ``old`` of ``back`` current again as it was, and delete each ``new``;
    inside the caller's transaction."""
    columns = ", ".join(_CARRIED)
    for change in back:
        store.execute(
            f"UPDATE memory_entries SET ({columns}) = "
            f"(SELECT {columns} FROM memory_entries WHERE id = ?) WHERE id = ?",
            (change.new, change.old),
        )
    places = store.delete_many([c.new for c in back], now)
    for change in back:
        assert places[change.new].current_again == change.old, "checked just before"
        new = found[change.new].provenance
        # Changed in place since (reinforced, deferred): it was last changed then.
        when = change.updated_at if new.updated_at == new.created_at else new.updated_at
        store.execute("UPDATE memory_entries SET updated_at = ? WHERE id = ?", (when, change.old))
