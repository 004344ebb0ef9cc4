"""Agent-written text that can reach the next session: handoffs and thread titles.

A handoff is read back by the next agent session (in its brief and from
``handoff_read``), so an agent that met an injection could pass it on as
"context". Whatever an agent writes there has its injection markers
neutralised (:func:`core.policy.sanitize.neutralize`), as memory entries from agents
do (:mod:`core.policy.write_policy`); the person's own text is kept as typed. The markers
found are audited by name, never the text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.model.entries import Actor
from core.policy.sanitize import neutralize
from core.storage import audit
from core.storage.audit import Action
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller


def neutralize_agent_text(caller: Caller, text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with injection markers made inert when an agent wrote it.

    Returns:
        The text to store and the names of the markers rewritten (empty for the person).
    """
    if caller.actor is not Actor.AGENT:
        return text, ()
    return neutralize(text)


def audit_neutralized(
    store: GroupStore, caller: Caller, markers: Sequence[str], **detail: Any
) -> None:
    """Record which markers were neutralised (call inside the write's transaction)."""
    if markers:
        audit.record(
            store,
            Action.NEUTRALIZED,
            caller.actor,
            session_id=caller.session_id,
            count=len(markers),
            markers=sorted(set(markers)),
            **detail,
        )


def session_author(store: GroupStore, session_id: str | None) -> str | None:
    """The actor (agent, operator, system) of the session that wrote something, if known."""
    if session_id is None:
        return None
    row = store.execute("SELECT actor FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return None if row is None else str(row[0])
