"""Domain values: memory entries, their enums and search results."""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class EntryType(StrEnum):
    PREFERENCE = "preference"
    FACT = "fact"
    INSTRUCTION = "instruction"
    CONTEXT = "context"
    CORRECTION = "correction"

    @property
    def behavioral(self) -> bool:
        """Behavioral entries change how the agent acts; the brief flags them."""
        match self:
            case EntryType.PREFERENCE | EntryType.INSTRUCTION | EntryType.CORRECTION:
                return True
            case EntryType.FACT | EntryType.CONTEXT:
                return False


class Status(StrEnum):
    ACTIVE = "active"
    #: Awaiting the person's review; never in the brief, hidden from default search.
    CANDIDATE = "candidate"


class Privacy(StrEnum):
    PUBLIC = "public"
    PRIVATE = "private"
    SECRET = "secret"


class SourceType(StrEnum):
    USER_MESSAGE = "user_message"
    TOOL_OUTPUT = "tool_output"
    WEB_CONTENT = "web_content"
    AI_INFERENCE = "ai_inference"
    EXPLICIT_SAVE = "explicit_save"
    OPERATOR = "operator"


class Trust(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class Actor(StrEnum):
    """Who is calling the service."""

    AGENT = "agent"
    OPERATOR = "operator"
    SYSTEM = "system"


ENTRY_TYPES: tuple[str, ...] = tuple(t.value for t in EntryType)
MAX_CONTENT_CHARS = 2000
MAX_TAGS = 10
MAX_TAG_CHARS = 50
MAX_QUERY_CHARS = 500
MAX_SEARCH_LIMIT = 100
#: How far a search can be paged (``offset``): its best 1,100 at most are ranked.
MAX_SEARCH_OFFSET = 1000


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision; sorts as text."""
    u = ts.astimezone(UTC)
    # Not strftime's %Y: it does not pad a year below 1000 on every platform.
    return f"{u.year:04d}-{u:%m-%dT%H:%M:%S}.{u.microsecond // 1000:03d}Z"


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_entry_id() -> str:
    return f"mem-{uuid.uuid4()}"


def new_session_id() -> str:
    return f"sess-{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class Source:
    type: SourceType
    trust: Trust


@dataclass(frozen=True)
class Provenance:
    session_id: str
    group: str
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class MemoryEntry:
    id: str
    type: EntryType
    content: str
    tags: tuple[str, ...]
    status: Status
    superseded_by: str | None
    superseded_at: str | None
    confidence: float
    pinned: bool
    privacy: Privacy
    source: Source
    provenance: Provenance
    review_reason: str | None = None
    last_seen_at: str | None = None
    #: Confidence after staleness decay, as last refreshed (see core.memory.confidence).
    effective_confidence: float | None = None
    #: Decayed below the stale threshold: kept and searchable, but out of the brief.
    stale: bool = False

    @property
    def behavioral(self) -> bool:
        return self.type.behavioral

    @property
    def is_superseded(self) -> bool:
        return self.superseded_by is not None

    def to_dict(self) -> dict[str, Any]:
        """The public JSON shape (protocol, CLI ``--json``, export)."""
        return {
            "id": self.id,
            "type": self.type.value,
            "content": self.content,
            "tags": list(self.tags),
            "behavioral": self.behavioral,
            "status": self.status.value,
            "superseded_by": self.superseded_by,
            "confidence": round(self.confidence, 3),
            "effective_confidence": round(
                self.confidence if self.effective_confidence is None else self.effective_confidence,
                3,
            ),
            "stale": self.stale,
            "pinned": self.pinned,
            "privacy": self.privacy.value,
            "source": {"type": self.source.type.value, "trust": self.source.trust.value},
            "provenance": asdict(self.provenance),
            "review_reason": self.review_reason,
        }


# Not frozen: a search builds twenty of these per call, and a frozen dataclass
# costs three times as much to build. Nothing keeps or mutates them.
@dataclass(slots=True)
class SearchResult:
    """Seed 000's SearchResult, with status fields a person needs to judge it."""

    id: str
    type: str
    content: str
    behavioral: bool
    tags: list[str]
    created_at: str
    relevance_score: float
    status: str = "active"
    superseded_by: str | None = None
    trust: str = "high"
    #: Receipts (``att_…``) the content cites, with their verification state in words.
    receipts: dict[str, str] | None = None
    #: What found or lifted this result: keyword, semantic, recent (core.semantic.hybrid.Signal).
    signals: tuple[str, ...] = ()
    #: Decayed below the stale threshold (:attr:`MemoryEntry.stale`): out of the brief.
    stale: bool = False

    def to_dict(self) -> dict[str, Any]:
        # Built by hand: dataclasses.asdict deep-copies and is the slowest step of a search.
        extra: dict[str, Any] = {"receipts": dict(self.receipts)} if self.receipts else {}
        if self.stale:
            # Only when true: a fresh memory, the usual case, costs an agent no words.
            extra["stale"] = True
        return {
            "score": self.relevance_score,
            "signals": list(self.signals),
            "id": self.id,
            "type": self.type,
            "content": self.content,
            "behavioral": self.behavioral,
            "tags": list(self.tags),
            "created_at": self.created_at,
            "relevance_score": self.relevance_score,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "trust": self.trust,
            **extra,
        }


@dataclass(frozen=True)
class EntryFilter:
    """Filters shared by search and the paged listing."""

    types: tuple[EntryType, ...] = ()
    tags: tuple[str, ...] = ()
    statuses: tuple[Status, ...] = (Status.ACTIVE,)
    include_superseded: bool = False
    only_superseded: bool = False
    behavioral: bool | None = None
    #: True: only stale entries; False: only fresh ones; None: both.
    stale: bool | None = None
    #: Only these privacy levels (empty: all).
    privacy: tuple[Privacy, ...] = ()
