"""Attachment receipts: what a file was when an agent saw it, kept as a hash, not a copy.

A receipt (seed 004 §1.6) records a file's SHA-256, size, type, where it came
from and, for text, what it said; the file itself stays where it is. The id is
derived from the hash, so the same bytes are one receipt wherever they turn up,
and every sighting adds a link (thread, session, turn, path, time).

Verification hashes the source again and records whether it is still the file
that was seen. It never rewrites the recorded hash: a changed or missing source
shows up as a verification gap, never as current.

File work (stat, open, hash) touches no database, so a GUI can run
:func:`check_sources` on a worker thread between :func:`pending_checks` and
:func:`record_checks`, which run on the thread that owns the store.
"""

from __future__ import annotations

import codecs
import errno
import hashlib
import mimetypes
import os
import re
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from core import audit
from core.audit import Action
from core.brief import single_line
from core.changes import Changes
from core.errors import Conflict, InvalidParams, NotFound, TooLarge
from core.model import iso, parse_iso, utc_now
from core.sanitize import neutralize
from core.secrets import redact

if TYPE_CHECKING:
    from core.service import Caller, MemoryService
    from core.store import GroupStore

#: Largest file a receipt is made for (the seed's per-file ceiling): 15 MiB.
MAX_ATTACHMENT_BYTES: Final = 15 * 1024 * 1024
#: Bytes hashed per read; big enough to amortise the syscall, small enough to stay cheap.
CHUNK_BYTES: Final = 1 << 20
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

RECEIPT_ID = re.compile(r"\batt_[0-9a-f]{16}\b")

