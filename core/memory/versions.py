"""Putting a deleted memory back into its version chain, and what a delete did.

A restore (from the trash, or the app's undo of a delete) inserts the row as it
was deleted, then :func:`core.storage.chains.place_back` puts it where it stood:
with nothing changed since, exactly there; otherwise after the nearest earlier
version still kept, so one fact never has two current versions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.model.changes import Changes
from core.storage.chains import Place, place_back

if TYPE_CHECKING:
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
    """

    entry_id: str
    replaced: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.entry_id, "replaced": self.replaced}

    def describe(self) -> str:
        """``restored mem-…``, and the version it replaced again, if any."""
        said = f"restored {self.entry_id}"
        if self.replaced is not None:
            said += f"; it is current again in place of {self.replaced}"
        return said


def put_back(store: GroupStore, entry_id: str, place: Place, now: str) -> Restored:
    """Place the re-inserted ``entry_id`` in its chain; inside the caller's transaction."""
    return Restored(entry_id, place_back(store, entry_id, place, now).replaced)
