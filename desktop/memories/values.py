"""How an entry reads in a table: columns, labels, ages. Plain values, no Qt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from core.model.entries import EntryType, MemoryEntry, Privacy, SourceType, Status, Trust
from core.model.text import one_line
from core.model.times import stored_time
from core.storage.workspace import LOCKED_MASK, MISSING_KEY_MASK, SECRET_MASK

#: A column: its header and how to turn an entry into its text at a given time.
Cell = Callable[[MemoryEntry, datetime], str]


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    cell: Cell
    #: Numbers read better right-aligned.
    numeric: bool = False


@dataclass(frozen=True)
class RowView:
    """One loaded row: the entry and its cell texts, computed once when it loads."""

    entry: MemoryEntry
    cells: tuple[str, ...]
    #: Superseded and stale entries are shown dimmed: kept, but not in the brief.
    muted: bool

    @classmethod
    def build(cls, entry: MemoryEntry, columns: Sequence[Column], now: datetime) -> RowView:
        return cls(
            entry=entry,
            cells=tuple(c.cell(entry, now) for c in columns),
            muted=entry.is_superseded or entry.stale,
        )


@dataclass(frozen=True)
class Draft:
    """What the person asks the editor to save.

    ``content`` is ``None`` when the text stays hidden (a secret not revealed):
    the new version keeps the stored content, which never reaches the screen.
    """

    entry_type: EntryType
    content: str | None
    tags: tuple[str, ...]
    privacy: Privacy = Privacy.PUBLIC


def is_masked(entry: MemoryEntry) -> bool:
    """A secret whose content reads as the mask: it needs an explicit reveal."""
    return entry.privacy is Privacy.SECRET and entry.content == SECRET_MASK


def is_locked(entry: MemoryEntry) -> bool:
    """Encrypted content that cannot be read here (no keyring, or no key in it)."""
    return entry.privacy is not Privacy.PUBLIC and entry.content in (LOCKED_MASK, MISSING_KEY_MASK)


def privacy_help(privacy: Privacy) -> str:
    """One sentence on what a privacy level means, for the editor."""
    match privacy:
        case Privacy.PUBLIC:
            return "Plain text: searchable and in the brief."
        case Privacy.PRIVATE:
            return (
                "Encrypted on disk; only its tags are searchable. In the brief only if "
                "Settings includes private memories."
            )
        case Privacy.SECRET:
            return (
                "Encrypted, never given to agents, and hidden here until you click "
                "Reveal (each reveal is in the audit log)."
            )


def parse_tags(text: str) -> tuple[str, ...]:
    """Comma-separated tags as the person typed them, blanks dropped."""
    return tuple(t.strip() for t in text.split(",") if t.strip())


def local_time(timestamp: str | None) -> str:
    if not timestamp:
        return "—"
    when = stored_time(timestamp, "time")
    # Not a time: an older Ambry's import kept what a file said.
    return "unknown" if when is None else when.astimezone().strftime("%Y-%m-%d %H:%M")


def info_text(entry: MemoryEntry) -> str:
    """Where an entry came from and how sure Ambry is of it, for the detail pane."""
    stored = entry.confidence
    lines = [
        f"Source: {source_text(entry)}",
        f"Confidence: {confidence_of(entry):.2f} now ({stored:.2f} when last seen)",
        f"Created {local_time(entry.provenance.created_at)}, "
        f"last seen {local_time(entry.last_seen_at)}",
        f"Id: {entry.id}",
    ]
    if entry.review_reason:
        lines.insert(0, f"Awaiting review: {entry.review_reason}")
    return "\n".join(lines)


def status_label(entry: MemoryEntry) -> str:
    if entry.is_superseded:
        label = "superseded"
    elif entry.status is Status.CANDIDATE:
        label = "candidate"
    elif entry.stale:
        label = "stale"
    else:
        label = "active"
    return f"{label} · pinned" if entry.pinned else label


def source_name(kind: SourceType) -> str:
    match kind:
        case SourceType.USER_MESSAGE:
            return "user"
        case SourceType.TOOL_OUTPUT:
            return "tool"
        case SourceType.WEB_CONTENT:
            return "web"
        case SourceType.AI_INFERENCE:
            return "inferred"
        case SourceType.EXPLICIT_SAVE:
            return "saved"
        case SourceType.OPERATOR:
            return "you"


def source_label(entry: MemoryEntry) -> str:
    """Who the memory came from, and its trust unless high: ``web · low``."""
    kind = source_name(entry.source.type)
    return kind if entry.source.trust is Trust.HIGH else f"{kind} · {entry.source.trust}"


def source_text(entry: MemoryEntry) -> str:
    """The long form for detail panes: ``web (low trust)``."""
    return f"{source_name(entry.source.type)} ({entry.source.trust} trust)"


def confidence_of(entry: MemoryEntry) -> float:
    if entry.effective_confidence is None:
        return entry.confidence
    return entry.effective_confidence


def age_label(timestamp: str, now: datetime) -> str:
    """A compact age: ``now``, ``5m``, ``3h``, ``12d``, ``4mo``, ``2y``."""
    when = stored_time(timestamp, "created_at")
    if when is None:
        return "?"
    seconds = max(0.0, (now - when).total_seconds())
    if seconds < 60:
        return "now"
    minutes = seconds / 60
    if minutes < 60:
        return f"{int(minutes)}m"
    hours = minutes / 60
    if hours < 24:
        return f"{int(hours)}h"
    days = hours / 24
    if days < 60:
        return f"{int(days)}d"
    # Calendar months, where the person is: 25 November to 25 November is a year.
    try:
        start, end = when.astimezone(), now.astimezone()
    except (OverflowError, ValueError, OSError):  # year 1 has no local time west of UTC
        start, end = when, now
    months = (end.year - start.year) * 12 + end.month - start.month
    if (end.day, end.time()) < (start.day, start.time()):
        months -= 1
    return f"{months}mo" if months < 12 else f"{months // 12}y"


def tags_label(entry: MemoryEntry) -> str:
    return ", ".join(entry.tags)


def count_text(total: int, partial: bool, searching: bool, by_meaning: int = 0) -> str:
    """The list's count: ``1,000+ memories`` while the rest are listed, ``12 memories
    match, 3 by meaning`` for a search that merged in matches by meaning."""
    noun = "memory" if total == 1 else "memories"
    more = "+" if partial else ""
    found = " match" if searching else ""
    meant = f", {by_meaning} by meaning" if by_meaning else ""
    return f"{total:,}{more} {noun}{found}{meant}"


def detail_line(entry: MemoryEntry) -> str:
    """The second line of a memory's row: ``#work #lyon  ·  web · low``."""
    tags = "  ".join(f"#{t}" for t in entry.tags)
    return f"{tags}  ·  {source_label(entry)}" if tags else source_label(entry)


MEMORY_COLUMNS: tuple[Column, ...] = (
    Column("type", "Type", lambda e, _now: e.type.value),
    Column("content", "Content", lambda e, _now: one_line(e.content)),
    Column("tags", "Tags", lambda e, _now: tags_label(e)),
    Column("source", "Source", lambda e, _now: source_label(e)),
    Column("confidence", "Conf.", lambda e, _now: f"{confidence_of(e):.2f}", numeric=True),
    Column("age", "Age", lambda e, now: age_label(e.provenance.created_at, now), numeric=True),
    Column("status", "Status", lambda e, _now: status_label(e)),
)

CANDIDATE_COLUMNS: tuple[Column, ...] = (
    Column("type", "Type", lambda e, _now: e.type.value),
    Column("content", "Content", lambda e, _now: one_line(e.content)),
    Column("reason", "Why review", lambda e, _now: e.review_reason or ""),
    Column("source", "Source", lambda e, _now: source_label(e)),
    Column("age", "Age", lambda e, now: age_label(e.provenance.created_at, now), numeric=True),
)
