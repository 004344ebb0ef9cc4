"""Changing a memory's tags: a new version that changes nothing else.

A tag edit is the person's (the app's editor, bulk *Add tag* and *Remove tag*,
``ambry tag``, ``ambry store``
of the same text with ``--supersedes``, keeping one of near-duplicates). Like
any edit it stores a new version that supersedes the old one, so History shows
the change; unlike an edit of the text it is not a new observation, so the new
version carries everything but the tags over unchanged: status (a candidate
still awaits review, with its reason and the memory it would replace), source
and trust, confidence as last seen and staleness, privacy and pin.

One batch, however many memories, is one transaction and one audit row. The new
version is written by core.memory.tag_versions, which keeps what each change did
as a :class:`~core.memory.tag_versions.TagChange`, so the app's Ctrl+Z can take it
back exactly (core.memory.tag_undo).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from core.memory import bulk
from core.memory.tag_versions import Tagged, new_version, record
from core.memory.writing import StoreOutcome, StoreRequest
from core.model.changes import Changes
from core.model.entries import Actor, Status
from core.policy.screening import audit_redacted

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


def add_tag(service: Workspace, caller: Caller, ids: Sequence[str], tag: str) -> Tagged:
    """Add ``tag`` to each current entry of ``ids`` that lacks it (case aside), in one
    transaction: :func:`core.memory.bulk.add_tag` with a batch as large as the work.

    Entries gone or replaced meanwhile are left out, as are those that have it.

    Raises:
        InvalidParams: the tag is empty, too long, a secret, or one of the entries
            holds the most tags a memory may.
        AmbryError: the write failed; nothing was written.
    """
    did = bulk.add_tag(service, caller, ids, tag)
    if did.error is not None:
        raise did.error
    return replace(did.result, unchanged=len(ids) - len(did.result.done))


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
