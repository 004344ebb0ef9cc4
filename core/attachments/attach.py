"""Attachment receipts: what a file was when an agent saw it, kept as a hash, not a copy.

A receipt (seed 004 §1.6) records a file's SHA-256, size, type, where it came
from and, for text, what it said; the file itself stays where it is. The id is
derived from the hash, so the same bytes are one receipt wherever they turn up,
and every sighting adds a link (thread, session, turn, path, time).

This module makes receipts (:func:`attach`) and verifies them (:func:`verify`,
:func:`verify_all`). What a file is lives in :mod:`core.attachments.filetypes`; the stored
receipts and how they read, in :mod:`core.attachments.receipts`; the steps of a
verification run, in :mod:`core.attachments.verification`.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from core.attachments.filetypes import Kind, NotRegular, OverLimit, classify, digest
from core.attachments.receipts import Link, Receipt, check_thread, clip, get_receipt, human_size
from core.attachments.verification import (
    Progress,
    Verification,
    check_sources,
    pending_checks,
    record_checks,
)
from core.model.changes import Changes
from core.model.entries import iso, utc_now
from core.model.errors import Conflict, InvalidParams, NotFound, TooLarge
from core.model.text import single_line
from core.policy.field_screening import Statements, refuse_secret_name, screen_field
from core.policy.own_files import check_attachable, known_secrets
from core.policy.sanitize import neutralize
from core.policy.screening import audit_redacted
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

#: Largest file a receipt is made for (the seed's per-file ceiling): 15 MiB.
MAX_ATTACHMENT_BYTES: Final = 15 * 1024 * 1024
#: Characters of extracted text kept in the receipt (the rest is still hashed).
MAX_EXTRACT_CHARS: Final = 200_000
#: Bytes decoded for extraction: 4 bytes per character covers any UTF-8 text.
_EXTRACT_BYTES: Final = 4 * MAX_EXTRACT_CHARS
_REDACT_MARGIN: Final = 50_000
MAX_EXCERPT_CHARS: Final = 500
#: An agent's observation is kept as a one-line excerpt of at most this length.
MAX_OBSERVATION_CHARS: Final = 1000
MAX_TURN_CHARS: Final = 200
MAX_PATH_CHARS: Final = 4096


# -- inspecting a file to attach ----------------------------------------------------


@dataclass(frozen=True)
class FileFacts:
    """What a receipt records about one file, secrets already redacted."""

    path: str
    filename: str
    size: int
    sha256: str
    mime_type: str
    kind: Kind
    text: str | None
    excerpt: str
    redacted: tuple[str, ...]
    neutralized: tuple[str, ...]

    @property
    def receipt_id(self) -> str:
        return receipt_id(self.sha256)


def receipt_id(sha256: str) -> str:
    return "att_" + sha256[:16]


def _one_line_excerpt(text: str, limit: int) -> tuple[str, tuple[str, ...]]:
    """A one-line excerpt with injection markers made inert: it is read by agents."""
    # Folding more than the excerpt needs would waste time on a 200,000-character text.
    line, markers = neutralize(single_line(text[: 4 * limit]))
    return clip(line, limit), markers


def _path_error(path: str, exc: OSError) -> InvalidParams | NotFound:
    match exc.errno:
        case errno.ENOENT | errno.ENOTDIR:
            return NotFound(f"no file at {path}", field="path")
        case errno.ELOOP:
            return InvalidParams(
                f"{path} is a symlink loop (too many levels of symbolic links)",
                field="path",
                rule="symlink_loop",
            )
        case errno.EISDIR:
            return _not_file_error(path, "a directory")
        case _:
            reason = (exc.strerror or type(exc).__name__).lower()
            return InvalidParams(f"cannot read {path}: {reason}", field="path", rule="unreadable")


def _not_file_error(path: str, what: str) -> InvalidParams:
    hint = "; attach the files in it one by one" if what == "a directory" else ""
    return InvalidParams(
        f"{path} is {what}, not a regular file{hint}", field="path", rule="not_a_file"
    )


def inspect_file(path: str, *, data_root: Path | None = None) -> FileFacts:
    """Resolve, hash and classify the file at ``path``; nothing is stored.

    Symlinks resolve to their target, whose absolute path is the source path.
    With ``data_root``, Ambry's own files and the keyring's are refused before
    they are read (:func:`core.policy.own_files.check_attachable`).

    Raises:
        NotFound: nothing at ``path``.
        InvalidParams: a directory, FIFO, socket, device, symlink loop, or a
            file that cannot be read (``rule`` says which).
        TooLarge: over :data:`MAX_ATTACHMENT_BYTES`.
        Forbidden: one of Ambry's own files, or a keyring's.
    """
    if "\x00" in path or not path:
        raise InvalidParams("path must be a non-empty path without NUL", field="path")
    try:
        resolved = os.path.realpath(os.path.abspath(path), strict=True)
        if data_root is not None:
            check_attachable(resolved, data_root)
        found = digest(resolved, MAX_ATTACHMENT_BYTES, _EXTRACT_BYTES)
    except OSError as exc:
        raise _path_error(path, exc) from None
    except NotRegular as exc:
        raise _not_file_error(path, exc.what) from None
    except OverLimit as exc:
        raise TooLarge(
            f"{path} is {human_size(exc.size)} ({exc.size:,} bytes); receipts are made for "
            f"files up to {human_size(MAX_ATTACHMENT_BYTES)} ({MAX_ATTACHMENT_BYTES:,} bytes)",
            field="path",
            limit=MAX_ATTACHMENT_BYTES,
            size=exc.size,
        ) from None
    filename = os.path.basename(resolved)
    complete = found.size <= len(found.head)
    mime, kind, text = classify(filename, found.head, complete)
    redacted: tuple[str, ...] = ()
    neutralized: tuple[str, ...] = ()
    excerpt = ""
    if text is not None:
        # Redact past the cut, so a secret straddling it is caught whole before it is cut.
        # A file's credential statements (an .env, a notes file) lose their values;
        # refusing the whole file would lose the receipt too.
        result = screen_field(
            text[: MAX_EXTRACT_CHARS + _REDACT_MARGIN],
            "text",
            statements=Statements.REDACT,
            known=known_secrets(data_root) if data_root is not None else (),
        )
        text, redacted = result.text[:MAX_EXTRACT_CHARS], result.redacted
        excerpt, neutralized = _one_line_excerpt(text, MAX_EXCERPT_CHARS)
    return FileFacts(
        resolved,
        filename,
        found.size,
        found.sha256,
        mime,
        kind,
        text,
        excerpt,
        redacted,
        neutralized,
    )


def prepare_observation(
    text: str, *, known: tuple[str, ...] = ()
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The agent's observation as stored: redacted, inert, one line, clipped.

    Returns:
        The excerpt, the redacted pattern names and the neutralized marker names.

    Raises:
        Refused: the observation states a credential.
    """
    # Screened whole, then folded onto one line and cut: a secret straddling a cut
    # would leave a piece of itself that no longer looks like one.
    result = screen_field(text, "observation", known=known)
    excerpt, markers = _one_line_excerpt(single_line(result.text), MAX_OBSERVATION_CHARS)
    return excerpt, result.redacted, markers


