"""Change records returned by mutations, so each view refreshes only what it shows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Changes:
    group: str
    entries: bool = False
    review: bool = False
    audit: bool = False
    sessions: bool = False
    threads: bool = False
    attachments: bool = False
    claims: bool = False
    entry_ids: tuple[str, ...] = ()

    def __or__(self, other: Changes) -> Changes:
        return Changes(
            group=self.group,
            entries=self.entries or other.entries,
            review=self.review or other.review,
            audit=self.audit or other.audit,
            sessions=self.sessions or other.sessions,
            threads=self.threads or other.threads,
            attachments=self.attachments or other.attachments,
            claims=self.claims or other.claims,
            entry_ids=tuple(dict.fromkeys(self.entry_ids + other.entry_ids)),
        )
