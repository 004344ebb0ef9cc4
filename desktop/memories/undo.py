"""The app's undo stack: what Ctrl+Z can take back, and taking it back.

Deletes, rejects, accepts and changes of tags on the Memories and Review pages
go on it (desktop.memories.actions), and so do the Claims page's accepts. The
stack lasts as long as the app: a delete is not kept anywhere else. A forget
or clear in a group drops that group's steps, so an undo never brings a
forgotten memory back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from core.claims import gate
from core.claims.model import Decision as ClaimDecision
from core.memory import bulk, curation
from core.memory.acceptance import Acceptance
from core.memory.batching import Batched, Batching
from core.memory.tag_undo import Untagged, undo_tags
from core.memory.tag_versions import TagChange
from core.memory.versions import Restored
from core.model.entries import MemoryEntry
from core.model.errors import AmbryError
from core.service import Caller, MemoryService
from core.storage.chains import Place
from desktop.memories.action_texts import restored_text, returned_text
from desktop.memories.tag_texts import untagged_text
from desktop.widgets import messages
from desktop.widgets.batches import BatchJob
from desktop.widgets.watch import AppState, audit_mark, forgot_since

T = TypeVar("T")

#: The note on the receipt of a claim's retraction by Ctrl+Z.
CLAIM_UNDO_NOTE = "undo of the accept (Ctrl+Z)"


class Undoable(StrEnum):
    """What Ctrl+Z can take back."""

    DELETE = "delete"
    REJECT = "reject"
    ACCEPT = "accept"
    #: A claim accepted on the Claims page: taken back by retracting it.
    CLAIM_ACCEPT = "claim accept"
    #: A tag added to memories: the versions from before are current again.
    TAG = "tag"
    #: A tag removed from memories, taken back the same way.
    UNTAG = "tag removal"


@dataclass(frozen=True)
class UndoStep:
    """One batch Ctrl+Z takes back, in the group it was done in.

    Attributes:
        kind: what was done.
        group: where.
        entries: the deleted (or rejected) entries, to put back, in the order deleted.
        accepted: what each accept changed, to return the entries to review.
        claim: the accepted claim's id and text, for a claim accept.
    """

    kind: Undoable
    group: str
    entries: tuple[MemoryEntry, ...] = ()
    accepted: tuple[Acceptance, ...] = ()
    claim: tuple[str, str] | None = None
    #: Where each deleted entry stood among its versions, by id, to put it back there.
    places: Mapping[str, Place] = field(default_factory=dict)
    #: (earlier version, kept memory) pairs a near-duplicate keep linked, taken back first.
    detach: tuple[tuple[str, str], ...] = ()
    #: The group's audit log when it was done: a forget recorded after it means the
    #: step may hold a forgotten memory, and is not taken back.
    audit_at: tuple[Any, ...] = ()
    #: What a change of tags did to each memory, and the tag, to take it back.
    retags: tuple[TagChange, ...] = ()
    tag: str = ""


def busy(jobs: BatchJob) -> bool:
    """A bulk write is under way: say so, and let the caller wait for it."""
    if jobs.running:
        jobs.refuse()
    return jobs.running


class UndoStack(QObject):
    """What Ctrl+Z can take back, newest last; an undo of many runs as ``jobs`` says.

    While a bulk write runs, there is nothing to undo.

    Args:
        state: the shared app state (service, operator session).
        jobs: the window's one bulk write at a time.
        parent: the owning QObject.

    Signals:
        changed(bool): whether there is something to undo.
    """

    changed = Signal(bool)

    def __init__(self, state: AppState, jobs: BatchJob, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._jobs = jobs
        self._steps: list[UndoStep] = []
        state.forgotten.connect(self._forget)
        jobs.started.connect(lambda *_: self.changed.emit(False))
        jobs.ended.connect(lambda: self.changed.emit(self.can_undo))

    @property
    def can_undo(self) -> bool:
        """There is something to undo, and no bulk write under way."""
        return bool(self._steps) and not self._jobs.running

    @property
    def kind(self) -> Undoable | None:
        """What Ctrl+Z would take back now, if anything."""
        return self._steps[-1].kind if self._steps else None

    @property
    def text(self) -> str:
        """``Undo accept``, ``Undo reject`` or ``Undo delete``; ``Undo`` with nothing to undo."""
        return f"Undo {self._steps[-1].kind}" if self._steps else "Undo"

    def action(self, view: QWidget, undo: Callable[[], None]) -> QAction:
        """A view's Ctrl+Z: ``undo`` while the view has focus, named and enabled as
        the top step (``Undo accept``; greyed with nothing to undo)."""
        action = _UndoAction(self, view)
        action.triggered.connect(undo)
        view.addAction(action)
        return action

    def push(self, step: UndoStep, mark: tuple[Any, ...] | None = None) -> None:
        """Put ``step`` on the stack, with the audit log's ``mark`` from before it began
        (now, if not given): a forget recorded after that drops it."""
        if mark is None:
            mark = audit_mark(self._state.service.store_for(step.group))
        self._steps.append(replace(step, audit_at=mark))
        self.changed.emit(self.can_undo)

    def _forget(self, group: str) -> None:
        """Drop what could be taken back in ``group``: another process forgot or cleared
        memories there, and an undo must not bring a forgotten memory back."""
        kept = [step for step in self._steps if step.group != group]
        if len(kept) != len(self._steps):
            self._steps = kept
            self.changed.emit(bool(kept))

    def undo(self) -> list[str]:
        """Take back the most recent step; returns the ids it brought back at once
        (none for an undo of many, which runs in the background).

        Deleted and rejected memories are restored; accepted ones await review again.
        """
        if not self._steps or busy(self._jobs):
            return []
        step = self._steps[-1]
        if forgot_since(self._state.service.store_for(step.group), step.audit_at):
            # Forgotten meanwhile (another process, or a group not shown then).
            self._forget(step.group)
            messages.info(
                f"Nothing to undo in {step.group!r}: memories were forgotten or cleared "
                "there since, and an undo does not bring them back."
            )
            return []
        caller = self._state.operator(step.group)
        if step.kind is Undoable.CLAIM_ACCEPT:
            self._undo_claim_accept(step)
            return []
        if step.kind in (Undoable.TAG, Undoable.UNTAG):
            return self._untag(step)
        if step.kind is not Undoable.ACCEPT:
            return self._restore(step)
        try:
            done = curation.return_to_review(self._state.service, caller, step.accepted)
        except AmbryError as exc:
            messages.report(exc)
            return []
        # Taken off even if some changed since: a second try would find them changed too.
        self._steps.pop()
        self.changed.emit(self.can_undo)
        messages.info(returned_text(len(done.returned), len(done.left)))
        return list(done.returned)

    def _restore(self, step: UndoStep) -> list[str]:
        """Put back what ``step`` deleted or rejected, at once or in batches; stopped
        early, what is not back yet stays on the stack for the next Ctrl+Z."""

        def work(
            service: MemoryService, caller: Caller, batching: Batching
        ) -> Batched[list[Restored]]:
            return bulk.restore(
                service, caller, step.entries, step.places, detach=step.detach, batching=batching
            )

        def left(did: Batched[list[Restored]]) -> UndoStep:
            rest = step.entries[: did.total - did.done]
            places = {e.id: step.places[e.id] for e in rest if e.id in step.places}
            # The near-duplicate joins are undone with the first batch: kept for the
            # next Ctrl+Z when that batch did not commit.
            return replace(
                step, entries=rest, places=places, detach=step.detach if not did.done else ()
            )

        def back(did: Batched[list[Restored]]) -> list[str]:
            return [r.entry_id for r in did.result]

        return self._take_back(
            step, "Restoring", len(step.entries), work, left, back, restored_text
        )

    def _untag(self, step: UndoStep) -> list[str]:
        """Take back a change of tags (core.memory.tag_undo), at once or in batches;
        stopped early, what is not taken back yet stays on the stack."""

        def work(service: MemoryService, caller: Caller, batching: Batching) -> Batched[Untagged]:
            return undo_tags(service, caller, step.retags, batching)

        def left(did: Batched[Untagged]) -> UndoStep:
            return replace(step, retags=step.retags[did.done :])

        def back(did: Batched[Untagged]) -> list[str]:
            return [c.old for c in did.result.undone]

        def text(did: Batched[Untagged]) -> tuple[str, bool]:
            return untagged_text(did, step.tag, step.kind is Undoable.UNTAG)

        verb = "Undoing the tag change of"
        return self._take_back(step, verb, len(step.retags), work, left, back, text)

    def _take_back(
        self,
        step: UndoStep,
        verb: str,
        total: int,
        work: Callable[[MemoryService, Caller, Batching], Batched[T]],
        left: Callable[[Batched[T]], UndoStep],
        back: Callable[[Batched[T]], list[str]],
        text: Callable[[Batched[T]], tuple[str, bool]],
    ) -> list[str]:
        """Run the undo of ``step`` (at once or in batches); stopped early, ``left`` of it
        goes back on the stack. Returns the ids ``back`` names if it ran at once."""
        ids: list[str] = []
        self._steps.pop()  # off the stack while it runs; what is left goes back on

        def done(did: Batched[T]) -> None:
            if did.stopped:
                self._steps.append(left(did))
            self.changed.emit(self.can_undo)
            ids.extend(back(did))
            said, failed = text(did)
            (messages.error if failed else messages.info)(said)

        def lost() -> None:
            # Ended in an unexpected error: keep the whole step, which holds the only
            # copy of what it puts back (a second try leaves what came back as it is).
            self._steps.append(step)
            self.changed.emit(self.can_undo)

        if not self._jobs.run(verb, step.group, total, work, done, lost):
            self._steps.append(step)  # it could not begin: nothing was done
            self.changed.emit(self.can_undo)
        return ids

    def _undo_claim_accept(self, step: UndoStep) -> None:
        """Retract the claim (core.claims.gate: a verified claim leaves the trusted lane
        only that way, with its receipt); it leaves the agent's brief at once."""
        assert step.claim is not None
        claim_id, text = step.claim
        # Taken off whatever happens: a claim retracted or forgotten since stays so.
        self._steps.pop()
        self.changed.emit(bool(self._steps))
        try:
            gate.decide(
                self._state.service,
                self._state.operator(step.group),
                claim_id,
                ClaimDecision.RETRACT,
                confirmed_text=text,
                note=CLAIM_UNDO_NOTE,
            )
        except AmbryError as exc:
            messages.error(f"Could not take back the accept of “{text}”: {exc.message}")
            return
        messages.info(f"Took back the accept of “{text}”: retracted, out of the agent's brief.")


class _UndoAction(QAction):
    """Ctrl+Z in one view, following the undo stack (a slot of its own, so the
    connection goes when the view does)."""

    def __init__(self, stack: UndoStack, view: QWidget) -> None:
        super().__init__(stack.text, view)
        self._stack = stack
        self.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        self.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.setEnabled(stack.can_undo)
        stack.changed.connect(self._follow)

    def _follow(self, can_undo: bool) -> None:
        self.setEnabled(can_undo)
        self.setText(self._stack.text)
