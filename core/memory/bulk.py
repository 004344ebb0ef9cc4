"""The person's writes to many memories at once, in batches: delete, undo a delete,
add or remove a tag.

Done in one transaction, a delete of 10,000 memories held the group's write lock
for most of a second (several at 100,000), and every other writer (an agent's
store through the socket, ``ambry mcp`` in another process) waited all that
time. Here each batch of :attr:`Batching.size` memories is a transaction of its
own, so another writer waits at most one batch; between batches the work can
be stopped (:attr:`Batching.stop`), and what was done stays done, each memory
either wholly done or untouched.

An operation writes one audit row however many batches it takes: the first
batch writes it and each later one rewrites it in its own transaction
(:func:`core.storage.audit.rewrite`), so at every commit the row names exactly
what is done. A stopped operation's row says so (``cancelled``, and ``asked``:
how many it was asked to do).

With a batch as large as the work (the default) an operation is one
transaction, as the single calls of core.memory.curation and core.memory.tagging
are; the app does small selections that way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from core.memory.curation import (
    Deleted,
    detach_joins,
    put_back_deleted,
    require_operator,
    restored_changes,
    restored_detail,
)
from core.memory.tagging import (
    TagChange,
    Tagged,
    change_of,
    check_room,
    checked_tag,
    new_version,
)
from core.memory.versions import Restored
from core.memory.writing import check_limits, clean_tags, writing
from core.model.changes import Changes
from core.model.entries import MAX_TAGS, MemoryEntry, Status, iso, utc_now
from core.model.errors import AmbryError, InvalidParams
from core.policy.screening import strip_controls
from core.storage import audit
from core.storage.audit import Action
from core.storage.chains import Place
from core.storage.scrub import Index, scrub

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

T = TypeVar("T")

#: The pause between two batches, long enough for a writer waiting on the lock to
#: take it (see :func:`Batching.chunks`).
PAUSE_S = 0.05

#: Memories per batch in the app: 20 ms (delete) to 75 ms (undo) of writes each on a
#: 10,000-memory store (docs/desktop.md, "Bulk changes in the background").
BATCH = 250


def _never() -> bool:
    return False


def _silent(_done: int, _total: int) -> None:
    pass


@dataclass(frozen=True)
class Batching:
    """How an operation is cut up, reported and stopped.

    Attributes:
        size: memories per transaction; 0 means all in one.
        progress: called after each batch commits with (done, total).
        stop: asked before each batch after the first; true stops the operation.
    """

    size: int = 0
    progress: Callable[[int, int], None] = _silent
    stop: Callable[[], bool] = _never
    pause: float = PAUSE_S

    def chunks(self, items: Sequence[T]) -> Iterator[Sequence[T]]:
        """``items`` in batches, stopping early when :attr:`stop` says so."""
        size = self.size if self.size > 0 else max(1, len(items))
        for start in range(0, len(items), size):
            if start:
                # Another writer's busy handler polls (core.storage.db.BusyWait): a
                # batch begun at once after the last would find the lock free
                # first, every time, and the other would wait for the whole.
                time.sleep(self.pause)
                if self.stop():
                    return
            yield items[start : start + size]


#: All in one transaction: what the functions here do unless told otherwise.
AT_ONCE = Batching()


@dataclass(frozen=True)
class Batched(Generic[T]):
    """What a batched operation did.

    Attributes:
        result: what the operation returns, for the batches that committed.
        done: how many of those asked it went through (done, or found done already).
        total: how many it was asked to do.
        error: why a batch failed (a lock held too long, a full disk); the batches
            before it stay done and are in ``result``.
    """

    result: T
    done: int
    total: int
    error: AmbryError | None = None

    @property
    def stopped(self) -> bool:
        """Stopped before the end: cancelled, or a batch failed."""
        return self.done < self.total


class OneRow:
    """The one audit row of a batched operation, written by its first batch and
    rewritten by each later one (inside each batch's transaction)."""

    def __init__(self, store: GroupStore, caller: Caller, action: Action, total: int) -> None:
        self._store, self._caller, self._action = store, caller, action
        self._total = total
        self._id: int | None = None

    def write(self, done: int, entry_ids: Sequence[str], count: int, **detail: Any) -> None:
        """Name what is done once this batch commits: ``done`` of those asked."""
        if done < self._total:
            # Until a later batch says otherwise: a cancel or a crash leaves it so.
            detail.update(stopped=True, asked=self._total)
        if self._id is None:
            audit.record(
                self._store,
                self._action,
                self._caller.actor,
                session_id=self._caller.session_id,
                entry_ids=entry_ids,
                count=count,
                **detail,
            )
            self._id = self._store.conn.last_insert_rowid()
        else:
            audit.rewrite(self._store, self._id, entry_ids=entry_ids, count=count, **detail)


# -- delete ------------------------------------------------------------------------


def delete(
    service: Workspace, caller: Caller, ids: Sequence[str], batching: Batching = AT_ONCE
) -> Batched[Deleted]:
    """Delete ``ids``, batch by batch, as core.memory.curation.delete_many does.

    Memories gone meanwhile (an agent deleted them) are passed over. Each batch
    reads its memories in its own transaction, so what is kept for the undo is
    exactly what was deleted.
    """
    require_operator(caller, "bulk deletion")
    store = service.store_for(caller.group)
    ids = list(dict.fromkeys(ids))
    row = OneRow(store, caller, Action.DELETE, len(ids))
    deleted = Deleted(())
    places: dict[str, Place] = {}
    done = 0
    error: AmbryError | None = None
    try:
        for chunk in batching.chunks(ids):
            with store.transaction():
                found = store.get_many(list(chunk))
                here = [i for i in chunk if i in found]
                places.update(store.delete_many(here, iso(utc_now())))
                now = Deleted((*deleted.entries, *(found[i] for i in here)), dict(places))
                row.write(
                    done + len(chunk),
                    now.ids,
                    len(now.ids),
                    current_again=list(now.current_again) or None,
                )
            deleted, done = now, done + len(chunk)
            batching.progress(done, len(ids))
    except AmbryError as exc:
        error = exc
    if deleted.entries:
        scrub(store, (Index.ENTRIES,))
        service.emit(
            Changes(
                group=store.group,
                entries=True,
                review=True,
                audit=True,
                entry_ids=(*deleted.ids, *deleted.current_again),
            )
        )
    return Batched(deleted, done, len(ids), error)


# -- undo of a delete --------------------------------------------------------------


def restore(
    service: Workspace,
    caller: Caller,
    entries: Sequence[MemoryEntry],
    places: Mapping[str, Place] | None = None,
    *,
    detach: Sequence[tuple[str, str]] = (),
    batching: Batching = AT_ONCE,
) -> Batched[list[Restored]]:
    """Put deleted ``entries`` back, batch by batch, as core.memory.curation.restore does:
    last deleted first, so the batches run from the end of ``entries``.

    Stopped early, the entries not put back are the first ``total - done``.
    """
    require_operator(caller, "restoring memories")
    store = service.store_for(caller.group)
    places = places or {}
    backwards = list(reversed(entries))
    row = OneRow(store, caller, Action.RESTORE, len(backwards))
    back: list[Restored] = []
    done = 0
    error: AmbryError | None = None
    try:
        for chunk in batching.chunks(backwards):
            now = iso(utc_now())
            put: list[Restored] = []
            with store.transaction():
                if not done:
                    detach_joins(store, detach, now)
                for entry in chunk:
                    put.append(put_back_deleted(service, store, caller, entry, places, now))
                # Listed in the order deleted, as a restore in one go lists them.
                so_far = [*reversed(put), *back]
                row.write(
                    done + len(chunk), [r.entry_id for r in so_far], **restored_detail(so_far)
                )
            back, done = so_far, done + len(chunk)
            batching.progress(done, len(backwards))
    except AmbryError as exc:
        error = exc
    if back:
        service.emit(restored_changes(store.group, [r.entry_id for r in back], back))
    return Batched(back, done, len(backwards), error)


# -- tags --------------------------------------------------------------------------


def add_tag(
    service: Workspace,
    caller: Caller,
    ids: Sequence[str],
    tag: str,
    batching: Batching = AT_ONCE,
) -> Batched[Tagged]:
    """Add ``tag`` to each current entry of ``ids`` that lacks it, batch by batch, as
    core.memory.tagging.add_tag does (a new version each that keeps all but the tags).

    The tag and the limit of tags are checked for every memory before the first
    batch. An entry deleted, replaced, given the tag or filled up with tags
    meanwhile is passed over and counted in :attr:`Tagged.unchanged`.

    Raises:
        InvalidParams: as core.memory.tagging.add_tag, before anything is written.
    """
    tag = checked_tag(service, tag)
    check_limits("", (tag,))
    store = service.store_for(caller.group)
    ids = list(dict.fromkeys(ids))
    wanted = tagging_plan(store, ids, tag)

    def added(entry: MemoryEntry) -> tuple[str, ...] | None:
        return (*entry.tags, tag) if entry.id in wanted and _lacks(entry, tag) else None

    return _retag(service, caller, ids, added, batching)


def remove_tag(
    service: Workspace,
    caller: Caller,
    ids: Sequence[str],
    tag: str,
    batching: Batching = AT_ONCE,
) -> Batched[Tagged]:
    """Take ``tag`` (case aside) off each current entry of ``ids`` that has it, batch by
    batch: a new version each that keeps all but the tags, as an edit of its tags does.

    An entry without the tag is left alone (no new version), as is one deleted or
    replaced meanwhile; both are counted in :attr:`Tagged.unchanged`.

    Raises:
        InvalidParams: the tag is empty.
    """
    tag = " ".join(strip_controls(tag).split())
    if not tag:
        raise InvalidParams("the tag is empty: name the tag to remove", field="tag")
    folded = tag.casefold()

    def removed(entry: MemoryEntry) -> tuple[str, ...] | None:
        kept = tuple(t for t in entry.tags if t.casefold() != folded)
        return kept if not entry.is_superseded and len(kept) < len(entry.tags) else None

    return _retag(service, caller, list(dict.fromkeys(ids)), removed, batching)


def _retag(
    service: Workspace,
    caller: Caller,
    ids: Sequence[str],
    new_tags: Callable[[MemoryEntry], tuple[str, ...] | None],
    batching: Batching,
) -> Batched[Tagged]:
    """Give each entry of ``ids`` the tags ``new_tags`` says (``None``: leave it), as a
    new version that keeps the rest, batch by batch, with one audit row."""
    store = service.store_for(caller.group)
    row = OneRow(store, caller, Action.UPDATE, len(ids))
    changed: list[TagChange] = []
    candidate = False
    done = 0
    error: AmbryError | None = None
    try:
        for chunk in batching.chunks(ids):
            now = iso(utc_now())
            made: list[TagChange] = []
            with writing(service, store, caller):
                found = store.get_many(chunk)
                for entry_id in chunk:
                    entry = found.get(entry_id)
                    tags = new_tags(entry) if entry is not None else None
                    if entry is None or tags is None:
                        continue
                    tags = clean_tags(tags)
                    check_limits("", tags)
                    new = new_version(service, store, caller, entry, tags, now)
                    made.append(change_of(entry, new))
                    candidate = candidate or new.status is Status.CANDIDATE
                so_far = [*changed, *made]
                if so_far:
                    row.write(
                        done + len(chunk),
                        [i for c in so_far for i in (c.old, c.new)],
                        len(so_far),
                        field="tags",
                        versions=True,
                    )
            changed, done = so_far, done + len(chunk)
            batching.progress(done, len(ids))
    except AmbryError as exc:
        error = exc
    changes = Changes(
        group=store.group,
        entries=bool(changed),
        review=candidate,
        audit=bool(changed),
        entry_ids=tuple(i for c in changed for i in (c.old, c.new)),
    )
    if changed:
        service.emit(changes)
    tagged = Tagged(changes, tuple(changed), done - len(changed))
    return Batched(tagged, done, len(ids), error)


def _lacks(entry: MemoryEntry, tag: str) -> bool:
    """Whether a tag edit may add ``tag`` to ``entry``: current, without it, with room."""
    has = tag.casefold() in (t.casefold() for t in entry.tags)
    return not entry.is_superseded and not has and len(entry.tags) < MAX_TAGS


def tagging_plan(store: GroupStore, ids: Sequence[str], tag: str) -> set[str]:
    """The entries of ``ids`` that get ``tag``: the current ones that lack it.

    Raises:
        InvalidParams: one of them holds the most tags a memory may.
    """
    found = store.get_many(list(ids))
    wanted = [
        e
        for e in (found[i] for i in ids if i in found)
        if not e.is_superseded and tag.casefold() not in (t.casefold() for t in e.tags)
    ]
    check_room(sum(len(e.tags) >= MAX_TAGS for e in wanted))
    return {e.id for e in wanted}
