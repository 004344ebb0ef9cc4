"""What the Memories page's commands say: how memories are named in a question, and
the message after a delete, keep, review, restore or undone accept.

The messages after adding or removing a tag are in :mod:`desktop.memories.tag_texts`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.memory.batching import Batched
from core.memory.curation import Decision, Deleted
from core.memory.merging import Carried, Kept
from core.memory.versions import Restored
from core.model.entries import MemoryEntry
from core.model.text import plural
from desktop.memories.values import is_locked, is_masked

#: Said when an encrypted entry's text is needed and the key cannot be read.
LOCKED_TEXT = (
    "This memory is encrypted and Ambry's key is not available (no OS keyring, or the "
    "key is not in it), so it cannot be read or changed here."
)


def memories(count: int) -> str:
    """``1 memory``, ``1,234 memories``."""
    return plural(count, "memory", "memories")


def first_words(entry: MemoryEntry, words: int = 8) -> str:
    """The opening words of ``entry``, quoted, to name it in a question."""
    if is_masked(entry) or is_locked(entry):
        return f"a secret {entry.type.value}"
    parts = entry.content.split()
    text = " ".join(parts[:words])
    return f"“{text}…”" if len(parts) > words else f"“{text}”"


def named(entries: Sequence[MemoryEntry], limit: int = 3) -> str:
    """``“Has a dog named Luna”``, or the first few of several and how many more."""
    shown = [first_words(e, 6 if len(entries) > 1 else 12) for e in entries[:limit]]
    more = len(entries) - len(shown)
    tail = f" and {memories(more)} more" if more else ""
    return ", ".join(shown) + tail


def past_tense(decision: Decision) -> str:
    match decision:
        case Decision.ACCEPT:
            return "Accepted"
        case Decision.REJECT:
            return "Rejected"
        case Decision.DEFER:
            return "Deferred"


def deleted_text(did: Batched[Deleted]) -> tuple[str, bool]:
    """The message after a delete that deleted something or ran to its end, and
    whether it is an error."""
    deleted = did.result
    again = len(deleted.current_again)
    current = (
        f" {'An earlier version' if again == 1 else f'{again:,} earlier versions'}"
        f" {'is' if again == 1 else 'are'} current again."
        if again
        else ""
    )
    undo = " Ctrl+Z to undo." if deleted.entries else ""
    said = f"Deleted {memories(len(deleted.entries))}."
    if did.stopped:
        said = f"Deleted {len(deleted.entries):,} of {memories(did.total)}; "
    if did.error is not None:
        return f"{said}then stopped: {did.error.message}.{current}{undo}", True
    if did.stopped:
        return f"{said}cancelled.{current}{undo}", False
    return f"{said}{current}{undo}", False


def kept_text(kept: Kept) -> str:
    """``Kept 1, deleted 2; Ctrl+Z to undo.``, and what moved onto the kept one."""
    took = []
    if kept.tags_added:
        tags = ", ".join(repr(t) for t in kept.tags_added)
        took.append(f"the tag{'s' if len(kept.tags_added) > 1 else ''} {tags}")
    took += [_CARRIED[c] for c in kept.carried]
    moved = f" (it took {' and '.join(took)})" if took else ""
    return f"Kept 1{moved}, deleted {len(kept.deleted.entries):,}; Ctrl+Z to undo."


_CARRIED = {Carried.PIN: "the pin", Carried.CONFIDENCE: "the higher confidence"}


def restored_text(did: Batched[list[Restored]]) -> tuple[str, bool]:
    """The message after Ctrl+Z of a delete or reject, and whether it is an error."""
    return undone_text(did, _restored(did.result), "brings back")


def undone_text(did: Batched[Any], said: str, redo: str) -> tuple[str, bool]:
    """``said`` of an undo, with why it stopped early (Ctrl+Z ``redo`` the rest), and
    whether it is an error."""
    if did.error is not None:
        return f"{said} Then it stopped: {did.error.message}", True
    if did.stopped:
        left = did.total - did.done
        return f"{said} Cancelled: Ctrl+Z {redo} the other {left:,}.", False
    return said, False


def _restored(done: Sequence[Restored]) -> str:
    """``Restored 3 memories.``, and where those not simply back went."""
    said = f"Restored {memories(len(done))}."
    behind = sum(r.duplicate_of is not None for r in done)
    if behind:
        said += (
            f" {memories(behind)} went back as earlier versions of memories stored since "
            "with the same text, which stay current."
            if behind > 1
            else " One went back as an earlier version of a memory stored since with the "
            "same text, which stays current."
        )
    return said


def returned_text(returned: int, left: int) -> str:
    """What an undone accept did: ``Returned 3 memories to review.``, and what it could not."""
    if not left:
        return f"Returned {memories(returned)} to review."
    since = "it changed since" if left == 1 else "they changed since"
    if not returned:
        return f"Could not return {memories(left)} to review: {since}."
    return f"Returned {memories(returned)} to review; {left:,} could not be: {since}."
