"""When a turn was said: ``exchange_log``'s ``at``, read and checked.

ISO 8601, a time or a date alone. A time without an offset is UTC. A date alone,
in any of ISO 8601's forms (``2026-11-20``, ``20261120``, ``2026-W47-5``), is a
day rather than an instant: noon of it in the machine's time zone, so that a
question naming that day (read in the same zone) finds it. ``T24:00`` is the end
of the day, the next day's 00:00.

The limits are on what the person wrote: a year from :data:`EARLIEST_AT_YEAR` in
the time as given (``1900-01-01T00:00+05:30`` is 1900, though UTC's 1899), and no
later than :data:`LATEST_AT_AHEAD` after now. A refusal names the problem: a day
that does not exist, a number that is no date, a year too early or too late.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta
from typing import Final

from core.model.entries import utc_now
from core.model.errors import InvalidParams
from core.model.times import LATEST_AHEAD

#: The earliest year a turn can be said in; a turn said later than a day from now is
#: a clock or a typo (it would stay "the most recent" for years).
EARLIEST_AT_YEAR: Final = 1900
LATEST_AT_AHEAD: Final = LATEST_AHEAD
EXAMPLE: Final = "2023-05-08T13:56:00Z"

_END_OF_DAY = re.compile(
    r"(?P<day>[\d\-W]+)[T ]24(?::?00(?::?00(?:[.,]0+)?)?)?(?P<zone>[zZ]|[+-]\d{2}(?::?\d{2})?)?"
)
_CALENDAR = re.compile(r"(\d{4})-?(\d{2})-?(\d{2})(?![\d])")
_CLOCK = re.compile(r"[T ](\d{2})(?::?(\d{2}))?(?::?(\d{2}))?")


def _refuse(message: str, rule: str) -> InvalidParams:
    return InvalidParams(message, field="at", rule=rule)


def _problem(text: str) -> str:
    """What is wrong with ``text``, which is not an ISO 8601 date or time."""
    if text.isdigit() and len(text) != 8:  # 8 digits: a date, 20261120
        return f"at {text!r}: a number is not a date; give an ISO 8601 time such as {EXAMPLE}"
    if m := _CALENDAR.match(text):
        year, month, day = (int(g) for g in m.groups())
        if not 1 <= month <= 12:
            return f"at {text!r}: there is no month {month}"
        if not 1 <= day <= calendar.monthrange(year or 4, month)[1]:
            return f"at {text!r}: {day} {calendar.month_name[month]} {year} does not exist"
        if clock := _CLOCK.match(text, m.end()):
            units = (("hour", 23), ("minute", 59), ("second", 59))
            for value, (unit, most) in zip(clock.groups(), units, strict=True):
                if value is not None and int(value) > most:
                    return f"at {text!r}: there is no {unit} {int(value)} (00 to {most})"
    return f"at {text!r} is not an ISO 8601 date or time; give one such as {EXAMPLE}"


def _end_of_day(text: str) -> str:
    """``…T24:00`` as the next day's ``…T00:00`` (ISO 8601's end of a day)."""
    m = _END_OF_DAY.fullmatch(text)
    if m is None:
        return text
    try:
        day = date.fromisoformat(m["day"])
    except ValueError:
        return text
    return f"{day + timedelta(days=1)}T00:00:00{m['zone'] or ''}"


def _read(text: str) -> tuple[datetime, int]:
    """``text`` as an aware time, and the year it was given in (before any conversion)."""
    given = _end_of_day(text)
    try:
        day = date.fromisoformat(given)
    except ValueError:
        pass
    else:
        if day.year < EARLIEST_AT_YEAR:
            return datetime(day.year, day.month, day.day, 12, tzinfo=UTC), day.year
        return datetime(day.year, day.month, day.day, 12).astimezone(), day.year
    try:
        at = datetime.fromisoformat(re.sub(r"[zZ]$", "+00:00", given))
    except ValueError:
        raise _refuse(_problem(text), "format") from None
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)), at.year


def parse_at(value: object, now: datetime | None = None) -> datetime | None:
    """An ``at`` param (see the module notes) as a time in UTC; ``None`` if not given.

    Raises:
        InvalidParams: on ``at``, saying what is wrong (rule ``format``, ``minimum``,
            ``maximum`` or ``range``).
    """
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise _refuse(
            f"at must be a string: a number is not a date; give an ISO 8601 time such as {EXAMPLE}",
            "type",
        )
    if not isinstance(value, str):
        raise _refuse(f"at must be an ISO 8601 date or time, for example {EXAMPLE}", "format")
    text = value.strip()
    at, year = _read(text)
    if year < EARLIEST_AT_YEAR:
        raise _refuse(f"at {text!r} is before {EARLIEST_AT_YEAR}; give when it was said", "minimum")
    try:
        at = at.astimezone(UTC)
    except OverflowError:  # in UTC, after year 9999
        raise _refuse(f"at {text!r} is out of range; give when it was said", "range") from None
    if at > (now or utc_now()) + LATEST_AT_AHEAD:
        raise _refuse(f"at {text!r} is in the future; give when it was said", "maximum")
    return at
