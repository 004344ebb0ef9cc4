"""Read-only source verification: does each source still say what the claim says?

For each source handle: resolve it (:func:`core.claims.sources.resolve`), see
whether it changed since it was cited (its hash, a newer handoff version, the
file behind a receipt), and measure the claim against the cited passage
(:func:`core.claims.overlap.measure`). The four states:

* ``source_missing``: the source is gone (a deleted or expired turn, a pruned
  handoff version, a deleted receipt or memory, a file no longer on disk).
* ``source_drifted``: the source changed since it was cited and no longer says
  the claim (a file with other bytes, an edited memory, a handoff whose newer
  version dropped the passage, a superseded memory), or it never said it: the
  cited passage shares too little of the claim (``changed`` tells which).
* ``source_partially_overlaps_claim``: the passage says part of the claim.
* ``source_exact_match``: the passage says the claim word for word.

A claim's state is its worst source's; the recommendation follows from all of
them. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.claims.model import Claim, ClaimStatus, Recommendation, SourceHandle, SourceState
from core.claims.overlap import Match, measure
from core.claims.sources import FileCheck, Resolved, resolve
from core.model.entries import iso, utc_now
from core.storage.store import GroupStore


@dataclass(frozen=True)
class SourceReport:
    position: int
    handle: SourceHandle
    state: SourceState
    #: Share of the claim's content words in the evidence passage, 0..1.
    coverage: float
    #: The span of the source that matched best, and its text now.
    span: tuple[int, int] | None
    matched_text: str
    #: The source changed since it was cited.
    changed: bool
    evidence: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "source": self.handle.to_dict(),
            "state": self.state.value,
            "coverage": round(self.coverage, 3),
            "span": None if self.span is None else list(self.span),
            "matched_text": self.matched_text,
            "changed": self.changed,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class ClaimReport:
    claim: Claim
    state: SourceState
    recommendation: Recommendation
    sources: tuple[SourceReport, ...]
    checked_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.claim.id,
            "text": self.claim.text,
            "status": self.claim.status.value,
            "label": self.claim.label,
            "state": self.state.value,
            "recommendation": self.recommendation.value,
            "sources": [s.to_dict() for s in self.sources],
            "checked_at": self.checked_at,
            "read_only": True,
        }

    def source_states(self) -> list[dict[str, Any]]:
        """What a decision receipt keeps: each source's state and hash as shown."""
        return [
            {
                "source": s.handle.label,
                "state": s.state.value,
                "coverage": round(s.coverage, 3),
                "source_sha256": s.handle.source_sha256,
            }
            for s in self.sources
        ]


def _compare(claim_text: str, handle: SourceHandle, now: Resolved, pos: int) -> SourceReport:
    if now.text is None or now.file_missing:
        note = now.note or "the source is gone"
        return SourceReport(pos, handle, SourceState.MISSING, 0.0, None, "", True, note)
    text = now.text
    if handle.span is not None and now.sha256 == handle.source_sha256:
        start, end = handle.span
        cited, offset = text[start:end], start
    else:
        cited, offset = text, 0
    found = measure(claim_text, cited)
    span = None if found.span is None else (found.span[0] + offset, found.span[1] + offset)
    matched = "" if found.span is None else cited[found.span[0] : found.span[1]]
    changes: list[str] = []
    if now.sha256 != handle.source_sha256:
        changes.append(
            f"the source text changed since it was cited "
            f"(sha256 {handle.source_sha256[:12]}… then, {str(now.sha256)[:12]}… now)"
        )
    if now.file_changed:
        changes.append(now.note or "the file changed")
    elif now.note:
        changes.append(now.note)  # superseded memory
    if (
        now.newer_text is not None
        and measure(handle.quote, now.newer_text).match is not Match.EXACT
    ):
        changes.append(
            f"the thread's handoff was rewritten (v{now.newer_version}) without this passage"
        )
    changed = bool(changes)
    words = f"{found.coverage:.0%} of the claim's words"
    if found.missing:
        words += " (missing: " + ", ".join(found.missing[:8]) + ")"
    if changed:
        return SourceReport(
            pos,
            handle,
            SourceState.DRIFTED,
            found.coverage,
            span,
            matched,
            True,
            "; ".join(changes) + f"; the cited passage holds {words}",
        )
    match found.match:
        case Match.EXACT:
            state, evidence = SourceState.EXACT, "the source says the claim word for word"
        case Match.PARTIAL:
            state, evidence = SourceState.PARTIAL, f"the source says part of the claim: {words}"
        case Match.NONE:
            state = SourceState.DRIFTED
            evidence = f"unchanged since cited, but it does not say the claim: {words}"
            if found.why:
                evidence += f"; {found.why}"
    return SourceReport(pos, handle, state, found.coverage, span, matched, False, evidence)


def _recommend(claim: Claim, reports: tuple[SourceReport, ...], now: str) -> Recommendation:
    supporting = [r for r in reports if r.state.supports]
    broken = [r for r in reports if not r.state.supports]
    if not supporting:
        return (
            Recommendation.RETRACT
            if claim.status is ClaimStatus.VERIFIED
            else Recommendation.REJECT
        )
    if broken or any(r.state is SourceState.PARTIAL for r in reports):
        return Recommendation.NARROW
    if claim.status is ClaimStatus.CANDIDATE:
        return Recommendation.ACCEPT
    if claim.status is ClaimStatus.VERIFIED and not claim.fresh(now):
        return Recommendation.RE_VERIFY
    return Recommendation.NONE


def verify_claim(
    store: GroupStore, claim: Claim, *, files: FileCheck = FileCheck.HASH
) -> ClaimReport:
    """Check every source of ``claim`` now; read-only.

    Args:
        files: how the file behind each receipt is checked (never recording
            the result): hashed again, hashed only when its stat moved (the
            brief), or taken from the receipt's last recorded state (lists).
    """
    now = iso(utc_now())
    reports = tuple(
        _compare(claim.text, h, resolve(store, h, files=files), i)
        for i, h in enumerate(claim.sources)
    )
    worst = max((r.state for r in reports), key=lambda s: s.rank, default=SourceState.MISSING)
    return ClaimReport(claim, worst, _recommend(claim, reports, now), reports, now)
