"""Threads: persistent project scopes that outlive sessions (seed 004 §3).

A session may name a thread, and its exchanges and handoffs are filed under
it. A thread is found by its id or by its title, case-insensitively; opening a
new title creates the thread.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from core.memory.writing import check_rate, writing
from core.model.changes import Changes
from core.model.entries import Actor, iso, utc_now
from core.model.errors import Conflict, Forbidden, InvalidParams, NotFound
from core.model.text import check_unicode
from core.policy.agent_text import audit_neutralized, neutralize_agent_text
from core.policy.screening import CONTROLS, audit_redacted, screen
from core.policy.secrets import redact
from core.storage import audit
from core.storage.audit import Action
from core.storage.scrub import THREAD_TITLES, scrub
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

#: ``thr-`` and 12 hex digits of a uuid4.
THREAD_ID: Final = re.compile(r"thr-[0-9a-f]{12}\Z")
MAX_TITLE_CHARS: Final = 200


def new_thread_id() -> str:
    return f"thr-{uuid.uuid4().hex[:12]}"


def as_thread_id(ref: object) -> str | None:
    """The thread id ``ref`` spells, in any case and with outer spaces, else None.

    Ids are made in lower case, and titles match case-insensitively, so
    ``THR-C19485B36247`` names the thread ``thr-c19485b36247``: it is looked up as
    that id, and no title may take that shape.
    """
    if not isinstance(ref, str):
        return None
    text = ref.strip()
    # ASCII only: str.lower() maps a few other letters (the Kelvin sign) into ASCII.
    if not text.isascii():
        return None
    text = text.lower()
    return text if THREAD_ID.fullmatch(text) else None


# -- values ----------------------------------------------------------------------


@dataclass(frozen=True)
class Thread:
    """A thread with what the thread list shows about it."""

    id: str
    title: str
    created_at: str
    updated_at: str
    #: Current handoff version, None while the thread has no handoff.
    handoff_version: int | None = None
    compaction_count: int = 0
    exchange_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "handoff_version": self.handoff_version,
            "compaction_count": self.compaction_count,
            "exchange_count": self.exchange_count,
        }


# -- titles --------------------------------------------------------------------------

# Line breaks that str.splitlines() honours; a title must have none.
_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def clean_title(title: object, field: str = "title") -> str:
    """A thread title normalised for storage and lookup, or :class:`InvalidParams`.

    Outer whitespace goes, inner runs of spaces and tabs become one space and the
    text is NFC-normalised, so titles that look the same are the same.
    """
    if not isinstance(title, str):
        raise InvalidParams(f"{field} must be a string", field=field, rule="type")
    check_unicode(title, field)
    text = unicodedata.normalize("NFC", title).strip()
    if any(ch in _BREAKS for ch in text):
        raise InvalidParams(f"{field} must be a single line", field=field, rule="pattern")
    if CONTROLS.search(text.replace("\t", " ")):
        raise InvalidParams(
            f"{field} must not contain control characters", field=field, rule="pattern"
        )
    text = " ".join(text.split())
    if not text:
        raise InvalidParams(f"{field} must not be empty", field=field, rule="minLength")
    if len(text) > MAX_TITLE_CHARS:
        raise InvalidParams(
            f"{field} must be at most {MAX_TITLE_CHARS} characters", field=field, rule="maxLength"
        )
    if as_thread_id(text) is not None:
        raise InvalidParams(id_shaped_title(field, text), field=field, rule="pattern")
    return text


def id_shaped_title(field: str, text: str) -> str:
    """Why ``text`` cannot be a title: a thread is found by id or title, and a title
    shaped like an id would be looked up as an id and never found by its title."""
    return (
        f"{field} {text!r} has the shape of a thread id (thr- and 12 hex digits, in upper "
        "or lower case), which only thread ids may have: choose another title"
    )


def not_a_thread_id(field: str, text: str) -> str:
    """Why ``text`` is refused where only a thread id goes, and what to pass instead.

    The value is not quoted: a refusal is logged, and a title can hold anything.
    """
    said = f"{field} must be a thread id, thr- and 12 hex digits as thread_list shows it"
    if text.strip()[:4].casefold() == "thr-":
        return said
    return said + "; to open a thread by its title, pass it as title"


# -- threads ------------------------------------------------------------------------

_THREAD_SELECT = """
    SELECT t.id, t.title, t.created_at, t.updated_at, h.version,
           coalesce(h.compaction_count, 0),
           (SELECT count(*) FROM exchanges x WHERE x.thread_id = t.id)
    FROM threads t
    LEFT JOIN thread_handoffs h ON h.thread_id = t.id
         AND h.version = (SELECT max(version) FROM thread_handoffs WHERE thread_id = t.id)
