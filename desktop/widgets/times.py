"""Times as a person reads them: local, and no longer than they need to be."""

from __future__ import annotations

from datetime import datetime

from core.model.entries import parse_iso


def short_time(timestamp: str, now: datetime | None = None) -> str:
    """ "00:23" today, "24 Nov 00:23" this year, "2025-11-24 00:23" before."""
    when = parse_iso(timestamp).astimezone()
    today = (now or datetime.now().astimezone()).date()
    if when.date() == today:
        return when.strftime("%H:%M")
    if when.year == today.year:
        return when.strftime("%d %b %H:%M").lstrip("0")
    return when.strftime("%Y-%m-%d %H:%M")
