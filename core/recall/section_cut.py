"""Cutting a brief section short: which lines stay, and how the cut is closed.

The brief (core.recall.brief) fills its extra sections (claims, handoffs, files,
Flash and Warm) in order and cuts the first one that does not fit. The cut keeps
whole lines, closes a code fence it fell inside and ends with :data:`CUT`.

Lines of a list (a claim, a turn, a file) are kept whole or not at all: half an
item can say the opposite of the whole one, and each is short. Text inside a
code fence is a handoff quoted verbatim, and may be one long paragraph: the line
the cut falls in keeps the part of it that fits, ended at a word
(:func:`word_cut`), so a handoff written without line breaks is never shown as
an empty fence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Final

#: The line that ends a section cut short.
CUT: Final = "… (truncated)"
#: A line inside a fence keeps a part only when at least this many characters fit.
MIN_PART_CHARS: Final = 80
#: How far back from the room's end a word boundary is looked for.
_WORD_REACH: Final = 80

# CommonMark: up to three spaces, then a run of three or more backticks or tildes.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPACE = re.compile(r"\s")


def open_fence(lines: Sequence[str]) -> str | None:
    """The fence ``lines`` leave open (its run of backticks or tildes), if any."""
    fence: str | None = None
    for line in lines:
        marker = _FENCE.match(line)
        if marker is None:
            continue
        run = marker[1]
        if fence is None:
            fence = run
        elif run[0] == fence[0] and len(run) >= len(fence) and not line[marker.end() :].strip():
            # Only a run as long, of the same character, and nothing after it, closes.
            fence = None
    return fence


def cut_lines(lines: Sequence[str], kept: int, part: str = "") -> list[str]:
    """The first ``kept`` lines and ``part`` of the next, the fence closed, :data:`CUT`.

    A fence opened by the last line kept, with nothing of its text after it, is
    left out rather than shown empty.
    """
    prefix = list(lines[:kept])
    if part:
        prefix.append(part)
    fence = open_fence(prefix)
    opened_last = fence is not None and not part and open_fence(prefix[:-1]) is None
    if opened_last:
        prefix.pop()
        while prefix and not prefix[-1].strip():
            prefix.pop()
        fence = None
    return [*prefix, *([fence] if fence else []), CUT]


def word_cut(line: str, room: int) -> str:
    """At most ``room`` characters of ``line``, ended at a word where one is near.

    Text without a space in the last :data:`_WORD_REACH` characters of the room
    (a long token, or Chinese or Japanese) is cut at the character.
    """
    if room >= len(line):
        return line
    if room <= 0:
        return ""
    if _SPACE.match(line[room]):
        return line[:room].rstrip()
    head = line[:room]
    start = max(0, room - _WORD_REACH)
    spaces = [m.start() for m in _SPACE.finditer(head, start)]
    if spaces and head[: spaces[-1]].strip():
        return head[: spaces[-1]].rstrip()
    return head


def fit_lines(
    lines: Sequence[str], estimate: int, fits: Callable[[list[str]], bool]
) -> list[str] | None:
    """The longest cut of ``lines`` (by :func:`cut_lines`) that ``fits``, or None.

    ``estimate`` is how many whole lines should fit; fewer are tried until one
    cut fits. The next line then keeps the part of it that fits, when it is
    text inside a fence and at least :data:`MIN_PART_CHARS` of it fit.
    """
    kept = min(estimate, len(lines))
    while kept >= 0 and not fits(cut_lines(lines, kept)):
        kept -= 1
    if kept < 0:
        return None
    best = cut_lines(lines, kept)
    if kept == len(lines) or open_fence(lines[:kept]) is None or _FENCE.match(lines[kept]):
        return best
    line = lines[kept]
    # The longest part that fits: sizes grow with the part, so search by halves.
    low, high = 0, len(line) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if fits(cut_lines(lines, kept, line[:middle])):
            low = middle
        else:
            high = middle - 1
    if low < MIN_PART_CHARS:
        return best
    part = word_cut(line, low)
    return cut_lines(lines, kept, part) if part.strip() else best
