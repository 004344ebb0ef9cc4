"""The person's writes to many memories at once, in batches: delete, undo a delete,
add or remove a tag.

Each operation is cut up by a :class:`~core.memory.batching.Batching`: every batch
is a transaction of its own, so another writer waits at most one batch, and the
operation writes one audit row however many batches it takes (core.memory.batching).

With a batch as large as the work (the default) an operation is one
transaction, as the single calls of core.memory.curation and core.memory.tagging
are (core.memory.tagging.add_tag is :func:`add_tag` so); the app does small
selections that way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from core.memory.batching import AT_ONCE, Batched, Batching, OneRow
from core.memory.curation import (
    Deleted,
    detach_joins,
    put_back_deleted,
    require_operator,
    restored_changes,
    restored_detail,
)
from core.memory.tag_versions import TagChange, Tagged, change_of, new_version
from core.memory.versions import Restored
from core.memory.writing import check_limits, clean_tags, writing
from core.model.changes import Changes
from core.model.entries import MAX_TAGS, MemoryEntry, Status, iso, utc_now
from core.model.errors import InvalidParams
from core.policy.field_screening import screen_field
from core.policy.own_files import known_secrets
from core.policy.screening import strip_controls
from core.storage.audit import Action
from core.storage.chains import Place
from core.storage.scrub import Index, scrub

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


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

    def batch(chunk: Sequence[str], done: int) -> None:
        nonlocal deleted
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
        deleted = now

    done, error = batching.run(ids, batch)
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
    """Put deleted ``entries`` back, batch by batch, as :func:`restore_all` does:
    last deleted first, so the batches run from the end of ``entries``.

    Stopped early, the entries not put back are the first ``total - done``.
    """
    require_operator(caller, "restoring memories")
    store = service.store_for(caller.group)
    places = places or {}
    backwards = list(reversed(entries))
    row = OneRow(store, caller, Action.RESTORE, len(backwards))
    back: list[Restored] = []

    def batch(chunk: Sequence[MemoryEntry], done: int) -> None:
        nonlocal back
        now = iso(utc_now())
        with store.transaction():
            if not done:
                detach_joins(store, detach, now)
            put = [put_back_deleted(service, store, caller, e, places, now) for e in chunk]
            # Listed in the order deleted, as a restore in one go lists them.
            so_far = [*reversed(put), *back]
            row.write(done + len(chunk), [r.entry_id for r in so_far], **restored_detail(so_far))
        back = so_far

    done, error = batching.run(backwards, batch)
    if back:
        service.emit(restored_changes(store.group, [r.entry_id for r in back], back))
    return Batched(back, done, len(backwards), error)


def restore_all(
    service: Workspace,
    caller: Caller,
    entries: Sequence[MemoryEntry],
    places: Mapping[str, Place] | None = None,
    *,
    detach: Sequence[tuple[str, str]] = (),
) -> list[Restored]:
    """Put deleted entries back as they were (undo), all or none, each where it stood
    among its versions (``places``, from :class:`~core.memory.curation.Deleted`), or
    behind a current memory with the same text (core.memory.versions).

    They are put back last deleted first, so a chain deleted whole comes back whole.
    ``detach`` takes back what keeping one of near-duplicates joined
    (core.memory.merging): each (version, kept) still so linked is current again
    first, so the version goes back before the memory restored after it.

    Raises:
        Conflict: an entry with one of their ids exists; nothing was put back.
    """
    did = restore(service, caller, entries, places, detach=detach)
    if did.error is not None:
        raise did.error  # one transaction: nothing was put back
    return did.result


# -- tags --------------------------------------------------------------------------


def add_tag(
    service: Workspace,
    caller: Caller,
    ids: Sequence[str],
    tag: str,
    batching: Batching = AT_ONCE,
) -> Batched[Tagged]:
    """Add ``tag`` to each current entry of ``ids`` that lacks it (case aside), batch by
    batch: a new version each that keeps all but the tags (core.memory.tag_versions).

    The tag and the limit of tags are checked for every memory before the first
    batch. An entry deleted, replaced, given the tag or filled up with tags
    meanwhile is passed over and counted in :attr:`Tagged.unchanged`.

    Raises:
        InvalidParams: the tag is empty, too long, a secret, or one of the entries
            holds the most tags a memory may; before anything is written.
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

    def batch(chunk: Sequence[str], done: int) -> None:
        nonlocal changed, candidate
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
        changed = so_far

    done, error = batching.run(ids, batch)
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
    return _wants(entry, tag) and len(entry.tags) < MAX_TAGS


def _wants(entry: MemoryEntry, tag: str) -> bool:
    """Whether ``entry`` is current and without ``tag`` (case aside)."""
    return not entry.is_superseded and tag.casefold() not in (t.casefold() for t in entry.tags)


def tagging_plan(store: GroupStore, ids: Sequence[str], tag: str) -> set[str]:
    """The entries of ``ids`` that get ``tag``: the current ones that lack it.

    Raises:
        InvalidParams: one of them holds the most tags a memory may.
    """
    found = store.get_many(list(ids))
    wanted = [e for e in (found[i] for i in ids if i in found) if _wants(e, tag)]
    check_room(sum(len(e.tags) >= MAX_TAGS for e in wanted))
    return {e.id for e in wanted}


def checked_tag(service: Workspace, tag: str) -> str:
    """``tag`` as it is stored (control characters and extra spaces gone).

    Raises:
        InvalidParams: it is empty, or looks like a secret.
    """
    tag = " ".join(strip_controls(tag).split())
    if not tag:
        raise InvalidParams("the tag is empty: type a word to tag with", field="tag")
    if "," in tag:
        # Tags are given and filtered on as a list split at commas (`--tags a,b`, the
        # editor's tag field): a tag holding one could never be found by it.
        raise InvalidParams(
            "a tag cannot hold a comma (tags are listed and filtered split at commas); "
            "use another character, such as '-' or '/'",
            field="tag",
            rule="pattern",
        )
    screened = screen_field(tag, "tag", known=known_secrets(service.data_dir.root))
    if screened.redacted:
        raise InvalidParams(
            "not tagged: the tag looks like a secret, and tags are never encrypted; "
            "tag with a word that names it instead",
            field="tag",
        )
    return tag


def check_room(full: int) -> None:
    """Refuse a tag for all when ``full`` of the memories hold the most tags already.

    Raises:
        InvalidParams: ``full`` is not 0.
    """
    if full:
        raise InvalidParams(
            f"not tagged: {'one' if full == 1 else f'{full:,}'} of the selected memories "
            f"already {'holds' if full == 1 else 'hold'} {MAX_TAGS} tags, the most a memory "
            "may; remove a tag from it, or leave it out of the selection",
            field="tag",
            rule="maxItems",
        )
