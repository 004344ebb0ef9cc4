"""How an entry reads in a table: columns, labels, ages. Plain values, no Qt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from core.model import MemoryEntry, SourceType, Status, Trust, parse_iso

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


def one_line(text: str, limit: int = 300) -> str:
    """Content on one line for a table cell; the editor shows the full text."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


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
    seconds = max(0.0, (now - parse_iso(timestamp)).total_seconds())
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
    if days < 730:
        return f"{int(days / 30.44)}mo"
    return f"{int(days / 365.25)}y"


def tags_label(entry: MemoryEntry) -> str:
    return ", ".join(entry.tags)


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
