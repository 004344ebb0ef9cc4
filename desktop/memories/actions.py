"""What the person does to memories: edit, add, pin, tag, untag, accept, delete and undo.

Every action goes through the service (or core.memory.curation) with the person's
operator session, so limits, redaction and the audit log apply exactly as for
the CLI. Errors a person can act on become a message; views learn about the
result from the change record, like they do for an agent's writes.

Entries handed back to views are read through ``MemoryService.entries``, so a
secret is masked unless :meth:`MemoryActions.reveal` was asked for it.

The undo stack is the app's (desktop.memories.undo): the Claims page puts its
accepts on it too. Deletes are in desktop.memories.deleting, and what the
commands say in desktop.memories.action_texts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

from core.memory import bulk, curation
from core.memory.acceptance import Acceptance
from core.memory.batching import Batched, Batching
from core.memory.curation import Decision
from core.memory.merging import Kept
from core.memory.tag_versions import Tagged
from core.memory.writing import StoreRequest
from core.model.entries import MemoryEntry, Status
from core.model.errors import AmbryError, Conflict
from core.service import Caller, MemoryService
from core.storage.crypto import KeyUnavailable
from desktop.memories.action_texts import LOCKED_TEXT, first_words, memories, past_tense
from desktop.memories.deleting import Deleting
from desktop.memories.state import BrowserQuery
from desktop.memories.tag_texts import tagged_text
from desktop.memories.undo import Undoable, UndoStack, UndoStep, busy
from desktop.memories.values import Draft, is_locked
from desktop.widgets import messages
from desktop.widgets.batches import BatchJob
from desktop.widgets.watch import AppState, audit_mark

log = logging.getLogger(__name__)


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
        retagged(object): an Add or Remove tag ended: (old id, new id) of each
            memory it gave a new version (``tuple[tuple[str, str], ...]``).
    """

    undo_changed = Signal(bool)
    retagged = Signal(object)

    def __init__(self, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        #: The window's one bulk write at a time.
        self.jobs = BatchJob(state, self)
        #: What can be taken back (desktop.memories.undo).
        self._undo = UndoStack(state, self.jobs, self)
        self._undo.changed.connect(self.undo_changed)
        self._deleting = Deleting(state, self.jobs, self._undo)

    @property
    def can_undo(self) -> bool:
        """There is something to undo, and no bulk write under way."""
        return self._undo.can_undo

    def busy(self) -> bool:
        """A bulk write is under way: say so, and let the caller wait for it."""
        return busy(self.jobs)

    @property
    def undo_kind(self) -> Undoable | None:
        """What Ctrl+Z would take back now, if anything."""
        return self._undo.kind

    @property
    def undo_text(self) -> str:
        """``Undo accept``, ``Undo reject`` or ``Undo delete``; ``Undo`` with nothing to undo."""
        return self._undo.text

    def undo_action(self, view: QWidget, undo: Callable[[], None]) -> QAction:
        """A view's Ctrl+Z: ``undo`` while the view has focus, named and enabled as
        the shared stack's top step (``Undo accept``; greyed with nothing to undo)."""
        return self._undo.action(view, undo)

    def undo(self) -> list[str]:
        """Take back the most recent delete, reject, accept or change of tags; returns
        the ids it brought back at once (none for an undo of many, which runs in the
        background).

        Deleted and rejected memories are restored; accepted ones await review again.
        """
        return self._undo.undo()

    def claim_accepted(self, group: str, claim_id: str, text: str) -> None:
        """The person accepted a claim on the Claims page: Ctrl+Z takes it back."""
        self._undo.push(UndoStep(Undoable.CLAIM_ACCEPT, group, claim=(claim_id, text)))

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
        return self._deleting.delete(ids, parent)

    def delete_matching(
        self, query: BrowserQuery, parent: QWidget | None, by_meaning: int = 0
    ) -> bool:
        """Delete every memory the search and filters match, after showing how many
        (desktop.memories.deleting)."""
        return self._deleting.delete_matching(query, parent, by_meaning)

    def keep(self, keep_id: str, others: Sequence[str]) -> Kept | None:
        """Keep ``keep_id`` of near-duplicates, delete ``others``; Ctrl+Z brings them back
        (desktop.memories.deleting)."""
        return self._deleting.keep(keep_id, others)

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
                self._undo.push(UndoStep(kind, group, retags=did.result.done, tag=tag), mark)
            said, failed = tagged_text(did, tag, removed)
            (messages.error if failed else messages.info)(said)
            self.retagged.emit(did.result.versions)

        verb = "Removing the tag from" if removed else "Tagging"
        self.jobs.run(verb, group, len(ids), work, done)
        return sum(changed)

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
                self._undo.push(UndoStep(Undoable.ACCEPT, group, accepted=tuple(accepted)))
                undo = " Ctrl+Z to undo."
            case Decision.REJECT:
                # A reject deletes: keep the candidates, as a delete does, for Ctrl+Z.
                self._undo.push(
                    UndoStep(Undoable.REJECT, group, tuple(found[i] for i in candidates))
                )
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
