"""The trash: where an agent's deletes go, for the person to restore or empty.

An agent may delete memories (``memory_delete``), but an injected or confused
agent must not be able to destroy what the person kept. So an agent's delete
moves the entry's row, exactly as stored, into the ``trash`` table: private
and secret content stays sealed, and the entry leaves the brief, search and
the search index at once, and its versions are relinked around it (the one
before it is current again when it was current; core.storage.chains). The
person lists the trash, restores an entry (it comes back with its id and search
index, where it stood among its versions, or behind a memory stored since with
the same text: core.memory.versions) or empties it (``ambry trash``). Entries
are purged :attr:`~core.model.config.Config.trash_days` after the delete (30 by
default), when the group is opened. The person's own deletes are final, as they
confirm them.

Nothing here is reachable by an agent: there is no protocol method for it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from core.memory.batching import AT_ONCE, Batched, Batching, OneRow
from core.memory.versions import Restored, put_back
from core.model.changes import Changes
from core.model.config import Config
from core.model.entries import Actor, EntryType, Privacy, iso, utc_now
from core.model.errors import AmbryError, Conflict, Forbidden, NotFound
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import CHAIN_KEY, Place, earlier_versions, later_versions
from core.storage.link_rows import drop_links
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

#: Longest content preview in a trash listing, in characters.
PREVIEW_CHARS: Final = 160
#: The row's key, reassigned on restore (another entry may have taken it since).
_SEQ: Final = "seq"
#: The gram column, derived from the text (core.storage.fts.entry_grams).
_GRAMS: Final = "search_grams"


@dataclass(frozen=True)
class TrashItem:
    """One deleted entry waiting in the trash."""

    id: str
    type: str
    #: The content, readable as the browser shows it (secret content masked).
    preview: str
    tags: tuple[str, ...]
    privacy: str
    deleted_at: str
    deleted_by: str
    session_id: str | None
    expires_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "preview": self.preview,
            "tags": list(self.tags),
            "privacy": self.privacy,
            "deleted_at": self.deleted_at,
            "deleted_by": self.deleted_by,
            "session_id": self.session_id,
            "expires_at": self.expires_at,
        }


def move_to_trash(
    store: GroupStore, caller: Caller, entry_id: str, config: Config, now: datetime
) -> Place | None:
    """Move one entry's row into the trash (inside the caller's write transaction);
    its versions are relinked around it (core.storage.chains).

    Returns:
        Where it stood among its versions; ``None`` when there is no such entry.
    """
    cursor = store.execute("SELECT * FROM memory_entries WHERE id = ?", (entry_id,))
    row = cursor.fetchone()
    if row is None:
        return None
    names = [d[0] for d in cursor.getdescription()]
    # The grams are derived from the text: made again on restore, not kept twice.
    entry: dict[str, Any] = {
        k: v for k, v in zip(names, row, strict=True) if k not in (_SEQ, _GRAMS)
    }
    place = store.delete(entry_id, iso(now), to_trash=True)
    assert place is not None, "read in this transaction"
    # Where it stood among its versions, to put it back there.
    place = _with_trashed(store, entry_id, place)
    entry[CHAIN_KEY] = place.to_dict()
    store.execute(
        "INSERT OR REPLACE INTO trash (id, entry, deleted_at, deleted_by, session_id, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            entry_id,
            json.dumps(entry, ensure_ascii=False),
            iso(now),
            caller.actor.value,
            caller.session_id,
            iso(now + timedelta(days=config.trash_days)),
        ),
    )
    return place


def _with_trashed(store: GroupStore, entry_id: str, place: Place) -> Place:
    """``place`` with the trashed versions that stood before ``entry_id`` among its
    earlier ones, newest first: whichever the person restores first, the others then
    go back in their order (each trashed entry keeps the versions after it)."""
    trashed = store.execute(
        "SELECT t.id, json_extract(t.entry, '$.created_at') FROM trash t, "
        f"json_each(t.entry, '$.{CHAIN_KEY}.later') j WHERE j.value = ?",
        (entry_id,),
    ).fetchall()
    if not trashed:
        return place
    created = dict(
        store.execute(
            "SELECT id, created_at FROM memory_entries "
            "WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(place.earlier),),
        ).fetchall()
    )
    created.update((str(i), str(at)) for i, at in trashed)
    earlier = sorted(created, key=lambda i: created[i], reverse=True)
    return replace(place, earlier=tuple(earlier))


def _item(service: Workspace, row: Sequence[Any]) -> TrashItem:
    entry = json.loads(row[1])
    content = service.readable_content(row[0], entry["privacy"], entry["content"])
    if len(content) > PREVIEW_CHARS:
        content = content[: PREVIEW_CHARS - 1] + "…"
    return TrashItem(
        id=row[0],
        type=entry["type"],
        preview=" ".join(content.split()),
        tags=tuple(json.loads(entry.get("tags") or "[]")),
        privacy=entry["privacy"],
        deleted_at=row[2],
        deleted_by=row[3],
        session_id=row[4],
        expires_at=row[5],
    )


_COLUMNS = "id, entry, deleted_at, deleted_by, session_id, expires_at"


def list_trash(service: Workspace, group: str) -> list[TrashItem]:
    """What is in the trash of ``group``, most recently deleted first."""
    rows = service.store_for(group).execute(
        f"SELECT {_COLUMNS} FROM trash ORDER BY deleted_at DESC, id"
    )
    return [_item(service, r) for r in rows]


def _for_the_person(caller: Caller, what: str) -> None:
    if caller.actor is Actor.AGENT:
        raise Forbidden(f"{what} the trash is for the person, in the app or the CLI")


def restore(service: Workspace, caller: Caller, entry_id: str) -> Restored:
    """Put a trashed entry back (see :func:`restore_many`).

    Raises:
        NotFound: it is not in the trash.
        Conflict: an entry of that id exists already.
    """
    done = restore_many(service, caller, [entry_id])
    if done.left:
        raise done.left[0].error
    return done.restored[0]


@dataclass(frozen=True)
class Left:
    """A trashed entry a restore could not bring back, and why.

    Attributes:
        entry_id: its id.
        error: why (not in the trash; an entry of that id exists already).
    """

    entry_id: str
    error: AmbryError

    @property
    def reason(self) -> str:
        return self.error.message

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.entry_id, "reason": self.reason}


@dataclass(frozen=True)
class TrashRestore:
    """What a restore from the trash did.

    Attributes:
        restored: where each entry that came back went, in the order asked.
        left: the entries that could not come back, each with its reason.
    """

    restored: tuple[Restored, ...] = ()
    left: tuple[Left, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(r.entry_id for r in self.restored)


def restore_many(
    service: Workspace, caller: Caller, ids: Sequence[str], batching: Batching = AT_ONCE
) -> TrashRestore:
    """Put trashed entries back as they were when deleted, each in its version chain
    or behind a current memory with the same text (core.memory.versions).

    Every entry that can come back does; one that cannot (not in the trash, or
    its id taken) is left, with its reason, and stops nothing. One restore,
    however many entries and batches (:class:`~core.memory.batching.Batching`), is one
    audit row naming those that came back (and those left).

    Raises:
        AmbryError: a batch failed (a lock held too long, a full disk, no keyring to
            seal with); the batches before it stay done.
    """
    did = restore_in_batches(service, caller, ids, batching)
    if did.error is not None:
        raise did.error
    return did.result


def restore_in_batches(
    service: Workspace, caller: Caller, ids: Sequence[str], batching: Batching = AT_ONCE
) -> Batched[TrashRestore]:
    """:func:`restore_many`, saying how far it got: a cancel (:attr:`Batching.stop`) or
    a failed batch stops it after the batches done, which stay done."""
    _for_the_person(caller, "restoring from")
    store = service.store_for(caller.group)
    ids = list(dict.fromkeys(ids))
    row = OneRow(store, caller, Action.RESTORE, len(ids))
    so_far = TrashRestore()

    def batch(chunk: Sequence[str], done: int) -> None:
        nonlocal so_far
        now = iso(utc_now())
        back: list[Restored] = []
        left: list[Left] = []
        with store.transaction():
            current = {r[1] for r in store.execute("PRAGMA table_info(memory_entries)")}
            for entry_id in chunk:
                try:
                    # A savepoint: one that cannot come back leaves no trace.
                    with store.conn:
                        one = _restore_one(service, store, caller, entry_id, current, now)
                    back.append(one)
                except (NotFound, Conflict) as exc:
                    left.append(Left(entry_id, exc))
            after = TrashRestore((*so_far.restored, *back), (*so_far.left, *left))
            if after.restored:
                row.write(
                    done + len(chunk),
                    after.ids,
                    len(after.restored),
                    source="trash",
                    current_again=[r.replaced for r in after.restored if r.replaced] or None,
                    duplicate_of=[r.duplicate_of for r in after.restored if r.duplicate_of] or None,
                    left=[x.entry_id for x in after.left] or None,
                )
        so_far = after

    done, error = batching.run(ids, batch)
    if so_far.restored:
        others = (i for r in so_far.restored for i in (r.replaced, r.duplicate_of) if i)
        changed = tuple(dict.fromkeys((*so_far.ids, *others)))
        service.emit(
            Changes(group=store.group, entries=True, review=True, audit=True, entry_ids=changed)
        )
    return Batched(so_far, done, len(ids), error)


def _restore_one(
    service: Workspace,
    store: GroupStore,
    caller: Caller,
    entry_id: str,
    current: set[str],
    now: str,
) -> Restored:
    row = store.execute("SELECT entry FROM trash WHERE id = ?", (entry_id,)).fetchone()
    if row is None:
        raise NotFound(
            f"no entry {entry_id} in the trash of group {store.group}; see `ambry trash list`",
            field="id",
        )
    if store.get(entry_id) is not None:
        raise Conflict(f"entry {entry_id} exists already; empty it from the trash instead")
    entry: dict[str, Any] = json.loads(row[0])
    # Columns added by later migrations take their defaults.
    values = {k: v for k, v in entry.items() if k in current and k != _SEQ}
    names = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    store.execute(f"INSERT INTO memory_entries ({names}) VALUES ({marks})", tuple(values.values()))
    store.regram(entry_id)
    store.execute("DELETE FROM trash WHERE id = ?", (entry_id,))
    return put_back(
        store,
        caller,
        entry_id,
        _place(store, entry_id, entry),
        _keys(service, entry),
        EntryType(entry["type"]),
        now,
    )


def _place(store: GroupStore, entry_id: str, entry: dict[str, Any]) -> Place:
    """Where a trashed entry stood: as kept, or, for one an earlier Ambry put there
    without relinking, as its row and the entries still naming it say."""
    kept = entry.get(CHAIN_KEY)
    if isinstance(kept, dict):
        return Place.from_dict(kept)
    return Place(earlier_versions(store, entry_id), later_versions(store, entry["superseded_by"]))


def _keys(service: Workspace, entry: dict[str, Any]) -> tuple[str, ...]:
    """The dedup keys of a trashed entry: as stored, and a public one's as a write
    would make them now."""
    keys = [str(entry["content_key"])]
    if entry["privacy"] == Privacy.PUBLIC.value:
        keys += service.dedup_keys(Privacy.PUBLIC, str(entry["content"]))
    return tuple(dict.fromkeys(keys))


def empty(service: Workspace, caller: Caller, ids: Sequence[str] = ()) -> int:
    """Delete trashed entries for good: those in ``ids``, or all. Returns how many."""
    _for_the_person(caller, "emptying")
    store = service.store_for(caller.group)
    with store.transaction():
        if ids:
            gone = [i for i in ids if _drop(store, i)]
            missing = sorted(set(ids) - set(gone))
            if missing:
                raise NotFound(
                    f"not in the trash of group {store.group}: {', '.join(missing[:5])}",
                    field="id",
                )
        else:
            gone = [r[0] for r in store.execute("DELETE FROM trash RETURNING id")]
        drop_trashed_links(store, gone)
        if gone:
            audit.record(
                store,
                Action.PURGE,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=gone,
                count=len(gone),
                reason="trash emptied",
            )
    if gone:
        service.emit(Changes(group=store.group, audit=True))
    return len(gone)


def _drop(store: GroupStore, entry_id: str) -> bool:
    return bool(
        store.execute("DELETE FROM trash WHERE id = ? RETURNING id", (entry_id,)).fetchall()
    )


def drop_trashed_links(store: GroupStore, gone: Sequence[str]) -> None:
    """Links of entries deleted for good go with them (kept while they could come back).

    An id restored over a copy still in the trash (see :func:`restore`) keeps its links.
    """
    live = {
        r[0]
        for r in store.execute(
            "SELECT id FROM memory_entries WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(gone)),),
        )
    }
    drop_links(store, [i for i in gone if i not in live])


def purge_expired(store: GroupStore, now: datetime | None = None) -> list[str]:
    """Delete trashed entries whose time is up; returns their ids (audited)."""
    cutoff = iso(now or utc_now())
    with store.transaction():
        gone = [
            r[0]
            for r in store.execute(
                "DELETE FROM trash WHERE expires_at <= ? RETURNING id", (cutoff,)
            )
        ]
        drop_trashed_links(store, gone)
        if gone:
            audit.record(
                store,
                Action.PURGE,
                Actor.SYSTEM,
                entry_ids=gone,
                count=len(gone),
                reason="kept in the trash for the configured days",
            )
    return gone
