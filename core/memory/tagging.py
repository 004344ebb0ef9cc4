"""Changing a memory's tags: a new version that changes nothing else.

A tag edit is the person's (the app's editor, bulk *Add tag* and *Remove tag*,
``ambry tag``, ``ambry store``
of the same text with ``--supersedes``, keeping one of near-duplicates). Like
any edit it stores a new version that supersedes the old one, so History shows
the change; unlike an edit of the text it is not a new observation, so the new
version carries everything but the tags over unchanged: status (a candidate
still awaits review, with its reason and the memory it would replace), source
and trust, confidence as last seen and staleness, privacy and pin.

One batch, however many memories, is one transaction and one audit row. What
each change did is kept as a :class:`TagChange`, so the app's Ctrl+Z can take it
back exactly (core.memory.tag_undo).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.memory.writing import (
    StoreOutcome,
    StoreRequest,
    check_limits,
    clean_tags,
    writing,
)
from core.model.changes import Changes
from core.model.entries import (
    MAX_TAGS,
    Actor,
    MemoryEntry,
    Provenance,
    Status,
    iso,
    new_entry_id,
    utc_now,
)
from core.model.errors import Conflict, InvalidParams, NotFound
from core.policy.field_screening import screen_field
from core.policy.own_files import known_secrets
from core.policy.screening import audit_redacted, strip_controls
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


def add_tag(service: Workspace, caller: Caller, ids: Sequence[str], tag: str) -> Tagged:
    """Add ``tag`` to each current entry of ``ids`` that lacks it (case aside).

    Entries gone or replaced meanwhile are left out, as are those that have it.

    Raises:
        InvalidParams: the tag is empty, too long, a secret, or one of the entries
            holds the most tags a memory may.
    """
    tag = checked_tag(service, tag)
    store = service.store_for(caller.group)
    found = store.get_many(list(ids))
    wanted = {
        e.id: (*e.tags, tag)
        for e in (found[i] for i in dict.fromkeys(ids) if i in found)
        if not e.is_superseded and tag.casefold() not in (t.casefold() for t in e.tags)
    }
    check_room(sum(len(tags) > MAX_TAGS for tags in wanted.values()))
    done = retag(service, caller, wanted)
    return replace(done, unchanged=len(ids) - len(done.versions))


def checked_tag(service: Workspace, tag: str) -> str:
    """``tag`` as it is stored (control characters and extra spaces gone).

    Raises:
        InvalidParams: it is empty, or looks like a secret.
    """
    tag = " ".join(strip_controls(tag).split())
    if not tag:
        raise InvalidParams("the tag is empty: type a word to tag with", field="tag")
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


def retag(service: Workspace, caller: Caller, tags: Mapping[str, Sequence[str]]) -> Tagged:
    """Give each entry in ``tags`` those tags, as a new version that keeps the rest.

    Raises:
        NotFound: an entry no longer exists.
        Conflict: an entry was replaced by a newer version meanwhile.
        InvalidParams: tags over the limits.
    """
    store = service.store_for(caller.group)
    now = iso(utc_now())
    done: list[TagChange] = []
    candidate = False
    with writing(service, store, caller):
        found = current_entries(store, list(tags), "change the tags of that one")
        for entry_id, new_tags in tags.items():
            entry = found[entry_id]
            cleaned = clean_tags(new_tags)
            check_limits("", cleaned)
            new = new_version(service, store, caller, entry, cleaned, now)
            done.append(change_of(entry, new))
            candidate = candidate or new.status is Status.CANDIDATE
        record(store, caller, [(c.old, c.new) for c in done])
    changes = Changes(
        group=store.group,
        entries=bool(done),
        review=candidate,
        audit=bool(done),
        entry_ids=tuple(i for c in done for i in (c.old, c.new)),
    )
    return Tagged(service.emit(changes), tuple(done))


def change_of(old: MemoryEntry, new: MemoryEntry) -> TagChange:
    """What writing ``new`` in place of ``old`` did, read before it was written."""
    return TagChange(old.id, new.id, new.tags, old.provenance.updated_at)


def tags_among(store: GroupStore, ids: Sequence[str]) -> list[tuple[str, int]]:
    """``(tag, how many)`` over the current entries of ``ids``, by name (case aside):
    the tags a bulk *Remove tag* can take off them."""
    rows = store.execute(
        "SELECT t.tag, count(*) FROM memory_tags t JOIN memory_entries e ON e.seq = t.entry_seq "
        "WHERE e.superseded_by IS NULL AND e.id IN (SELECT value FROM json_each(?)) "
        "GROUP BY t.tag COLLATE NOCASE ORDER BY t.tag COLLATE NOCASE",
        (json.dumps(list(ids)),),
    )
    return [(str(r[0]), int(r[1])) for r in rows]


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


def tag_edit(
    service: Workspace,
    store: GroupStore,
    caller: Caller,
    request: StoreRequest,
    prepared: StoreRequest,
    now: str,
) -> StoreOutcome | None:
    """The person's store of a memory's own text, type and privacy in its place
    (``supersedes``, no source named): a tag edit, written by :func:`new_version`.
    ``None`` for any other write, which the write path takes as it is.

    ``request`` is as sent (what it names), ``prepared`` as :func:`prepare` made it
    (the text and tags kept), which the write path takes too.
    """
    if (
        caller.actor is not Actor.OPERATOR
        or request.supersedes is None
        or request.source is not None
        or request.claimed_type is not None
        or request.claimed_trust is not None
    ):
        return None
    target = store.get(request.supersedes)
    if (
        target is None
        or target.superseded_by is not None
        or target.type is not request.entry_type
        or target.privacy is not request.privacy
    ):
        return None  # the write path says what is wrong, or writes an edit
    if prepared.content != service.readable(target, reveal=True).content:
        return None
    entry = new_version(service, store, caller, target, prepared.tags, now)
    record(store, caller, [(target.id, entry.id)])
    audit_redacted(store, caller, prepared.redacted, entry_ids=[entry.id])
    changes = Changes(
        group=store.group,
        entries=True,
        audit=True,
        review=entry.status is Status.CANDIDATE,
        entry_ids=(entry.id, target.id),
    )
    return StoreOutcome(entry, True, changes, target.id, prepared.redacted)