# -- attaching ------------------------------------------------------------------------


@dataclass(frozen=True)
class AttachOutcome:
    receipt: Receipt
    #: False when the same bytes already had a receipt, which got another link.
    created: bool
    link: Link
    changes: Changes
    #: Pattern names of the secrets cut out of the observation and turn given.
    redacted: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"receipt": self.receipt.to_dict(), "created": self.created, **_link(self.link)}


def _link(link: Link) -> dict[str, Any]:
    return {"link_id": link.id, "thread_id": link.thread_id, "turn": link.turn}


def attach(
    service: Workspace,
    caller: Caller,
    path: str,
    *,
    thread: str | None = None,
    turn: str | None = None,
    observation: str = "",
) -> AttachOutcome:
    """Record a receipt for the file at ``path`` (or link the existing one) and audit it.

    The file is hashed before the write transaction starts, so a big file never
    holds the database lock.

    Args:
        service: the service whose store and listeners are used.
        caller: the session the link is recorded for.
        path: the file; relative paths resolve against the current directory.
        thread: the thread the file was seen in; default: the session's thread.
        turn: the caller's id for the conversation turn, if it has one.
        observation: what the agent made of the file; kept as an excerpt.

    Raises:
        NotFound: no file at ``path``, or no thread ``thread``.
        InvalidParams: not a regular readable file, or ``turn`` too long.
        TooLarge: over :data:`MAX_ATTACHMENT_BYTES`.
        Conflict: another file's hash shares the 64-bit id (practically never).
    """
    _check_turn(turn)
    facts = inspect_file(path, data_root=service.data_dir.root)
    return record_receipt(service, caller, facts, thread=thread, turn=turn, observation=observation)


def _check_turn(turn: str | None) -> None:
    if turn is not None and len(turn) > MAX_TURN_CHARS:
        raise InvalidParams(
            f"turn must be at most {MAX_TURN_CHARS} characters", field="turn", rule="maxLength"
        )


def record_receipt(
    service: Workspace,
    caller: Caller,
    facts: FileFacts,
    *,
    thread: str | None = None,
    turn: str | None = None,
    observation: str = "",
) -> AttachOutcome:
    """:func:`attach` for a file already inspected (the desktop hashes off the GUI thread).

    Raises:
        NotFound: no thread ``thread``.
        InvalidParams: ``turn`` too long.
        Conflict: another file's hash shares the 64-bit id (practically never).
    """
    _check_turn(turn)
    root = service.data_dir.root
    check_attachable(facts.path, root)
    refuse_secret_name(facts.path, "path")
    known = known_secrets(root)
    facts = _without_known(facts, known)
    obs, obs_redacted, obs_neutralized = prepare_observation(observation, known=known)
    turn_redacted: tuple[str, ...] = ()
    if turn is not None:
        screened = screen_field(turn, "turn", statements=Statements.REDACT, known=known)
        turn, turn_redacted = screened.text, screened.redacted
    store = service.store_for(caller.group)
    with store.transaction():
        receipt, created, link = write_receipt(
            store,
            caller,
            facts,
            thread=thread,
            turn=turn,
            observation=obs,
            now=iso(utc_now()),
            screened=(obs_redacted, obs_neutralized),
        )
    changes = service.emit(Changes(group=store.group, attachments=True, audit=True))
    return AttachOutcome(receipt, created, link, changes, obs_redacted + turn_redacted)


