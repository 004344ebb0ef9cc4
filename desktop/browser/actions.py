"""What the person does to memories: edit, add, pin, tag, accept, delete and undo.

Every action goes through the service (or core.curation) with the person's
operator session, so limits, redaction and the audit log apply exactly as for
the CLI. Errors a person can act on become a message; views learn about the
result from the change record, like they do for an agent's writes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from core import curation
from core.curation import Decision
from core.errors import AmbryError
from core.model import EntryType, MemoryEntry, Status
from core.service import StoreRequest
from desktop import messages
from desktop.watch import AppState

log = logging.getLogger(__name__)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def past_tense(decision: Decision) -> str:
    match decision:
        case Decision.ACCEPT:
            return "Accepted"
        case Decision.REJECT:
            return "Rejected"
        case Decision.DEFER:
            return "Deferred"


class MemoryActions(QObject):
    """The browser's commands, with an undo stack for deletions in this session.

    Args:
        state: the shared app state (service, current group, operator session).
        parent: the owning QObject.

    Signals:
        undo_changed(bool): whether there is a deletion to undo.
    """

    undo_changed = Signal(bool)

    def __init__(self, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        #: Deleted batches, newest last, with the group they came from.
        self._undo: list[tuple[str, list[MemoryEntry]]] = []

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    def save(
        self,
        original: MemoryEntry | None,
        entry_type: EntryType,
        content: str,
        tags: Sequence[str],
    ) -> MemoryEntry | None:
        """Add a memory, or store a new version of ``original`` that supersedes it.

        The old version stays (superseded), so the history keeps every edit.
        Returns the entry now current, or ``None`` if the service refused.
        """
        request = StoreRequest(
            entry_type=entry_type,
            content=content,
            tags=tuple(tags),
            supersedes=original.id if original else None,
        )
        try:
            outcome = self._state.service.store_entries(self._state.operator(), [request])[0]
        except AmbryError as exc:
            messages.report(exc)
            return None
        if not outcome.created:
            messages.info("Same as an existing memory: that one was kept and reinforced.")
        elif original is not None:
            messages.info("Saved as a new version; the old one is kept in its history.")
        else:
            messages.info("Memory added.")
        if outcome.entry.status is Status.CANDIDATE:
            messages.warning(
                f"Held for review: {outcome.entry.review_reason}. See Review to accept it."
            )
        return outcome.entry

    def set_pinned(self, entry_id: str, pinned: bool) -> None:
        try:
            self._state.service.set_pinned(self._state.operator(), entry_id, pinned)
        except AmbryError as exc:
            messages.report(exc)

    def delete(self, ids: Sequence[str], parent: QWidget | None) -> bool:
        """Ask, then delete ``ids`` in one transaction; Ctrl+Z brings them back."""
        if not ids:
            return False
        what = "this memory" if len(ids) == 1 else f"these {len(ids)} memories"
        if not messages.confirm(
            parent,
            "Delete memories",
            f"Delete {what}? The agent will no longer see "
            f"{'it' if len(ids) == 1 else 'them'}.\n\nYou can undo this with Ctrl+Z "
            "until you close Ambry.",
            "Delete",
        ):
            return False
        group = self._state.group
        try:
            _, entries = curation.delete_many(
                self._state.service, self._state.operator(group), list(ids)
            )
        except AmbryError as exc:
            messages.report(exc)
            return False
        self._undo.append((group, entries))
        self.undo_changed.emit(True)
        messages.info(f"Deleted {plural(len(entries), 'memory')}. Ctrl+Z to undo.")
        return True

    def undo(self) -> list[str]:
        """Restore the most recent deletion; returns the restored ids."""
        if not self._undo:
            return []
        group, entries = self._undo[-1]
        try:
            curation.restore(self._state.service, self._state.operator(group), entries)
        except AmbryError as exc:
            messages.report(exc)
            return []
        self._undo.pop()
        self.undo_changed.emit(bool(self._undo))
        messages.info(f"Restored {plural(len(entries), 'memory')}.")
        return [e.id for e in entries]

    def add_tag(self, ids: Sequence[str], tag: str) -> int:
        """Tag current entries: each gets a new version, so history shows the change."""
        tag = " ".join(tag.split())
        if not tag:
            return 0
        store = self._state.service.store_for(self._state.group)
        found = store.get_many(ids)
        requests = [
            StoreRequest(e.type, e.content, (*e.tags, tag), supersedes=e.id)
            for e in (found[i] for i in ids if i in found)
            if not e.is_superseded and tag.casefold() not in (t.casefold() for t in e.tags)
        ]
        if not requests:
            messages.info(f"Every selected memory already has the tag {tag!r}.")
            return 0
        try:
            self._state.service.store_entries(self._state.operator(), requests)
        except AmbryError as exc:
            messages.report(exc)
            return 0
        messages.info(f"Tagged {plural(len(requests), 'memory')} with {tag!r}.")
        return len(requests)

    def review(self, ids: Sequence[str], decision: Decision) -> int:
        """Accept, reject or defer the candidates among ``ids``."""
        store = self._state.service.store_for(self._state.group)
        found = store.get_many(ids)
        candidates = [i for i in ids if i in found and found[i].status is Status.CANDIDATE]
        if not candidates:
            messages.info("None of the selected memories is awaiting review.")
            return 0
        try:
            curation.review(self._state.service, self._state.operator(), candidates, decision)
        except AmbryError as exc:
            messages.report(exc)
            return 0
        messages.info(f"{past_tense(decision)} {plural(len(candidates), 'memory')}.")
        return len(candidates)
