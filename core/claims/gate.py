"""The gate: proposing claims (anyone) and deciding on them (the person only).

Seed 004 §11: a claim moves from candidate to verified only by the person's
explicit decision, taken after seeing the claim and what its sources say now;
every decision writes a receipt (who, when, the text confirmed, each source's
state as shown), and a verified claim leaves the trusted lane only by the same
workflow in reverse (retraction). An agent's call can never decide, whatever
it sends: :func:`decide` refuses any caller that is not the person, and the agent
protocol has no method that reaches it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from core.claims import records
from core.claims.model import (
    MAX_CLAIM_CHARS,
    MAX_RECHECK_DAYS,
    MAX_SOURCES,
    Claim,
    ClaimKind,
    ClaimStatus,
    Decision,
    Origin,
    SourceHandle,
    SourceState,
)
from core.claims.sources import cite_all
from core.claims.verify import ClaimReport, verify_claim
from core.memory.writing import check_rate
from core.model.changes import Changes
from core.model.entries import Actor, iso, utc_now
from core.model.errors import Conflict, Forbidden, InvalidParams
from core.policy.agent_text import audit_neutralized, neutralize_agent_text
from core.policy.field_screening import screen_field
from core.policy.manifest import validate_args
from core.storage import audit
from core.storage.audit import Action
from core.storage.store import GroupStore
from core.storage.workspace import normalise_content

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

ONLY_THE_PERSON = (
    "claims are verified, rejected, deferred and retracted by the person only, in the "
    "Ambry app or with `ambry claims`; an agent can propose, search and check them"
)


def text_key(text: str) -> str:
    return normalise_content(text)


@dataclass(frozen=True)
class Proposal:
    claim: Claim
    #: False when the same statement was already a candidate (sources were added) or verified.
    created: bool
    added_sources: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.claim.id,
            "status": self.claim.status.value,
            "label": self.claim.label,
            "created": self.created,
            "added_sources": self.added_sources,
            "sources": len(self.claim.sources),
        }


def clean_text(caller: Caller, text: object, field: str = "text") -> tuple[str, tuple[str, ...]]:
    if not isinstance(text, str) or not text.strip():
        raise InvalidParams(f"{field} must be a non-empty statement", field=field, rule="minLength")
    text = " ".join(text.split())
    if len(text) > MAX_CLAIM_CHARS:
        raise InvalidParams(
            f"{field} must be at most {MAX_CLAIM_CHARS} characters: a claim is one statement; "
            "split it into several claims",
            field=field,
            rule="maxLength",
        )
    text = screen_field(text, field).text
    return neutralize_agent_text(caller, text)


def parse_kind(value: object) -> ClaimKind:
    try:
        return ClaimKind(str(value))
    except ValueError:
        choices = ", ".join(k.value for k in ClaimKind)
        raise InvalidParams(f"kind must be one of {choices}", field="kind", rule="enum") from None


def parse_recheck(value: object, kind: ClaimKind) -> int:
    if value is None:
        return kind.default_recheck_days
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RECHECK_DAYS:
        error = InvalidParams.bounds("recheck_days", value, 1, MAX_RECHECK_DAYS)
        raise InvalidParams(
            f"recheck_days must be a whole number of days from 1 to {MAX_RECHECK_DAYS}",
            field="recheck_days",
            rule=error.rule,
        )
    return value


def record_claim(
    store: GroupStore,
    caller: Caller,
    text: str,
    kind: ClaimKind,
    sources: tuple[SourceHandle, ...],
    recheck_days: int,
    origin: Origin,
) -> Proposal:
    """Add a candidate, or add new sources to the candidate saying the same (in a transaction)."""
    key = text_key(text)
    for existing in records.find_by_key(store, key):
        if existing.status is ClaimStatus.VERIFIED:
            return Proposal(existing, created=False)
        if existing.status is ClaimStatus.CANDIDATE:
            # A claim keeps its first MAX_SOURCES sources; later recurrences are not added.
            room = max(0, MAX_SOURCES - len(existing.sources))
            new = [s for s in dict.fromkeys(sources) if s not in existing.sources][:room]
            if new:
                seq = records.claim_seq(store, existing.id)
                records.add_sources(store, seq, new, start=len(existing.sources))
                records.set_status(store, existing.id, updated_at=iso(utc_now()))
            claim = replace(existing, sources=existing.sources + tuple(new))
            return Proposal(claim, created=False, added_sources=len(new))
    now = iso(utc_now())
    claim = Claim(
        id=f"clm-{uuid.uuid4()}",
        text=text,
        kind=kind,
        status=ClaimStatus.CANDIDATE,
        origin=origin,
        recheck_days=recheck_days,
        session_id=caller.session_id,
        thread_id=caller.thread_id,
        created_at=now,
        updated_at=now,
        deferred_at=None,
        verified_at=None,
        recheck_due_at=None,
        sources=sources,
    )
    records.insert_claim(store, claim, key)
    return Proposal(claim, created=True, added_sources=len(sources))


def propose(service: Workspace, caller: Caller, args: dict[str, Any]) -> Proposal:
    """``claim_propose``: record a candidate claim with its sources (never verified).

    ``args`` are checked against the manifest here (text, kind, sources,
    optional recheck_days), so the CLI and the agent get the same errors. The
    person's claims start as candidates too: the review is the same for everyone.
    """
    args = validate_args("claim_propose", args)
    store = service.store_for(caller.group)
    kind = parse_kind(args.get("kind"))
    recheck = parse_recheck(args.get("recheck_days"), kind)
    text, markers = clean_text(caller, args.get("text"))
    origin = Origin.AGENT if caller.actor is Actor.AGENT else Origin.OPERATOR
    with store.transaction():
        check_rate(store, caller, "stores", service.config)
        sources = cite_all(store, args.get("sources"))
        outcome = record_claim(store, caller, text, kind, sources, recheck, origin)
        audit_neutralized(store, caller, markers, claim=outcome.claim.id)
        audit.record(
            store,
            Action.CLAIM_PROPOSE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[outcome.claim.id],
            count=outcome.added_sources,
            created=outcome.created,
        )
    service.emit(Changes(group=store.group, claims=True, audit=True))
    return outcome


@dataclass(frozen=True)
class DecisionOutcome:
    claim: Claim
    decision: Decision
    receipt_id: int
    report: ClaimReport

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.claim.id,
            "decision": self.decision.value,
            "status": self.claim.status.value,
            "receipt": self.receipt_id,
            "recheck_due_at": self.claim.recheck_due_at,
            "state": self.report.state.value,
        }


_ALLOWED_FROM: dict[Decision, ClaimStatus] = {
    Decision.ACCEPT: ClaimStatus.CANDIDATE,
    Decision.REJECT: ClaimStatus.CANDIDATE,
    Decision.DEFER: ClaimStatus.CANDIDATE,
    Decision.RETRACT: ClaimStatus.VERIFIED,
}


def _fields(claim: Claim, decision: Decision, now: str) -> dict[str, Any]:
    match decision:
        case Decision.ACCEPT:
            due = iso(utc_now() + timedelta(days=claim.recheck_days))
            return {
                "status": ClaimStatus.VERIFIED.value,
                "verified_at": now,
                "recheck_due_at": due,
                "deferred_at": None,
            }
        case Decision.REJECT:
            return {"status": ClaimStatus.REJECTED.value, "deferred_at": None}
        case Decision.DEFER:
            return {"deferred_at": now}
        case Decision.RETRACT:
            return {"status": ClaimStatus.RETRACTED.value, "recheck_due_at": None}


def decide(
    service: Workspace,
    caller: Caller,
    claim_id: str,
    decision: Decision,
    *,
    confirmed_text: str | None = None,
    confirmed_state: SourceState | None = None,
    note: str = "",
) -> DecisionOutcome:
    """The person's decision on a claim, with its receipt.

    Accepting needs ``confirmed_text`` (the claim's text, as the person read it)
    and ``confirmed_state`` (the overall source state they were shown); if
    either differs from what is true now, nothing changes and the person reviews
    again. Retracting needs ``confirmed_text``. A claim no source supports now
    cannot be accepted.

    Raises:
        Forbidden: the caller is not the person.
        Conflict: the claim is not in a state this decision applies to, or the
            text or sources changed since the person reviewed them.
    """
    if caller.actor is not Actor.OPERATOR:
        raise Forbidden(ONLY_THE_PERSON)
    store = service.store_for(caller.group)
    with store.transaction():
        claim = records.get_claim(store, claim_id)
        wanted = _ALLOWED_FROM[decision]
        if claim.status is not wanted:
            raise Conflict(
                f"claim {claim_id} is {claim.status.value}; {decision.value} applies to a "
                f"{wanted.value} claim only",
                field="id",
            )
        needs_text = decision in (Decision.ACCEPT, Decision.RETRACT)
        if needs_text and confirmed_text != claim.text:
            # The text is data, not message: a refusal is logged, and a claim quotes memories.
            raise Conflict(
                f"confirm the claim's exact text to {decision.value} it: claim {claim_id} "
                "reads otherwise now (its text is in current_text)",
                field="confirmed_text",
                current_text=claim.text,
            )
        report = verify_claim(store, claim)
        if decision is Decision.ACCEPT:
            if confirmed_state is not None and confirmed_state is not report.state:
                raise Conflict(
                    f"the sources of {claim_id} changed since the review: they are "
                    f"{report.state.value} now, not {confirmed_state.value}; review them again",
                    field="confirmed_state",
                )
            if not any(s.state.supports for s in report.sources):
                raise Conflict(
                    f"no source supports claim {claim_id} now ({report.state.value}); narrow "
                    "the claim to what a source says, cite another source, or reject it",
                    field="id",
                )
        now = iso(utc_now())
        records.set_status(store, claim_id, updated_at=now, **_fields(claim, decision, now))
        receipt = records.insert_decision(
            store,
            claim_id,
            decision,
            caller.actor.value,
            caller.session_id,
            now,
            claim.text,
            report.source_states(),
            note.strip()[:500],
        )
        audit.record(
            store,
            Action.CLAIM_DECIDE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[claim_id],
            decision=decision.value,
            state=report.state.value,
        )
        updated = records.get_claim(store, claim_id)
    service.emit(Changes(group=store.group, claims=True, audit=True))
    return DecisionOutcome(updated, decision, receipt, report)
