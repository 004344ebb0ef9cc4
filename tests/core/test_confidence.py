from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.confidence import (
    EFFECTIVE_CONFIDENCE_SQL,
    INITIAL_CONFIDENCE,
    decayed,
    effective_confidence,
    initial_confidence,
    is_stale,
    reinforce,
)
from core.model.config import Config
from core.model.entries import (
    EntryType,
    MemoryEntry,
    Privacy,
    Provenance,
    Source,
    SourceType,
    Status,
    Trust,
    iso,
)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def _decay(confidence: float, days: float) -> float:
    return decayed(confidence, NOW - days * DAY, NOW, grace_days=30, per_week=0.1)


def test_initial_confidence_follows_trust() -> None:
    assert initial_confidence(Trust.HIGH) == 0.9
    assert initial_confidence(Trust.MEDIUM) == 0.7
    assert initial_confidence(Trust.LOW) == 0.5
    assert set(INITIAL_CONFIDENCE) == set(Trust)


def test_reinforce_steps_and_caps() -> None:
    assert reinforce(0.7) == 0.8  # exact, not 0.7999999999999999
    assert reinforce(0.9) == 1.0
    assert reinforce(0.95) == 1.0
    assert reinforce(1.0) == 1.0


@pytest.mark.parametrize("days", [0, 1, 29.9, 30, 36.99])
def test_no_decay_within_grace_or_first_partial_week(days: float) -> None:
    assert _decay(0.9, days) == 0.9


@pytest.mark.parametrize(
    ("days", "expected"),
    [(37, 0.8), (43.5, 0.8), (44, 0.7), (51, 0.6), (30 + 7 * 5, 0.4)],
)
def test_loses_a_step_per_full_week_past_grace(days: float, expected: float) -> None:
    assert _decay(0.9, days) == expected


def test_decay_is_floored_at_zero() -> None:
    assert _decay(0.5, 30 + 7 * 40) == 0.0


def test_future_last_seen_does_not_decay_or_grow() -> None:
    assert _decay(0.6, -400) == 0.6


def test_exact_threshold_is_not_stale() -> None:
    # 0.7 - 4 * 0.1 in plain floats is 0.2999..., which would read as stale.
    effective = _decay(0.7, 30 + 28)
    assert effective == 0.3
    assert not is_stale(effective, 0.3)
    assert is_stale(_decay(0.7, 30 + 35), 0.3)


@given(
    confidence=st.integers(0, 1000).map(lambda n: n / 1000),
    seen_days=st.integers(0, 2000),
    opens=st.lists(st.integers(0, 2000), min_size=1, max_size=10),
)
def test_repeated_opens_are_idempotent(confidence: float, seen_days: int, opens: list[int]) -> None:
    # The recommended scheme never writes decay back, so a run of opens leaves
    # the stored value as it was; what each open sees depends only on its own
    # time, and later opens never see more than earlier ones.
    seen = NOW - seen_days * DAY
    stored = confidence
    seen_by_open = []
    for day in sorted(opens):
        seen_by_open.append(decayed(stored, seen, NOW + day * DAY, grace_days=30, per_week=0.1))
    assert stored == confidence
    assert seen_by_open == sorted(seen_by_open, reverse=True)
    last = NOW + max(opens) * DAY
    assert seen_by_open[-1] == decayed(confidence, seen, last, grace_days=30, per_week=0.1)
    assert all(0.0 <= value <= confidence for value in seen_by_open)


def test_reinforcing_restarts_the_grace_period() -> None:
    last_seen = NOW - 60 * DAY
    effective = decayed(0.9, last_seen, NOW, grace_days=30, per_week=0.1)
    assert effective == 0.5
    # Reinforce from what the entry is worth now, then measure from now.
    stored, last_seen = reinforce(effective), NOW
    assert stored == 0.6
    assert decayed(stored, last_seen, NOW + 30 * DAY, grace_days=30, per_week=0.1) == 0.6


@given(seen_days=st.integers(0, 500), extra=st.integers(0, 500))
def test_decay_never_increases_with_time(seen_days: int, extra: int) -> None:
    seen = NOW - seen_days * DAY
    earlier = decayed(0.8, seen, NOW, grace_days=30, per_week=0.1)
    later = decayed(0.8, seen, NOW + extra * DAY, grace_days=30, per_week=0.1)
    assert later <= earlier


def _entry(confidence: float, last_seen: datetime, *, pinned: bool = False) -> MemoryEntry:
    stamp = iso(last_seen)
    return MemoryEntry(
        id="mem-1",
        type=EntryType.FACT,
        content="x",
        tags=(),
        status=Status.ACTIVE,
        superseded_by=None,
        superseded_at=None,
        confidence=confidence,
        pinned=pinned,
        privacy=Privacy.PUBLIC,
        source=Source(SourceType.USER_MESSAGE, Trust.HIGH),
        provenance=Provenance("sess-1", "main", stamp, stamp),
        last_seen_at=stamp,
    )


def test_effective_confidence_uses_config_and_exempts_pinned() -> None:
    old = _entry(0.9, NOW - 60 * DAY)
    assert effective_confidence(old, NOW, Config()) == 0.5
    assert effective_confidence(old, NOW, Config(decay_per_week=0.05)) == 0.7
    assert effective_confidence(replace(old, pinned=True), NOW, Config()) == 0.9
    # Without last_seen_at, updated_at stands in.
    assert effective_confidence(replace(old, last_seen_at=None), NOW, Config()) == 0.5


@given(
    confidence=st.floats(0.0, 1.0) | st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.9]),
    seen_ms=st.integers(-10 * 86_400_000, 400 * 86_400_000),
    pinned=st.booleans(),
    grace=st.integers(0, 60),
    per_week=st.sampled_from([0.0, 0.05, 0.1, 0.25]),
)
def test_sql_expression_matches_python(
    confidence: float, seen_ms: int, pinned: bool, grace: int, per_week: float
) -> None:
    last_seen = NOW - timedelta(milliseconds=seen_ms)
    config = Config(decay_grace_days=grace, decay_per_week=per_week)
    expected = effective_confidence(_entry(confidence, last_seen, pinned=pinned), NOW, config)
    db = sqlite3.connect(":memory:")
    try:
        (got,) = db.execute(
            f"SELECT {EFFECTIVE_CONFIDENCE_SQL} FROM "
            "(SELECT :c AS confidence, :p AS pinned, :seen AS last_seen_at)",
            {
                "c": confidence,
                "p": int(pinned),
                "seen": iso(last_seen),
                "now": iso(NOW),
                "decay_grace_days": grace,
                "decay_per_week": per_week,
            },
        ).fetchone()
    finally:
        db.close()
    # Same float operations on both sides, so equal, not merely close.
    assert got == expected
