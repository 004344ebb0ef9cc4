"""The overlap measure: how much of a claim a source text says.

Pure functions, no storage. Both texts are cut into word tokens (``\\w+``,
case-folded, a plural ``s`` dropped from words of four letters or more). Then:

* **exact**: the claim's whole token sequence occurs, contiguous and in order,
  in the source's (so case, punctuation and spacing do not matter, but every
  word does, including "not").
* **coverage**: the share of the claim's distinct *content* tokens (tokens
  that are not in :data:`STOPWORDS`) found anywhere in the best-matching
  passage of the source. A passage is a line or a sentence; the evidence span
  is the passage with the highest coverage.
* **partial**: not exact, coverage at least :data:`PARTIAL_THRESHOLD`, and
  every number in the claim is in that passage; a claim that changes a number
  ("port 8080" against "port 9090") is never a partial match however many
  other words it shares. A negation in the claim that the passage lacks, or the
  reverse, also rules out a partial match.
* otherwise **none**: the source does not say this.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

#: The least coverage of a claim's content words that counts as a partial match.
PARTIAL_THRESHOLD: Final = 0.5

STOPWORDS: Final = frozenset(
    "a an and are as at be been by for from has have in is it its of on or that the "
    "this to was were will with we i you they he she our their my your uses use".split()
)
NEGATIONS: Final = frozenset("not no never none nobody nothing cannot without".split())

_WORD = re.compile(r"\w+")
_PASSAGE = re.compile(r"[^\n.!?]+[.!?]?")


class Match(StrEnum):
    EXACT = "exact"
    PARTIAL = "partial"
    NONE = "none"


@dataclass(frozen=True)
class Token:
    norm: str
    start: int
    end: int


@dataclass(frozen=True)
class Overlap:
    match: Match
    #: Share of the claim's content words in the evidence passage, 0..1.
    coverage: float
    #: Character span of the evidence in the source text, or None if nothing matched.
    span: tuple[int, int] | None
    #: Content words of the claim that the evidence passage lacks.
    missing: tuple[str, ...]
    #: Why a passage that shares enough words is still no match (a negation, a
    #: number); empty otherwise.
    why: str = ""


def _norm(word: str) -> str:
    w = word.casefold()
    if len(w) >= 4 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def tokens(text: str, offset: int = 0) -> list[Token]:
    out: list[Token] = []
    for m in _WORD.finditer(text):
        norm = _norm(m.group())
        if norm == "t" and out and out[-1].norm.endswith("n"):
            norm = "not"  # "don't", "isn't", "can't": the apostrophe split the negation off
        out.append(Token(norm, m.start() + offset, m.end() + offset))
    return out


def _content(toks: list[Token]) -> list[str]:
    words = [t.norm for t in toks if t.norm not in STOPWORDS]
    return list(dict.fromkeys(words or [t.norm for t in toks]))


def _is_number(word: str) -> bool:
    return any(c.isdigit() for c in word)


def _find_sequence(claim: list[Token], source: list[Token]) -> tuple[int, int] | None:
    want = [t.norm for t in claim]
    n = len(want)
    if n == 0:
        return None
    norms = [t.norm for t in source]
    first = want[0]
    for i in range(len(norms) - n + 1):
        if norms[i] == first and norms[i : i + n] == want:
            return source[i].start, source[i + n - 1].end
    return None


def _passages(text: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in _PASSAGE.finditer(text) if m.group().strip()]
    return spans or [(0, len(text))]


def measure(claim: str, source: str) -> Overlap:
    """How much of ``claim`` the ``source`` text says (see the module docstring)."""
    claim_toks = tokens(claim)
    if not claim_toks:
        return Overlap(Match.NONE, 0.0, None, ())
    source_toks = tokens(source)
    span = _find_sequence(claim_toks, source_toks)
    if span is not None:
        return Overlap(Match.EXACT, 1.0, span, ())
    wanted = _content(claim_toks)
    claim_negated = any(t.norm in NEGATIONS for t in claim_toks)
    best: Overlap | None = None
    best_key = (False, -1.0)
    for start, end in _passages(source):
        passage = tokens(source[start:end], start)
        have = {t.norm for t in passage}
        missing = tuple(w for w in wanted if w not in have)
        coverage = 1 - len(missing) / len(wanted)
        numbers_kept = not any(_is_number(w) for w in missing)
        same_polarity = claim_negated == any(t.norm in NEGATIONS for t in passage)
        ok = coverage >= PARTIAL_THRESHOLD and numbers_kept and same_polarity
        # A passage that supports the claim beats one that merely shares more words.
        if (ok, coverage) <= best_key:
            continue
        best_key = (ok, coverage)
        trimmed = (passage[0].start, passage[-1].end) if passage else (start, end)
        why = ""
        if coverage >= PARTIAL_THRESHOLD and not ok:
            why = _why_not(claim_toks, passage, numbers_kept)
        best = Overlap(Match.PARTIAL if ok else Match.NONE, coverage, trimmed, missing, why)
    assert best is not None
    if best.coverage == 0:
        return Overlap(Match.NONE, 0.0, None, best.missing)
    return best


def _why_not(claim: list[Token], passage: list[Token], numbers_kept: bool) -> str:
    """Why a passage sharing enough of the claim's words does not say it."""
    if not numbers_kept:
        return "a number in the claim is not in the passage"
    said = next((t.norm for t in passage if t.norm in NEGATIONS), None)
    if said is not None:
        return f"the passage is negated ({said!r}) and the claim is not"
    claimed = next((t.norm for t in claim if t.norm in NEGATIONS), "not")
    return f"the claim is negated ({claimed!r}) and the passage is not"
