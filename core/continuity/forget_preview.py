"""What a forget will take, described for the person before anything goes.

A :class:`~core.memory.forgetting.ForgetPlan` holds ids; the person needs to read
what they name: the memories agents deleted that wait in the trash, the earlier
versions of memories that go which are current again after, for each thread
whose handoff versions go which ones and which version is current after, and
each session handoff with the thread it was left in. ``ambry forget`` prints
these and the app lists them, from the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.continuity import episodes, handoffs, session_handoffs, threads
from core.continuity.episodes import Exchange
from core.continuity.session_handoffs import SessionHandoff
from core.memory.forgetting import ForgetPlan
from core.memory.trash import TrashItem, list_trash
from core.model.entries import MemoryEntry
from core.storage.chains import current_after_delete

if TYPE_CHECKING:
    from core.storage.workspace import Workspace


#: Turns a preview lists one by one; the rest are counted.
TURNS_SHOWN = 50


@dataclass(frozen=True)
class HandoffFate:
    """What a forget does to one thread's handoff."""

    thread_id: str
    title: str
    #: The versions that go, newest first.
    versions: tuple[int, ...]
    #: The thread's current version before the forget.
    current: int | None
    #: The version current after it; None when the thread is left with no handoff.
    after: int | None

    @property
    def gone(self) -> str:
        """``v4 (current), v2``: the versions that go."""
        return ", ".join(f"v{v} (current)" if v == self.current else f"v{v}" for v in self.versions)

    @property
    def outcome(self) -> str:
        """``v3 becomes current``, ``the current v5 stays`` or ``the thread has no
        handoff left``."""
        if self.current not in self.versions:
            return f"the current v{self.current} stays"
        if self.after is not None:
            return f"v{self.after} becomes current"
        return "the thread has no handoff left"


@dataclass(frozen=True)
class NoteGoing:
    """A session handoff a forget takes, with the title of its thread (None: no thread)."""

    note: SessionHandoff
    thread_title: str | None


@dataclass(frozen=True)
class ForgetPreview:
    """A plan with what its ids name, as the person reads it before confirming."""

    plan: ForgetPlan
    #: The plan's memories in the trash, in the plan's order.
    trashed: tuple[TrashItem, ...]
    handoffs: tuple[HandoffFate, ...]
    session_notes: tuple[NoteGoing, ...]
    #: The first :data:`TURNS_SHOWN` of the plan's conversation turns, oldest first.
    turns: tuple[Exchange, ...] = ()
    #: Earlier versions of memories it takes, which the topic is not in: current
    #: again after it, as after any delete (core.storage.chains).
    current_again: tuple[MemoryEntry, ...] = ()


def preview(service: Workspace, group: str, plan: ForgetPlan) -> ForgetPreview:
    """Read what ``plan`` names in ``group``."""
    in_trash = {item.id: item for item in list_trash(service, group)}
    return ForgetPreview(
        plan,
        tuple(in_trash[i] for i in plan.trash_ids if i in in_trash),
        tuple(_handoff_fates(service, group, plan)),
        tuple(
            NoteGoing(
                note,
                None
                if note.thread_id is None
                else threads.get_thread(service, group, note.thread_id).title,
            )
            for note in session_handoffs.session_handoffs_by_id(
                service, group, plan.session_handoff_ids
            )
        ),
        tuple(episodes.exchanges_by_id(service, group, plan.exchange_ids[:TURNS_SHOWN])),
        _current_again(service, group, plan),
    )


def _current_again(service: Workspace, group: str, plan: ForgetPlan) -> tuple[MemoryEntry, ...]:
    ids = [e.id for e in plan.entries]
    again = current_after_delete(service.store_for(group), ids)
    found = service.entries(group, again)
    return tuple(found[i] for i in again if i in found)


def _handoff_fates(service: Workspace, group: str, plan: ForgetPlan) -> list[HandoffFate]:
    going: dict[str, set[int]] = {}
    for thread_id, version in plan.handoff_versions:
        going.setdefault(thread_id, set()).add(version)
    fates = []
    for thread_id, versions in going.items():
        thread = threads.get_thread(service, group, thread_id)
        left = [
            h.version
            for h in handoffs.handoff_history(service, group, thread_id)
            if h.version not in versions
        ]
        fates.append(
            HandoffFate(
                thread_id,
                thread.title,
                tuple(sorted(versions, reverse=True)),
                thread.handoff_version,
                left[0] if left else None,
            )
        )
    return fates
