"""Memory markers: operational observations an agent writes inline in its output.

An agent that cannot call tools mid-stream can still leave a note for its future
self as a line of plain text::

    [MEMORY:timing:jellyfin] Takes about a minute to start after a restart
    - [MEMORY:remediation] Retry DNS checks once during VPN reconnects

The category comes from a closed set; the service part is optional. A marker must
open its line (after optional indentation and a list bullet), so a sentence that
merely mentions the syntax is never taken for an observation. A line that looks
like a marker attempt but breaks the grammar is counted as malformed and dropped
whole: a half-parsed marker could file an observation under the wrong service.

The module also holds the text comparison used to spot a re-observation of
something already stored (:func:`same_observation`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from core.model.entries import MAX_CONTENT_CHARS


class Category(StrEnum):
    TIMING = "timing"
    DEPENDENCY = "dependency"
    BEHAVIOR = "behavior"
    REMEDIATION = "remediation"
    MAINTENANCE = "maintenance"


@dataclass(frozen=True)
class Marker:
    category: Category
    service: str | None
    observation: str
    #: 1-based line number in the parsed text, so a person can find the source.
    line: int


@dataclass(frozen=True)
class Problem:
    """A line that tried to be a marker, and what to change in it."""

    line: int
    reason: str
    #: Well formed, but the write policy refused it (a credential, say).
    refused: bool = False


@dataclass(frozen=True)
class ParseResult:
    markers: tuple[Marker, ...]
    #: Lines that tried to be a marker and failed the grammar, in line order.
    problems: tuple[Problem, ...] = ()

    @property
    def malformed(self) -> int:
        return count_malformed(self.problems)


def count_malformed(problems: Iterable[Problem]) -> int:
    """How many of ``problems`` broke the grammar (the others the policy refused)."""
    return sum(not p.refused for p in problems)


MAX_SERVICE_CHARS = 64
MAX_OBSERVATION_CHARS = MAX_CONTENT_CHARS

_OPEN = "[memory:"
_SERVICE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
# Indentation, then at most one bullet: "-", "*", "+", "1." or "1)".
_LEAD_RE = re.compile(r"\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?")
_CATEGORIES = {c.value: c for c in Category}
_WORD_RE = re.compile(r"\w+")


def parse_markers(text: str) -> ParseResult:
    """Find every ``[MEMORY:category(:service)] observation`` line in ``text``.

    Never raises: anything that is not a well-formed marker is either ignored
    (no marker attempt on the line) or counted in ``malformed``.

    Args:
        text: Free text, typically an agent's reply or a session transcript.

    Returns:
        The markers in line order and the number of malformed marker lines.
    """
    markers: list[Marker] = []
    problems: list[Problem] = []
    # splitlines also breaks on U+2028 and friends, matching how the brief and
    # any markdown viewer would see separate lines.
    for number, line in enumerate(text.splitlines(), start=1):
        if _OPEN not in line.casefold():
            continue
        marker = _parse_line(line, number)
        if isinstance(marker, str):
            problems.append(Problem(number, marker))
        else:
            markers.append(marker)
    return ParseResult(markers=tuple(markers), problems=tuple(problems))


#: The categories, as a malformed line's reason lists them.
CATEGORY_NAMES = ", ".join(c.value for c in Category)


def _parse_line(line: str, number: int) -> Marker | str:
    """The marker on ``line``, or what is wrong with it."""
    lead = _LEAD_RE.match(line)
    start = lead.end() if lead else 0
    if line[start : start + len(_OPEN)].casefold() != _OPEN:
        return "[MEMORY: must open the line (after at most an indent and one list bullet)"
    close = line.find("]", start)
    if close < 0:
        return "no ] closes the marker"
    head = line[start + len(_OPEN) : close]
    category_text, sep, service_text = head.partition(":")
    # ASCII only: casefold maps some non-ASCII letters onto ASCII ones.
    category = _CATEGORIES.get(category_text.lower()) if category_text.isascii() else None
    if category is None:
        return f"unknown category {category_text[:40]!r}: use one of {CATEGORY_NAMES}"
    service: str | None = None
    if sep:
        if not _SERVICE_RE.fullmatch(service_text):
            return (
                f"service {service_text[:80]!r} must be 1-{MAX_SERVICE_CHARS} letters, "
                "digits, - or _"
            )
        service = service_text
    observation = line[close + 1 :].strip()
    if not observation:
        return "no observation after the marker"
    if len(observation) > MAX_OBSERVATION_CHARS:
        return f"the observation is over {MAX_OBSERVATION_CHARS:,} characters"
    # A second marker on the same line would be swallowed into this observation.
    if _OPEN in observation.casefold():
        return "two markers on one line: put each on its own line"
    return Marker(category=category, service=service, observation=observation, line=number)


def marker_tags(marker: Marker) -> list[str]:
    """Tags that let a stored marker be found by category and grouped by service."""
    tags = ["marker", f"category:{marker.category}"]
    if marker.service:
        tags.append(f"service:{marker.service}")
    return tags


def normalise(text: str) -> str:
    """Case-folded text with whitespace collapsed and trailing punctuation removed."""
    collapsed = " ".join(text.casefold().split())
    end = len(collapsed)
    while end and (collapsed[end - 1].isspace() or _is_punctuation(collapsed[end - 1])):
        end -= 1
    return collapsed[:end]


def _is_punctuation(char: str) -> bool:
    return unicodedata.category(char).startswith("P")


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD_RE.findall(text.casefold()))


def jaccard(a: str, b: str) -> float:
    """Overlap of the two texts' word sets: 1.0 identical, 0.0 disjoint.

    Two texts without any words count as identical (1.0).
    """
    words_a, words_b = _words(a), _words(b)
    union = words_a | words_b
    if not union:
        return 1.0
    return len(words_a & words_b) / len(union)


def same_observation(a: str, b: str, threshold: float = 0.6) -> bool:
    """Whether ``b`` restates ``a`` closely enough to reinforce it rather than add it."""
    return normalise(a) == normalise(b) or jaccard(a, b) >= threshold
