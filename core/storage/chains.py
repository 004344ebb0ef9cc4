"""Version chains kept whole: what a delete relinks, and where a restore puts back.

An entry names the version that replaced it (``superseded_by``); the entry that
names none is the current version of its fact. Whatever is deleted, no entry is
left naming an entry that is gone, which would hide it for good (no list, search
or brief shows a superseded entry, and it could not be superseded either):

- a version deleted from the middle (A → B → C, B deleted) leaves A → C;
- deleting the current version (A → B, B deleted) makes the newest earlier one
  current again (A), and a candidate waiting to replace B waits to replace A.

Where the deleted version stood is returned as a :class:`Place`, which the
trash and the app's undo keep, so :func:`place_back` can put it back: after the
nearest earlier version still kept (and after the versions written since that
are older than it), else before the nearest later one, else on its own. It is
never a second current version of its chain.

:meth:`GroupStore.delete <core.storage.store.GroupStore.delete>` unlinks every
entry it deletes, whoever deletes it (a delete, the trash, a reject, a forget,
the purge of old versions).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

#: How many versions a chain is followed through (a guard against a cycle).
MAX_VERSIONS: Final = 1000
#: The key of a trashed entry's row (core.memory.trash) that holds its :class:`Place`.
CHAIN_KEY: Final = "chain"


class GroupStore(Protocol):
    """What this module needs of :class:`core.storage.store.GroupStore` (which calls it)."""

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any: ...


@dataclass(frozen=True)
class Place:
    """Where a deleted version stood in its chain, and what its delete changed.

    Attributes:
        earlier: the versions before it, nearest first.
        later: the versions after it, nearest first (empty: it was current).
        current_again: the earlier version its delete made current again.
    """

    earlier: tuple[str, ...] = ()
    later: tuple[str, ...] = ()
    current_again: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "earlier": list(self.earlier),
            "later": list(self.later),
            "current_again": self.current_again,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Place:
        return cls(
            tuple(data.get("earlier") or ()),
            tuple(data.get("later") or ()),
            data.get("current_again"),
        )


@dataclass(frozen=True)
class Placed:
    """Where :func:`place_back` put a version.

    Attributes:
        superseded_by: the version after it now (``None``: it is current).
        replaced: the version it made no longer current (it was current before).
    """

    superseded_by: str | None
    replaced: str | None = None


def earlier_versions(store: GroupStore, entry_id: str) -> tuple[str, ...]:
    """Every version before ``entry_id`` (each that names it, and so on back),
    nearest first, then newest first."""
    rows = store.execute(
        """WITH RECURSIVE back(id, depth) AS (
               SELECT ?, 0
               UNION
               SELECT m.id, back.depth + 1 FROM memory_entries m
               INDEXED BY idx_entries_superseded
               JOIN back ON m.superseded_by = back.id WHERE back.depth < ?)
           SELECT back.id FROM back CROSS JOIN memory_entries e ON e.id = back.id
           WHERE back.depth > 0 ORDER BY back.depth, e.created_at DESC, e.seq DESC""",
        (entry_id, MAX_VERSIONS),
    )
    return tuple(dict.fromkeys(str(r[0]) for r in rows if r[0] != entry_id))


def later_versions(store: GroupStore, successor: str | None) -> tuple[str, ...]:
    """``successor`` and the versions after it, nearest first, as far as they are kept."""
    found: list[str] = []
    while successor is not None and successor not in found and len(found) < MAX_VERSIONS:
        row = store.execute(
            "SELECT superseded_by FROM memory_entries WHERE id = ?", (successor,)
        ).fetchone()
        if row is None:
            break
        found.append(successor)
        successor = row[0]
    return tuple(found)


def unlink(
    store: GroupStore, entry_id: str, now: str, pending: set[str] | None = None
) -> Place | None:
    """Take ``entry_id`` out of its chain before its row is deleted (in the
    caller's transaction); ``None`` when there is no such entry.

    ``pending`` is what :func:`pending_targets` found, for a caller unlinking many
    entries: without it, each delete of a current version scans the table for the
    candidates waiting to replace it (no index has their column).
    """
    row = store.execute(
        "SELECT superseded_by FROM memory_entries WHERE id = ?", (entry_id,)
    ).fetchone()
    if row is None:
        return None
    return relink_around(store, entry_id, later_versions(store, row[0]), now, pending)


def pending_targets(store: GroupStore) -> set[str]:
    """Every entry a candidate waits to replace, read in one pass over the table."""
    rows = store.execute(
        "SELECT DISTINCT pending_supersedes FROM memory_entries "
        "WHERE pending_supersedes IS NOT NULL"
    )
    return {str(r[0]) for r in rows}


def relink_around(
    store: GroupStore,
    entry_id: str,
    later: tuple[str, ...],
    now: str,
    pending: set[str] | None = None,
) -> Place:
    """Make the versions that name ``entry_id`` name the next of ``later`` instead,
    or, with none, make the newest of them current again (the others name it).

    ``pending`` (see :func:`unlink`) is kept up to date as candidates move on.
    """
    direct = [
        str(r[0])
        for r in store.execute(
            "SELECT id FROM memory_entries WHERE superseded_by = ? "
            "ORDER BY created_at DESC, seq DESC",
            (entry_id,),
        )
    ]
    if not direct:
        return Place((), later)
    earlier = earlier_versions(store, entry_id)
    if later:
        store.execute(
            "UPDATE memory_entries SET superseded_by = ?, updated_at = ? WHERE superseded_by = ?",
            (later[0], now, entry_id),
        )
        return Place(earlier, later)
    newest = direct[0]
    store.execute(
        "UPDATE memory_entries SET superseded_by = NULL, superseded_at = NULL, updated_at = ? "
        "WHERE id = ?",
        (now, newest),
    )
    store.execute(
        "UPDATE memory_entries SET superseded_by = ?, updated_at = ? WHERE superseded_by = ?",
        (newest, now, entry_id),
    )
    if pending is None:
        follow_pending(store, entry_id, newest)
    elif entry_id in pending:
        follow_pending(store, entry_id, newest)
        pending.discard(entry_id)
        pending.add(newest)
    return Place(earlier, later, newest)


def follow_pending(store: GroupStore, old: str, new: str) -> None:
    """Candidates waiting to replace ``old`` wait to replace ``new``, current in its place.

    Only a candidate waits (an accept clears the column), and the status index finds
    them: the column has none, so without it each call reads the whole table.
    """
    store.execute(
        "UPDATE memory_entries SET pending_supersedes = ? "
        "WHERE status = 'candidate' AND pending_supersedes = ?",
        (new, old),
    )


def place_back(store: GroupStore, entry_id: str, place: Place, now: str) -> Placed:
    """Put ``entry_id`` (its row inserted again) back in its chain, as :class:`Place` says.

    After the nearest earlier version still kept, moving on past versions written
    since that are older than it; else before the nearest later version still kept;
    else on its own, current. Nothing else changed since its delete: it stands where
    it stood.
    """
    me = _row(store, entry_id)
    assert me is not None, "the row is inserted before it is placed"
    kept = _rows(store, place.earlier)
    before = next((kept[i] for i in place.earlier if i in kept), None)
    if before is None or before["superseded_by"] == entry_id:
        # First of its chain now, or still named by the version before it (deleted
        # by an Ambry that did not relink): before the nearest later version kept.
        later = next((i for i in place.later if _row(store, i) is not None), None)
        return _set_next(store, me, later, me["superseded_at"] or now, now)
    # Versions written after the delete but older than this one stay before it.
    seen = {before["id"], entry_id}
    was_later = set(place.later)  # after it at the delete, whatever the clock says
    while before["superseded_by"] is not None and len(seen) < MAX_VERSIONS:
        nxt = _row(store, before["superseded_by"])
        if (
            nxt is None
            or nxt["id"] in seen
            or nxt["id"] in was_later
            # Younger: written since the delete. One of its millisecond is taken for
            # older, as versions restored before it are far likelier than a write made
            # in the millisecond of its creation and delete.
            or nxt["created_at"] > me["created_at"]
        ):
            break
        seen.add(nxt["id"])
        before = nxt
    after = before["superseded_by"]
    if after is None:
        # The version current since the delete is replaced by this one again.
        at = min(me["created_at"], now)
        store.execute(
            "UPDATE memory_entries SET superseded_by = ?, superseded_at = ?, updated_at = ? "
            "WHERE id = ?",
            (entry_id, at, now, before["id"]),
        )
        follow_pending(store, before["id"], entry_id)
        placed = _set_next(store, me, None, now, now)
        return Placed(placed.superseded_by, before["id"])
    store.execute(
        "UPDATE memory_entries SET superseded_by = ?, updated_at = ? WHERE id = ?",
        (entry_id, now, before["id"]),
    )
    return _set_next(store, me, after, before["superseded_at"] or now, now)


def _set_next(
    store: GroupStore, me: dict[str, Any], successor: str | None, at: str, now: str
) -> Placed:
    """Make ``successor`` the version after ``me`` (``None``: ``me`` is current)."""
    if successor == me["superseded_by"]:
        return Placed(successor)  # where it was: left as it was
    store.execute(
        "UPDATE memory_entries SET superseded_by = ?, superseded_at = ?, updated_at = ? "
        "WHERE id = ?",
        (successor, at if successor else None, now, me["id"]),
    )
    return Placed(successor)


_FIELDS: Final = ("id", "superseded_by", "superseded_at", "created_at")


def _row(store: GroupStore, entry_id: str) -> dict[str, Any] | None:
    found = _rows(store, (entry_id,))
    return found.get(entry_id)


def _rows(store: GroupStore, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    if not ids:
        return {}
    rows = store.execute(
        f"SELECT {', '.join(_FIELDS)} FROM memory_entries "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(list(ids)),),
    )
    return {str(r[0]): dict(zip(_FIELDS, r, strict=True)) for r in rows}


def current_after_delete(store: GroupStore, ids: Sequence[str]) -> tuple[str, ...]:
    """The earlier versions deleting ``ids`` (in that order) would make current again,
    worked out without writing: to say so before the person confirms."""
    # The versions around each, as {id: [superseded_by, created_at, seq]}.
    ring: set[str] = set()
    for entry_id in ids:
        row = _row(store, entry_id)
        if row is not None:
            ring.update((entry_id, *earlier_versions(store, entry_id)))
            ring.update(later_versions(store, row["superseded_by"]))
    rows = store.execute(
        "SELECT id, superseded_by, created_at, seq FROM memory_entries "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(ring)),),
    )
    graph = {str(r[0]): [r[1], r[2], r[3]] for r in rows}
    again: list[str] = []
    for entry_id in ids:
        if entry_id not in graph:
            continue
        successor = graph.pop(entry_id)[0]
        direct = sorted(
            (i for i, v in graph.items() if v[0] == entry_id),
            key=lambda i: (graph[i][1], graph[i][2]),
            reverse=True,
        )
        if direct and successor is None:
            newest, direct = direct[0], direct[1:]
            graph[newest][0] = None
            again.append(newest)
            successor = newest
        for i in direct:
            graph[i][0] = successor
    return tuple(i for i in dict.fromkeys(again) if i in graph and graph[i][0] is None)


def count_current_again(store: GroupStore, ids: Sequence[str]) -> int:
    """How many earlier versions deleting ``ids`` would make current again, counted in
    one query however many there are (:func:`current_after_delete` names them, and
    takes a while for thousands): one for each current version among ``ids`` with an
    earlier version that is not among them."""
    row = store.execute(
        """WITH RECURSIVE gone(id) AS (SELECT DISTINCT value FROM json_each(?1)),
           back(top, id, depth) AS (
               SELECT e.id, e.id, 0 FROM gone CROSS JOIN memory_entries e ON e.id = gone.id
               WHERE e.superseded_by IS NULL
               UNION
               SELECT back.top, m.id, back.depth + 1 FROM back
               CROSS JOIN memory_entries m INDEXED BY idx_entries_superseded
               ON m.superseded_by = back.id WHERE back.depth < ?2)
           SELECT count(DISTINCT top) FROM back
           WHERE depth > 0 AND id NOT IN (SELECT id FROM gone)""",
        (json.dumps(list(ids)), MAX_VERSIONS),
    ).fetchone()
    return int(row[0])
