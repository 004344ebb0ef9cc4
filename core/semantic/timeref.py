"""Dates named in a question ("in March 2023", "last week") as a span of time.

Exchange search lifts turns said inside the span. Only plain English forms are
read; anything else yields no span, and ranking goes on without one.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))

_DAY_MONTH_YEAR = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH})\.?,?\s+(\d{{4}})\b", re.I
)
_MONTH_DAY_YEAR = re.compile(
    rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b", re.I)
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_RELATIVE = re.compile(
    r"\b(yesterday|today|last\s+(?:week|month|year|weekend)|this\s+(?:week|month|year))\b", re.I
)

Span = tuple[datetime, datetime]


def _day(year: int, month: int, day: int) -> Span | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return start, start + timedelta(days=1)


def _month(year: int, month: int) -> Span:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def _relative(phrase: str, now: datetime) -> Span:
    today = datetime(now.year, now.month, now.day, tzinfo=UTC)
    words = phrase.lower().split()
    match words:
        case ["yesterday"]:
            return today - timedelta(days=1), today
        case ["today"]:
            return today, today + timedelta(days=1)
        case ["last", "week"] | ["last", "weekend"]:
            monday = today - timedelta(days=today.weekday())
            return monday - timedelta(days=7), monday
        case ["this", "week"]:
            monday = today - timedelta(days=today.weekday())
            return monday, monday + timedelta(days=7)
        case ["last", "month"]:
            first = today.replace(day=1)
            previous = (first - timedelta(days=1)).replace(day=1)
            return previous, first
        case ["this", "month"]:
            return _month(today.year, today.month)
        case ["last", "year"]:
            return datetime(today.year - 1, 1, 1, tzinfo=UTC), datetime(
                today.year, 1, 1, tzinfo=UTC
            )
        case _:
            return datetime(today.year, 1, 1, tzinfo=UTC), datetime(
                today.year + 1, 1, 1, tzinfo=UTC
            )


def time_span(question: str, now: datetime) -> Span | None:
    """The span of time ``question`` names, the most precise form first; None if none."""
    if m := _ISO_DAY.search(question):
        return _day(int(m[1]), int(m[2]), int(m[3]))
    if m := _DAY_MONTH_YEAR.search(question):
        return _day(int(m[3]), _MONTHS[m[2].lower()], int(m[1]))
    if m := _MONTH_DAY_YEAR.search(question):
        return _day(int(m[3]), _MONTHS[m[1].lower()], int(m[2]))
    if m := _MONTH_YEAR.search(question):
        return _month(int(m[2]), _MONTHS[m[1].lower()])
    if m := _YEAR.search(question):
        year = int(m[1])
        return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)
    if m := _RELATIVE.search(question):
        return _relative(m[1], now)
    return None
