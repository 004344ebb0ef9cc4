"""The audit log: metadata about every action, never content, secrets or queries."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from core.model.entries import Actor, iso, utc_now
from core.storage.rows import AUDIT_INSERT_SQL
from core.storage.store import GroupStore


class Action(StrEnum):
    STORE = "store"
    DEDUP = "dedup"
    SUPERSEDE = "supersede"
    DELETE = "delete"
    RESTORE = "restore"
    REVEAL = "reveal"
    FORGET = "forget"
    CLEAR = "clear"
    EXPORT = "export"
    IMPORT = "import"
    SEARCH = "search"
    BRIEF = "brief"
    UPDATE = "update"
    SECRET_REDACTED = "secret_redacted"
    NEUTRALIZED = "injection_neutralized"
    REFUSED = "refused"
    RATE_LIMITED = "rate_limited"
    PURGE = "purge"
    REVIEW_ACCEPT = "review_accept"
    REVIEW_REJECT = "review_reject"
    REVIEW_DEFER = "review_defer"
    #: Accepts taken back: the entries await review again.
    REVIEW_UNDO = "review_undo"
    SESSION_START = "session_start"
    SESSION_END = "session_end"
    DECAY = "decay"
    INGEST = "ingest"
    THREAD_CREATE = "thread_create"
    THREAD_OPEN = "thread_open"
    THREAD_RENAME = "thread_rename"
    THREAD_DELETE = "thread_delete"
    HANDOFF_WRITE = "handoff_write"
    HANDOFF_RESTORE = "handoff_restore"
    HANDOFF_READ = "handoff_read"
    HANDOFF_DELIVER = "handoff_deliver"
    HANDOFF_EXPORT = "handoff_export"
    EXCHANGE_LOG = "exchange_log"
    EXPIRE = "expire"
    ATTACH = "attach"
    VERIFY = "verify"
    CLAIM_PROPOSE = "claim_propose"
    CLAIM_EXTRACT = "claim_extract"
    CLAIM_DECIDE = "claim_decide"
    CLAIM_MODE = "claim_mode"


@dataclass(frozen=True)
class AuditRecord:
    id: int
    at: str
    action: str
    actor: str
    session_id: str | None
    entry_ids: list[str]
    count: int | None
    size: int | None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at,
            "action": self.action,
            "actor": self.actor,
            "session_id": self.session_id,
            "entry_ids": self.entry_ids,
            "count": self.count,
            "size": self.size,
            "detail": self.detail,
        }


def record(
    store: GroupStore,
    action: Action,
    actor: Actor,
    *,
    session_id: str | None = None,
    entry_ids: Iterable[str] = (),
    count: int | None = None,
    size: int | None = None,
    read: bool = False,
    **detail: Any,
) -> None:
    """Append one audit row. ``detail`` holds names and reasons, never content.

    A ``read`` (search, brief) is not part of a write transaction: it goes to
    :meth:`GroupStore.audit_read`, which may batch it (see there).
    """
    row = functools.partial(
        _row, utc_now(), action, actor, session_id, tuple(entry_ids), count, size, detail
    )
    if read:
        # Formatted when written: a deferred read pays only for taking the time.
        store.audit_read(row)
    else:
        store.execute(AUDIT_INSERT_SQL, row())


def rewrite(
    store: GroupStore,
    row_id: int,
    *,
    entry_ids: Iterable[str],
    count: int | None,
    **detail: Any,
) -> None:
    """Replace the ids, count and detail of row ``row_id``, keeping its time and action.

    For an operation done in batches (core.memory.batching): its one row is written by
    the first batch and rewritten by each later one, in that batch's transaction,
    so at every commit it names exactly what is done.
    """
    store.execute(
        "UPDATE audit_log SET entry_ids = ?, count = ?, detail = ? WHERE id = ?",
        (
            json.dumps(list(entry_ids)),
            count,
            json.dumps({k: v for k, v in detail.items() if v is not None}, sort_keys=True),
            row_id,
        ),
    )


def _row(
    at: datetime,
    action: Action,
    actor: Actor,
    session_id: str | None,
    entry_ids: tuple[str, ...],
    count: int | None,
    size: int | None,
    detail: dict[str, Any],
) -> tuple[Any, ...]:
    return (
        iso(at),
        action.value,
        actor.value,
        session_id,
        json.dumps(list(entry_ids)),
        count,
        size,
        json.dumps({k: v for k, v in detail.items() if v is not None}, sort_keys=True),
    )


def recent(
    store: GroupStore,
    *,
    limit: int = 50,
    offset: int = 0,
    actions: Iterable[str] = (),
    actor: str | None = None,
    text: str = "",
    text_actions: Iterable[str] = (),
    skip_actions: Iterable[str] = (),
) -> list[AuditRecord]:
    """The newest audit rows first (from the ``offset``-th on), optionally filtered by
    action, actor and text, leaving out the rows of ``skip_actions``.

    ``text`` is found, case-insensitively, in a row's ids, details, action,
    actor or its session's client name; ``text_actions`` are actions whose
    description (as a front end words it) contains the text, so they match too.
    """
    clauses: list[str] = []
    params: list[Any] = []
    actions = list(actions)
    if actions:
        clauses.append(f"action IN ({', '.join('?' * len(actions))})")
        params.extend(actions)
    skip = list(skip_actions)
    if skip:
        clauses.append(f"action NOT IN ({', '.join('?' * len(skip))})")
        params.extend(skip)
    if actor:
        clauses.append("actor = ?")
        params.append(actor)
    if text.strip():
        like = "%" + re.sub(r"([\\%_])", r"\\\1", text.strip()) + "%"
        words = list(text_actions)
        found_in = ["entry_ids", "detail", "action", "actor", "session_id"]
        tests = [f"{column} LIKE ? ESCAPE '\\'" for column in found_in]
        tests.append("session_id IN (SELECT id FROM sessions WHERE client LIKE ? ESCAPE '\\')")
        if words:
            tests.append(f"action IN ({', '.join('?' * len(words))})")
        clauses.append("(" + " OR ".join(tests) + ")")
        params.extend([like] * (len(found_in) + 1))
        params.extend(words)
    where = " AND ".join(clauses) or "1"
    rows = store.execute(
        "SELECT id, at, action, actor, session_id, entry_ids, count, size, detail "
        f"FROM audit_log WHERE {where} ORDER BY id DESC LIMIT ? OFFSET ?",
        (*params, limit, offset),
    )
    return [
        AuditRecord(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7], json.loads(r[8]))
        for r in rows
    ]
