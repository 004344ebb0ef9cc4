"""Drafting summaries from turns (a day) and from summaries (a week, a month).

Pure functions: no database. :mod:`core.layers.compression` feeds them the turns
and the group's keyword statistics and stores what they return.

A day summary is built from one session's turns of one day in one thread:

* the sentences the rules keep (:mod:`core.layers.rules`), each scored by its
  kind's weight times ``0.3 +`` the TF-IDF weight of its keywords per square root
  of its length (so a short sentence about rare things beats a long ramble);
* **points**: the best five, near-duplicates skipped, in the order they were said,
  each with who said it, and each with its source (:class:`PointSource`): the turn
  and the span of the kept sentence in the turn's text, verbatim;
* **hook**: the best one, at most :data:`HOOK_CHARS` characters;
* **quotes**: the person's remember requests, corrections, instructions and
  decisions, verbatim, at most three;
* **keywords**: the :data:`~core.layers.keywords.INDEX_TERMS` heaviest terms.

A week rolls up its days and a month its weeks: the keywords add up (by rank),
the hook is the child whose keywords weigh most in the merged list, the points
are the children's hooks in time order (with no source of their own: a rollup
reaches its turns through its days), the quotes the children's first quotes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from core.layers import keywords
from core.layers.rules import QUOTABLE, WEIGHT, Kind, Sentence, kept
from core.model.text import sha256_text

HOOK_CHARS: Final = 160
POINT_CHARS: Final = 220
QUOTE_CHARS: Final = 240
MAX_POINTS: Final = 5
MAX_QUOTES: Final = 3
_NEAR_DUPLICATE: Final = 0.6


@dataclass(frozen=True)
class SourceTurn:
    seq: int
    speaker: str
    name: str | None
    text: str
    said_at: str


@dataclass(frozen=True)
class PointSource:
    """Where one point of a day summary came from."""

    #: The turn (its exchange id).
    seq: int
    #: The kept sentence's span in the turn's text.
    start: int
    end: int
    #: SHA-256 of the turn's text when the point was drawn from it.
    sha256: str

    def to_dict(self) -> dict[str, int | str]:
        return {"seq": self.seq, "start": self.start, "end": self.end, "sha256": self.sha256}


@dataclass(frozen=True)
class Draft:
    hook: str
    points: tuple[str, ...]
    quotes: tuple[str, ...]
    #: Index terms, heaviest first; the first SHOWN_TERMS are displayed.
    keywords: tuple[str, ...]
    #: Every term key of the document (what it adds to the group's statistics).
    terms: tuple[str, ...]
    start_at: str
    end_at: str
    turn_count: int
    #: One per point of a day summary, in the same order; empty for a rollup.
    point_sources: tuple[PointSource, ...] = ()


@dataclass(frozen=True)
class Child:
    """A stored summary as a rollup sees it."""

    hook: str
    quotes: tuple[str, ...]
    keywords: tuple[str, ...]
    start_at: str
    end_at: str
    turn_count: int


def clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters, cut at a word with an ellipsis."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0]
    return (cut or line[: limit - 1]) + "…"


@dataclass(frozen=True)
class _Candidate:
    order: int
    who: str
    text: str
    kind: Kind
    score: float
    terms: frozenset[str]
    speaker: str
    source: PointSource


def _who(turn: SourceTurn) -> str:
    return turn.name or turn.speaker


def draft_day(turns: Sequence[SourceTurn], df: Mapping[str, int], total: int) -> Draft:
    """The summary of one session's turns of one day (see the module notes)."""
    if not turns:
        raise ValueError("a day summary needs at least one turn")
    picked: list[tuple[SourceTurn, Sentence, str]] = []
    for turn in turns:
        digest = sha256_text(turn.text)
        picked.extend((turn, s, digest) for s in kept(turn.text, turn.speaker))
    counts, _ = keywords.term_counts(s.text for _, s, _ in picked)
    weights = keywords.tfidf(counts, df, total)
    candidates: list[_Candidate] = []
    for order, (turn, sentence, digest) in enumerate(picked):
        text, kind = sentence.text, sentence.kind
        terms = frozenset(k for k, _ in keywords.tokens(text))
        relevance = sum(weights.get(t, 0.0) for t in terms) / math.sqrt(max(3, len(terms)))
        score = WEIGHT[kind] * (0.3 + relevance)
        source = PointSource(turn.seq, *sentence.span, digest)
        candidates.append(
            _Candidate(order, _who(turn), text, kind, score, terms, turn.speaker, source)
        )
    ranked = _distinct(sorted(candidates, key=lambda c: (-c.score, c.order)), MAX_POINTS)
    best = sorted(ranked, key=_order)
    points = tuple(clip(f"{c.who}: {c.text}", POINT_CHARS) for c in best)
    if ranked:
        hook = clip(f"{ranked[0].who}: {ranked[0].text}", HOOK_CHARS)
    else:
        hook = clip(f"{_who(turns[0])}: {turns[0].text}", HOOK_CHARS)
    quotes = tuple(
        clip(c.text, QUOTE_CHARS) for c in candidates if c.kind in QUOTABLE and c.speaker == "user"
    )[:MAX_QUOTES]
    said = sorted(t.said_at for t in turns)
    return Draft(
        hook=hook,
        points=points,
        quotes=quotes,
        keywords=tuple(keywords.top(weights, keywords.INDEX_TERMS)),
        terms=tuple(sorted(counts)),
        start_at=said[0],
        end_at=said[-1],
        turn_count=len(turns),
        point_sources=tuple(c.source for c in best),
    )


def _order(c: _Candidate) -> int:
    return c.order


def _distinct(ranked: Sequence[_Candidate], n: int) -> list[_Candidate]:
    out: list[_Candidate] = []
    for c in ranked:
        if len(out) == n:
            break
        if any(_jaccard(c.terms, o.terms) > _NEAR_DUPLICATE for o in out):
            continue
        out.append(c)
    return out


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def draft_rollup(children: Sequence[Child]) -> Draft:
    """A week of days, or a month of weeks (see the module notes)."""
    if not children:
        raise ValueError("a rollup needs at least one child")
    ordered = sorted(children, key=lambda c: (c.start_at, c.end_at, c.hook))
    merged: dict[str, float] = {}
    for child in ordered:
        n = max(1, len(child.keywords))
        for rank, term in enumerate(child.keywords):
            merged[term] = merged.get(term, 0.0) + (n - rank) / n
    lead = max(ordered, key=lambda c: (sum(merged.get(t, 0.0) for t in c.keywords[:8]), c.end_at))
    points = tuple(clip(c.hook, POINT_CHARS) for c in ordered if c is not lead)[:MAX_POINTS]
    quotes = tuple(q for c in ordered for q in c.quotes[:1])[:MAX_QUOTES]
    return Draft(
        hook=clip(lead.hook, HOOK_CHARS),
        points=points,
        quotes=quotes,
        keywords=tuple(keywords.top(merged, keywords.INDEX_TERMS)),
        terms=(),
        start_at=ordered[0].start_at,
        end_at=max(c.end_at for c in ordered),
        turn_count=sum(c.turn_count for c in ordered),
    )
