"""Conversations brought in from another app: their threads and turns, written in bulk.

:func:`core.continuity.episodes.log_exchange` stores one turn per transaction, as an
agent logs it. An import writes thousands of turns inside the one transaction of the
whole file (``core.portability.history_import``), so these helpers never open a
transaction of their own; the caller holds it. The screening is the exchanges' own:
control characters dropped, secrets redacted, and a credential statement's value cut
out (the person did not compose this text now, so the turn is kept without the value
instead of failing the file). Expiry counts from the import, like any logged turn;
``said_at`` keeps the original time.

An imported conversation's thread id is derived from the source and the
conversation's id (:func:`imported_thread_id`), and each turn keeps the source's
message id as its ``turn``, so importing the same file again, or a newer export of
the same conversation, finds what is already there and adds only the rest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.continuity.episodes import MAX_EXCHANGE_CHARS, MAX_NAME_CHARS, MAX_TURN_CHARS
from core.continuity.threads import (
    MAX_TITLE_CHARS,
    _thread_by_title,
    as_thread_id,
    clean_title,
)
from core.model.errors import InvalidParams
from core.model.text import single_line
from core.policy.field_screening import Statements, screen_field, screen_label
from core.policy.sanitize import neutralize
from core.policy.screening import strip_controls
from core.storage import audit
from core.storage.audit import Action
from core.storage.fresh_ids import NEXT_EXCHANGE_SEQ
from core.storage.fts import text_grams

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore


def imported_thread_id(source: str, conversation_id: str) -> str:
    """The thread a source's conversation is filed under, the same on every import."""
    digest = hashlib.sha256(f"{source}\x00{conversation_id}".encode()).hexdigest()
    return f"thr-{digest[:12]}"


def turn_key(source_key: str) -> str:
    """The ``turn`` stored for a source's message id (hashed if it is too long)."""
    key = single_line(source_key)
    if len(key) <= MAX_TURN_CHARS - 4:  # room for a part suffix
        return key
    return "sha-" + hashlib.sha256(source_key.encode()).hexdigest()[:32]


def thread_exists(store: GroupStore, thread_id: str) -> bool:
    return store.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is not None


def known_turns(store: GroupStore, thread_id: str) -> set[str]:
    """The turn ids already filed under ``thread_id``."""
    return {
        r[0]
        for r in store.execute(
            "SELECT turn FROM exchanges WHERE thread_id = ? AND turn IS NOT NULL", (thread_id,)
        )
    }


def screen_title(title: str, fallback: str, known: tuple[str, ...]) -> tuple[str, int]:
    """A conversation's title as a thread title: one line, secrets cut, markers made inert.

    Returns:
        The title and how many secrets were cut from it.
    """
    # Screened as sent, then made one line and cut: a token cut in two is no longer one.
    screened = screen_field(title, "title", statements=Statements.REDACT, known=known)
    text, _ = neutralize(single_line(screened.text))
    try:
        return clean_title(text[:MAX_TITLE_CHARS]), len(screened.redacted)
    except InvalidParams:  # empty, or shaped like a thread id
        return fallback, len(screened.redacted)


def ensure_thread(
    store: GroupStore,
    caller: Caller,
    thread_id: str,
    title: str,
    created_at: str,
    updated_at: str,
) -> bool:
    """Create the imported conversation's thread, or move an existing one's activity time
    forward to ``updated_at``. Inside the caller's transaction.

    A title another thread already has gets the conversation's date, then a number.

    Returns:
        Whether the thread was created.
    """
    if thread_exists(store, thread_id):
        store.execute(
            "UPDATE threads SET updated_at = max(updated_at, ?) WHERE id = ?",
            (updated_at, thread_id),
        )
        return False
    wanted, n = title, 1
    while _thread_by_title(store, wanted) is not None:
        n += 1
        suffix = f" ({created_at[:10]})" if n == 2 else f" ({created_at[:10]}, {n - 1})"
        wanted = title[: MAX_TITLE_CHARS - len(suffix)] + suffix
    if as_thread_id(wanted) is not None:
        wanted = f"Imported {wanted}"
    store.execute(
        "INSERT INTO threads (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
        (thread_id, wanted, created_at, updated_at),
    )
    audit.record(
        store, Action.THREAD_CREATE, caller.actor, session_id=caller.session_id, thread=thread_id
    )
    return True


@dataclass(frozen=True)
class ScreenedTurn:
    turn: str
    speaker: str
    text: str
    name: str | None
    said_at: str
    redacted: int


def screen_turn(
    key: str,
    speaker: str,
    text: str,
    name: str | None,
    said_at: str,
    known: tuple[str, ...],
) -> list[ScreenedTurn]:
    """A turn as stored: screened, and in parts of at most 20,000 characters
    (``key``, ``key#2``, …) when it is longer."""
    clean = strip_controls(text)
    screened = screen_field(clean, "text", statements=Statements.REDACT, known=known)
    display = None
    if name:
        label = screen_label(name, "name", known=known)
        display = single_line(label)[:MAX_NAME_CHARS] or None
    parts = _parts(screened.text)
    count = len(screened.redacted)
    return [
        ScreenedTurn(
            key if i == 1 else f"{key}#{i}", speaker, part, display, said_at, count if i == 1 else 0
        )
        for i, part in enumerate(parts, 1)
    ]


def _parts(text: str) -> list[str]:
    parts: list[str] = []
    while len(text) > MAX_EXCHANGE_CHARS:
        cut = text.rfind("\n", 0, MAX_EXCHANGE_CHARS)
        if cut < MAX_EXCHANGE_CHARS // 2:
            cut = text.rfind(" ", 0, MAX_EXCHANGE_CHARS)
        if cut < MAX_EXCHANGE_CHARS // 2:
            cut = MAX_EXCHANGE_CHARS
        parts.append(text[:cut])
        text = text[cut:].lstrip("\n ")
    return [*parts, text] if text.strip() else parts


def insert_turns(
    store: GroupStore,
    caller: Caller,
    thread_id: str,
    turns: Iterable[ScreenedTurn],
    logged_at: str,
) -> None:
    """Insert screened turns under ``thread_id`` in the caller's session (no audit row
    per turn: the import's own audit row counts them)."""
    store.conn.executemany(
        "INSERT INTO exchanges (seq, session_id, thread_id, speaker, text, text_grams, turn, "
        f"created_at, name, said_at) VALUES ({NEXT_EXCHANGE_SEQ}, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                caller.session_id,
                thread_id,
                t.speaker,
                t.text,
                text_grams(t.text),
                t.turn,
                logged_at,
                t.name,
                t.said_at,
            )
            for t in turns
        ],
    )
