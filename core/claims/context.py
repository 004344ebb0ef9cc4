"""The only way claims reach an agent's context: the brief's "Verified claims" section.

The consumer contract (seed 004 §13.3) for context injection, checked here and
nowhere else: the claims mode is ``enforce``; the claim is ``verified`` (never a
candidate, whatever its sources say); it is fresh (its re-check date is ahead);
and every one of its sources still supports it now: a cited turn, handoff
version or memory as the database holds it, and a cited file as it is on disk,
whichever thread the session is in (a file is hashed again only when its size,
times or inode moved since this process last found it as recorded:
:func:`core.attachments.verification.quick_check`). The service adds the
section like the thread handoff's; the brief's own limits (entries,
characters, tokens) cut it like any other section.
"""

from __future__ import annotations

import time
from typing import Any, Final

from core.claims import records
from core.claims.model import Claim, ClaimStatus
from core.claims.modes import current_mode
from core.claims.sources import FileCheck
from core.claims.verify import verify_claim
from core.continuity.handoff_text import inline_safe
from core.storage.store import GroupStore

#: Verified claims in the brief at most.
BRIEF_CLAIMS: Final = 20
#: Fresh verified claims looked at to find them (some may have drifted).
BRIEF_CLAIM_PREFETCH: Final = 60
#: Time for checking the claims' files, within the brief's own budget. Files
#: hash at hundreds of MiB/s: only a process's first brief over many large files
#: comes near it, as later briefs hash only a file whose stat moved.
BRIEF_CLAIM_SECONDS: Final = 2.0
SECTION_TITLE: Final = "Verified claims"
_NOTE = (
    "_Statements the person verified against their sources, each checked against them "
    "again for this brief; the re-check date says when to trust it less._"
)


def brief_claims(store: GroupStore, now: str) -> list[Claim]:
    """The claims the session-start brief may carry now (see the module docstring).

    Checking the files takes at most about :data:`BRIEF_CLAIM_SECONDS`: a claim
    whose files were not checked in that time is left out, never shown unchecked.
    """
    if not current_mode(store).injects:
        return []
    out: list[Claim] = []
    end = time.monotonic() + BRIEF_CLAIM_SECONDS
    for claim in records.fresh_verified(store, now, BRIEF_CLAIM_PREFETCH):
        if time.monotonic() > end:
            break
        if not claim.fresh(now):
            continue
        if verify_claim(store, claim, files=FileCheck.STAT).state.supports:
            out.append(claim)
            if len(out) == BRIEF_CLAIMS:
                break
    return out


def _line(claim: Claim) -> str:
    sources = ", ".join(s.label for s in claim.sources)
    day = (claim.verified_at or "")[:10]
    due = (claim.recheck_due_at or "")[:10]
    return (
        f"- [{claim.kind.value}] {inline_safe(claim.text)} "
        f"(verified {day}, re-check by {due}; {inline_safe(sources)})"
    )


def claims_brief_section(store: GroupStore, now: str) -> tuple[str, str] | None:
    """``(title, body)`` for the brief, or None when no claim may appear."""
    claims = brief_claims(store, now)
    if not claims:
        return None
    return SECTION_TITLE, "\n".join([_NOTE, "", *map(_line, claims)])


def claim_source_turns(store: GroupStore) -> frozenset[int]:
    """Turns cited by any claim: their statements reach the brief only through the gate.

    The layers' Flash and Warm sections leave these turns out, so a candidate, a
    rejected or a retracted claim cannot slip into the agent's context as history.
    """
    rows = store.execute("SELECT DISTINCT ref FROM claim_sources WHERE kind = 'exchange'")
    return frozenset(int(r[0]) for r in rows if str(r[0]).isdigit())


#: How a claim in search results says what it is.
SEARCH_LABELS = {
    ClaimStatus.VERIFIED: "verified claim: the person confirmed it against its sources",
    ClaimStatus.CANDIDATE: "unverified claim: proposed, not confirmed; do not treat it as a fact",
}


def labelled_matches(store: GroupStore, query: str, limit: int = 5) -> list[dict[str, Any]]:
    """Verified and candidate claims whose text matches ``query``, each with its label.

    Shown beside memory search results, never among them; rejected and retracted
    claims are left out. Only verified claims ever reach the brief.
    """
    if not query.strip():
        return []
    found = records.list_claims(
        store, query=query, statuses=[ClaimStatus.VERIFIED, ClaimStatus.CANDIDATE], limit=limit
    )
    return [{**c.to_dict(), "label": SEARCH_LABELS[c.status]} for c in found]
