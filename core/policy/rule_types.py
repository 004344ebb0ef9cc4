"""The rule every secret detector is, and how one is run over a text.

Each :class:`Rule` is a regex tried only where one of its literal anchors
occurs, with a tier saying how sure a match is and, where the match includes
context (``password=``), a function that cuts it down to the secret itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum


class Tier(StrEnum):
    """How sure a finding is, which decides what happens to it."""

    DEFINITE = "definite"
    PROBABLE = "probable"
    POSSIBLE = "possible"

    @property
    def redacts(self) -> bool:
        """Whether findings of this tier are replaced in the stored text."""
        match self:
            case Tier.DEFINITE | Tier.PROBABLE:
                return True
            case Tier.POSSIBLE:
                return False

    @property
    def rank(self) -> int:
        """Lower wins when two findings overlap."""
        match self:
            case Tier.DEFINITE:
                return 0
            case Tier.PROBABLE:
                return 1
            case Tier.POSSIBLE:
                return 2


Span = tuple[int, int]
Extract = Callable[[re.Match[str]], Span | None]


@dataclass(frozen=True)
class Rule:
    """One detector.

    Running a regex over every position of the text is what makes scanning slow,
    so each rule names the literal anchors where a match can begin and is only
    tried there; ``str.find`` locates anchors far faster than the regex engine.
    """

    name: str
    tier: Tier
    #: Matched (not searched) at each anchor; it must also work with ``finditer``,
    #: which is the fallback when lower-casing changes the text's length and what
    #: a rule with no anchors uses.
    regex: re.Pattern[str]
    anchors: tuple[str, ...]
    #: Skip the rule unless one of these characters occurs (a memchr-cheap test).
    needs: str = ""
    #: Look anchors up in the lower-cased text.
    caseless: bool = False
    #: The match begins this many characters before its anchor.
    back: int = 0
    #: Turns a match into the span to report, or rejects it; default: whole match.
    extract: Extract | None = None


def edge(chars: str) -> str:
    """No token starts right after one of ``chars``, except after a percent-escape:
    in "?next=%2Fcb%3Fkey%3Dghp_..." the "D" of "%3D" is "=", and the token
    after it is whole."""
    return rf"(?:(?<![{chars}])|(?<=%[0-9A-Fa-f]{{2}}))"


def matches(rule: Rule, text: str, lowered: str) -> Iterator[re.Match[str]]:
    if not rule.anchors or (rule.caseless and len(lowered) != len(text)):
        # No literal to anchor on (a shape, not a prefix), or lower-casing moved
        # the offsets (e.g. "İ" became two characters): search the whole text.
        yield from rule.regex.finditer(text)
        return
    haystack = lowered if rule.caseless else text
    starts: set[int] = set()
    for anchor in rule.anchors:
        i = haystack.find(anchor)
        while i != -1:
            starts.add(i - rule.back)
            i = haystack.find(anchor, i + 1)
    # Never retry inside an earlier match: that keeps a run of repeated anchors
    # ("password=password=...") linear instead of quadratic.
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        m = rule.regex.match(text, start)
        if m is not None:
            done = m.end()
            yield m
