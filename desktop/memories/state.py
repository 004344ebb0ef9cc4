"""What the browser is asked to show, as plain values (no Qt)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from core.model.entries import EntryFilter, EntryType, Status
from core.recall.ordering import SortKey


class StatusFilter(StrEnum):
    """The status choices a person sees; each maps onto an :class:`EntryFilter`."""

    CURRENT = "current"
    ACTIVE = "active"
    STALE = "stale"
    CANDIDATE = "candidate"
    SUPERSEDED = "superseded"

    @property
    def label(self) -> str:
        match self:
            case StatusFilter.CURRENT:
                return "All current"
            case StatusFilter.ACTIVE:
                return "Active"
            case StatusFilter.STALE:
                return "Stale"
            case StatusFilter.CANDIDATE:
                return "Candidate"
            case StatusFilter.SUPERSEDED:
                return "Superseded"

    def entry_filter(self) -> EntryFilter:
        match self:
            case StatusFilter.CURRENT:
                # Both statuses: candidates show in the list too, marked as such.
                return EntryFilter(statuses=())
            case StatusFilter.ACTIVE:
                return EntryFilter(statuses=(Status.ACTIVE,), stale=False)
            case StatusFilter.STALE:
                return EntryFilter(statuses=(Status.ACTIVE,), stale=True)
            case StatusFilter.CANDIDATE:
                return EntryFilter(statuses=(Status.CANDIDATE,))
            case StatusFilter.SUPERSEDED:
                return EntryFilter(statuses=(), only_superseded=True)


@dataclass(frozen=True)
class BrowserQuery:
    """The search text and filters of the browser."""

    text: str = ""
    entry_type: EntryType | None = None
    tag: str | None = None
    status: StatusFilter = StatusFilter.CURRENT
    behavioral: bool | None = None
    #: A column the person sorted by; None is newest first, or best match first.
    sort: SortKey | None = None
    descending: bool = False

    def entry_filter(self) -> EntryFilter:
        base = self.status.entry_filter()
        return EntryFilter(
            types=(self.entry_type,) if self.entry_type else (),
            tags=(self.tag,) if self.tag else (),
            statuses=base.statuses,
            include_superseded=base.include_superseded,
            only_superseded=base.only_superseded,
            behavioral=self.behavioral,
            stale=base.stale,
        )

    @property
    def is_default(self) -> bool:
        """No search and no filter (an order lists the same memories)."""
        return replace(self, sort=None, descending=False) == BrowserQuery()

    def describe(self) -> str:
        """The search and filters in words (``“lyon”, type fact, tag work``); empty if none."""
        parts: list[str] = []
        if self.text:
            parts.append(f"“{self.text}”")
        if self.entry_type is not None:
            parts.append(f"type {self.entry_type.value}")
        if self.tag is not None:
            parts.append(f"tag {self.tag}")
        if self.behavioral is not None:
            parts.append("behavioral" if self.behavioral else "not behavioral")
        if self.status is not StatusFilter.CURRENT:
            parts.append(f"status {self.status.label.lower()}")
        return ", ".join(parts)
