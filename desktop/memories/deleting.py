"""Deleting memories on the Memories page: the selection, all the search matches, or
the others of near-duplicates; each asked first, named, and kept for Ctrl+Z.

A delete of many runs in the background in batches (desktop.widgets.batches);
the undo stack (desktop.memories.undo) keeps what it deleted, so Ctrl+Z puts it
back where it stood among its versions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtWidgets import QWidget

from core.memory import bulk
from core.memory.batching import Batched, Batching
from core.memory.curation import Deleted
from core.memory.merging import Kept, keep_one
from core.model.entries import MemoryEntry
from core.model.errors import AmbryError
from core.service import Caller, MemoryService
from core.storage.chains import count_current_again, current_after_delete
from desktop.memories.action_texts import deleted_text, first_words, kept_text, memories, named
from desktop.memories.state import BrowserQuery
from desktop.memories.undo import Undoable, UndoStack, UndoStep, busy
from desktop.widgets import messages
from desktop.widgets.batches import BatchJob
from desktop.widgets.watch import AppState, audit_mark

#: Up to how many memories a delete's question names the earlier versions made current.
CURRENT_AGAIN_ASKED = 200


class Deleting:
    """The deletes of :class:`~desktop.memories.actions.MemoryActions`.

    Args:
        state: the shared app state (service, current group, operator session).
        jobs: the window's one bulk write at a time.
        undo: the app's undo stack.
    """

    def __init__(self, state: AppState, jobs: BatchJob, undo: UndoStack) -> None:
        self._state = state
        self._jobs = jobs
        self._undo = undo

    def delete(self, ids: Sequence[str], parent: QWidget | None) -> bool:
        """Ask, naming what goes, then delete ``ids``; Ctrl+Z undoes."""
        # While a bulk change runs, Del says why it waits, with rows selected or not
        # (the list is listed again as the batches commit, which may clear them).
        if busy(self._jobs) or not ids:
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
        if busy(self._jobs):
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
                self._undo.push(step, mark)
            elif did.error is not None:
                messages.report(did.error)
                return
            said, failed = deleted_text(did)
            (messages.error if failed else messages.info)(said)

        return self._jobs.run("Deleting", group, len(ids), work, done)

    def keep(self, keep_id: str, others: Sequence[str]) -> Kept | None:
        """Keep ``keep_id`` of near-duplicates, delete ``others``; Ctrl+Z brings them back.

        The tags of the others move onto the kept memory (a new version), and stay
        there after an undo: its history holds the version before.
        """
        if busy(self._jobs):
            return None
        group = self._state.group
        try:
            kept = keep_one(self._state.service, self._state.operator(group), keep_id, others)
        except AmbryError as exc:
            messages.report(exc)
            return None
        deleted = kept.deleted
        step = UndoStep(Undoable.DELETE, group, deleted.entries, places=deleted.places)
        self._undo.push(replace(step, detach=kept.undo_joins()))
        messages.info(kept_text(kept))
        return kept