_OPEN_FLAGS: Final = (
    os.O_RDONLY
    # A FIFO swapped in after the stat must not block the open.
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class Kind(StrEnum):
    TEXT = "text"
    DOCUMENT = "document"
    IMAGE = "image"
    BINARY = "binary"


class SourceState(StrEnum):
    """What the last check found at the receipt's source path."""

    VERIFIED = "verified"  # same bytes as recorded
    CHANGED = "changed"  # a file is there, with other bytes
    MISSING = "missing"  # nothing is there
    UNREADABLE = "unreadable"  # something is there that cannot be read as a file

    @property
    def is_gap(self) -> bool:
        match self:
            case SourceState.VERIFIED:
                return False
            case SourceState.CHANGED | SourceState.MISSING | SourceState.UNREADABLE:
                return True


# -- reading files ---------------------------------------------------------------


class _NotRegular(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class _OverLimit(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


@dataclass(frozen=True)
class _Digest:
    sha256: str
    size: int
    head: bytes


def _not_regular(mode: int) -> str | None:
    """None for a regular file, else what the path is instead."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _digest(path: str, limit: int, keep: int) -> _Digest:
    """Hash ``path`` in chunks, keeping its first ``keep`` bytes.

    The type is checked with ``stat`` before opening (opening a FIFO or a
    device can block or have side effects) and again with ``fstat`` on the
    open descriptor, as the path may have been swapped in between.

    Raises:
        OSError: from the file system (missing, permission, I/O, loop).
        _NotRegular: the path is a directory, FIFO, socket or device.
        _OverLimit: the file holds more than ``limit`` bytes; reading stops
            one chunk past the limit, whatever the file's real size.
    """
    before = os.stat(path)
    if what := _not_regular(before.st_mode):
        raise _NotRegular(what)
    if before.st_size > limit:
        raise _OverLimit(before.st_size)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        fh = open(fd, "rb", buffering=0, closefd=True)  # noqa: SIM115 (closed by the with below)
    except BaseException:
        os.close(fd)
        raise
    with fh:
        if what := _not_regular(os.fstat(fd).st_mode):
            raise _NotRegular(what)
        sha = hashlib.sha256()
        head = bytearray()
        buf = bytearray(CHUNK_BYTES)
        view = memoryview(buf)
        total = 0
        while total <= limit:
            n = fh.readinto(buf)
            if not n:  # 0 at end of file; None cannot happen on a regular file
                break
            sha.update(view[:n])
            if len(head) < keep:
                head += view[: min(n, keep - len(head))]
            total += n
        view.release()
    if total > limit:
        raise _OverLimit(total)
    return _Digest(sha.hexdigest(), total, bytes(head))


# -- what a file is ----------------------------------------------------------------

_MAGIC: Final[tuple[tuple[bytes, str], ...]] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
    (b"\x1f\x8b", "application/gzip"),
)

# Containers whose extension says which document they hold.
_ZIP_DOCUMENTS: Final = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".epub": "application/epub+zip",
}
_OLE_DOCUMENTS: Final = {
    ".doc": "application/msword",
    ".xls": "application/vnd.ms-excel",
    ".ppt": "application/vnd.ms-powerpoint",
}

# Extensions the platform's MIME tables miss or get wrong (".ts" is not a video here).
_TEXT_EXTENSIONS: Final = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".log": "text/plain",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".rst": "text/x-rst",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".xml": "application/xml",
    ".html": "text/html",
    ".css": "text/css",
    ".sql": "application/sql",
    ".py": "text/x-python",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".jsx": "text/javascript",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
    ".java": "text/x-java",
    ".kt": "text/x-kotlin",
    ".swift": "text/x-swift",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".cc": "text/x-c++",
    ".cpp": "text/x-c++",
    ".hpp": "text/x-c++",
    ".cs": "text/x-csharp",
    ".rb": "text/x-ruby",
    ".php": "text/x-php",
    ".sh": "text/x-shellscript",
    ".bash": "text/x-shellscript",
    ".lua": "text/x-lua",
    ".tex": "text/x-tex",
}
_TEXT_APPLICATION: Final = frozenset(
    {"application/json", "application/jsonl", "application/yaml", "application/toml"}
    | {"application/xml", "application/sql", "application/javascript", "application/x-sh"}
)
_DOCUMENT_TYPES: Final = frozenset(
    {"application/pdf", "application/rtf", "application/epub+zip", "application/x-ole-storage"}
)
_DOCUMENT_PREFIXES: Final = (
    "application/vnd.openxmlformats-officedocument.",
    "application/vnd.oasis.opendocument.",
    "application/vnd.ms-",
    "application/msword",
)
# Every byte except the control characters that do not occur in text, for counting those.
_NOT_CONTROLS: Final = bytes(b for b in range(256) if b >= 0x20 or b in b"\t\n\r\f\b\x1b")


def _sniff(head: bytes, ext: str) -> str | None:
    """The MIME type magic bytes prove, refined by the extension for containers."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            if mime == "application/zip":
                return _ZIP_DOCUMENTS.get(ext, mime)
            if mime == "application/x-ole-storage":
                return _OLE_DOCUMENTS.get(ext, mime)
            return mime
    return None


def _is_text_type(mime: str) -> bool:
    return (
        mime.startswith("text/")
        or mime in _TEXT_APPLICATION
        or (mime.startswith("application/") and mime.endswith(("+json", "+xml")))
    )


def kind_of(mime: str) -> Kind:
    """The kind a MIME type belongs to."""
    if mime.startswith("image/"):
        return Kind.IMAGE
    if _is_text_type(mime):
        return Kind.TEXT
    if mime in _DOCUMENT_TYPES or mime.startswith(_DOCUMENT_PREFIXES):
        return Kind.DOCUMENT
    return Kind.BINARY


def _decode(head: bytes, complete: bool) -> str | None:
    """``head`` as text, or None when it does not look like text.

    UTF-8 (with or without a BOM) and BOM-marked UTF-16 are tried first; other
    bytes are taken as Windows-1252 (then Latin-1) when control characters are
    rare, which covers most legacy text. An incomplete character at the end of
    a cut-off ``head`` is dropped rather than counted as an error.
    """
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return codecs.getincrementaldecoder("utf-16")("replace").decode(head, complete)
    if b"\x00" in head:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8-sig")().decode(head, complete)
    except UnicodeDecodeError:
        pass
    controls = len(head.translate(None, _NOT_CONTROLS))
    if controls > len(head) // 100:
        return None
    try:
        return head.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
        return head.decode("latin-1")


def classify(filename: str, head: bytes, complete: bool) -> tuple[str, Kind, str | None]:
    """MIME type, kind and (for text) the decoded text of a file.

    Magic bytes win over the extension, so a PNG named ``.txt`` is an image;
    a file claiming a text type whose bytes are not text is binary.
    """
    ext = os.path.splitext(filename)[1].lower()
    mime = _sniff(head, ext)
    if mime is None:
        mime = _TEXT_EXTENSIONS.get(ext) or mimetypes.guess_type(filename, strict=False)[0]
        if mime is None or _is_text_type(mime):
            text = _decode(head, complete)
            if text is None:
                return "application/octet-stream", Kind.BINARY, None
            return mime or "text/plain", Kind.TEXT, text
    return mime, kind_of(mime), None


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


def _clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


def _one_line_excerpt(text: str, limit: int) -> tuple[str, tuple[str, ...]]:
    """A one-line excerpt with injection markers made inert: it is read by agents."""
    # Folding more than the excerpt needs would waste time on a 200,000-character text.
    line, markers = neutralize(single_line(text[: 4 * limit]))
    return _clip(line, limit), markers


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


def inspect_file(path: str) -> FileFacts:
    """Resolve, hash and classify the file at ``path``; nothing is stored.

    Symlinks resolve to their target, whose absolute path is the source path.

    Raises:
        NotFound: nothing at ``path``.
        InvalidParams: a directory, FIFO, socket, device, symlink loop, or a
            file that cannot be read (``rule`` says which).
        TooLarge: over :data:`MAX_ATTACHMENT_BYTES`.
    """
    if "\x00" in path or not path:
        raise InvalidParams("path must be a non-empty path without NUL", field="path")
    try:
        resolved = os.path.realpath(os.path.abspath(path), strict=True)
        found = _digest(resolved, MAX_ATTACHMENT_BYTES, _EXTRACT_BYTES)
    except OSError as exc:
        raise _path_error(path, exc) from None
    except _NotRegular as exc:
        raise _not_file_error(path, exc.what) from None
    except _OverLimit as exc:
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
        result = redact(text[: MAX_EXTRACT_CHARS + _REDACT_MARGIN])
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


def prepare_observation(text: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The agent's observation as stored: redacted, inert, one line, clipped.

    Returns:
        The excerpt, the redacted pattern names and the neutralized marker names.
    """
    result = redact(text[: 4 * MAX_OBSERVATION_CHARS])
    excerpt, markers = _one_line_excerpt(result.text, MAX_OBSERVATION_CHARS)
    return excerpt, result.redacted, markers


# -- checking a source again --------------------------------------------------------


@dataclass(frozen=True)
class SourceCheck:
    """What verifying one receipt needs; plain values, so any thread can use it."""

    receipt_id: str
    path: str
    sha256: str
    size: int
    state: SourceState
    #: The receipt's newest link when the check was planned (see :func:`record_checks`).
    basis: int = 0


@dataclass(frozen=True)
class Verification:
    """The outcome of hashing one source again."""

    receipt_id: str
    state: SourceState
    previous: SourceState
    checked_at: str
    #: Why a source is unreadable, in a few words ("permission denied").
    reason: str | None = None
    basis: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.receipt_id,
            "state": self.state.value,
            "previous_state": self.previous.value,
            "checked_at": self.checked_at,
            "reason": self.reason,
        }


def check_source(check: SourceCheck) -> Verification:
    """Hash the source of one receipt again and say what is there now.

    Reads at most the recorded size plus one chunk, so a source that grew huge
    costs no more than one that did not.
    """
    reason: str | None = None
    try:
        found = _digest(check.path, check.size, 0)
    except (FileNotFoundError, NotADirectoryError):
        state = SourceState.MISSING
    except OSError as exc:  # permission, I/O error, symlink loop
        state = SourceState.UNREADABLE
        reason = (exc.strerror or type(exc).__name__).lower()
    except _NotRegular as exc:
        state, reason = SourceState.UNREADABLE, f"now {exc.what}"
    except _OverLimit:
        state = SourceState.CHANGED
    else:
        same = found.size == check.size and found.sha256 == check.sha256
        state = SourceState.VERIFIED if same else SourceState.CHANGED
    return Verification(check.receipt_id, state, check.state, iso(utc_now()), reason, check.basis)


Progress = Callable[[int, int], None]


def check_sources(
    checks: Sequence[SourceCheck],
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Verification]:
    """Check many sources in order; safe off the store's thread (no database).

    Args:
        checks: from :func:`pending_checks`.
        progress: called with ``(done, total)`` after each source.
        should_stop: polled before each source; True ends the run early and
            the results so far are returned.
    """
    results: list[Verification] = []
    total = len(checks)
    for check in checks:
        if should_stop is not None and should_stop():
            break
        results.append(check_source(check))
        if progress is not None:
            progress(len(results), total)
    return results


# -- receipts in the store ---------------------------------------------------------


@dataclass(frozen=True)
class Receipt:
    id: str
    sha256: str
    kind: Kind
    filename: str
    mime_type: str
    size: int
    source_path: str
    state: SourceState
    checked_at: str
    excerpt: str
    observation: str
    created_at: str
    #: When the file was last attached: the recorded facts describe it as of then.
    updated_at: str
    link_count: int
    last_linked_at: str | None

    @property
    def state_line(self) -> str:
        return state_line(self)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "state_line": self.state_line}


@dataclass(frozen=True)
class Link:
    """One sighting of a receipt's bytes."""

    id: int
    receipt_id: str
    thread_id: str | None
    session_id: str | None
    turn: str | None
    source_path: str
    observation: str
    linked_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_RECEIPT_SELECT = (
    "SELECT r.id, r.sha256, r.kind, r.filename, r.mime_type, r.size, r.source_path, "
    "r.source_status, r.checked_at, r.excerpt, r.observation, r.created_at, r.updated_at, "
    "(SELECT count(*) FROM attachment_receipt_turns t WHERE t.receipt_id = r.id), "
    "(SELECT max(linked_at) FROM attachment_receipt_turns t WHERE t.receipt_id = r.id) "
    "FROM attachment_receipts r"
)


def _receipt(row: Sequence[Any]) -> Receipt:
    (
        rid,
        sha,
        kind,
        name,
        mime,
        size,
        path,
        state,
        checked,
        excerpt,
        obs,
        created,
        updated,
        links,
        last,
    ) = row[:15]
    return Receipt(
        rid,
        sha,
        Kind(kind),
        name,
        mime,
        int(size),
        path,
        SourceState(state),
        checked,
        excerpt,
        obs,
        created,
        updated,
        int(links),
        last,
    )


def get_receipt(store: GroupStore, rid: str) -> Receipt:
    """One receipt.

    Raises:
        NotFound: no receipt ``rid`` in this group.
    """
    row = store.execute(f"{_RECEIPT_SELECT} WHERE r.id = ?", (rid,)).fetchone()
    if row is None:
        raise NotFound(f"no attachment receipt {rid} in group {store.group}", field="id")
    return _receipt(row)


def get_receipts(store: GroupStore, ids: Iterable[str]) -> dict[str, Receipt]:
    """The receipts among ``ids`` that exist, by id."""
    ids = list(dict.fromkeys(ids))
    found: dict[str, Receipt] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in store.execute(f"{_RECEIPT_SELECT} WHERE r.id IN ({marks})", chunk):
            found[row[0]] = _receipt(row)
    return found


def list_receipts(
    store: GroupStore, thread_id: str | None = None, limit: int = 50, offset: int = 0
) -> list[Receipt]:
    """Receipts, most recently linked first; with ``thread_id``, those seen in that thread.

    The order comes from the links alone: reading a receipt's later columns
    walks past its extracted text, so only the rows on the page are read.

    Raises:
        NotFound: ``thread_id`` names no thread.
    """
    # Link ids grow with every insert, so they order sightings even within one millisecond.
    if thread_id is None:
        sql = (
            "SELECT r.id FROM attachment_receipts r "
            "LEFT JOIN attachment_receipt_turns t ON t.receipt_id = r.id "
            "GROUP BY r.id ORDER BY max(t.id) DESC, r.id LIMIT ? OFFSET ?"
        )
        params: tuple[Any, ...] = (limit, offset)
    else:
        _check_thread(store, thread_id)
        sql = (
            "SELECT receipt_id FROM attachment_receipt_turns WHERE thread_id = ? "
            "GROUP BY receipt_id ORDER BY max(id) DESC LIMIT ? OFFSET ?"
        )
        params = (thread_id, limit, offset)
    ids = [row[0] for row in store.execute(sql, params)]
    found = get_receipts(store, ids)
    return [found[rid] for rid in ids if rid in found]


def links(store: GroupStore, rid: str) -> list[Link]:
    """Every sighting of a receipt, oldest first."""
    rows = store.execute(
        "SELECT id, receipt_id, thread_id, session_id, turn, source_path, observation, "
        "linked_at FROM attachment_receipt_turns WHERE receipt_id = ? ORDER BY linked_at, id",
        (rid,),
    )
    return [Link(*row) for row in rows]


def extracted_text(store: GroupStore, rid: str) -> str | None:
    """The full extracted text of a text receipt (None for other kinds)."""
    row = store.execute(
        "SELECT extracted_text FROM attachment_receipts WHERE id = ?", (rid,)
    ).fetchone()
    if row is None:
        raise NotFound(f"no attachment receipt {rid} in group {store.group}", field="id")
    text: str | None = row[0]
    return text


def _check_thread(store: GroupStore, thread_id: str) -> None:
    if store.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
        raise NotFound(f"no thread {thread_id} in group {store.group}", field="thread")


# -- attaching ------------------------------------------------------------------------


@dataclass(frozen=True)
class AttachOutcome:
    receipt: Receipt
    #: False when the same bytes already had a receipt, which got another link.
    created: bool
    link: Link
    changes: Changes

    def to_dict(self) -> dict[str, Any]:
        return {"receipt": self.receipt.to_dict(), "created": self.created, **_link(self.link)}


def _link(link: Link) -> dict[str, Any]:
    return {"link_id": link.id, "thread_id": link.thread_id, "turn": link.turn}


def attach(
    service: MemoryService,
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
    if turn is not None and len(turn) > MAX_TURN_CHARS:
        raise InvalidParams(
            f"turn must be at most {MAX_TURN_CHARS} characters", field="turn", rule="maxLength"
        )
    facts = inspect_file(path)
    obs, obs_redacted, obs_neutralized = prepare_observation(observation)
    store = service.store_for(caller.group)
    rid, now = facts.receipt_id, iso(utc_now())
    with store.transaction():
        if thread is None:
            thread = _session_thread(store, caller.session_id)
        else:
            _check_thread(store, thread)
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
        _audit_attach(store, caller, facts, existing is None, obs_redacted, obs_neutralized)
        receipt = get_receipt(store, rid)
    changes = service._emit(Changes(group=store.group, attachments=True, audit=True))
    return AttachOutcome(receipt, existing is None, link, changes)


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
    redacted = facts.redacted + obs_redacted
    if redacted:
        audit.record(
            store,
            Action.SECRET_REDACTED,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=ids,
            count=len(redacted),
            patterns=sorted(set(redacted)),
        )
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


_NEWEST_LINK: Final = (
    "(SELECT coalesce(max(id), 0) FROM attachment_receipt_turns WHERE receipt_id = {rid})"
)


def pending_checks(store: GroupStore, ids: Sequence[str] | None = None) -> list[SourceCheck]:
    """What to verify: the receipts ``ids`` (in that order), or every receipt.

    Raises:
        NotFound: one of ``ids`` names no receipt.
    """
    sql = (
        "SELECT id, source_path, sha256, size, source_status, "
        f"{_NEWEST_LINK.format(rid='r.id')} FROM attachment_receipts r"
    )

    def check(r: Sequence[Any]) -> SourceCheck:
        return SourceCheck(r[0], r[1], r[2], int(r[3]), SourceState(r[4]), int(r[5]))

    if ids is None:
        return [check(r) for r in store.execute(f"{sql} ORDER BY id")]
    found: dict[str, SourceCheck] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for r in store.execute(f"{sql} WHERE id IN ({marks})", chunk):
            found[r[0]] = check(r)
    for rid in unique:
        if rid not in found:
            raise NotFound(f"no attachment receipt {rid} in group {store.group}", field="id")
    return [found[rid] for rid in unique]


def record_checks(
    service: MemoryService, caller: Caller, results: Sequence[Verification]
) -> Changes:
    """Store the states found by :func:`check_sources`, audited as one action.

    A result planned before the receipt's newest link (the file was attached
    again while a long run was under way, maybe from another path) is skipped
    rather than undoing what that attach recorded. Link ids, unlike times to
    the millisecond, cannot tie. The state is cheap to recompute, so the write
    skips the fsync.
    """
    store = service.store_for(caller.group)
    counts = {state.value: 0 for state in SourceState}
    for r in results:
        counts[r.state.value] += 1
    moved = [r.receipt_id for r in results if r.state is not r.previous]
    with store.relaxed_transaction():
        for r in results:
            store.execute(
                "UPDATE attachment_receipts SET source_status = ?, checked_at = ? "
                f"WHERE id = ? AND {_NEWEST_LINK.format(rid='?')} = ?",
                (r.state.value, r.checked_at, r.receipt_id, r.receipt_id, r.basis),
            )
        audit.record(
            store,
            Action.VERIFY,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=moved,
            count=len(results),
            **counts,
        )
    return service._emit(Changes(group=store.group, attachments=True, audit=True))


def verify(service: MemoryService, caller: Caller, rid: str) -> Verification:
    """Hash one receipt's source again and record what was found.

    Raises:
        NotFound: no receipt ``rid``.
    """
    return verify_all(service, caller, ids=[rid])[0]


def verify_all(
    service: MemoryService,
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


# -- how a receipt reads in the brief and in search --------------------------------


def _day(stamp: str) -> str:
    return parse_iso(stamp).strftime("%Y-%m-%d")


def _minute(stamp: str) -> str:
    return parse_iso(stamp).strftime("%Y-%m-%d %H:%M UTC")


def human_size(size: int) -> str:
    """``size`` in binary units, as file managers show it ("1.5 KiB")."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def state_line(receipt: Receipt) -> str:
    """The receipt's verification state in plain words; a gap says what may be stale."""
    checked = _minute(receipt.checked_at)
    what = "excerpt" if receipt.excerpt else "observation" if receipt.observation else "receipt"
    match receipt.state:
        case SourceState.VERIFIED:
            return f"source verified {checked}"
        case SourceState.CHANGED:
            return (
                f"verification gap: source changed since {_day(receipt.updated_at)} "
                f"— {what} may be stale (checked {checked})"
            )
        case SourceState.MISSING:
            return (
                f"verification gap: source missing since {_day(receipt.updated_at)} "
                f"(moved or deleted) — {what} may be stale (checked {checked})"
            )
        case SourceState.UNREADABLE:
            return (
                f"verification gap: source unreadable (checked {checked}) "
                f"— {what} cannot be confirmed"
            )


def receipt_states(store: GroupStore, ids: Iterable[str]) -> dict[str, str]:
    """The state line of each receipt among ``ids`` that exists (for search results)."""
    return {rid: r.state_line for rid, r in get_receipts(store, ids).items()}


def cited_ids(text: str) -> list[str]:
    """The receipt ids a text mentions (``att_`` and 16 hex digits), in order, once each."""
    return list(dict.fromkeys(RECEIPT_ID.findall(text)))


_BRIEF_EXCERPT_CHARS: Final = 200


def receipt_brief_section(
    store: GroupStore, thread_id: str | None, limit: int = 5
) -> tuple[str, str] | None:
    """The brief's "Attachments" section: recent receipts and their verification state.

    Lists the receipts seen in ``thread_id`` (or anywhere, when None), most
    recent first. States are as last recorded; verify first for fresh ones.

    Returns:
        ``("Attachments", markdown)``, or None when there is nothing to list.
    """
    try:
        receipts = list_receipts(store, thread_id, limit)
    except NotFound:  # a thread deleted since the session began
        receipts = []
    if not receipts:
        return None
    lines = [
        "Files seen in earlier turns, kept as receipts (hash and excerpt), not copies. "
        "Re-read a file before relying on its details."
    ]
    for r in receipts:
        state = r.state_line
        mark = "⚠ " if r.state.is_gap else ""
        name, _ = neutralize(single_line(r.filename))
        lines.append(f"- `{r.id}` {name} ({r.kind}, {human_size(r.size)}) — {mark}{state}")
        if r.excerpt:
            lines.append(f'  - excerpt: "{_clip(r.excerpt, _BRIEF_EXCERPT_CHARS)}"')
        if r.observation:
            lines.append(f'  - last observation: "{_clip(r.observation, _BRIEF_EXCERPT_CHARS)}"')
    return "Attachments", "\n".join(lines)
