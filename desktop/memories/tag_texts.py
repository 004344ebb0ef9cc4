"""What the Memories page says after adding or removing a tag, or taking that back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from core.memory.batching import Batched
from core.memory.tag_undo import Since, Untagged
from core.memory.tag_versions import TagChange, Tagged
from desktop.memories.action_texts import memories, undone_text


def tagged_text(did: Batched[Tagged], tag: str, removed: bool) -> tuple[str, bool]:
    """The message after *Add tag* (or *Remove tag*), and whether it is an error."""
    count = len(did.result.done)
    done = f"{count:,} of {memories(did.total)}" if did.stopped else memories(count)
    said = f"Removed the tag “{tag}” from {done}" if removed else f"Tagged {done} with “{tag}”"
    undo = " Ctrl+Z to undo." if count else ""
    if did.error is not None:
        return f"{said}; then it stopped: {did.error.message}.{undo}", True
    if did.stopped:
        return f"{said}; cancelled.{undo}", False
    if not count:
        if removed:
            return f"None of the selected memories has the tag “{tag}”.", False
        return f"Every selected memory already has the tag “{tag}”.", False
    without = did.result.unchanged
    if removed and without:
        left = "the one without it was" if without == 1 else f"the {without:,} without it were"
        said += f"; {left} left alone"
    return f"{said}.{undo}", False


def untagged_text(did: Batched[Untagged], tag: str, removed: bool) -> tuple[str, bool]:
    """The message after Ctrl+Z of a change of tags, and whether it is an error."""
    result = did.result
    n = len(result.undone)
    what = f"removal of the tag “{tag}”" if removed else f"tag “{tag}”"
    said = f"Took back the {what} on {memories(n)}: each is as it was before."
    if not n:
        said = f"Could not take back the {what}."
    return undone_text(did, said + left_text(result.left), "takes back")


def left_text(left: Sequence[tuple[TagChange, Since]]) -> str:
    """`` 2 were left as they are: 1 deleted since, 1 edited or tagged again since.``"""
    if not left:
        return ""
    reasons = Counter(why for _, why in left)
    if len(left) == 1:
        return f" One was left as it is: {left[0][1].value}."
    why = ", ".join(f"{count:,} {reason.value}" for reason, count in reasons.items())
    return f" {len(left):,} were left as they are: {why}."
