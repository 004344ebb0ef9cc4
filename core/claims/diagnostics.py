"""Candidate research diagnostics (seed 004 §11.4): read-only, for the person's review.

Four lists, each item leading with its evidence (source labels, counts,
states) before any conclusion:

* **recurring**: candidates cited by two or more sources, most first.
* **conflicts**: candidates that share most of their words with a verified
  claim or an active public memory but differ from it in a number or a
  negation (the overlap measure's "none" with coverage at least
  :data:`core.claims.overlap.PARTIAL_THRESHOLD`).
* **ready**: candidates every source of which says them word for word.
* **decayed**: candidates untouched for :data:`DECAY_DAYS` days, candidates
  whose sources are gone or drifted, and verified claims past their re-check date.

At most :data:`SCAN_LIMIT` candidates (the newest) are examined. Nothing here
writes, and nothing promotes: the person decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Final

from core.claims import records
from core.claims.model import Claim, ClaimStatus, Mode, SourceState
from core.claims.modes import current_mode
from core.claims.overlap import PARTIAL_THRESHOLD, Match, measure
from core.claims.sources import FileCheck
from core.claims.verify import verify_claim
from core.model.entries import iso, utc_now
from core.model.errors import Conflict
from core.storage.fts import build_match
from core.storage.store import GroupStore

SCAN_LIMIT: Final = 500
DECAY_DAYS: Final = 30


@dataclass
class Diagnostics:
    mode: Mode
    scanned: int = 0
    recurring: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    ready: list[dict[str, Any]] = field(default_factory=list)
    decayed: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "scanned": self.scanned,
            "recurring": self.recurring,
            "conflicts": self.conflicts,
            "ready": self.ready,
            "decayed": self.decayed,
            "read_only": True,
        }


def _item(claim: Claim, **evidence: Any) -> dict[str, Any]:
    return {
        "id": claim.id,
        "sources": [s.label for s in claim.sources],
        **evidence,
        "text": claim.text,
    }


def _conflicting(a: str, b: str) -> bool:
    found = measure(a, b)
    return found.match is Match.NONE and found.coverage >= PARTIAL_THRESHOLD


def _memory_conflicts(store: GroupStore, claim: Claim) -> list[str]:
    expression = build_match(claim.text)
    if expression is None:
        return []
    rows = store.execute(
        "SELECT e.id, e.content FROM (SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
        "ORDER BY rank LIMIT 5) AS f JOIN memory_entries e ON e.seq = f.rowid "
        "WHERE e.status = 'active' AND e.superseded_by IS NULL AND e.privacy = 'public'",
        (expression,),
    )
    return [mid for mid, content in rows if _conflicting(claim.text, content)]


def diagnose(store: GroupStore) -> Diagnostics:
    """The diagnostics report of a group (see the module docstring).

    Raises:
        Conflict: the claims mode is ``observe``, which does not report.
    """
    mode = current_mode(store)
    if not mode.reports:
        raise Conflict(
            "the claims mode is observe, which records claims without reporting on them; "
            "switch with `ambry claims mode plan diagnostic`, then `apply diagnostic --yes`",
            field="mode",
        )
    now = utc_now()
    now_iso = iso(now)
    cutoff = iso(now - timedelta(days=DECAY_DAYS))
    report = Diagnostics(mode)
    candidates = records.list_claims(store, statuses=[ClaimStatus.CANDIDATE], limit=SCAN_LIMIT)
    verified = records.list_claims(store, statuses=[ClaimStatus.VERIFIED], limit=SCAN_LIMIT)
    report.scanned = len(candidates)
    for c in candidates:
        if len(c.sources) >= 2:
            report.recurring.append(_item(c, count=len(c.sources)))
        against = [v.id for v in verified if v.kind is c.kind and _conflicting(c.text, v.text)]
        against += _memory_conflicts(store, c)
        if against:
            report.conflicts.append(_item(c, conflicts_with=against))
        checked = verify_claim(store, c, files=FileCheck.RECORDED)
        states = [s.state.value for s in checked.sources]
        if checked.state is SourceState.EXACT:
            report.ready.append(_item(c, states=states))
        elif not checked.state.supports:
            report.decayed.append(_item(c, reason="sources no longer support it", states=states))
        elif (c.deferred_at or c.updated_at) < cutoff:
            report.decayed.append(_item(c, reason=f"no decision for {DECAY_DAYS} days"))
    for v in verified:
        if not v.fresh(now_iso):
            report.decayed.append(_item(v, reason=f"verified, re-check was due {v.recheck_due_at}"))
    report.recurring.sort(key=lambda i: -int(i["count"]))
    return report
