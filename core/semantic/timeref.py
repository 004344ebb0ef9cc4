"""Dates named in a question ("in March 2023", "last week", "on Monday") as a span of time.

Exchange search lifts turns said inside the span. Only plain English forms are
read; anything else yields no span, and ranking goes on without one.

Days are the days of ``now``'s time zone (the caller passes the person's local
time): "yesterday" asked at 6 pm in California is not the UTC day. A date
without a year is that date in each of the last :data:`YEARS_BACK` years, from
its latest occurrence that has begun: "in March" asked in November 2026 is
March 2026, March 2025, and so on (history imported from earlier years keeps
its dates).
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, tzinfo

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
#: Month names as written at the start of a word ("May", "Dec"): without a year,
#: lower case ("you may", "march on") is read as an ordinary word.
_TITLED = "|".join(sorted((m.title() for m in _MONTHS), key=len, reverse=True))
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
#: How many years a date without a year reaches back.
YEARS_BACK = 10
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip

_DAY_MONTH_YEAR = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_TITLED})\b")
_MONTH_DAY = re.compile(rf"\b({_TITLED})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?![:.,]?\d)")
#: Only full names after "in", "during" or "since": "from Jan" is more often a person.
_IN_MONTH = re.compile(rf"\b(?:in|during|since)\s+({'|'.join(calendar.month_name[1:])}|Sept)\b")
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", re.I)
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_AGO = re.compile(
    rf"\b(\d{{1,3}}|{'|'.join(_NUMBERS)}|a couple of|a few)\s+(day|week|month|year)s?\s+ago\b",
    re.I,
)
#: A weekday as a time: after "on", "last", "this past", "since" or "from", or ending
#: the question ("what did we decide Monday?"); not "the Sunday roast", "Monday.com".
_WEEKDAY = re.compile(
    rf"(?:\b(?:on|(last)|(this\s+past)|since|from)\s+({'|'.join(_WEEKDAYS)})\b(?![.-]\w)"
    rf"|\b({'|'.join(_WEEKDAYS)})\s*[?.!]*\s*$)",
    re.I,
)
_RELATIVE = re.compile(
    r"\b(day\s+before\s+yesterday|yesterday|last\s+night|today|tonight|this\s+(?:morning"
    r"|afternoon|evening)|last\s+(?:week|month|year|weekend)|this\s+(?:week|month|year))\b",
    re.I,
)

Span = tuple[datetime, datetime]


def _day(year: int, month: int, day: int, tz: tzinfo | None) -> Span | None:
    try:
        start = datetime(year, month, day, tzinfo=tz)
    except ValueError:
        return None
    return start, start + timedelta(days=1)


def _month(year: int, month: int, tz: tzinfo | None) -> Span:
    start = datetime(year, month, 1, tzinfo=tz)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)
    return start, end


def _year(year: int, tz: tzinfo | None) -> Span:
    return datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz)


def _months_back(today: datetime, count: int) -> Span:
    index = today.year * 12 + today.month - 1 - count
    return _month(index // 12, index % 12 + 1, today.tzinfo)


def _relative(phrase: str, today: datetime) -> Span:
    day = timedelta(days=1)
    monday = today - timedelta(days=today.weekday())
    match phrase.lower().split():
        case ["day", "before", "yesterday"]:
            return today - 2 * day, today - day
        case ["yesterday"] | ["last", "night"]:
            return today - day, today
        case ["last", "week"]:
            return monday - 7 * day, monday
        case ["last", "weekend"]:  # the Saturday and Sunday before this week's Monday
            return monday - 2 * day, monday
        case ["this", "week"]:
            return monday, monday + 7 * day
        case ["last", "month"]:
            return _months_back(today, 1)
        case ["this", "month"]:
            return _months_back(today, 0)
        case ["last", "year"]:
            return _year(today.year - 1, today.tzinfo)
        case ["this", "year"]:
            return _year(today.year, today.tzinfo)
        case _:  # today, tonight, this morning / afternoon / evening
            return today, today + day


def _ago(count: str, unit: str, today: datetime) -> Span:
    day = timedelta(days=1)
    vague = {"a couple of": (1, 3), "a few": (2, 6)}.get(count.lower())
    if vague is not None:  # a window of that many units back
        near, far = vague
    else:
        near = far = int(count) if count.isdigit() else _NUMBERS[count.lower()]
    match unit.lower():
        case "day":
            return today - far * day, today - (near - 1) * day
        case "week":
            monday = today - timedelta(days=today.weekday())
            return monday - 7 * far * day, monday - 7 * (near - 1) * day
        case "month":
            return _months_back(today, far)[0], _months_back(today, near)[1]
        case _:
            return _year(today.year - far, today.tzinfo)[0], _year(today.year - near, today.tzinfo)[
                1
            ]


def _weekday(last: bool, name: str, today: datetime) -> Span:
    """The latest such day: today if it is one ("on Tuesday" on a Tuesday), unless
    asked for the last one."""
    back = (today.weekday() - _WEEKDAYS[name.lower()]) % 7
    if back == 0 and last:
        back = 7
    start = today - timedelta(days=back)
    return start, start + timedelta(days=1)


def _every_year(month: int, day: int | None, today: datetime) -> list[Span]:
    """``month`` (or ``day`` of it) in each of the last :data:`YEARS_BACK` years, the
    latest that has begun by ``today`` first (no 29 February where there is none)."""
    latest = today.year if (month, day or 1) <= (today.month, today.day) else today.year - 1
    spans = []
    for year in range(latest, latest - YEARS_BACK, -1):
        span = (
            _month(year, month, today.tzinfo)
            if day is None
            else _day(year, month, day, today.tzinfo)
        )
        if span is not None:
            spans.append(span)
    return spans


def time_spans(question: str, now: datetime) -> list[Span]:
    """The spans of time ``question`` names, by the most precise form it holds (one
    span; one a year for a date without a year); none if it names no date.

    ``now`` must be aware; the spans are in its time zone. A date out of the
    calendar's range ("9999-12-31", "December 9999") names none.
    """
    try:
        return _spans(question, now)
    except (ValueError, OverflowError):
        return []


def _spans(question: str, now: datetime) -> list[Span]:
    span = _one_span(question, now)
    if span is not None:
        return [span]
    today = datetime(now.year, now.month, now.day, tzinfo=now.tzinfo)
    if m := _DAY_MONTH.search(question):
        return _every_year(_MONTHS[m[2].lower()], int(m[1]), today)
    if m := _MONTH_DAY.search(question):
        return _every_year(_MONTHS[m[1].lower()], int(m[2]), today)
    if m := _IN_MONTH.search(question):
        return _every_year(_MONTHS[m[1].lower()], None, today)
    return []


def _one_span(question: str, now: datetime) -> Span | None:
    tz = now.tzinfo
    today = datetime(now.year, now.month, now.day, tzinfo=tz)
    if m := _ISO_DAY.search(question):
        return _day(int(m[1]), int(m[2]), int(m[3]), tz)
    if m := _DAY_MONTH_YEAR.search(question):
        return _day(int(m[3]), _MONTHS[m[2].lower()], int(m[1]), tz)
    if m := _MONTH_DAY_YEAR.search(question):
        return _day(int(m[3]), _MONTHS[m[1].lower()], int(m[2]), tz)
    if m := _MONTH_YEAR.search(question):
        return _month(int(m[2]), _MONTHS[m[1].lower()], tz)
    if _DAY_MONTH.search(question) or _MONTH_DAY.search(question):
        return None  # a day without a year: one span a year
    if m := _YEAR.search(question):
        return _year(int(m[1]), tz)
    if m := _AGO.search(question):
        return _ago(m[1], m[2], today)
    if m := _RELATIVE.search(question):
        return _relative(m[1], today)
    if m := _WEEKDAY.search(question):
        return _weekday(bool(m[1] or m[2]), m[3] or m[4], today)
    return None


_ASKS_WHEN = re.compile(r"\s*(?:when|how long|what (?:year|month|day|date|time))\b", re.I)
_PERIOD = "week|weekend|month|year|night|morning|summer|winter|spring|fall|autumn"
_SAYS_WHEN = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|since|(?:last|next|this|that)\s+(?:{_PERIOD}"
    rf"|{'|'.join(_WEEKDAYS)})|days|weeks?|months?|years?|weekends?|{'|'.join(_WEEKDAYS)}"
    rf"|(?-i:{'|'.join(calendar.month_name[1:])})|(?:19|20)\d{{2}}"  # "may": a verb
    r"|\d{1,2}:\d{2}|\d{1,2}\s*(?:am|pm|a\.m|p\.m)|noon|midnight|o'clock)\b",
    re.I,
)


def asks_when(question: str) -> bool:
    """Whether ``question`` asks for a time ("When did…", "How long…")."""
    return _ASKS_WHEN.match(question) is not None


def says_when(text: str) -> bool:
    """Whether ``text`` says when something happened ("last year", "3 weeks", "in May")."""
    return _SAYS_WHEN.search(text) is not None
