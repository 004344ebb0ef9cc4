"""Deterministic extraction of candidate claims from thread handoffs (seed 004 §10.1).

The handoff is only read; each claim cites it by version and character span.
The rule, the same on every run:

* Walk the handoff's lines, skipping fenced code. Remember the last heading.
* A list item becomes a candidate claim when it is a statement: not a task
  checkbox, not a commitment (TODO, next steps, "I will", follow-ups), not a
  question, not under a heading about open threads, next steps or questions,
  and 3 to 60 words long.
* Its kind comes from the heading: preferences, configuration (config,
  settings, environment), runtime state (state, status, running), project
  (project, decisions, architecture), identity (identity, about, who);
  anything else is a fact.
* The claim's text is the item's text with its spacing folded, so the cited
  span says it word for word. The same statement in a later version adds that
  version as another source of the same candidate: recurrence is evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from core.claims.gate import record_claim
from core.claims.model import MAX_CLAIM_CHARS, ClaimKind, Origin, SourceHandle, SourceKind
from core.claims.sources import sha256_text
from core.continuity.handoffs import ThreadHandoff, current_handoff
from core.continuity.threads import require_thread
from core.model.changes import Changes
from core.model.entries import Actor
from core.model.errors import Forbidden
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

MIN_WORDS: Final = 3
MAX_WORDS: Final = 60

_ITEM = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+(?P<text>\S.*?)[ \t]*$")
_TASK = re.compile(r"^\[[ xX]\]")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(?P<text>.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_COMMITMENT = re.compile(
    r"\bTODO\b|\bFIXME\b|\bnext steps?\b|\bI will\b|\bI[’']ll\b|\bfollow[- ]?ups?\b"
    r"|\bopen threads?\b|\baction items?\b",
    re.IGNORECASE,
)
_SKIP_HEADING = re.compile(r"open|next|todo|question|follow|plan|action", re.IGNORECASE)
_KINDS: Final = (
    (re.compile(r"prefer", re.I), ClaimKind.PREFERENCE),
    (re.compile(r"config|setting|environment", re.I), ClaimKind.CONFIGURATION),
    (re.compile(r"state|status|running|runtime", re.I), ClaimKind.RUNTIME_STATE),
    (re.compile(r"project|decision|architecture", re.I), ClaimKind.PROJECT),
    (re.compile(r"identity|about|who", re.I), ClaimKind.IDENTITY),
)


@dataclass(frozen=True)
class Found:
    text: str
    kind: ClaimKind
    span: tuple[int, int]


def kind_for(heading: str) -> ClaimKind:
    for pattern, kind in _KINDS:
        if pattern.search(heading):
            return kind
    return ClaimKind.FACT


def statements(markdown: str) -> list[Found]:
    """The claim-shaped list items of a handoff, with their spans (pure)."""
    found: list[Found] = []
    heading = ""
    fence: str | None = None
    offset = 0
    for line in markdown.splitlines(keepends=True):
        start, offset = offset, offset + len(line)
        body = line.rstrip("\r\n")
        if m := _FENCE.match(body):
            mark = m.group(1)[0]
            fence = None if fence == mark else (fence or mark)
            continue
        if fence is not None:
            continue
        if h := _HEADING.match(body):
            heading = h.group("text")
            continue
        item = _ITEM.match(body)
        if item is None or _SKIP_HEADING.search(heading):
            continue
        text = item.group("text")
        words = text.split()
        if (
            _TASK.match(text)
            or _COMMITMENT.search(text)
            or text.rstrip().endswith("?")
            or not MIN_WORDS <= len(words) <= MAX_WORDS
            or len(" ".join(words)) > MAX_CLAIM_CHARS
        ):
            continue
        found.append(
            Found(
                " ".join(words),
                kind_for(heading),
                (start + item.start("text"), start + item.end("text")),
            )
        )
    return found


@dataclass(frozen=True)
class Extraction:
    handoffs: int
    statements: int
    created: int
    recurring: int
    claim_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "handoffs": self.handoffs,
            "statements": self.statements,
            "created": self.created,
            "recurring": self.recurring,
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


def extract(service: Workspace, caller: Caller, thread: str | None = None) -> Extraction:
    """Record candidates from the current handoff of ``thread`` (or of every thread).

    Run by the person; an agent proposes its claims with ``claim_propose``.
    """
    if caller.actor is Actor.AGENT:
        raise Forbidden("extraction is run by the person, with `ambry claims extract`")
    store = service.store_for(caller.group)
    handoffs = _handoffs(service, caller.group, thread)
    total = created = recurring = 0
    ids: list[str] = []
    with store.transaction():
        for h in handoffs:
            for f in statements(h.markdown):
                total += 1
                quote = h.markdown[f.span[0] : f.span[1]]
                source = SourceHandle(
                    SourceKind.HANDOFF,
                    f"{h.thread_id}@{h.version}",
                    quote,
                    sha256_text(h.markdown),
                    f.span,
                )
                outcome = record_claim(
                    store,
                    caller,
                    f.text,
                    f.kind,
                    (source,),
                    f.kind.default_recheck_days,
                    Origin.EXTRACTION,
                )
                created += outcome.created
                recurring += (not outcome.created) and outcome.added_sources > 0
                ids.append(outcome.claim.id)
        audit.record(
            store,
            Action.CLAIM_EXTRACT,
            caller.actor,
            session_id=caller.session_id,
            count=created,
            handoffs=len(handoffs),
            statements=total,
        )
    service.emit(Changes(group=store.group, claims=True, audit=True))
    return Extraction(len(handoffs), total, created, recurring, tuple(dict.fromkeys(ids)))
