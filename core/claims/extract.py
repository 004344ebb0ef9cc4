"""Deterministic extraction of candidate claims from handoffs and summaries (seed 004 §10.1).

Which passages are statements, and of what kind, is :mod:`core.claims.statements`.
This module records them as candidates; every source is only read.

* **Handoffs**: the current handoff of each thread (or of one). Each claim cites
  the handoff version and the list item's span.
* **Day summaries**: the points of each day summary, each drawn from one
  sentence of one turn. The claim cites **the turn** (an ``exchange`` source: its
  id, the sentence's span in its text, the text's hash), never the summary's
  wording, so verification compares it with the verbatim turn like any other
  turn source. The service reads the points from ``core.layers.points`` and
  passes them in (:class:`SummaryPoints`); weeks and months are not read.

The same statement again, in a later handoff version or another turn, adds that
source to the same candidate: recurrence is evidence. Running extraction again
over the same sources adds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from core.claims.gate import Proposal, record_claim
from core.claims.model import ClaimKind, Origin, SourceHandle, SourceKind
from core.claims.statements import TurnPoint, statements, turn_statements
from core.continuity.handoffs import ThreadHandoff, current_handoff
from core.continuity.threads import require_thread
from core.model.changes import Changes
from core.model.entries import Actor
from core.model.errors import Forbidden
from core.model.text import sha256_text
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


class SummaryPoints(Protocol):
    """The day summaries' points (:class:`core.layers.points.DayPoints`)."""

    @property
    def points(self) -> Sequence[TurnPoint]: ...
    @property
    def summaries(self) -> int: ...
    @property
    def unsourced(self) -> int: ...


@dataclass(frozen=True)
class Counts:
    """What one kind of source gave."""

    #: Handoffs or day summaries read.
    read: int = 0
    statements: int = 0
    created: int = 0
    #: Statements that added their source to an existing candidate.
    recurring: int = 0

    def to_dict(self) -> dict[str, int]:
        return {
            "read": self.read,
            "statements": self.statements,
            "created": self.created,
            "recurring": self.recurring,
        }


@dataclass(frozen=True)
class Extraction:
    from_handoffs: Counts
    from_summaries: Counts
    #: Day summaries read whose points have no recorded sources yet (built before
    #: sources were recorded; the next compression pass draws them again).
    unsourced: int
    claim_ids: tuple[str, ...]

    @property
    def handoffs(self) -> int:
        return self.from_handoffs.read

    @property
    def summaries(self) -> int:
        return self.from_summaries.read

    @property
    def statements(self) -> int:
        return self.from_handoffs.statements + self.from_summaries.statements

    @property
    def created(self) -> int:
        return self.from_handoffs.created + self.from_summaries.created

    @property
    def recurring(self) -> int:
        return self.from_handoffs.recurring + self.from_summaries.recurring

    def to_dict(self) -> dict[str, Any]:
        return {
            "handoffs": self.handoffs,
            "summaries": self.summaries,
            "unsourced_summaries": self.unsourced,
            "statements": self.statements,
            "created": self.created,
            "recurring": self.recurring,
            "from_handoffs": self.from_handoffs.to_dict(),
            "from_summaries": self.from_summaries.to_dict(),
            "claim_ids": list(self.claim_ids),
        }


def _handoffs(service: Workspace, group: str, thread: str | None) -> list[ThreadHandoff]:
    store = service.store_for(group)
    if thread is not None:
        require_thread(store, thread)
        ids = [thread]
    else:
        ids = [r[0] for r in store.execute("SELECT id FROM threads ORDER BY created_at, id")]
    return [h for t in ids if (h := current_handoff(store, t)) is not None]


def _handoff_claims(
    handoffs: Sequence[ThreadHandoff],
) -> list[tuple[str, ClaimKind, SourceHandle]]:
    out: list[tuple[str, ClaimKind, SourceHandle]] = []
    for h in handoffs:
        digest = sha256_text(h.markdown)
        for f in statements(h.markdown):
            quote = h.markdown[f.span[0] : f.span[1]]
            ref = f"{h.thread_id}@{h.version}"
            out.append(
                (f.text, f.kind, SourceHandle(SourceKind.HANDOFF, ref, quote, digest, f.span))
            )
    return out


def _summary_claims(points: Sequence[TurnPoint]) -> list[tuple[str, ClaimKind, SourceHandle]]:
    texts = {p.exchange_seq: p.turn_text for p in points}
    out: list[tuple[str, ClaimKind, SourceHandle]] = []
    for f in turn_statements(points):
        text = texts[f.exchange_seq]
        quote = text[f.span[0] : f.span[1]]
        source = SourceHandle(
            SourceKind.EXCHANGE, str(f.exchange_seq), quote, sha256_text(text), f.span
        )
        out.append((f.text, f.kind, source))
    return out


def _record(
    store: GroupStore,
    caller: Caller,
    found: Sequence[tuple[str, ClaimKind, SourceHandle]],
    read: int,
    ids: list[str],
) -> Counts:
    created = recurring = 0
    for text, kind, source in found:
        outcome: Proposal = record_claim(
            store, caller, text, kind, (source,), kind.default_recheck_days, Origin.EXTRACTION
        )
        created += outcome.created
        recurring += (not outcome.created) and outcome.added_sources > 0
        ids.append(outcome.claim.id)
    return Counts(read, len(found), created, recurring)


def extract(
    service: Workspace,
    caller: Caller,
    thread: str | None = None,
    summaries: Callable[[], SummaryPoints] | None = None,
) -> Extraction:
    """Record candidates from the current handoff of ``thread`` (or of every thread)
    and, when ``summaries`` is given, from the day summaries' points it returns.

    Run by the person; an agent proposes its claims with ``claim_propose``.
    """
    if caller.actor is Actor.AGENT:
        raise Forbidden("extraction is run by the person, with `ambry claims extract`")
    store = service.store_for(caller.group)
    handoffs = _handoffs(service, caller.group, thread)
    days = None if summaries is None else summaries()
    ids: list[str] = []
    with store.transaction():
        from_handoffs = _record(store, caller, _handoff_claims(handoffs), len(handoffs), ids)
        from_summaries = (
            Counts()
            if days is None
            else _record(store, caller, _summary_claims(days.points), days.summaries, ids)
        )
        result = Extraction(
            from_handoffs,
            from_summaries,
            0 if days is None else days.unsourced,
            tuple(dict.fromkeys(ids)),
        )
        audit.record(
            store,
            Action.CLAIM_EXTRACT,
            caller.actor,
            session_id=caller.session_id,
            count=result.created,
            handoffs=result.handoffs,
            summaries=result.summaries,
            statements=result.statements,
        )
    service.emit(Changes(group=store.group, claims=True, audit=True))
    return result
