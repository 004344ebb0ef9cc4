"""Which passages are claim-shaped statements, and of what kind (pure, deterministic).

Two kinds of text are read, each by a fixed rule, the same on every run.

**A handoff** (:func:`statements`):

* Walk the handoff's lines, skipping fenced code. Remember the last heading.
* A list item becomes a candidate claim when it is a statement
  (:func:`is_statement`) and not under a heading about open threads, next steps,
  questions, plans or actions.
* Its kind comes from the heading: preferences, configuration (config,
  settings, environment), runtime state (state, status, running), project
  (project, decisions, architecture), identity (identity, about, who);
  anything else is a fact.

**A day summary's points** (:func:`turn_statements`), each the span of one
sentence in the turn it was drawn from:

* Only the person's turns (speaker ``user``): an assistant's sentences are
  explanations, advice and proposals; an agent that believes one proposes it
  with ``claim_propose``.
* A lead-in is left out of the span: "remember that", "note:", "keep in mind
  that", "for the record", "FYI", "just so you know", "by the way",
  "actually", "correction:", and "no,", "well,", "ok," and the like when a
  comma or colon follows (so "No one uses it" keeps its "No").
* What is left must be a statement (:func:`is_statement`) and none of: an
  instruction or task (it starts with an imperative such as "please",
  "always", "never", "don't", "use", "send", "remember to", "let's"), a
  request ("can you", "I want you to"), a commitment ("we'll", "I'm going to",
  "I need to") or a hedge ("maybe", "probably", "I think", "not sure").
* There is no heading, so the kind comes from the sentence's own wording, the
  first that applies: identity ("my name is", "I'm a", "I work at", "I live
  in", "my partner"), preference ("prefer", "favourite", "I like", "I hate",
  "I don't want", "I'd rather"), project ("decided", "agreed", "going with",
  "architecture", "the plan", "deadline", "we use"), configuration ("config",
  "settings", "environment", "port", "version", "installed", "enabled",
  "timeout", "runs on"), runtime state ("is down", "is running", "currently",
  "right now", "status", "outage"); anything else is a fact.

A claim's text is its span's text with the spacing folded (and, after a
lead-in, the first letter capitalised), so the cited span says it word for word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Protocol

from core.claims.model import MAX_CLAIM_CHARS, ClaimKind

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

_A = r"['’]"  # an apostrophe, straight or curly
_LEAD_IN = re.compile(
    rf"(?:(?:please\s+)?(?:remember|note|keep in mind|don{_A}?t forget|do not forget)"
    r"(?:\s+that\b|\s+this\s*[:,-]|\s*[:,-])"
    r"|(?:for the record|fyi|just so you know|btw|by the way|actually|correction)\b\s*[:,-]?"
    r"|(?:no|nope|yes|yeah|well|oh|ok|okay|so|also)\s*[,:!-])\s*",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    rf"^(?:please|always|never|don{_A}?t|do not|make sure|avoid|stop|use|keep|send|write|run"
    r"|remind|remember|call|add|remove|fix|check|try|tell|give|show|put|change|update|install"
    r"|set|create|delete|open|close|book|buy|ask|email|go|get|find|look|read|move|schedule"
    rf"|cancel|pick|bring|take|start|finish|switch|note|let{_A}?s|let us)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\b(?:can|could|would|will) you\b|\b(?:want|need|like) you to\b"
    rf"|\bwe{_A}?ll\b|\bwe will\b|\b(?:i{_A}?m|i am|we{_A}?re|we are) going to\b"
    r"|\b(?:i|we) (?:need|have|want|ought) to\b|\bremember to\b|\bforget to\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|might|probably|possibly|not sure|unsure|i think|i guess|i wonder"
    r"|i suppose|i believe)\b",
    re.IGNORECASE,
)
_WORDING: Final = (
    (
        rf"\bmy name(?: is|{_A}s)\b|\b(?:i am|i{_A}?m) an?\b(?! bit| little)"
        rf"|\bi work (?:at|for|as|in|on)\b|\bi live in\b|\b(?:i am|i{_A}?m) from\b"
        r"|\bi was born\b|\bi grew up\b|\bmy (?:pronouns|job|role|title|wife|husband|partner"
        r"|daughter|son|kids?|children|family|birthday)\b",
        ClaimKind.IDENTITY,
    ),
    (
        rf"\bprefer(?:s|red|ence)?\b|\bfavou?rite\b|\b(?:i{_A}?d|would) rather\b"
        rf"|\bi (?:really )?(?:like|love|hate|dislike|enjoy|want)\b"
        rf"|\b(?:don{_A}?t|do not|never) (?:like|want|enjoy)\b",
        ClaimKind.PREFERENCE,
    ),
    (
        r"\b(?:decided|decision|agreed|chose|chosen|settled on|going with|architecture"
        r"|the project|the plan|roadmap|milestone|deadline|we use|we are using)\b"
        rf"|\bwe{_A}?re using\b|\bour (?:stack|repo|codebase|team|product|app)\b",
        ClaimKind.PROJECT,
    ),
    (
        r"\b(?:config\w*|settings?|environment|env|port|version|installed|enabled|disabled"
        r"|timeout|variable|runs on|set to)\b",
        ClaimKind.CONFIGURATION,
    ),
    (
        r"\b(?:is|are) (?:down|up|running|broken|offline|online|failing|stuck|paused)\b"
        r"|\b(?:currently|right now|at the moment|status|outage)\b",
        ClaimKind.RUNTIME_STATE,
    ),
)
_WORDING_KINDS: Final = tuple((re.compile(p, re.IGNORECASE), k) for p, k in _WORDING)


@dataclass(frozen=True)
class Found:
    text: str
    kind: ClaimKind
    span: tuple[int, int]


def is_statement(text: str) -> bool:
    """The rule both sources share: not a task checkbox, not a commitment (TODO, next
    steps, "I will", follow-ups), not a question, 3 to 60 words and short enough."""
    words = text.split()
    return not (
        _TASK.match(text)
        or _COMMITMENT.search(text)
        or text.rstrip().endswith("?")
        or not MIN_WORDS <= len(words) <= MAX_WORDS
        or len(" ".join(words)) > MAX_CLAIM_CHARS
    )


def kind_for(heading: str) -> ClaimKind:
    for pattern, kind in _KINDS:
        if pattern.search(heading):
            return kind
    return ClaimKind.FACT


def statements(markdown: str) -> list[Found]:
    """The claim-shaped list items of a handoff, with their spans."""
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
        if not is_statement(text):
            continue
        found.append(
            Found(
                " ".join(text.split()),
                kind_for(heading),
                (start + item.start("text"), start + item.end("text")),
            )
        )
    return found


class TurnPoint(Protocol):
    """One point of a day summary, as extraction reads it.

    The service passes :class:`core.layers.points.DayPoint` values; claims does
    not import layers (they are siblings), so this names only what it reads.
    """

    @property
    def exchange_seq(self) -> int: ...
    @property
    def speaker(self) -> str: ...
    @property
    def turn_text(self) -> str: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...


@dataclass(frozen=True)
class TurnFound:
    text: str
    kind: ClaimKind
    #: The turn (its exchange id) and the span in its text that says ``text``.
    exchange_seq: int
    span: tuple[int, int]


def wording_kind(sentence: str) -> ClaimKind:
    """A sentence's kind from its own wording (see the module notes)."""
    for pattern, kind in _WORDING_KINDS:
        if pattern.search(sentence):
            return kind
    return ClaimKind.FACT


def _without_lead_in(text: str, start: int, end: int) -> tuple[int, bool]:
    """Where the statement starts once its lead-ins are left out."""
    stripped = False
    for _ in range(3):
        m = _LEAD_IN.match(text, start, end)
        if m is None or m.end() >= end:
            break
        start, stripped = m.end(), True
    return start, stripped


def turn_statement(point: TurnPoint) -> TurnFound | None:
    """The claim one summary point makes, or None when it is not one."""
    text, start, end = point.turn_text, point.start, point.end
    if point.speaker != "user" or not 0 <= start < end <= len(text):
        return None
    start, stripped = _without_lead_in(text, start, end)
    sentence = text[start:end]
    if (
        not is_statement(sentence)
        or _IMPERATIVE.match(sentence)
        or _REQUEST.search(sentence)
        or _HEDGE.search(sentence)
    ):
        return None
    claim = " ".join(sentence.split())
    if stripped:
        claim = claim[0].upper() + claim[1:]
    return TurnFound(claim, wording_kind(claim), point.exchange_seq, (start, end))


def turn_statements(points: Iterable[TurnPoint]) -> list[TurnFound]:
    """The claims made by day-summary points, in their order (see the module notes)."""
    return [f for p in points if (f := turn_statement(p)) is not None]
