"""What the person does to memories: edit, add, pin, tag, untag, accept, delete and undo.

Every action goes through the service (or core.memory.curation) with the person's
operator session, so limits, redaction and the audit log apply exactly as for
the CLI. Errors a person can act on become a message; views learn about the
result from the change record, like they do for an agent's writes.

Entries handed back to views are read through ``MemoryService.entries``, so a
secret is masked unless :meth:`MemoryActions.reveal` was asked for it.

The undo stack is the app's: the Claims page puts its accepts on it too.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget

from core.claims import gate
from core.claims.model import Decision as ClaimDecision
from core.memory import bulk, curation
from core.memory.acceptance import Acceptance
from core.memory.batching import Batched, Batching
from core.memory.curation import Decision, Deleted
from core.memory.merging import Carried, Kept, keep_one
from core.memory.tag_undo import Untagged, undo_tags
from core.memory.tag_versions import TagChange, Tagged
from core.memory.versions import Restored
from core.memory.writing import StoreRequest
from core.model.entries import MemoryEntry, Status
from core.model.errors import AmbryError, Conflict
from core.model.text import plural
from core.service import Caller, MemoryService
from core.storage.chains import Place, count_current_again, current_after_delete
from core.storage.crypto import KeyUnavailable
from desktop.memories.state import BrowserQuery
from desktop.memories.tag_texts import tagged_text, untagged_text
from desktop.memories.values import Draft, is_locked, is_masked
from desktop.widgets import messages
from desktop.widgets.batches import BatchJob
from desktop.widgets.watch import AppState, audit_mark, forgot_since

log = logging.getLogger(__name__)


def memories(count: int) -> str:
    """``1 memory``, ``1,234 memories``."""
    return plural(count, "memory", "memories")


#: Up to how many memories a delete's question names the earlier versions made current.
CURRENT_AGAIN_ASKED = 200

#: The note on the receipt of a claim's retraction by Ctrl+Z.
CLAIM_UNDO_NOTE = "undo of the accept (Ctrl+Z)"

#: Said when an encrypted entry's text is needed and the key cannot be read.
LOCKED_TEXT = (
    "This memory is encrypted and Ambry's key is not available (no OS keyring, or the "
    "key is not in it), so it cannot be read or changed here."
)


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


class _UndoAction(QAction):
    """Ctrl+Z in one view, following the shared undo stack (a slot of its own, so the
    connection goes when the view does)."""

    def __init__(self, commands: MemoryActions, view: QWidget) -> None:
        super().__init__(commands.undo_text, view)
        self._commands = commands
        self.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        self.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.setEnabled(commands.can_undo)
        commands.undo_changed.connect(self._follow)

    def _follow(self, can_undo: bool) -> None:
        self.setEnabled(can_undo)
        self.setText(self._commands.undo_text)


class MemoryActions(QObject):
    """The browser's commands, with an undo stack for deletes, rejects and accepts.

    The stack lasts as long as the app: a delete is not kept anywhere else.

    Deletes, tags and undos of many memories run as :attr:`jobs` says: at once when
    few, else in the background in batches (desktop.widgets.batches). While one
    runs, the others and Ctrl+Z wait.

    Args:
        state: the shared app state (service, current group, operator session).
        parent: the owning QObject.

    Signals:
        undo_changed(bool): whether there is something to undo.
    """

    undo_changed = Signal(bool)

    def __init__(self, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        #: What can be taken back, newest last.
        self._undo: list[UndoStep] = []
        #: The window's one bulk write at a time.
        self.jobs = BatchJob(state, self)
        state.forgotten.connect(self._forget_undo)
        self.jobs.started.connect(lambda *_: self.undo_changed.emit(False))
        self.jobs.ended.connect(lambda: self.undo_changed.emit(self.can_undo))

    @property
    def can_undo(self) -> bool:
        """There is something to undo, and no bulk write under way."""
        return bool(self._undo) and not self.jobs.running

    def busy(self) -> bool:
        """A bulk write is under way: say so, and let the caller wait for it."""
        if self.jobs.running:
            self.jobs.refuse()
        return self.jobs.running

    @property
    def undo_kind(self) -> Undoable | None:
        """What Ctrl+Z would take back now, if anything."""
        return self._undo[-1].kind if self._undo else None

    @property
    def undo_text(self) -> str:
        """``Undo accept``, ``Undo reject`` or ``Undo delete``; ``Undo`` with nothing to undo."""
        return f"Undo {self._undo[-1].kind}" if self._undo else "Undo"

    def undo_action(self, view: QWidget, undo: Callable[[], None]) -> QAction:
        """A view's Ctrl+Z: ``undo`` while the view has focus, named and enabled as
        the shared stack's top step (``Undo accept``; greyed with nothing to undo)."""
        action = _UndoAction(self, view)
        action.triggered.connect(undo)
        view.addAction(action)
        return action

    def _forget_undo(self, group: str) -> None:
        """Drop what could be taken back in ``group``: another process forgot or cleared
        memories there, and an undo must not bring a forgotten memory back."""
        kept = [step for step in self._undo if step.group != group]
        if len(kept) != len(self._undo):
            self._undo = kept
            self.undo_changed.emit(bool(kept))

    def _push(self, step: UndoStep, mark: tuple[Any, ...] | None = None) -> None:
        """Put ``step`` on the stack, with the audit log's ``mark`` from before it began
        (now, if not given): a forget recorded after that drops it."""
        if mark is None:
            mark = audit_mark(self._state.service.store_for(step.group))
        self._undo.append(replace(step, audit_at=mark))
        self.undo_changed.emit(self.can_undo)

    def save(self, original: MemoryEntry | None, draft: Draft) -> MemoryEntry | None:
        """Add a memory, or store a new version of ``original`` that supersedes it.

        The old version stays (superseded), so the history keeps every edit,
        including a change of privacy. Returns the entry now current as lists
        show it (a secret masked), or ``None`` if nothing was saved; the editor
        then still holds the person's text.
        """
        content = draft.content
        if content is None:
            # A secret edited without a reveal keeps its stored text, unseen.
            content = self.stored_text(original) if original is not None else None
            if content is None:
                return None
        request = StoreRequest(
            entry_type=draft.entry_type,
            content=content,
            tags=draft.tags,
            supersedes=original.id if original else None,
            privacy=draft.privacy,
        )
        try:
            outcome = self._state.service.store_entries(self._state.operator(), [request])[0]
        except KeyUnavailable as exc:
            messages.error(f"Not saved: {exc.message} Your text is still in the editor.")
            return None
        except Conflict as exc:
            if original is None or "current" not in exc.data:
                messages.report(exc)
                return None
            # The window has not heard of the agent's version yet; it will show it.
            messages.warning(
                "Not saved: an agent replaced this memory while you were editing it. Your "
                "text is still in the editor; Save on top (Ctrl+S) keeps it after theirs."
            )
            return None
        except AmbryError as exc:
            messages.report(exc)
            return None
        if not outcome.created:
            tags = outcome.tags_note()
            messages.info(
                "Same as an existing memory: that one was kept and reinforced"
                + (f"; {tags}." if tags else ".")
            )
        elif original is not None:
            messages.info("Saved as a new version; the old one is kept in its history.")
        else:
            messages.info("Memory added.")
        if outcome.entry.status is Status.CANDIDATE:
            messages.warning(
                f"Held for review: {outcome.entry.review_reason}. See Review to accept it."
            )
        # Read back through the service: a new secret must not come back in clear.
        return self.read(outcome.entry.id)

    def read(self, entry_id: str) -> MemoryEntry | None:
        """``entry_id`` in the current group as views show it, or ``None`` if gone."""
        return self._state.service.entries(self._state.group, [entry_id]).get(entry_id)

    def stored_text(self, entry: MemoryEntry) -> str | None:
        """The decrypted text of ``entry`` to carry into a new version; never shown."""
        try:
            clear = self._state.service.get(self._state.group, entry.id, reveal=True)
        except AmbryError as exc:
            messages.report(exc)
            return None
        if is_locked(clear):
            messages.error(LOCKED_TEXT)
            return None
        return clear.content

    def reveal(self, entry_id: str) -> MemoryEntry | None:
        """The secret ``entry_id`` in clear, on the person's request (audited by core)."""
        try:
            entry = self._state.service.reveal(self._state.operator(), entry_id)
        except AmbryError as exc:
            messages.report(exc)
            return None
        if is_locked(entry):
            messages.error(LOCKED_TEXT)
            return None
        return entry

    def set_pinned(self, entry_id: str, pinned: bool) -> None:
        try:
            self._state.service.set_pinned(self._state.operator(), entry_id, pinned)
        except AmbryError as exc:
            messages.report(exc)

    def delete(self, ids: Sequence[str], parent: QWidget | None) -> bool:
        """Ask, naming what goes, then delete ``ids``; Ctrl+Z undoes."""
        if not ids or self.busy():
            return False
        found = self._state.service.entries(self._state.group, list(ids))
        entries = [found[i] for i in ids if i in found]
        if not entries:
            return False
        one = len(entries) == 1
        what = "this memory" if one else f"these {len(entries):,} memories"
        if not messages.confirm(
            parent,
            "Delete memories",
            f"Delete {what}?\n\n{named(entries)}\n\nThe agent will no longer see "
            f"{'it' if one else 'them'}.{self._current_again_text(entries)} You can undo "
            "this with Ctrl+Z until you close Ambry.",
            "Delete",
        ):
            return False
        return self._delete_now(self._state.group, [e.id for e in entries])

    def _current_again_text(self, entries: Sequence[MemoryEntry]) -> str:
        """`` It replaced “…”, which is current again after the delete.``, or nothing."""
        store = self._state.service.store_for(self._state.group)
        if len(entries) > CURRENT_AGAIN_ASKED:
            # Counted, not named: naming them for thousands is slow.
            count = count_current_again(store, [e.id for e in entries])
            if not count:
                return ""
            said = "earlier version" if count == 1 else "earlier versions"
            return (
                f"\n\n{count:,} {said} they replaced "
                f"{'becomes' if count == 1 else 'become'} current again."
            )
        again = current_after_delete(store, [e.id for e in entries])
        if not again:
            return ""
        found = self._state.service.entries(self._state.group, again)
        versions = [found[i] for i in again if i in found]
        if len(entries) == 1 and len(versions) == 1:
            return (
                f"\n\nIt replaced {first_words(versions[0], 12)}: that earlier version "
                "becomes current again."
            )
        return f"\n\nEarlier versions they replaced become current again: {named(versions)}."

    def delete_matching(
        self, query: BrowserQuery, parent: QWidget | None, by_meaning: int = 0
    ) -> bool:
        """Delete every memory the search and filters match, after showing how many.

        The ids are listed afresh (not taken from the table, which may still be
        loading), so the count asked about is the count deleted. Memories the list
        shows as found by meaning alone (``by_meaning`` of them) share no word with
        the search and are not deleted; the question says so.
        """
        if self.busy():
            return False
        group = self._state.group
        ids = self._state.service.list_ids(group, query.entry_filter(), query.text)
        one = by_meaning == 1
        them = "it" if one else "them"
        kept = (
            f"{memories(by_meaning)} found by meaning alone {'is' if one else 'are'} kept: "
            f"select {them} and press Del to delete {them}."
            if by_meaning
            else ""
        )
        if not ids:
            messages.info(
                "No memories share the words of the search; nothing to delete. " + kept
                if by_meaning
                else "No memories match the search and filters; nothing to delete."
            )
            return False
        what = query.describe()
        question = (
            f"Delete {memories(len(ids))} matching {what}?"
            if what
            else f"Delete all {memories(len(ids))} (every current memory in {group!r})?"
        )
        if not messages.confirm(
            parent,
            "Delete matching memories",
            f"{question} The agent will no longer see them.{' ' + kept if kept else ''}"
            "\n\nYou can undo this with Ctrl+Z until you close Ambry.",
            f"Delete {len(ids):,}",
        ):
            return False
        return self._delete_now(group, ids)

    def _delete_now(self, group: str, ids: list[str]) -> bool:
        """Delete ``ids`` (at once, or in the background in batches) and keep them for undo."""
        # Taken before the first batch: a forget while it runs drops the undo.
        mark = audit_mark(self._state.service.store_for(group))

        def work(service: MemoryService, caller: Caller, batching: Batching) -> Batched[Deleted]:
            return bulk.delete(service, caller, ids, batching)

        def done(did: Batched[Deleted]) -> None:
            deleted = did.result
            if deleted.entries:
                step = UndoStep(Undoable.DELETE, group, deleted.entries, places=deleted.places)
                self._push(step, mark)
            elif did.error is not None:
                messages.report(did.error)
                return
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
                messages.error(f"{said}then stopped: {did.error.message}.{current}{undo}")
            elif did.stopped:
                messages.info(f"{said}cancelled.{current}{undo}")
            else:
                messages.info(f"{said}{current}{undo}")

        return self.jobs.run("Deleting", group, len(ids), work, done)

    def keep(self, keep_id: str, others: Sequence[str]) -> Kept | None:
        """Keep ``keep_id`` of near-duplicates, delete ``others``; Ctrl+Z brings them back.

        The tags of the others move onto the kept memory (a new version), and stay
        there after an undo: its history holds the version before.
        """
        if self.busy():
            return None
        group = self._state.group
        try:
            kept = keep_one(self._state.service, self._state.operator(group), keep_id, others)
        except AmbryError as exc:
            messages.report(exc)
            return None
        deleted = kept.deleted
        step = UndoStep(Undoable.DELETE, group, deleted.entries, places=deleted.places)
        self._push(replace(step, detach=kept.undo_joins()))
        messages.info(kept_text(kept))
        return kept

    def undo(self) -> list[str]:
        """Take back the most recent delete, reject or accept; returns the ids it brought
        back at once (none for an undo of many, which runs in the background).

        Deleted and rejected memories are restored; accepted ones await review again.
        """
        if not self._undo or self.busy():
            return []
        step = self._undo[-1]
        if forgot_since(self._state.service.store_for(step.group), step.audit_at):
            # Forgotten meanwhile (another process, or a group not shown then).
            self._forget_undo(step.group)
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
        self._undo.pop()
        self.undo_changed.emit(self.can_undo)
        messages.info(_returned(len(done.returned), len(done.left)))
        return list(done.returned)

    def _restore(self, step: UndoStep) -> list[str]:
        """Put back what ``step`` deleted or rejected, at once or in batches; stopped
        early, what is not back yet stays on the stack for the next Ctrl+Z."""
        ids: list[str] = []
        # Off the stack while it runs; what an error or Cancel leaves goes back on.
        self._undo.pop()

        def work(
            service: MemoryService, caller: Caller, batching: Batching
        ) -> Batched[list[Restored]]:
            return bulk.restore(
                service, caller, step.entries, step.places, detach=step.detach, batching=batching
            )

        def done(did: Batched[list[Restored]]) -> None:
            if did.stopped:
                rest = step.entries[: did.total - did.done]
                places = {e.id: step.places[e.id] for e in rest if e.id in step.places}
                self._undo.append(replace(step, entries=rest, places=places, detach=()))
            self.undo_changed.emit(self.can_undo)
            ids.extend(r.entry_id for r in did.result)
            said = _restored(did.result)
            if did.error is not None:
                messages.error(f"{said} Then it stopped: {did.error.message}")
            elif did.stopped:
                left = did.total - did.done
                messages.info(f"{said} Cancelled: Ctrl+Z brings back the other {left:,}.")
            else:
                messages.info(said)

        if not self.jobs.run("Restoring", step.group, len(step.entries), work, done):
            self._undo.append(step)  # it could not begin: nothing was done
            self.undo_changed.emit(self.can_undo)
        return ids

    def claim_accepted(self, group: str, claim_id: str, text: str) -> None:
        """The person accepted a claim on the Claims page: Ctrl+Z takes it back."""
        self._push(UndoStep(Undoable.CLAIM_ACCEPT, group, claim=(claim_id, text)))

    def _undo_claim_accept(self, step: UndoStep) -> None:
        """Retract the claim (core.claims.gate: a verified claim leaves the trusted lane
        only that way, with its receipt); it leaves the agent's brief at once."""
        assert step.claim is not None
        claim_id, text = step.claim
        # Taken off whatever happens: a claim retracted or forgotten since stays so.
        self._undo.pop()
        self.undo_changed.emit(bool(self._undo))
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

    def add_tag(self, ids: Sequence[str], tag: str) -> int:
        """Tag current entries: each gets a new version, so history shows the change,
        and keeps all else as it was (a candidate still awaits review: core.memory.tagging).
        Ctrl+Z takes it back.

        Returns how many were tagged at once (0 for many, tagged in the background).
        """
        return self._change_tags(ids, tag, removed=False)

    def remove_tag(self, ids: Sequence[str], tag: str) -> int:
        """Take ``tag`` off the current entries that have it, each as a new version that
        keeps all else; those without it are left alone. Ctrl+Z takes it back.

        Returns how many lost the tag at once (0 for many, done in the background).
        """
        return self._change_tags(ids, tag, removed=True)

    def _change_tags(self, ids: Sequence[str], tag: str, *, removed: bool) -> int:
        tag = " ".join(tag.split())
        if not tag or not ids or self.busy():
            return 0
        group = self._state.group
        # Taken before the first batch: a forget while it runs drops the undo.
        mark = audit_mark(self._state.service.store_for(group))
        change = bulk.remove_tag if removed else bulk.add_tag
        changed: list[int] = []

        def work(service: MemoryService, caller: Caller, batching: Batching) -> Batched[Tagged]:
            return change(service, caller, ids, tag, batching)

        def done(did: Batched[Tagged]) -> None:
            changed.append(len(did.result.done))
            if did.result.done:
                kind = Undoable.UNTAG if removed else Undoable.TAG
                self._push(UndoStep(kind, group, retags=did.result.done, tag=tag), mark)
            said, failed = tagged_text(did, tag, removed)
            (messages.error if failed else messages.info)(said)

        verb = "Removing the tag from" if removed else "Tagging"
        self.jobs.run(verb, group, len(ids), work, done)
        return sum(changed)

    def _untag(self, step: UndoStep) -> list[str]:
        """Take back a change of tags (core.memory.tag_undo), at once or in batches;
        stopped early, what is not taken back yet stays on the stack."""
        ids: list[str] = []
        self._undo.pop()  # off the stack while it runs; what is left goes back on

        def work(service: MemoryService, caller: Caller, batching: Batching) -> Batched[Untagged]:
            return undo_tags(service, caller, step.retags, batching)

        def done(did: Batched[Untagged]) -> None:
            if did.stopped:
                self._undo.append(replace(step, retags=step.retags[did.done :]))
            self.undo_changed.emit(self.can_undo)
            ids.extend(c.old for c in did.result.undone)
            said, failed = untagged_text(did, step.tag, step.kind is Undoable.UNTAG)
            (messages.error if failed else messages.info)(said)

        if not self.jobs.run("Undoing the tag change of", step.group, len(step.retags), work, done):
            self._undo.append(step)  # it could not begin: nothing was done
            self.undo_changed.emit(self.can_undo)
        return ids

    def review(self, ids: Sequence[str], decision: Decision) -> int:
        """Accept, reject or defer the candidates among ``ids``; Ctrl+Z undoes all but a defer."""
        if self.busy():
            return 0
        group = self._state.group
        service = self._state.service
        found = service.store_for(group).get_many(ids)
        candidates = [i for i in ids if i in found and found[i].status is Status.CANDIDATE]
        if not candidates:
            messages.info("None of the selected memories is awaiting review.")
            return 0
        accepted: list[Acceptance] = []
        try:
            if decision is Decision.ACCEPT:
                _, accepted = curation.accept(service, self._state.operator(), candidates)
            else:
                curation.review(service, self._state.operator(), candidates, decision)
        except AmbryError as exc:
            messages.report(exc)
            return 0
        undo = ""
        match decision:
            case Decision.ACCEPT:
                self._push(UndoStep(Undoable.ACCEPT, group, accepted=tuple(accepted)))
                undo = " Ctrl+Z to undo."
            case Decision.REJECT:
                # A reject deletes: keep the candidates, as a delete does, for Ctrl+Z.
                self._push(UndoStep(Undoable.REJECT, group, tuple(found[i] for i in candidates)))
                undo = " Ctrl+Z to undo."
            case Decision.DEFER:
                pass
        replaced = self._replaced_text(accepted)
        messages.info(f"{past_tense(decision)} {memories(len(candidates))}.{replaced}{undo}")
        return len(candidates)

    def _replaced_text(self, accepted: Sequence[Acceptance]) -> str:
        """`` It replaces “…”, which replaced “…” since.``: what an accept replaced, when
        that is not the memory it was written to replace (core.memory.acceptance)."""
        since = [a for a in accepted if a.replaced_since]
        if not since:
            return ""
        if len(accepted) > 1:
            n = "One" if len(since) == 1 else f"{len(since):,}"
            return (
                f" {n} of them replaced the version stored since in place of the memory "
                f"{'it was' if len(since) == 1 else 'they were'} written to replace."
            )
        a = since[0]
        ids = [i for i in (a.superseded, a.pending_supersedes) if i]
        found = self._state.service.entries(self._state.group, ids)
        if a.superseded not in found:
            return ""
        current = first_words(found[a.superseded], 12)
        meant = a.pending_supersedes
        earlier = first_words(found[meant], 12) if meant in found else "the memory it named"
        return f" It replaces {current}, which replaced {earlier} since."


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


def _returned(returned: int, left: int) -> str:
    """What an undone accept did: ``Returned 3 memories to review.``, and what it could not."""
    if not left:
        return f"Returned {memories(returned)} to review."
    since = "it changed since" if left == 1 else "they changed since"
    if not returned:
        return f"Could not return {memories(left)} to review: {since}."
    return f"Returned {memories(returned)} to review; {left:,} could not be: {since}."
