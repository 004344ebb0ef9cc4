"""Sessions: one per agent connection, CLI run or app window, with its audit trail."""

from __future__ import annotations

from collections.abc import Iterable

from core.model.caller import Caller
from core.model.changes import Changes
from core.model.entries import Actor, iso, new_session_id, utc_now
from core.storage import audit
from core.storage.audit import Action
from core.storage.best_effort import operator_best_effort
from core.storage.workspace import Workspace

#: Client names are kept to this many characters.
MAX_CLIENT_CHARS = 200


def start_session(
    ws: Workspace, group: str, actor: Actor, client: str = "", *, agent_key: str = ""
) -> Caller:
    """Record a new session of ``actor`` in ``group``; the caller it returns carries it.

    ``agent_key`` names the agent (its token's fingerprint and client) whose rate
    windows the session shares.
    """
    store = ws.store_for(group)
    session_id = new_session_id()
    client = client[:MAX_CLIENT_CHARS]
    # The person can always read; an agent's session must be on record (rate limits).
    with operator_best_effort(store, actor, "the operator's session"), store.transaction():
        store.execute(
            "INSERT INTO sessions (id, actor, client, started_at, agent_key) "
            "VALUES (?, ?, ?, ?, ?)",
            (session_id, actor.value, client, iso(utc_now()), agent_key),
        )
        audit.record(store, Action.SESSION_START, actor, session_id=session_id, client=client)
    ws.emit(Changes(group=store.group, sessions=True, audit=True))
    return Caller(group=store.group, actor=actor, session_id=session_id)


def end_session(ws: Workspace, caller: Caller, *, graceful: bool = True) -> None:
    """Mark the session ended (``graceful``) or abandoned; a closed session stays as it was."""
    store = ws.store_for(caller.group)
    state = "ended" if graceful else "abandoned"
    ended = False
    with (
        operator_best_effort(store, caller.actor, "the end of the session"),
        store.transaction(),
    ):
        store.execute(
            "UPDATE sessions SET ended_at = ?, end_state = ? WHERE id = ? AND end_state = 'open'",
            (iso(utc_now()), state, caller.session_id),
        )
        ended = store.conn.changes() > 0
        if ended:
            audit.record(
                store, Action.SESSION_END, caller.actor, session_id=caller.session_id, state=state
            )
    if ended:
        ws.emit(Changes(group=store.group, sessions=True, audit=True))


def session_clients(ws: Workspace, group: str, session_ids: Iterable[str]) -> dict[str, str]:
    """The client name each of ``session_ids`` gave (``""`` when it gave none)."""
    ids = sorted(set(session_ids))
    if not ids:
        return {}
    store = ws.store_for(group)
    found: dict[str, str] = {}
    # Chunks keep each statement under SQLite's limit on bound parameters.
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = store.execute(
            f"SELECT id, client FROM sessions WHERE id IN ({', '.join('?' * len(chunk))})",
            chunk,
        )
        found.update((row[0], row[1]) for row in rows)
    return found
