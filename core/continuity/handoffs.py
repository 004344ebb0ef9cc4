"""Thread handoffs: one current markdown document per thread, with its history.

Each write adds a version (the highest is current) and nothing consumes it on
read, so an overwrite can be undone by restoring an earlier version, which
itself becomes a new version. The last :data:`MAX_HANDOFF_VERSIONS` versions
are kept. A forget of a topic deletes the versions that mention it
(:func:`forget_versions`); a version's number is never given to other text.
Session handoffs, delivered once, are in :mod:`core.continuity.session_handoffs`.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from core.continuity.handoff_text import clean_markdown
from core.continuity.threads import require_thread
from core.memory.writing import check_rate, writing
from core.model.changes import Changes
from core.model.config import atomic_write
from core.model.entries import Actor, iso, utc_now
from core.model.errors import Conflict, NotFound, StorageError
from core.policy.agent_text import audit_neutralized, neutralize_agent_text
from core.policy.screening import audit_redacted, screen
from core.storage import audit
from core.storage.audit import Action
from core.storage.file_safety import file_target
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

#: Versions kept per thread; older ones are pruned when a new one is written.
MAX_HANDOFF_VERSIONS: Final = 100


@dataclass(frozen=True)
class ThreadHandoff:
    """One version of a thread's handoff."""

    thread_id: str
    version: int
    markdown: str
    session_id: str | None
    #: Actor of the session that wrote it (agent, operator, system), if known.
    author: str | None
    #: How many times an agent has rewritten the handoff up to this version.
    compaction_count: int
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "version": self.version,
            "markdown": self.markdown,
            "session_id": self.session_id,
            "author": self.author,
            "compaction_count": self.compaction_count,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class HandoffWrite:
    """The outcome of writing or restoring a thread handoff."""

    handoff: ThreadHandoff
    #: False when the text equalled the current version, which was kept as is.
    created: bool
    #: Pattern names of the secrets replaced by ``[SECRET_REDACTED]``.
    redacted: tuple[str, ...] = ()
    #: The version this write replaced unseen: another session wrote it and the
    #: writer gave no ``base_version``, so nothing showed it had been read.
    replaced: ThreadHandoff | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "thread_id": self.handoff.thread_id,
            "version": self.handoff.version,
            "compaction_count": self.handoff.compaction_count,
            "created": self.created,
            "redacted": len(self.redacted),
            "redacted_kinds": dict(sorted(Counter(self.redacted).items())),
        }
        if self.replaced is not None:
            old = self.replaced
            out["replaced"] = {
                "version": old.version,
                "author": old.author,
                "session_id": old.session_id,
                "created_at": old.created_at,
            }
            out["note"] = replaced_note(old)
        return out


def replaced_note(old: ThreadHandoff) -> str:
    """Tells a writer without ``base_version`` whose text it replaced, and where it is."""
    who = {"operator": "the person", "agent": "another agent session"}.get(
        old.author or "", "another session"
    )
    return (
        f"this replaced version {old.version}, written by {who} at {old.created_at}, "
        "without a base_version to show it had been read; it is kept as an earlier "
        f"version (handoff_read with version {old.version}): merge anything it had "
        "that this lacks, and pass base_version next time"
    )


# -- thread handoffs --------------------------------------------------------------------

_HANDOFF_SELECT = """
    SELECT h.thread_id, h.version, h.markdown, h.session_id, s.actor, h.compaction_count,
           h.created_at
    FROM thread_handoffs h LEFT JOIN sessions s ON s.id = h.session_id
"""


def _handoff(row: Sequence[Any]) -> ThreadHandoff:
    return ThreadHandoff(row[0], int(row[1]), row[2], row[3], row[4], int(row[5]), row[6])


def current_handoff(store: GroupStore, thread_id: str) -> ThreadHandoff | None:
    row = store.execute(
        _HANDOFF_SELECT + " WHERE h.thread_id = ? ORDER BY h.version DESC LIMIT 1", (thread_id,)
    ).fetchone()
    return None if row is None else _handoff(row)


def read_handoff(
    service: Workspace, group: str, thread_id: str, version: int | None = None
) -> ThreadHandoff | None:
    """The current handoff (or ``version``) of a thread; None if it has none yet.

    Raises:
        NotFound: no such thread, or no such version (pruned, forgotten or never
            written); the message gives the current version.
    """
    store = service.store_for(group)
    require_thread(store, thread_id)
    if version is None:
        return current_handoff(store, thread_id)
    row = store.execute(
        _HANDOFF_SELECT + " WHERE h.thread_id = ? AND h.version = ?", (thread_id, version)
    ).fetchone()
    if row is None:
        # Said for agents and people alike: no front end's command named.
        current = current_handoff(store, thread_id)
        now = (
            ", and no current one"
            if current is None
            else f"; the current one is version {current.version}"
        )
        raise NotFound(
            f"thread {thread_id} has no handoff version {version} (pruned, forgotten or "
            f"never written){now}",
            field="version",
        )
    return _handoff(row)


