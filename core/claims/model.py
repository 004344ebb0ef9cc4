"""Claim values: kinds, statuses, source handles, verification states, decisions, modes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Final

#: Longest claim text: a claim is one atomic statement, not a document.
MAX_CLAIM_CHARS: Final = 500
#: Sources one claim may cite.
MAX_SOURCES: Final = 8
#: Longest recheck interval, in days (ten years).
MAX_RECHECK_DAYS: Final = 3650


class ClaimKind(StrEnum):
    PREFERENCE = "preference"
    PROJECT = "project"
    RUNTIME_STATE = "runtime_state"
    CONFIGURATION = "configuration"
    IDENTITY = "identity"
    FACT = "fact"

    @property
    def default_recheck_days(self) -> int:
        """How long a verified claim of this kind stays fresh without a new check."""
        match self:
            case ClaimKind.RUNTIME_STATE:
                return 1
            case ClaimKind.CONFIGURATION:
                return 14
            case ClaimKind.PROJECT:
                return 30
            case ClaimKind.FACT:
                return 90
            case ClaimKind.PREFERENCE:
                return 180
            case ClaimKind.IDENTITY:
                return 365


class ClaimStatus(StrEnum):
    CANDIDATE = "candidate"
    VERIFIED = "verified"
    REJECTED = "rejected"
    RETRACTED = "retracted"


class Origin(StrEnum):
    AGENT = "agent"
    OPERATOR = "operator"
    EXTRACTION = "extraction"


class SourceKind(StrEnum):
    EXCHANGE = "exchange"
    HANDOFF = "handoff"
    ATTACHMENT = "attachment"
    MEMORY = "memory"


class SourceState(StrEnum):
    """What read-only verification found at a source, best first."""

    EXACT = "source_exact_match"
    PARTIAL = "source_partially_overlaps_claim"
    DRIFTED = "source_drifted"
    MISSING = "source_missing"

    @property
    def rank(self) -> int:
        match self:
            case SourceState.EXACT:
                return 0
            case SourceState.PARTIAL:
                return 1
            case SourceState.DRIFTED:
                return 2
            case SourceState.MISSING:
                return 3

    @property
    def supports(self) -> bool:
        """Whether the source, as it is now, still backs the claim (wholly or in part)."""
        return self.rank <= 1


class Recommendation(StrEnum):
    NONE = "none"
    ACCEPT = "accept"
    NARROW = "narrow"
    RE_VERIFY = "re_verify"
    REJECT = "reject"
    RETRACT = "retract"


class Decision(StrEnum):
    ACCEPT = "accept_verified"
    REJECT = "reject"
    DEFER = "defer"
    RETRACT = "retract"


class Mode(StrEnum):
    """How far claims reach (seed 004 §10.3); only the person changes it."""

    OBSERVE = "observe"
    DIAGNOSTIC = "diagnostic"
    ENFORCE = "enforce"

    @property
    def injects(self) -> bool:
        """Whether verified claims reach the agent's session-start brief."""
        return self is Mode.ENFORCE

    @property
    def reports(self) -> bool:
        """Whether the candidate diagnostics report is produced."""
        return self is not Mode.OBSERVE


@dataclass(frozen=True)
class SourceHandle:
    """A pointer to where a claim came from, with what the source said then.

    ``ref`` is the exchange's id, ``<thread id>@<version>`` for a handoff
    version, the receipt id, or the memory entry id. ``span`` is a character
    range in the source text (an attachment receipt's excerpt span, or the
    line of a handoff a claim was extracted from). ``quote`` is the text of the
    span (or of the whole source) when the claim was recorded, and
    ``source_sha256`` the hash of the whole source text then (for a receipt,
    the file's recorded hash).
    """

    kind: SourceKind
    ref: str
    quote: str
    source_sha256: str
    span: tuple[int, int] | None = None

    @property
    def label(self) -> str:
        match self.kind:
            case SourceKind.EXCHANGE:
                return f"exchange {self.ref}"
            case SourceKind.HANDOFF:
                thread, _, version = self.ref.partition("@")
                return f"handoff {thread} v{version}"
            case SourceKind.ATTACHMENT:
                where = "" if self.span is None else f" [{self.span[0]}:{self.span[1]}]"
                return f"file {self.ref}{where}"
            case SourceKind.MEMORY:
                return f"memory {self.ref}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "ref": self.ref,
            "span": None if self.span is None else list(self.span),
            "quote": self.quote,
            "source_sha256": self.source_sha256,
            "label": self.label,
        }


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    kind: ClaimKind
    status: ClaimStatus
    origin: Origin
    recheck_days: int
    session_id: str | None
    thread_id: str | None
    created_at: str
    updated_at: str
    deferred_at: str | None
    verified_at: str | None
    recheck_due_at: str | None
    sources: tuple[SourceHandle, ...] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        """How a surface must present the claim: candidates are never facts."""
        match self.status:
            case ClaimStatus.VERIFIED:
                return "verified by the person"
            case ClaimStatus.CANDIDATE:
                return "candidate: not verified, do not treat as fact"
            case ClaimStatus.REJECTED:
                return "rejected by the person"
            case ClaimStatus.RETRACTED:
                return "retracted by the person"

    def fresh(self, now_iso: str) -> bool:
        """Verified and not yet due for a re-check (ISO UTC stamps compare as text)."""
        return (
            self.status is ClaimStatus.VERIFIED
            and self.recheck_due_at is not None
            and self.recheck_due_at > now_iso
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = self.kind.value
        d["status"] = self.status.value
        d["origin"] = self.origin.value
        d["sources"] = [s.to_dict() for s in self.sources]
        d["label"] = self.label
        return d


@dataclass(frozen=True)
class DecisionReceipt:
    """What the person decided on a claim, and what they saw when they decided."""

    id: int
    claim_id: str
    decision: Decision
    actor: str
    session_id: str | None
    at: str
    confirmed_text: str
    source_states: list[dict[str, Any]]
    note: str

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["decision"] = self.decision.value
        return d
