"""Putting a deleted memory back: into its version chain, and never as a second copy.

A restore (from the trash, or the app's undo of a delete) inserts the row as it
was deleted, then :func:`core.storage.chains.place_back` puts it where it stood:
with nothing changed since, exactly there; otherwise after the nearest earlier
version still kept, so one fact never has two current versions.

If it comes back current while another current memory of its type holds the
same text (stored again after the delete), the two are not both kept current:
it goes back as an earlier version of that memory, which stays current and takes
the tags it lacks, as a write of the same text does (core.memory.writing). The
result names that memory, so the person is told where their text is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.memory.writing import add_tags, named_tags
from core.model.changes import Changes
from core.model.entries import EntryType
from core.storage.chains import Place, follow_pending, place_back

if TYPE_CHECKING:
    from collections.abc import Sequence

    from core.model.caller import Caller
    from core.storage.store import GroupStore


@dataclass(frozen=True)
class Deletion:
    """What deleting one memory did.

    Attributes:
        changes: the change record.
        entry_id: the memory deleted.
        current_again: the earlier version now current in its place (it was current).
    """

    changes: Changes
    entry_id: str
    current_again: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"deleted": self.entry_id, "current_again": self.current_again}


@dataclass(frozen=True)
class Restored:
    """Where a restored memory went.

    Attributes:
        entry_id: the memory restored.
        replaced: the version it is current in place of again (its delete had made
            that one current).
        duplicate_of: the current memory with the same text it went behind, if any.
        tags_added: the tags that memory took from it.
        behind: the version it went back behind, in its own chain, when a later one
            is current (it was a middle version, or the fact changed since).
    """

    entry_id: str
    replaced: str | None = None
    duplicate_of: str | None = None
    tags_added: tuple[str, ...] = ()
    behind: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.entry_id,
            "replaced": self.replaced,
            "duplicate_of": self.duplicate_of,
            "tags_added": list(self.tags_added),
            "behind": self.behind,
        }

    def describe(self) -> str:
        """``restored mem-…``, and where it went when that is not simply back."""
        said = f"restored {self.entry_id}"
        if self.duplicate_of is not None:
            said += (
                f" as an earlier version of {self.duplicate_of}, which holds the same text "
                "and stays current"
            )
            if self.tags_added:
                said += f" (it took the {named_tags(self.tags_added)})"
        elif self.replaced is not None:
            said += f"; it is current again in place of {self.replaced}"
        elif self.behind is not None:
            said += f" as an earlier version; {self.behind}, written after it, stays current"
        return said


def put_back(
    store: GroupStore,
    caller: Caller,
    entry_id: str,
    place: Place,
    content_keys: Sequence[str],
    entry_type: EntryType,
    now: str,
) -> Restored:
    """Place the re-inserted ``entry_id`` in its chain, behind a current duplicate if
    there is one (see the module docstring); inside the caller's transaction."""
    placed = place_back(store, entry_id, place, now)
    if placed.superseded_by is not None:
        head = store.history(entry_id)[-1].id
        # Back behind a private or secret version, it says no more than that one.
        store.seal_behind(head)
        return Restored(entry_id, behind=head)
    same = store.find_duplicate(content_keys, entry_type, excluding=entry_id)
    if same is None:
        return Restored(entry_id, placed.replaced)
    store.mark_superseded(entry_id, same.id, now)
    follow_pending(store, entry_id, same.id)
    me = store.get(entry_id)
    assert me is not None
    added, _ = add_tags(
        store, caller, same, me.tags, now, reason="restored as an earlier version", source=entry_id
    )
    return Restored(entry_id, placed.replaced, same.id, added)
