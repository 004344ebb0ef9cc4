"""Times as the store holds them, and how one read from outside becomes one.

Every time Ambry writes is :func:`core.model.entries.iso`: ISO 8601 in UTC with
milliseconds and a ``Z`` (``2024-05-01T09:30:00.000Z``). A time read from a file
(an import) goes through :func:`store_form` first: any ISO 8601 time is accepted,
one without an offset is taken as UTC, and anything else is refused.

An older Ambry imported times as the file gave them, so a store may hold a time
without an offset, or text that is no time at all. :func:`stored_time` reads those
without failing: no offset is UTC, and an unreadable one is ``None``, which the
brief, search and decay count as now. Each field's first unreadable time is
logged once per process, by name, never by value.

Days are the machine's local calendar days, as a person and a question naming a
day read them (:func:`local_day`, :func:`local_day_span`); each date gets the
offset in force on it, summer time included.
"""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Final

from core.model.entries import iso

log = logging.getLogger(__name__)

#: How far ahead of the clock a time read from outside may be: a clock running
#: ahead, or a date alone read as noon. A later one is a clock or a typo, and would
#: stay "the most recent" (and "today") for years.
LATEST_AHEAD: Final = timedelta(days=1)

#: What a refused time should have been, for messages.
EXPECTED = "an ISO 8601 time such as 2024-05-01T09:30:00Z; one without an offset is read as UTC"

_logged: set[str] = set()


def utc_time(text: str) -> datetime:
    """``text`` (ISO 8601) as an aware datetime in UTC; without an offset it is UTC.

    Raises:
        ValueError: not an ISO 8601 time, or one outside the years 1 to 9999 in UTC.
    """
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError(f"{text} is out of range in UTC") from None


def store_form(text: str) -> str:
    """``text`` (ISO 8601, an offset or none for UTC) as the store writes a time.

    Raises:
        ValueError: not a time (see :func:`utc_time`).
    """
    return iso(utc_time(text))


def stored_time(text: str | None, field: str) -> datetime | None:
    """A time read back from the store; ``None`` when there is none or it is not a time.

    Never raises: a store an older Ambry imported into may hold a time without an
    offset (read as UTC) or text that is no time (``None``; logged once per ``field``).
    """
    if not text:
        return None
    try:
        return utc_time(text)
    except ValueError:
        if field not in _logged:
            _logged.add(field)
            log.info(
                "a stored %s is not a time (an import by an older Ambry kept it as the "
                "file gave it); it counts as now",
                field,
            )
        return None


def local_day(text: str) -> str:
    """The machine's local calendar day (``YYYY-MM-DD``) of a stored time; a stored
    text that is no time keeps its first ten characters, as it was filed before."""
    moment = stored_time(text, "time")
    if moment is None:
        return text[:10]
    try:
        return moment.astimezone().date().isoformat()
    except (OverflowError, OSError, ValueError):  # at the ends of the calendar
        return text[:10]


def local_midnight(day: date) -> datetime:
    """The start of local ``day``, aware, with the offset in force that day."""
    return datetime(day.year, day.month, day.day).astimezone()


def local_day_span(day: str) -> tuple[str, str]:
    """The stored times (:func:`~core.model.entries.iso`) at which local ``day``
    (``YYYY-MM-DD``) begins and the next day begins: a range for an index."""
    start = date.fromisoformat(day)
    return iso(local_midnight(start)), iso(local_midnight(start + timedelta(days=1)))


class LocalZone(tzinfo):
    """The machine's time zone with its rules, read when asked: each date gets the
    offset in force on it (``datetime.now().astimezone()`` fixes today's offset,
    which is an hour off across a change to or from summer time)."""

    def utcoffset(self, dt: datetime | None) -> timedelta:
        wall = (dt or datetime.now()).replace(tzinfo=None)
        return wall.astimezone().utcoffset() or timedelta(0)

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None

    def tzname(self, dt: datetime | None) -> str | None:
        return (dt or datetime.now()).replace(tzinfo=None).astimezone().tzname()

    def fromutc(self, dt: datetime) -> datetime:
        local = datetime.fromtimestamp(dt.replace(tzinfo=UTC).timestamp())
        return local.replace(tzinfo=self)

    def __repr__(self) -> str:
        return "LocalZone()"


#: The machine's time zone (see :class:`LocalZone`).
LOCAL: Final = LocalZone()


def calendar_days(earlier: datetime, later: datetime) -> int:
    """How many local calendar days ``later`` is after ``earlier`` (stored at 23:00,
    read at 09:00: 1); whole 24-hour spans for a time the local calendar cannot hold."""
    try:
        return (later.astimezone().date() - earlier.astimezone().date()).days
    except (OverflowError, ValueError, OSError):
        return (later - earlier).days