def handoff_history(service: Workspace, group: str, thread_id: str) -> list[ThreadHandoff]:
    """Every kept version of a thread's handoff, newest first."""
    store = service.store_for(group)
    require_thread(store, thread_id)
    rows = store.execute(
        _HANDOFF_SELECT + " WHERE h.thread_id = ? ORDER BY h.version DESC", (thread_id,)
    )
    return [_handoff(r) for r in rows]


def _forgotten_key(thread_id: str) -> str:
    return f"handoff_forgotten:{thread_id}"


def _forgotten_number(store: GroupStore, thread_id: str) -> int:
    """The number of the thread's newest forgotten version (0: none since the last write)."""
    row = store.execute(
        "SELECT value FROM meta WHERE key = ?", (_forgotten_key(thread_id),)
    ).fetchone()
    return 0 if row is None else int(row[0])


def forget_versions(store: GroupStore, versions: Iterable[tuple[str, int]]) -> None:
    """Delete handoff versions, as ``(thread id, version)``, in the caller's transaction.

    A thread left with earlier versions has the newest of them current again; one
    left with none has no handoff. When a thread's newest version goes, its number
    is kept in ``meta`` and the next write continues after it: a number names one
    text for good, so a claim citing a version never finds other text there, and
    a writer whose ``base_version`` was forgotten is refused, not taken as current.
    """
    for thread_id, version in versions:
        newest = store.execute(
            "SELECT max(version) FROM thread_handoffs WHERE thread_id = ?", (thread_id,)
        ).get
        if newest == version:
            store.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_forgotten_key(thread_id), str(max(version, _forgotten_number(store, thread_id)))),
            )
        store.execute(
            "DELETE FROM thread_handoffs WHERE thread_id = ? AND version = ?", (thread_id, version)
        )


def _insert_version(
    store: GroupStore,
    caller: Caller,
    thread_id: str,
    markdown: str,
    current: ThreadHandoff | None,
    *,
    compaction: bool,
) -> ThreadHandoff:
    at = 0 if current is None else current.version
    version = max(at, _forgotten_number(store, thread_id)) + 1
    count = (0 if current is None else current.compaction_count) + int(compaction)
    now = iso(utc_now())
    store.execute(
        "INSERT INTO thread_handoffs (thread_id, version, markdown, session_id, "
        "compaction_count, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (thread_id, version, markdown, caller.session_id, count, now),
    )
    # The last versions by count: forgotten ones leave gaps in the numbers.
    store.execute(
        "DELETE FROM thread_handoffs WHERE thread_id = :thread AND version <= (SELECT version "
        "FROM thread_handoffs WHERE thread_id = :thread ORDER BY version DESC LIMIT 1 "
        "OFFSET :kept)",
        {"thread": thread_id, "kept": MAX_HANDOFF_VERSIONS},
    )
    # The highest number is in the table again.
    store.execute("DELETE FROM meta WHERE key = ?", (_forgotten_key(thread_id),))
    store.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (now, thread_id))
    written = current_handoff(store, thread_id)
    assert written is not None and written.version == version
    return written


def write_handoff(
    service: Workspace,
    caller: Caller,
    thread_id: str,
    markdown: str,
    *,
    base_version: int | None = None,
) -> HandoffWrite:
    """Overwrite a thread's handoff, keeping the previous text as an earlier version.

    An agent's write counts as one more compaction (the agent folded its context
    into the handoff); the person's edits carry the count forward.

    Args:
        base_version: the version the writer started from (0: none yet). When
            given and no longer current, the write is refused with
            :class:`Conflict` instead of silently discarding the other edit.
            Left out, the write goes ahead; if it replaces a version another
            session wrote, the outcome names that version (``replaced``).
    """
    store = service.store_for(caller.group)
    text, redacted = screen(service, store, caller, clean_markdown(markdown), "markdown")
    text, markers = neutralize_agent_text(caller, text)
    with writing(service, store, caller):
        require_thread(store, thread_id)
        current = current_handoff(store, thread_id)
        at = 0 if current is None else current.version
        if base_version is not None and base_version != at:
            raise Conflict(
                f"the handoff of thread {thread_id} is at version {at}, not {base_version}; "
                "read it again, merge, and write with the new base_version",
                field="base_version",
                current_version=at,
            )
        if current is not None and current.markdown == text:
            return HandoffWrite(current, False, redacted)
        # Another session's text replaced without a base_version to show it was
        # read; the person replacing their own earlier text needs no word of it.
        unseen = (
            current
            if base_version is None
            and current is not None
            and current.session_id != caller.session_id
            and not (caller.actor is Actor.OPERATOR and current.author == Actor.OPERATOR)
            else None
        )
        check_rate(store, caller, "handoffs", service.config)
        handoff = _insert_version(
            store, caller, thread_id, text, current, compaction=caller.actor is Actor.AGENT
        )
        audit.record(
            store,
            Action.HANDOFF_WRITE,
            caller.actor,
            session_id=caller.session_id,
            size=len(text),
            kind="thread",
            thread=thread_id,
            version=handoff.version,
        )
        audit_redacted(store, caller, redacted, thread=thread_id)
        audit_neutralized(store, caller, markers, thread=thread_id)
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return HandoffWrite(handoff, True, redacted, unseen)