"""


def _thread(row: Sequence[Any]) -> Thread:
    return Thread(row[0], row[1], row[2], row[3], row[4], int(row[5]), int(row[6]))


def thread_by_id(store: GroupStore, thread_id: str) -> Thread | None:
    row = store.execute(_THREAD_SELECT + " WHERE t.id = ?", (thread_id,)).fetchone()
    return None if row is None else _thread(row)


def _thread_by_title(store: GroupStore, title: str) -> Thread | None:
    row = store.execute(_THREAD_SELECT + " WHERE t.title = ? COLLATE NOCASE", (title,)).fetchone()
    if row is not None:
        return _thread(row)
    # NOCASE folds ASCII only ("Straße" and "STRASSE" are one title to a
    # person); threads are few, so compare the full case fold here.
    folded = title.casefold()
    for thread_id, other in store.execute("SELECT id, title FROM threads"):
        if other.casefold() == folded:
            return thread_by_id(store, thread_id)
    return None


def require_thread(store: GroupStore, thread_id: str) -> Thread:
    thread = thread_by_id(store, thread_id)
    if thread is None:
        raise NotFound(f"no thread {thread_id} in group {store.group}", field="thread")
    return thread


def list_threads(service: Workspace, group: str, limit: int = 500, offset: int = 0) -> list[Thread]:
    """Threads, most recently active first, from the ``offset``-th on."""
    rows = service.store_for(group).execute(
        _THREAD_SELECT + " ORDER BY t.updated_at DESC, t.id LIMIT ? OFFSET ?",
        (max(1, limit), max(0, offset)),
    )
    return [_thread(r) for r in rows]


def count_threads(service: Workspace, group: str) -> int:
    """How many threads the group has (``list_threads`` returns a page of them)."""
    return int(service.store_for(group).execute("SELECT count(*) FROM threads").get)


def get_thread(service: Workspace, group: str, thread_id: str) -> Thread:
    return require_thread(service.store_for(group), thread_id)


#: What a title that names no thread is told, for an agent (the CLI says its own).
OPENING_CREATES: Final = "opening a thread by its title creates it"


def find_thread(
    service: Workspace, group: str, ref: str, *, if_new: str = OPENING_CREATES
) -> Thread:
    """The thread ``ref`` names: an id (``thr-...``) or a title, case-insensitively.

    Args:
        if_new: how to create a thread of that title, said when there is none.

    Raises:
        NotFound: no such thread.
    """
    return resolve_thread(service.store_for(group), ref, if_new=if_new)


def resolve_thread(store: GroupStore, ref: str, *, if_new: str = OPENING_CREATES) -> Thread:
    """:func:`find_thread` in one group's store: every ``thread`` param resolves here.

    Raises:
        NotFound: no such thread (``field`` is ``thread``).
        InvalidParams: ``ref`` cannot be a title (empty, several lines, too long).
    """
    thread_id = as_thread_id(ref)
    if thread_id is not None:
        return require_thread(store, thread_id)
    title = redact(clean_title(ref, "thread")).text
    thread = _thread_by_title(store, title)
    if thread is None and title[:4].casefold() == "thr-":
        # Meant as an id, mistyped or cut short: say so, not that no title matched.
        raise NotFound(
            f"no thread with id {title} in group {store.group} (a thread id is thr- and 12 "
            "hex digits, as the list of threads shows it), nor one titled so",
            field="thread",
        )
    if thread is None:
        raise NotFound(
            f"no thread titled {title!r} in group {store.group}; {if_new}",
            field="thread",
        )
    return thread


@dataclass(frozen=True)
class Opened:
    """What opening a thread by its title did."""

    thread: Thread
    created: bool
    #: Pattern names of the secrets cut out of the title given, one per secret.
    redacted: tuple[str, ...] = ()


def open_thread(
    service: Workspace,
    caller: Caller,
    *,
    title: str | None = None,
    thread_id: str | None = None,
) -> tuple[Thread, bool]:
    """The thread with ``thread_id``, or the one titled ``title``, created if new.

    Returns:
        The thread and whether this call created it.
    """
    if (title is None) == (thread_id is None):
        raise InvalidParams("give either a title or an id, not both", field="title", rule="oneOf")
    if thread_id is not None:
        return require_thread(service.store_for(caller.group), thread_id), False
    assert title is not None
    opened = open_titled(service, caller, title)
    return opened.thread, opened.created


def open_titled(service: Workspace, caller: Caller, title: str) -> Opened:
    """The thread titled ``title`` (secrets cut out), created if new, and what was cut."""
    store = service.store_for(caller.group)
    text, redacted = screen(service, store, caller, clean_title(title), "title")
    # A title is a heading in the brief: an agent's cannot pose as an instruction.
    text, markers = neutralize_agent_text(caller, text)
    now = iso(utc_now())
    with writing(service, store, caller):
        found = _thread_by_title(store, text)
        if found is not None:
            return Opened(found, False, redacted)
        check_rate(store, caller, "threads", service.config)
        new_id = new_thread_id()
        store.execute(
            "INSERT INTO threads (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
            (new_id, text, now, now),
        )
        audit.record(
            store, Action.THREAD_CREATE, caller.actor, session_id=caller.session_id, thread=new_id
        )
        audit_redacted(store, caller, redacted, thread=new_id)
        audit_neutralized(store, caller, markers, thread=new_id)
        thread = require_thread(store, new_id)
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return Opened(thread, True, redacted)


@dataclass(frozen=True)
class Renamed:
    """What renaming a thread did."""

    thread: Thread
    #: Pattern names of the secrets cut out of the title given, one per secret.
    redacted: tuple[str, ...] = ()


def rename_thread(service: Workspace, caller: Caller, thread_id: str, title: str) -> Renamed:
    """Give a thread a new title (the person's action; agents get :class:`Forbidden`)."""
    if caller.actor is Actor.AGENT:
        raise Forbidden("renaming a thread is for the person, in the app or the CLI")
    store = service.store_for(caller.group)
    text, redacted = screen(service, store, caller, clean_title(title), "title")
    with store.transaction():
        require_thread(store, thread_id)
        other = _thread_by_title(store, text)
        if other is not None and other.id != thread_id:
            raise Conflict(
                f"thread {other.id} already has the title {other.title!r}; choose another",
                field="title",
                thread=other.id,
            )
        store.execute(
            "UPDATE threads SET title = ?, updated_at = ? WHERE id = ?",
            (text, iso(utc_now()), thread_id),
        )
        audit.record(
            store,
            Action.THREAD_RENAME,
            caller.actor,
            session_id=caller.session_id,
            thread=thread_id,
        )
        audit_redacted(store, caller, redacted, thread=thread_id)
        thread = require_thread(store, thread_id)
    # The old title leaves the statistics' samples and the log, as a deleted one does.
    scrub(store, (), analyse=THREAD_TITLES)
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return Renamed(thread, redacted)


def delete_thread(service: Workspace, caller: Caller, thread_id: str) -> Changes:
    """Delete a thread with its handoffs; its exchanges stay, no longer filed under it.

    The person's action; agents get :class:`Forbidden`.
    """
    if caller.actor is Actor.AGENT:
        raise Forbidden("deleting a thread is for the person, in the app or the CLI")
    store = service.store_for(caller.group)
    with store.transaction():
        require_thread(store, thread_id)
        versions = int(
            store.execute(
                "SELECT count(*) FROM thread_handoffs WHERE thread_id = ?", (thread_id,)
            ).get
        )
        # Foreign keys cascade to the handoffs and unlink sessions and exchanges.
        store.execute("DELETE FROM threads WHERE id = ?", (thread_id,))
        audit.record(
            store,
            Action.THREAD_DELETE,
            caller.actor,
            session_id=caller.session_id,
            count=versions,
            thread=thread_id,
        )
    # The handoffs' text leaves the disk, the claims' quotes of them, and the title
    # the statistics sampled.
    scrub(store, (), analyse=THREAD_TITLES)
    return service.emit(Changes(group=store.group, threads=True, sessions=True, audit=True))


# -- sessions and threads --------------------------------------------------------------


def session_thread(service: Workspace, caller: Caller) -> str | None:
    """The thread the caller's session is in (the sessions table is the source of truth)."""
    return thread_of_session(service.store_for(caller.group), caller.session_id)


def thread_of_session(store: GroupStore, session_id: str) -> str | None:
    row = store.execute("SELECT thread_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise NotFound(f"no session {session_id} in group {store.group}", field="session")
    return None if row[0] is None else str(row[0])


def set_session_thread(service: Workspace, caller: Caller, thread_id: str | None) -> Caller:
    """File the session (and what it logs and hands off from now on) under a thread.

    Returns:
        ``caller`` with ``thread_id`` set, for the front end to keep as its session.
        Writes and deliveries read the sessions table, which this updates; the
        brief reads ``caller.thread_id``, so a preview can name any thread.
    """
    store = service.store_for(caller.group)
    with store.transaction():
        if thread_id is not None:
            require_thread(store, thread_id)
        store.execute(
            "UPDATE sessions SET thread_id = ? WHERE id = ?", (thread_id, caller.session_id)
        )
        if not store.conn.changes():
            raise NotFound(f"no session {caller.session_id} in group {store.group}")
        if thread_id is not None:
            store.execute(
                "UPDATE threads SET updated_at = ? WHERE id = ?", (iso(utc_now()), thread_id)
            )
        audit.record(
            store, Action.THREAD_OPEN, caller.actor, session_id=caller.session_id, thread=thread_id
        )
    service.emit(Changes(group=store.group, threads=True, sessions=True, audit=True))
    return replace(caller, thread_id=thread_id)
