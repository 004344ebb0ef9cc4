"""Mending the version chains an earlier Ambry left broken, when a group is opened.

Until chains were kept whole (:mod:`core.storage.chains`), deleting a version
left the version before it naming an entry that was gone: hidden from every
list, search and brief, and impossible to supersede. At open, each entry that
names a missing one is relinked as a delete relinks now: to the version that
replaced the missing one, else, with none kept, made current again. The
replacing version is read from the missing entry's row in the trash, or from the
audit log, which names every supersession (``supersede``: old, new; ``dedup``:
kept, old). A missing version waiting in the trash keeps where it stood, so
restoring it puts it back in its chain.

:func:`missing_versions` is one indexed query, and finds nothing in a store this
version wrote.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from core.model.entries import Actor
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import CHAIN_KEY, MAX_VERSIONS, later_versions, relink_around

if TYPE_CHECKING:
    from core.storage.store import GroupStore


def missing_versions(store: GroupStore) -> list[str]:
    """The ids entries name as their newer version that are not stored."""
    return [
        str(r[0])
        for r in store.execute(
            "SELECT DISTINCT m.superseded_by FROM memory_entries m "
            "WHERE m.superseded_by IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM memory_entries e WHERE e.id = m.superseded_by)"
        )
    ]


def repair(store: GroupStore, now: str) -> list[str]:
    """Relink every entry naming a missing version (in the caller's transaction);
    returns their ids, after one audit row."""
    mended: list[str] = []
    for entry_id in missing_versions(store):
        mended += [
            str(r[0])
            for r in store.execute(
                "SELECT id FROM memory_entries WHERE superseded_by = ?", (entry_id,)
            )
        ]
        place = relink_around(
            store, entry_id, later_versions(store, _successor(store, entry_id)), now
        )
        trashed = store.execute("SELECT entry FROM trash WHERE id = ?", (entry_id,)).fetchone()
        if trashed is not None:
            entry = json.loads(trashed[0])
            entry[CHAIN_KEY] = place.to_dict()
            store.execute(
                "UPDATE trash SET entry = ? WHERE id = ?",
                (json.dumps(entry, ensure_ascii=False), entry_id),
            )
    if mended:
        audit.record(
            store,
            Action.UPDATE,
            Actor.SYSTEM,
            entry_ids=mended,
            count=len(mended),
            field="superseded_by",
            reason="the newer version they named was deleted by an earlier Ambry",
        )
    return mended


def _successor(store: GroupStore, entry_id: str) -> str | None:
    """The first version after the missing ``entry_id`` that is kept, if one is known."""
    seen = {entry_id}
    step = _named_next(store, entry_id)
    while step is not None and step not in seen and len(seen) < MAX_VERSIONS:
        if store.execute("SELECT 1 FROM memory_entries WHERE id = ?", (step,)).fetchone():
            return step
        seen.add(step)
        step = _named_next(store, step)
    return None


def _named_next(store: GroupStore, entry_id: str) -> str | None:
    """The version that replaced the missing ``entry_id``, as its trash row or the
    audit log says."""
    row = store.execute("SELECT entry FROM trash WHERE id = ?", (entry_id,)).fetchone()
    if row is not None:
        following = json.loads(row[0]).get("superseded_by")
        return str(following) if following else None
    row = store.execute(
        "SELECT CASE action WHEN ? THEN json_extract(entry_ids, '$[1]') "
        "ELSE json_extract(entry_ids, '$[0]') END FROM audit_log "
        "WHERE (action = ? AND json_extract(entry_ids, '$[0]') = ?) "
        "OR (action = ? AND json_extract(entry_ids, '$[1]') = ?) ORDER BY id DESC LIMIT 1",
        (
            Action.SUPERSEDE.value,
            Action.SUPERSEDE.value,
            entry_id,
            Action.DEDUP.value,
            entry_id,
        ),
    ).fetchone()
    return str(row[0]) if row and row[0] else None