def restore_handoff(
    service: Workspace,
    caller: Caller,
    thread_id: str,
    version: int,
    *,
    base_version: int | None = None,
) -> HandoffWrite:
    """Make an earlier version current again, as a new version (so it can be undone too).

    Args:
        base_version: the version that was current when the person chose to
            restore. When given and no longer current, the restore is refused
            with :class:`Conflict`, so it cannot replace a version nobody has seen.
    """
    store = service.store_for(caller.group)
    with store.transaction():
        old = read_handoff(service, caller.group, thread_id, version)
        assert old is not None
        current = current_handoff(store, thread_id)
        at = 0 if current is None else current.version
        if base_version is not None and base_version != at:
            raise Conflict(
                f"the handoff of thread {thread_id} is at version {at}, not {base_version}: "
                f"it was written after you chose to restore version {version}; look at "
                "the newer version, then restore again if you still want to",
                field="base_version",
                current_version=at,
            )
        if current is not None and current.markdown == old.markdown:
            return HandoffWrite(current, False)
        handoff = _insert_version(store, caller, thread_id, old.markdown, current, compaction=False)
        audit.record(
            store,
            Action.HANDOFF_RESTORE,
            caller.actor,
            session_id=caller.session_id,
            size=len(old.markdown),
            thread=thread_id,
            version=handoff.version,
            restored=version,
        )
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return HandoffWrite(handoff, True)


def audit_handoff_read(
    service: Workspace,
    caller: Caller,
    thread_id: str | None,
    handoff: ThreadHandoff | None,
    *,
    session_handoff: int | None = None,
) -> None:
    """Record that the caller read a handoff (metadata only); ``thread_id`` None: a
    thread-less session read its session handoff (``session_handoff``, its id) again."""
    store = service.store_for(caller.group)
    with store.relaxed_transaction():
        audit.record(
            store,
            Action.HANDOFF_READ,
            caller.actor,
            session_id=caller.session_id,
            thread=thread_id,
            version=None if handoff is None else handoff.version,
            # A thread-less session's read of its session handoff says so (the app's
            # audit sentence), with the handoff's id when it took one.
            scope=None if thread_id is not None else "session",
            session_handoff=session_handoff,
        )


def export_handoff(
    service: Workspace,
    caller: Caller,
    thread_id: str,
    path: Path,
    *,
    version: int | None = None,
    instead: str = "choose a file to write the handoff to",
) -> ThreadHandoff:
    """Write a handoff to a markdown file atomically: the old file or the new, never half.

    A file that already exists keeps its permissions; a new one is owner-only. A
    symlink is followed, so the file it points to is replaced, not the link. A
    device, a pipe or a folder at ``path`` is refused (``instead`` ends the refusal
    with what to give), and so is a folder that does not exist.

    Raises:
        NotFound: the thread has no handoff (or no such version).
        InvalidParams: ``path`` is refused; nothing was written.
        StorageError: the file cannot be written; the old one is untouched.
    """
    handoff = read_handoff(service, caller.group, thread_id, version)
    if handoff is None:
        raise NotFound(f"thread {thread_id} has no handoff to export yet", field="thread")
    path = file_target(path.expanduser(), field="path", example="HANDOFF.md", instead=instead)
    try:
        mode = path.stat().st_mode & 0o777 if path.is_file() else 0o600
        atomic_write(path, (handoff.markdown + "\n").encode("utf-8"), mode)
    except OSError as exc:
        raise StorageError(
            f"{path}: cannot write the handoff ({exc.strerror or exc}); the old file, "
            "if any, is unchanged"
        ) from exc
    store = service.store_for(caller.group)
    with store.relaxed_transaction():
        audit.record(
            store,
            Action.HANDOFF_EXPORT,
            caller.actor,
            session_id=caller.session_id,
            size=len(handoff.markdown),
            thread=thread_id,
            version=handoff.version,
        )
    service.emit(Changes(group=store.group, audit=True))
    return handoff


def handoff_diff(old: ThreadHandoff, new: ThreadHandoff) -> str:
    """A unified diff from ``old`` to ``new`` (empty when the texts are equal)."""
    lines = difflib.unified_diff(
        old.markdown.splitlines(),
        new.markdown.splitlines(),
        fromfile=f"version {old.version}",
        tofile=f"version {new.version}",
        lineterm="",
    )
    return "\n".join(lines)