def write_receipt(
    store: GroupStore,
    caller: Caller,
    facts: FileFacts,
    *,
    thread: str | None,
    turn: str | None,
    observation: str,
    now: str,
    screened: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
) -> tuple[Receipt, bool, Link]:
    """Insert (or refresh) the receipt for ``facts`` and link this sighting, audited,
    inside the caller's transaction; ``facts`` and ``observation`` are already screened.

    Returns:
        The receipt, whether it was created, and the new link.
    """
    rid = facts.receipt_id
    if thread is None:
        thread = _session_thread(store, caller.session_id)
    else:
        check_thread(store, thread)
    existing = store.execute(
        "SELECT sha256 FROM attachment_receipts WHERE id = ?", (rid,)
    ).fetchone()
    if existing is not None and existing[0] != facts.sha256:
        raise Conflict(f"receipt id {rid} already belongs to other bytes", field="path")
    columns = (
        facts.kind.value,
        facts.filename,
        facts.mime_type,
        facts.size,
        facts.path,
        now,
        facts.text,
        facts.excerpt,
    )
    obs = observation
    if existing is None:
        store.execute(
            "INSERT INTO attachment_receipts (kind, filename, mime_type, size, source_path, "
            "checked_at, extracted_text, excerpt, observation, id, sha256, created_at, "
            "updated_at, source_status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'verified')",
            (*columns, obs, rid, facts.sha256, now, now),
        )
    else:
        # Same bytes seen again: the receipt now describes this sighting.
        store.execute(
            "UPDATE attachment_receipts SET kind = ?, filename = ?, mime_type = ?, size = ?, "
            "source_path = ?, checked_at = ?, extracted_text = ?, excerpt = ?, "
            "observation = CASE WHEN ? = '' THEN observation ELSE ? END, "
            "source_status = 'verified', updated_at = ? WHERE id = ?",
            (*columns, obs, obs, now, rid),
        )
    store.execute(
        "INSERT INTO attachment_receipt_turns "
        "(receipt_id, thread_id, session_id, turn, source_path, observation, linked_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (rid, thread, caller.session_id, turn, facts.path, obs, now),
    )
    link_id = int(store.conn.last_insert_rowid())
    link = Link(link_id, rid, thread, caller.session_id, turn, facts.path, obs, now)
    _audit_attach(store, caller, facts, existing is None, *screened)
    return get_receipt(store, rid), existing is None, link


def _without_known(facts: FileFacts, known: tuple[str, ...]) -> FileFacts:
    """``facts`` with the agent token cut out of its text (a copy of the token file)."""
    if facts.text is None or not any(k in facts.text for k in known):
        return facts
    screened = screen_field(facts.text, "text", statements=Statements.REDACT, known=known)
    excerpt, _ = _one_line_excerpt(screened.text, MAX_EXCERPT_CHARS)
    return replace(
        facts, text=screened.text, excerpt=excerpt, redacted=facts.redacted + screened.redacted
    )


def _session_thread(store: GroupStore, session_id: str) -> str | None:
    row = store.execute("SELECT thread_id FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return row[0] if row else None


def _audit_attach(
    store: GroupStore,
    caller: Caller,
    facts: FileFacts,
    created: bool,
    obs_redacted: tuple[str, ...],
    obs_neutralized: tuple[str, ...],
) -> None:
    ids = [facts.receipt_id]
    audit.record(
        store,
        Action.ATTACH,
        caller.actor,
        session_id=caller.session_id,
        entry_ids=ids,
        size=facts.size,
        kind=facts.kind.value,
        mime_type=facts.mime_type,
        created=created,
    )
    audit_redacted(store, caller, facts.redacted + obs_redacted, entry_ids=ids)
    neutralized = facts.neutralized + obs_neutralized
    if neutralized:
        audit.record(
            store,
            Action.NEUTRALIZED,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=ids,
            count=len(neutralized),
            markers=sorted(set(neutralized)),
        )


# -- verifying ----------------------------------------------------------------------


def verify(service: Workspace, caller: Caller, rid: str) -> Verification:
    """Hash one receipt's source again and record what was found.

    Raises:
        NotFound: no receipt ``rid``.
    """
    return verify_all(service, caller, ids=[rid])[0]


def verify_all(
    service: Workspace,
    caller: Caller,
    ids: Sequence[str] | None = None,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Verification]:
    """Verify the receipts ``ids`` (default: all) and record the results in one write.

    A GUI that must not block runs the three steps itself: :func:`pending_checks`
    and :func:`record_checks` on the store's thread, :func:`check_sources` on a
    worker.
    """
    store = service.store_for(caller.group)
    checks = pending_checks(store, ids)
    results = check_sources(checks, progress, should_stop)
    if results:
        record_checks(service, caller, results)
    return results
