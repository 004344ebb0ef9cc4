"""What the importers of other tools' files produce, and the helpers they share.

Each source (:mod:`~core.portability.claude_export`, :mod:`~core.portability.chatgpt_export`,
:mod:`~core.portability.mcp_memory`, :mod:`~core.portability.markdown_notes`) turns its
file into a stream of :class:`Conversation` (a thread of turns) and :class:`NoteFile`
(memories from one file) values, checking each record as it goes: a malformed record
raises :class:`~core.model.errors.InvalidParams` naming the record (line, or index and
id) and what is wrong. Nothing here writes; :mod:`core.portability.history_import` does.

Chat exports are read as a stream (``ijson``), one conversation at a time, so a file of
hundreds of megabytes never has to fit in memory.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Any

import ijson

from core.model.decoding import utf8_stream
from core.model.entries import MAX_TAG_CHARS, EntryType, iso, utc_now
from core.model.errors import InvalidParams
from core.model.times import LATEST_AHEAD
from core.policy.field_screening import Statements, screen_field


class SourceKind(StrEnum):
    """The formats ``ambry import --from`` reads."""

    CLAUDE = "claude"
    CHATGPT = "chatgpt"
    MCP_MEMORY = "mcp-memory"
    MARKDOWN = "markdown"


@dataclass(frozen=True)
class Turn:
    """One turn of an imported conversation.

    Attributes:
        key: the source's id for the message (stored as the exchange's ``turn``), which
            is how a newer export of the same conversation adds only its new turns.
        speaker: ``user`` or ``assistant``.
        at: when it was said, ISO 8601 UTC, or None when the source has no time.
    """

    key: str
    speaker: str
    text: str
    name: str | None
    at: str | None


@dataclass(frozen=True)
class Conversation:
    """One conversation: it becomes a thread, its turns exchanges."""

    source_id: str
    title: str
    created_at: str | None
    updated_at: str | None
    turns: tuple[Turn, ...]
    #: Where it is in the file, for messages ("conversation 12 (id 3f2a…)").
    where: str


@dataclass(frozen=True)
class Note:
    """One memory to import: it goes through the write policy like an agent's store."""

    entry_type: EntryType
    content: str
    tags: tuple[str, ...]
    where: str


@dataclass(frozen=True)
class NoteFile:
    """The memories read from one file; ``receipt`` says whether the file gets a receipt."""

    path: Path
    notes: tuple[Note, ...]
    receipt: bool


Record = Conversation | NoteFile
#: ``progress(done, total)`` in bytes of the file (or files) read so far.
ByteProgress = Callable[[int, int], None]


def parse_time(value: Any, where: str) -> str | None:
    """An ISO 8601 string or Unix seconds (ChatGPT) as Ambry's UTC time, None for null."""
    if value is None or value == "":
        return None
    at: datetime | None = None
    try:
        if isinstance(value, int | float) and not isinstance(value, bool):
            at = datetime.fromtimestamp(float(value), UTC)
        elif isinstance(value, str):
            at = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            at = at if at.tzinfo is not None else at.replace(tzinfo=UTC)
    except (ValueError, OverflowError, OSError):
        pass
    if at is None:
        raise InvalidParams(
            f"{where}: {value!r} is not a time (expected ISO 8601 or Unix seconds)", rule="format"
        )
    if at > utc_now() + LATEST_AHEAD:
        # A turn dated years ahead would stay the thread's latest, and "today", for years.
        raise InvalidParams(
            f"{where}: {value!r} is more than a day in the future; check the export's clock",
            rule="maximum",
        )
    return iso(at)


def text_field(obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        got = "missing" if key not in obj else f"a {type(value).__name__}"
        raise InvalidParams(f"{where}: {key} must be a string ({got})", field=key)
    return value


def holds_secret(text: str) -> bool:
    """Whether ``text``, as the file has it, holds a secret, a possible secret or a
    credential statement.

    A reader that rewrites what it reads (underscores read as spaces, a tag cut to
    its limit) does so only to text for which this is false: rewritten, ``ghp_1ZA0…``
    reads ``ghp 1ZA0…``, which no screening recognises. Text that holds one goes to
    the write path as sent, whose screening redacts and counts it as for any write.
    """
    found = screen_field(text, "text", statements=Statements.REDACT)
    return bool(found.redacted or found.possible)


def fit_tag(name: str) -> str:
    """``name`` cut to a tag's length; one that holds a secret is never cut (a cut
    token is no longer recognised as one) but passed whole for the write to drop, or
    left out here when too long to be a tag at all."""
    if holds_secret(name):
        return name.strip() if len(name.strip()) <= MAX_TAG_CHARS else ""
    return name[:MAX_TAG_CHARS].strip()


def short(ident: str) -> str:
    return ident if len(ident) <= 12 else ident[:8] + "…"


@contextmanager
def open_export(path: Path, member: str) -> Iterator[tuple[IO[bytes], int]]:
    """The export's JSON file as a binary stream and its size: ``path`` itself, or
    ``member`` inside it when ``path`` is the zip file the service sent."""
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == member]
                if not names:
                    raise InvalidParams(
                        f"{path.name} is a zip file without {member}; give the export's "
                        f"{member} or the zip file it came in",
                        field="file",
                    )
                info = archive.getinfo(names[0])
                with archive.open(info) as stream:
                    yield stream, info.file_size
            return
        with path.open("rb") as handle:
            yield handle, path.stat().st_size
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror or exc}", field="file") from exc


