"""Who is calling: the provenance every operation records."""

from __future__ import annotations

from dataclasses import dataclass

from core.model.entries import Actor


@dataclass(frozen=True)
class Caller:
    """Who is calling, in which group and session. Provenance comes from here only."""

    group: str
    actor: Actor
    session_id: str
    #: The thread the session works in, if it named one.
    thread_id: str | None = None
