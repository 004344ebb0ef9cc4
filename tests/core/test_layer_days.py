"""Day summaries are drawn on the machine's local calendar days, as search reads them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from core.continuity.episodes import log_exchange, search_exchanges
from core.layers.compression import (
    _DAY_SCOPE,
    DAYS_KEY,
    _Day,
    _day_scope,
    compress,
    is_due,
    redraw_pending,
)
from core.layers.context import warm_section
from core.model.entries import Actor
from core.service import MemoryService
from core.storage.store import GroupStore

GARDEN = [
    ("2026-11-20T10:00:00-08:00", "We planted tulip bulbs along the fence on Friday morning."),
    ("2026-11-20T23:30:00-08:00", "Late Friday night I decided the roses need pruning."),
    ("2026-11-21T09:00:00-08:00", "Saturday morning we bought compost for the beds."),
]


def log(service: MemoryService, turns: list[tuple[str, str]]) -> None:
    agent = service.open_session("g", Actor.AGENT, "tests")
    for at, text in turns:
        log_exchange(service, agent, "user", text, at=at)


def periods(store: GroupStore, level: str) -> list[tuple[str, int]]:
    return store.execute(
        "SELECT period, turn_count FROM layer_summaries WHERE level = ? ORDER BY period",
        (level,),
    ).fetchall()


def test_a_late_evening_turn_is_filed_under_its_own_day(
    service: MemoryService, local_zone: Callable[[str], None]
) -> None:
    local_zone("America/Los_Angeles")
    log(service, GARDEN)
    store = service.store_for("g")
    compress(store, datetime(2026, 11, 26, tzinfo=UTC))
    assert periods(store, "day") == [("2026-11-20", 2), ("2026-11-21", 1)]
    # The brief's Warm layer labels it with that day too.
    warm = warm_section(store, None, datetime(2026, 11, 25, 12, tzinfo=UTC), 1000)
    assert warm is not None and "- 2026-11-20 (2 turns)" in warm[1]


def test_new_years_eve_is_december_in_the_summaries_as_in_search(
    service: MemoryService, local_zone: Callable[[str], None]
) -> None:
    local_zone("America/Los_Angeles")
    log(service, [("2025-12-31T23:30:00-08:00", "My resolution is to learn the cello.")])
    store = service.store_for("g")
    compress(store, datetime(2026, 1, 10, tzinfo=UTC))
    assert periods(store, "day") == [("2025-12-31", 1)]
    asker = service.open_session("g", Actor.AGENT, "tests")
    hits = search_exchanges(service, asker, "what was my resolution in December 2025")
    assert hits and hits[0].exchange.text.startswith("My resolution")


def test_summaries_drawn_on_utc_days_are_redrawn_on_local_days(
    service: MemoryService, local_zone: Callable[[str], None]
) -> None:
    local_zone("UTC")
    log(service, GARDEN)
    store = service.store_for("g")
    now = datetime(2026, 11, 26, tzinfo=UTC)
    compress(store, now)
    # As an earlier Ambry left the store: UTC days, and no mark of the local ones.
    with store.transaction():
        store.execute("DELETE FROM meta WHERE key = ?", (DAYS_KEY,))
    assert periods(store, "day") == [("2026-11-20", 1), ("2026-11-21", 2)]
    local_zone("America/Los_Angeles")
    assert is_due(store, now, timedelta(days=365))
    result = compress(store, now)
    assert result.complete and not redraw_pending(store)
    assert periods(store, "day") == [("2026-11-20", 2), ("2026-11-21", 1)]
    assert not is_due(store, now, timedelta(days=365))
    assert compress(store, now).days == 0


def test_a_days_turns_are_found_by_the_index_of_times(
    service: MemoryService, local_zone: Callable[[str], None]
) -> None:
    # A local day's test alone read every turn, in Python, once per day drawn.
    local_zone("America/Los_Angeles")
    log(service, GARDEN)
    store = service.store_for("g")
    session = store.execute("SELECT session_id FROM exchanges LIMIT 1").fetchone()[0]
    day = _Day(None, str(session), "2026-11-20", 2, 2, 0)
    plan = " ".join(
        str(r[3])
        for r in store.execute(
            f"EXPLAIN QUERY PLAN SELECT seq FROM exchanges WHERE {_DAY_SCOPE}", _day_scope(day)
        )
    )
    assert "USING INDEX idx_exchanges_said" in plan and "SCAN exchanges" not in plan
    found = store.execute(f"SELECT text FROM exchanges WHERE {_DAY_SCOPE}", _day_scope(day))
    assert [r[0] for r in found] == [GARDEN[0][1], GARDEN[1][1]]
