"""Times as a person reads them: local, and no longer than they need to be."""

from __future__ import annotations

from datetime import datetime

from core.model.times import stored_time


def short_time(timestamp: str, now: datetime | None = None) -> str:
    """ "00:23" today, "24 Nov 00:23" this year, "2025-11-24 00:23" before."""
    moment = stored_time(timestamp, "time")
    if moment is None:  # not a time: an older Ambry's import kept what a file said
        return "unknown"
    when = moment.astimezone()
    today = (now or datetime.now().astimezone()).date()
    if when.date() == today:
        return when.strftime("%H:%M")
    if when.year == today.year:
        return when.strftime("%d %b %H:%M").lstrip("0")
    return when.strftime("%Y-%m-%d %H:%M")