def stream_array(
    path: Path, member: str, what: str, progress: ByteProgress | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each object of the JSON array in ``path`` (or in ``member`` of its zip), one at a time.

    Raises:
        InvalidParams: not JSON, not an array, or an item that is not an object; the
            message names the item (1-based) or the byte where the JSON broke.
    """
    with open_export(path, member) as (raw, size):
        stream = utf8_stream(raw, path.name)
        head = _first_byte(stream)
        if head != b"[":
            raise InvalidParams(
                f"{path.name}: expected a JSON array of {what}s (the export's {member}); "
                f"it starts with {_first_char(head, stream)!r}",
                field="file",
            )
        buffered = io.BufferedReader(_Prefixed(head, stream), buffer_size=1 << 16)
        number = 0
        last = ""
        try:
            for number, item in enumerate(ijson.items(buffered, "item", use_float=True), 1):
                if not isinstance(item, dict):
                    raise InvalidParams(
                        f"{path.name}: {what} {number} is a {type(item).__name__}, not an object"
                    )
                last = _label(item)
                yield number, item
                if progress is not None:
                    progress(min(raw.tell(), size), size)
        except ijson.JSONError as exc:
            # Counted from 1, as a person counts: before the first one ends, it is "in".
            place = f"after {what} {number}{last}" if number else f"in {what} 1 (the first)"
            raise InvalidParams(
                f"{path.name}: not valid JSON {place}, near byte {raw.tell():,} "
                f"({_detail(exc)}); the file may be cut short or edited",
                field="file",
            ) from None
        if progress is not None:
            progress(size, size)


def _label(item: dict[str, Any]) -> str:
    """`` ('Trip planning')``, or `` (id 0b6a1c2e…)`` for a conversation without a title,
    to find it by in the app it came from."""
    title = item.get("title") or item.get("name")
    if isinstance(title, str) and title.strip():
        title = " ".join(title.split())
        return f" ({title if len(title) <= 60 else title[:59] + '…'!r})"
    ident = item.get("uuid") or item.get("conversation_id") or item.get("id")
    return f" (id {short(ident)})" if isinstance(ident, str) and ident else ""


def _detail(exc: Exception) -> str:
    """The parser's first line of what broke (its C backend gives bytes)."""
    text = exc.args[0] if exc.args else ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    lines = str(text).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _first_char(head: bytes, stream: io.BufferedReader) -> str:
    return (head + stream.peek(3)[:3]).decode("utf-8", "ignore")[:1]


def _first_byte(stream: IO[bytes]) -> bytes:
    while True:
        b = stream.read(1)
        if not b or not b.isspace():
            return b


class _Prefixed(io.RawIOBase):
    """``stream`` with ``head`` (already read from it) put back in front."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        if self._head:
            n = len(self._head)
            view[:n] = self._head
            self._head = b""
            return n
        data = self._stream.read(len(view))
        view[: len(data)] = data
        return len(data)


#: What marks each source's file within its first bytes.
_MARKS: tuple[tuple[SourceKind, tuple[bytes, ...]], ...] = (
    (SourceKind.MCP_MEMORY, (b'"entityType"', b'"relationType"')),
    (SourceKind.CLAUDE, (b'"chat_messages"',)),
    (SourceKind.CHATGPT, (b'"mapping"',)),
)
#: How much of a file is read to tell its source.
_SNIFF_BYTES = 64 * 1024


#: How each ``--from`` source is named in a message.
SOURCE_NAMES = {
    SourceKind.CLAUDE: "a Claude export",
    SourceKind.CHATGPT: "a ChatGPT export",
    SourceKind.MCP_MEMORY: "an MCP memory server's file",
    SourceKind.MARKDOWN: "Markdown notes",
}


def looks_like(path: Path) -> SourceKind | None:
    """The ``--from`` source that ``path`` (not an Ambry export) seems to come from, if any."""
    if path.is_dir() or path.suffix.lower() in (".md", ".markdown"):
        return SourceKind.MARKDOWN
    head = _head(path)
    for kind, marks in _MARKS:
        if any(mark in head for mark in marks):
            return kind
    return None


def looks_like_ambry_export(path: Path) -> bool:
    """Whether ``path`` begins as ``ambry export`` writes its files (a header line)."""
    first = _head(path).lstrip().split(b"\n", 1)[0]
    return first.startswith(b"{") and b'"ambry-export"' in first


def _head(path: Path) -> bytes:
    """The file's first bytes as UTF-8 (UTF-16 converted), or nothing if it cannot be read."""
    try:
        if path.is_dir():
            return b""
        with open_export(path, "conversations.json") as (stream, _size):
            head = stream.read(_SNIFF_BYTES)
    except (InvalidParams, OSError, zipfile.BadZipFile):
        return b""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return head.decode("utf-16", "ignore").encode()
    return head.removeprefix(codecs.BOM_UTF8)
