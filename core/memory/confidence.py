"""Confidence: where it starts, how re-observation raises it, how neglect lowers it.

Every entry carries a confidence between 0 and 1. It starts from the trust of its
source, rises by a fixed step each time the same observation is seen again, and
decays once an entry has gone unobserved for longer than a grace period. An entry
whose effective confidence falls below ``Config.stale_threshold`` is *stale*: it
stays in storage and search but leaves the brief.

Persisting confidence (the caller's side)
-----------------------------------------
Store the confidence **as of** ``last_seen_at`` and never write decay back:

* ``confidence`` column: the value at the moment the entry was last observed
  (set on insert, on reinforcement, or when the person edits it).
* ``last_seen_at`` column: when that happened. A person's edit of the confidence
  sets it to now as well; otherwise the new value would be decayed at once.
* Effective confidence is computed when read: ``decayed(confidence, last_seen_at,
  now, ...)``, or :func:`effective_confidence` for a whole entry.

Because the effective value is a pure function of two stored columns and the
clock, opening the database any number of times changes nothing and can never
decay an entry twice for the same weeks; there is no decay job to interrupt or
re-run. Staleness is derived the same way (:func:`is_stale`), so nothing needs
to flip a flag either. The one write that touches both columns together is
reinforcement::

    effective = effective_confidence(entry, now, config)
    store.update_fields(entry.id, confidence=reinforce(effective), last_seen_at=iso(now))

Reinforcing from the effective value, not from the stored one, keeps an entry
that has been decaying for months from springing back above where it really was.
A pinned entry never decays (the person chose to keep it).

Values are snapped to 9 decimal places, so 0.7 after four weeks of 0.1 is 0.3
and not 0.29999...; a snapped value passes through unchanged while in grace.
A query that must filter or order by effective confidence (staleness, the brief's
prefetch) can use :data:`EFFECTIVE_CONFIDENCE_SQL`, the same formula in SQLite.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from core.model.entries import Trust
from core.model.times import stored_time

if TYPE_CHECKING:
    from core.model.config import Config
    from core.model.entries import MemoryEntry

INITIAL_CONFIDENCE: dict[Trust, float] = {
    Trust.HIGH: 0.9,
    Trust.MEDIUM: 0.7,
    Trust.LOW: 0.5,
}
REINFORCE_STEP = 0.1
MAX_CONFIDENCE = 1.0
MIN_CONFIDENCE = 0.0

# Repeated 0.1 steps drift in binary floating point (0.7 - 0.4 is 0.29999...);
# snapping to 9 decimals keeps an entry sitting exactly on the threshold from
# reading as stale. Done with plain arithmetic rather than round() so that the
# SQL form below performs the very same float operations (and SQLite's round()
# is slow: it formats the number as text).
_SCALE = 1e9


def _snap(value: float) -> float:
    """``value`` (never negative) to the nearest multiple of 1e-9."""
    return int(value * _SCALE + 0.5) / _SCALE


# Full weeks past the grace period, counted from whole days since last seen.
# The days come from exact milliseconds: a difference of two julianday doubles
# can land a hair short of an exact day boundary. CAST and integer division
# truncate toward zero where Python floors; that only matters below zero, and
# max() clamps it away.
_SQL_WEEKS = (
    "max(0, (CAST((julianday(:now) - julianday(last_seen_at)) * 86400000 + 0.5 AS INTEGER)"
    " / 86400000 - :decay_grace_days) / 7)"
)
#: :func:`effective_confidence` as a SQLite expression over the ``memory_entries``
#: columns ``confidence``, ``pinned`` and ``last_seen_at``, with named parameters
#: ``:now`` (``iso(now)``), ``:decay_grace_days`` and ``:decay_per_week``. It agrees
#: with the Python function to the millisecond (``iso`` drops microseconds).
EFFECTIVE_CONFIDENCE_SQL = (
    "(CASE WHEN pinned THEN confidence ELSE CAST(max(0.0, confidence - :decay_per_week * "
    f"{_SQL_WEEKS}) * {_SCALE:.0f} + 0.5 AS INTEGER) / {_SCALE:.1f} END)"
)


def initial_confidence(trust: Trust) -> float:
    """The confidence a new entry starts with, from the trust of its source."""
    return INITIAL_CONFIDENCE[trust]


def reinforce(confidence: float) -> float:
    """Confidence after the same observation is seen once more, capped at 1.0."""
    return min(MAX_CONFIDENCE, _snap(confidence + REINFORCE_STEP))


def decayed(
    confidence: float,
    last_seen: datetime,
    now: datetime,
    *,
    grace_days: int,
    per_week: float,
) -> float:
    """Effective confidence at ``now`` of an entry last observed at ``last_seen``.

    Nothing is lost during the grace period. After it, each *full* week costs
    ``per_week``; a partial week costs nothing yet. The result never goes below 0.

    Args:
        confidence: The stored confidence, as of ``last_seen``.
        last_seen: When the entry was last observed (timezone-aware).
        now: The moment to evaluate at (timezone-aware).
        grace_days: Days without any decay.
        per_week: Confidence lost per full week past the grace period.

    Returns:
        The effective confidence, snapped to 9 decimal places.
    """
    # Grace is whole days, so whole elapsed days give the same full-week count
    # as exact arithmetic, in integers, without building timedeltas: the brief
    # calls this for every candidate. A clock moved backwards, or a last_seen in
    # the future, counts as no weeks at all.
    weeks = max(0, ((now - last_seen).days - grace_days) // 7)
    return _snap(max(MIN_CONFIDENCE, confidence - weeks * per_week))


def is_stale(effective: float, threshold: float) -> bool:
    """True when an entry's effective confidence is below the brief's threshold."""
    return effective < threshold


def effective_confidence(entry: MemoryEntry, now: datetime, config: Config) -> float:
    """:func:`decayed` applied to a stored entry, using the config's constants.

    A pinned entry is one the person chose to keep, so it does not decay.
    ``last_seen_at`` falls back to ``updated_at`` for entries built without it.
    """
    if entry.pinned:
        return entry.confidence
    field = "last_seen_at" if entry.last_seen_at else "updated_at"
    # A time an older import kept unreadable counts as now: no decay, and no crash.
    seen = stored_time(entry.last_seen_at or entry.provenance.updated_at, field) or now
    return decayed(
        entry.confidence,
        seen,
        now,
        grace_days=config.decay_grace_days,
        per_week=config.decay_per_week,
    )
