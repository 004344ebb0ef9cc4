"""What a brief is: its structured shape (the seed's MemoryBrief), its limits and its size.

:mod:`core.recall.brief` builds one; front ends read these values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from core.model.config import Config

#: The most candidates worth passing at first: one more than the largest
#: ``max_brief_entries`` a config accepts.
BRIEF_PREFETCH = 1001
#: The most candidates passed when entries too long for the room left were
#: skipped, so that shorter ones further down can take their place.
BRIEF_CANDIDATES = 5000


def prefetch_limit(config: Config) -> int:
    """How many ranked candidates the caller should pass.

    One more than fit, so the brief can tell that ``max_brief_entries`` cut it.
    """
    return config.max_brief_entries + 1


class BriefLimit(StrEnum):
    """The limit that cut the brief short; values name the ``Config`` fields."""

    MAX_ENTRIES = "max_brief_entries"
    MAX_CHARS = "max_brief_chars"
    TOKEN_BUDGET = "brief_token_budget"


@dataclass(frozen=True)
class BriefEntry:
    id: str
    type: str
    #: Single line: line breaks folded to spaces by :func:`single_line`.
    content: str
    behavioral: bool
    tags: list[str]
    age_days: int
    trust: str
    source_type: str
    #: Effective confidence at the time the brief was built (after decay).
    confidence: float
    #: Name from a ``service:<name>`` tag: an operational memory about that service.
    service: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "content": self.content,
            "behavioral": self.behavioral,
            "tags": list(self.tags),
            "age_days": self.age_days,
            "trust": self.trust,
            "source_type": self.source_type,
            "confidence": round(self.confidence, 3),
            "service": self.service,
        }


class LeftOutReason(StrEnum):
    """Why a memory that could appear is not in the brief."""

    #: ``max_brief_entries`` were already shown.
    MAX_ENTRIES = "max_brief_entries"
    #: Its line did not fit in the characters left.
    MAX_CHARS = "max_brief_chars"
    #: Its line did not fit in the estimated tokens left.
    TOKEN_BUDGET = "brief_token_budget"
    #: A line above already says the same.
    DUPLICATE = "duplicate"
    #: A line above says the same in other words (a near-duplicate by its vector).
    REWORDING = "rewording"


#: The most left-out memories a brief lists (in brief order).
LEFT_OUT_LISTED = 100


@dataclass(frozen=True)
class LeftOut:
    """A memory that qualified for the brief but is not in it, and why."""

    entry: BriefEntry
    reason: LeftOutReason


@dataclass(frozen=True)
class MemoryBrief:
    entries: tuple[BriefEntry, ...]
    generated_at: str
    #: Active entries in storage, whether or not they made it into the brief.
    entry_count: int
    brief_count: int
    truncated_by: BriefLimit | None
    markdown: str
    char_count: int
    #: :func:`core.model.text.estimate_tokens` of the markdown: tokenizer-free,
    #: characters / 4 for Latin text, more for other scripts and emoji.
    token_estimate: int
    #: Candidates left out because they did not fit in the room left or said what
    #: a line above says (not part of the protocol): the caller may pass more
    #: candidates to fill that room.
    skipped: int = field(default=0, compare=False)
    #: The ids of :attr:`entries` in the order their lines appear in the markdown
    #: (sections regroup them), for front ends that point from a line to its
    #: memory. Not part of the protocol.
    line_order: tuple[str, ...] = field(default=(), compare=False)
    #: The first :data:`LEFT_OUT_LISTED` candidates left out, in brief order, each
    #: with its reason (not part of the protocol). Only candidates the builder was
    #: given are known: past the entry limit that is usually only the first.
    left_out: tuple[LeftOut, ...] = field(default=(), compare=False)
    #: Candidates left out because a line shown says the same in other words
    #: (counted in :attr:`skipped` too; not part of the protocol).
    rewordings: int = field(default=0, compare=False)
    #: How many of the extra sections, from the first, were shown whole (an empty
    #: one counts): the next was cut short or left out (not part of the protocol).
    sections_whole: int = field(default=0, compare=False)

    def to_dict(self, include_markdown: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "entries": [entry.to_dict() for entry in self.entries],
            "generated_at": self.generated_at,
            "entry_count": self.entry_count,
            "brief_count": self.brief_count,
            "truncated_by": None if self.truncated_by is None else str(self.truncated_by),
            "char_count": self.char_count,
            "token_estimate": self.token_estimate,
        }
        if include_markdown:
            data["markdown"] = self.markdown
        return data
