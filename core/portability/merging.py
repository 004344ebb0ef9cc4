"""What a record already stored takes from a newer export of it, field by field.

An import finds records the group already holds under the same id. One whose
only differences are what a later export of the same record added (tags it
lacks, a later re-observation, a thread's later activity) is brought up to
date; one that says something else under the same id (other text, another
title) is a conflict, described here field by field with both values.
"""

from __future__ import annotations

import json
from typing import Any

from core.model.entries import MAX_TAGS, MemoryEntry, Privacy
from core.model.text import one_line

#: Row columns that only record when a record was last active: a newer export
#: holds a later time, which is taken, and is never a conflict.
ACTIVITY_TIMES: dict[str, tuple[str, ...]] = {"thread": ("updated_at",)}

#: How much of a value a conflict message quotes.
_SHOWN_CHARS = 60


def entry_update(
    stored: MemoryEntry, tags: tuple[str, ...], fields: dict[str, Any], confidence: float
) -> dict[str, Any]:
    """The columns to set on ``stored`` (same id, same content) from the file's record.

    - ``tags``: the file's tags the entry lacks (case aside) are added, as many
      as :data:`MAX_TAGS` leaves room for; a tag only the store has is kept,
      since a tag added here cannot be told from one removed there.
    - ``last_seen_at`` and ``confidence``: a later re-observation in the file
      is taken, with the confidence it set.
    - ``updated_at``: the later of the two, when anything else is taken.

    Everything else (type, status, privacy, pinned, supersession, review) stays
    as stored. Returns an empty dict when the file adds nothing.
    """
    changes: dict[str, Any] = {}
    have = {t.casefold() for t in stored.tags}
    new = [t for t in dict.fromkeys(tags) if t.casefold() not in have]
    added = new[: max(0, MAX_TAGS - len(stored.tags))]
    if added:
        changes["tags"] = json.dumps([*stored.tags, *added], ensure_ascii=False)
    seen = fields.get("last_seen_at")
    if seen is not None and (stored.last_seen_at is None or seen > stored.last_seen_at):
        changes["last_seen_at"] = seen
        changes["confidence"] = confidence
    if changes:
        changes["updated_at"] = max(stored.provenance.updated_at, fields["updated_at"])
    return changes


def content_conflict(stored: MemoryEntry, content: str) -> str:
    """Why an entry whose id is stored with other content conflicts, in words."""
    if stored.privacy is not Privacy.PUBLIC:
        return (
            f"content differs ({stored.privacy.value} entry: the values are not shown; "
            f"`ambry show {stored.id}` prints the stored one)"
        )
    return f"content is {shown(stored.content)} here and {shown(content)} in the file"


def row_difference(
    kind: str, stored: dict[str, Any], row: dict[str, Any], compared: tuple[str, ...] | list[str]
) -> tuple[dict[str, Any], str | None]:
    """Compare a stored row with the file's row of the same key.

    Returns:
        The later activity times to set (see :data:`ACTIVITY_TIMES`), and the
        conflict in words (``None`` when there is none): the first column that
        differs otherwise, with both values.
    """
    later: dict[str, Any] = {}
    for name in compared:
        here, there = stored.get(name), row.get(name)
        if here == there:
            continue
        if name in ACTIVITY_TIMES.get(kind, ()):
            if there is not None and (here is None or str(there) > str(here)):
                later[name] = there
            continue
        return {}, f"{name} is {shown(here)} here and {shown(there)} in the file"
    return later, None


def shown(value: Any) -> str:
    """``value`` quoted on one line, cut to :data:`_SHOWN_CHARS` characters."""
    if not isinstance(value, str):
        return repr(value)
    return repr(one_line(value, _SHOWN_CHARS))
