"""Session handoffs: written when a session ends, delivered exactly once.

The next agent session of the same group and thread takes the handoff at start
(:func:`take_session_handoff`), in one ``UPDATE ... RETURNING`` under a write
lock, so two sessions racing for it cannot both get it. The person's sessions
only look (:func:`peek_session_handoff`).

A handoff is delivered (``consumed_at``) once the session was shown it whole: in
the reply that took it (``hello``, ``thread_open``), or later in a brief that
did not cut it, or from ``handoff_read``. An MCP session takes it at
``initialize``, whose reply carries no handoff, so until then it only *holds* it
(``consumed_by`` set, ``consumed_at`` not): it can read it, and no other session
takes it while the holder is open; if the holder ends (or is abandoned) without
having seen it whole, the next session of the scope to start takes it instead.
So of two MCP clients started together, the first to initialize keeps it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.continuity.handoff_text import clean_markdown
from core.continuity.sessions import end_session
from core.continuity.threads import thread_of_session
from core.memory.writing import check_rate, writing
from core.model.changes import Changes
from core.model.entries import Actor, iso, utc_now
from core.model.errors import Conflict, NotFound
from core.policy.agent_text import audit_neutralized, neutralize_agent_text
from core.policy.screening import audit_redacted, screen
from core.storage import audit
from core.storage.audit import Action
from core.storage.fresh_ids import NEXT_SESSION_HANDOFF_ID
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace


@dataclass(frozen=True)
class SessionHandoff:
    id: int
    session_id: str
    thread_id: str | None
    markdown: str
    created_at: str
    consumed_by: str | None = None
    consumed_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "markdown": self.markdown,
            "created_at": self.created_at,
            "consumed_by": self.consumed_by,
            "consumed_at": self.consumed_at,
        }


# -- session handoffs ------------------------------------------------------------------

_SH_COLUMNS = "id, session_id, thread_id, markdown, created_at, consumed_by, consumed_at"


def _session_handoff(row: Sequence[Any]) -> SessionHandoff:
    return SessionHandoff(int(row[0]), row[1], row[2], row[3], row[4], row[5], row[6])


def write_session_handoff(service: Workspace, caller: Caller, markdown: str) -> SessionHandoff:
    """Leave a handoff for the next session of this session's group and thread."""
    store = service.store_for(caller.group)
    text, redacted = screen(service, store, caller, clean_markdown(markdown, "handoff"), "handoff")
    text, markers = neutralize_agent_text(caller, text)
    with writing(service, store, caller):
        row = store.execute(
            "SELECT thread_id, end_state FROM sessions WHERE id = ?", (caller.session_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no session {caller.session_id} in group {store.group}")
        if row[1] != "open":
            raise Conflict(
                f"session {caller.session_id} has already ended; start a new one to hand off",
                session_id=caller.session_id,
            )
        thread_id = row[0]
        if thread_id is None and caller.thread_id is not None:
            # The person deleted the session's thread: its note must not reach the
            # next session of another scope.
            raise NotFound(
                f"thread {caller.thread_id} was deleted while this session worked in it, "
                "so its handoff has nowhere to go; end without a handoff, or open a "
                "thread (thread_open) and end again",
                field="handoff",
            )
        check_rate(store, caller, "handoffs", service.config)
        written = store.execute(
            "INSERT INTO session_handoffs (id, session_id, thread_id, markdown, created_at) "
            f"VALUES ({NEXT_SESSION_HANDOFF_ID}, ?, ?, ?, ?) RETURNING {_SH_COLUMNS}",
            (caller.session_id, thread_id, text, iso(utc_now())),
        ).fetchall()
        if thread_id is not None:
            store.execute(
                "UPDATE threads SET updated_at = ? WHERE id = ?", (iso(utc_now()), thread_id)
            )
        audit.record(
            store,
            Action.HANDOFF_WRITE,
            caller.actor,
            session_id=caller.session_id,
            size=len(text),
            kind="session",
            thread=thread_id,
        )
        audit_redacted(store, caller, redacted, thread=thread_id)
        audit_neutralized(store, caller, markers, thread=thread_id)
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return _session_handoff(written[0])


def end_session_with_handoff(
    service: Workspace, caller: Caller, handoff: str | None
) -> SessionHandoff | None:
    """``session_end {handoff?}``: store the handoff (if any text), then end the session.

    A refused or invalid handoff raises before the session ends, so the caller
    can fix it and end again; a blank one is the same as none.
    """
    stored = None
    if handoff is not None and (not isinstance(handoff, str) or handoff.strip()):
        stored = write_session_handoff(service, caller, handoff)
    end_session(service, caller, graceful=True)
    return stored


def take_session_handoff(
    service: Workspace, caller: Caller, *, shown_whole: bool = True
) -> SessionHandoff | None:
    """Deliver the pending session handoff of the caller's thread to its session, once.

    Only agent sessions take handoffs: the person's CLI and GUI sessions would
    otherwise consume what was left for the agent (they use
    :func:`peek_session_handoff`). When several sessions of the scope ended
    since the last delivery, the newest handoff is returned and the older ones
    are marked delivered with it. With ``shown_whole`` False (the reply will not
    carry the text) the session only holds them until :func:`deliver_held`.
    """
    if caller.actor is not Actor.AGENT:
        return None
    store = service.store_for(caller.group)
    with store.transaction():
        thread_id = thread_of_session(store, caller.session_id)
        scope = "thread_id IS NULL" if thread_id is None else "thread_id = ?"
        # One statement under BEGIN IMMEDIATE: a racing session sees them consumed.
        # A note held but never shown whole is pending again once its holder ended.
        rows = store.execute(
            "UPDATE session_handoffs SET consumed_by = ?, consumed_at = ? "
            f"WHERE consumed_at IS NULL AND {scope} AND session_id != ? "
            "AND (consumed_by IS NULL OR consumed_by = ? OR NOT EXISTS ("
            "SELECT 1 FROM sessions s WHERE s.id = consumed_by AND s.end_state = 'open')) "
            f"RETURNING {_SH_COLUMNS}",
            (
                caller.session_id,
                iso(utc_now()) if shown_whole else None,
                *(() if thread_id is None else (thread_id,)),
                caller.session_id,
                caller.session_id,
            ),
        ).fetchall()
        if rows and shown_whole:
            audit.record(
                store,
                Action.HANDOFF_DELIVER,
                caller.actor,
                session_id=caller.session_id,
                count=len(rows),
                thread=thread_id,
            )
    if not rows:
        return None
    service.emit(Changes(group=store.group, threads=True, audit=True))
    newest = max(rows, key=lambda r: (r[4], r[0]))
    return _session_handoff(newest)


def deliver_held(service: Workspace, caller: Caller, held: SessionHandoff) -> bool:
    """``held`` (and the older notes taken with it) was shown whole: delivered now.

    False when another session took them over meanwhile (this one ended before it
    was shown the note whole, and a later one started).
    """
    store = service.store_for(caller.group)
    scope = "thread_id IS NULL" if held.thread_id is None else "thread_id = ?"
    with store.transaction():
        taken = store.execute(
            "SELECT 1 FROM session_handoffs WHERE id = ? AND consumed_by = ? "
            "AND consumed_at IS NULL",
            (held.id, caller.session_id),
        ).fetchone()
        if taken is None:
            return False
        store.execute(
            "UPDATE session_handoffs SET consumed_at = ? "
            f"WHERE consumed_by = ? AND consumed_at IS NULL AND {scope}",
            (
                iso(utc_now()),
                caller.session_id,
                *(() if held.thread_id is None else (held.thread_id,)),
            ),
        )
        audit.record(
            store,
            Action.HANDOFF_DELIVER,
            caller.actor,
            session_id=caller.session_id,
            count=store.conn.changes(),
            thread=held.thread_id,
        )
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return True


def read_whole(service: Workspace, caller: Caller, note: SessionHandoff) -> SessionHandoff:
    """``note`` as a reply that shows it whole returns it: delivered, if it was only held."""
    if note.consumed_at is not None or not deliver_held(service, caller, note):
        return note
    again = session_handoffs_by_id(service, caller.group, [note.id])
    return again[0] if again else note


def peek_session_handoff(
    service: Workspace, group: str, thread_id: str | None
) -> SessionHandoff | None:
    """The handoff the next agent session of ``thread_id`` would get, left pending."""
    return _newest(service.store_for(group), thread_id, "consumed_at IS NULL")


def delivered_session_handoff(service: Workspace, caller: Caller) -> SessionHandoff | None:
    """The handoff this session took for its current thread, so it can read it again."""
    store = service.store_for(caller.group)
    return delivered_to(store, caller.session_id, thread_of_session(store, caller.session_id))


def delivered_to(
    store: GroupStore, session_id: str, thread_id: str | None
) -> SessionHandoff | None:
    """The newest handoff ``session_id`` took for ``thread_id``."""
    return _newest(store, thread_id, "consumed_by = ?", session_id)


def session_handoffs_by_id(
    service: Workspace, group: str, ids: Iterable[int]
) -> list[SessionHandoff]:
    """The session handoffs of ``ids`` that exist, oldest first (to show what a forget takes)."""
    rows = service.store_for(group).execute(
        f"SELECT {_SH_COLUMNS} FROM session_handoffs "
        "WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
        (json.dumps(list(ids)),),
    )
    return [_session_handoff(r) for r in rows]


def latest_session_handoff(
    service: Workspace, group: str, thread_id: str | None
) -> SessionHandoff | None:
    """The most recent session handoff of a thread, delivered or not (for the desktop)."""
    return _newest(service.store_for(group), thread_id)


def _newest(
    store: GroupStore, thread_id: str | None, condition: str = "", *params: str
) -> SessionHandoff | None:
    """The newest session handoff of ``thread_id`` (None: no thread) that meets ``condition``."""
    scope = "thread_id IS NULL" if thread_id is None else "thread_id = ?"
    where = f"{condition} AND {scope}" if condition else scope
    row = store.execute(
        f"SELECT {_SH_COLUMNS} FROM session_handoffs WHERE {where} "
        "ORDER BY created_at DESC, id DESC LIMIT 1",
        (*params, *(() if thread_id is None else (thread_id,))),
    ).fetchone()
    return None if row is None else _session_handoff(row)
