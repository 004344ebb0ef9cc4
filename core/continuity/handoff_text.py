"""Handoff text: checking it on the way in, reading commitments out, fencing it for the brief.

Nothing here touches a database. A handoff enters the brief verbatim, inside a
code fence that nothing in the text can close (:func:`fenced`); the
commitments it contains are listed, rendered, by :func:`extract_open_threads`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from core.model.errors import InvalidParams, TooLarge
from core.model.text import check_unicode, single_line
from core.policy.screening import strip_controls

#: Largest handoff accepted, in UTF-8 bytes, before redaction.
MAX_HANDOFF_BYTES: Final = 64 * 1024
MAX_OPEN_THREADS: Final = 15
MAX_OPEN_THREAD_CHARS: Final = 200


def clean_markdown(text: object, field: str = "markdown") -> str:
    """Handoff text ready for screening: size-checked, LF line ends, no control characters.

    Raises:
        TooLarge: more than :data:`MAX_HANDOFF_BYTES` bytes of UTF-8.
        InvalidParams: not a string, not valid Unicode, or blank.
    """
    if not isinstance(text, str):
        raise InvalidParams(f"{field} must be a string", field=field, rule="type")
    check_unicode(text, field)
    size = len(text.encode("utf-8"))
    if size > MAX_HANDOFF_BYTES:
        raise TooLarge(
            f"{field} is {size} bytes; a handoff may be at most {MAX_HANDOFF_BYTES} bytes "
            "(64 KiB). Keep what the next session needs and leave the rest to the exchanges",
            field=field,
            limit=MAX_HANDOFF_BYTES,
        )
    text = strip_controls(text).rstrip().lstrip("\n")
    if not text:
        raise InvalidParams(f"{field} must not be empty", field=field, rule="minLength")
    return text


# -- open threads ------------------------------------------------------------------------

_ITEM = re.compile(r"^[ \t]*(?:[-+*]|\d{1,9}[.)])[ \t]+(?P<text>.*)$")
_TASK = re.compile(r"^\[(?P<mark>[ xX])\][ \t]+(?P<text>.*)$")
_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(?P<text>.*?)[ \t#]*$")
_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
_COMMITMENT = re.compile(
    r"(?-i:\bTODO\b)|\btodo:|\bFIXME\b|\bnext steps?\b|\bI will\b|\bI[’']ll\b"
    r"|\bfollow[- ]?ups?\b|\bopen threads?\b|\baction items?\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])[ \t]+")


def _clip(text: str) -> str:
    text = single_line(text)
    if len(text) > MAX_OPEN_THREAD_CHARS:
        text = text[: MAX_OPEN_THREAD_CHARS - 1].rstrip() + "…"
    return text


def _commitments(text: str) -> Iterable[str]:
    fence: str | None = None
    under_list_heading = False
    for line in text.splitlines():
        marker = _FENCE.match(line)
        if fence is not None:
            if marker and marker["fence"][0] == fence[0] and len(marker["fence"]) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker["fence"]
            continue
        if heading := _HEADING.match(line):
            # Every item under a "Next steps" or "TODO" heading is a commitment.
            under_list_heading = bool(_COMMITMENT.search(heading["text"]))
            continue
        if item := _ITEM.match(line):
            body = item["text"].strip()
            if task := _TASK.match(body):
                if task["mark"] == " ":
                    yield task["text"]
                continue  # a checked box is done, whatever it says
            if under_list_heading or _COMMITMENT.search(body):
                yield body
            continue
        # Prose: keep only the sentences that carry the commitment.
        for sentence in _SENTENCE_END.split(line.strip()):
            if _COMMITMENT.search(sentence):
                yield sentence


def extract_open_threads(*texts: str) -> list[str]:
    """Commitments in handoff text: unchecked ``- [ ]`` items, TODO, "next step",
    "I will", "follow up" (and items under headings that say so), deduplicated,
    each on one line, at most :data:`MAX_OPEN_THREADS`.
    """
    found: dict[str, str] = {}
    for text in texts:
        for raw in _commitments(text):
            item = _clip(raw.strip())
            if item and item.casefold() not in found:
                found[item.casefold()] = item
                if len(found) == MAX_OPEN_THREADS:
                    return list(found.values())
    return list(found.values())


# -- fencing for the brief ---------------------------------------------------------------


def fenced(markdown: str) -> str:
    """``markdown`` verbatim inside a code fence that nothing in it can close.

    A fence of three backticks or three tildes is used when the text has no such
    run (the brief's truncation closes exactly those); otherwise backticks, one
    longer than the longest run in the text.
    """
    longest = {ch: max((len(r) for r in re.findall(rf"{ch}+", markdown)), default=0) for ch in "`~"}
    if longest["`"] < 3:
        fence = "```"
    elif longest["~"] < 3:
        fence = "~~~"
    else:
        fence = "`" * (longest["`"] + 1)
    return f"{fence}markdown\n{markdown}\n{fence}"


def inline_safe(text: str) -> str:
    """One line that stays a plain list-item text: no heading, quote, fence or list opens."""
    text = single_line(text)
    if m := re.match(r"\d{1,9}(?=[.)])", text):
        return text[: m.end()] + "\\" + text[m.end() :]
    if text[:1] and text[0] in "#>-+*`~<=_|[!":
        return "\\" + text
    return text
