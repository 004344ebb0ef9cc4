"""A pass over a long imported history, stopped after a short time, keeps its days."""

from __future__ import annotations

import json
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.layers.compression import compress, is_due
from core.model.entries import Actor, utc_now
from core.portability.history import SourceKind
from core.portability.history_import import run
from core.service import MemoryService

WORDS = (
    "orchard pruning mulch ladder invoice boiler kettle piano tuner garden harbour sail "
    "ferry lantern copper walnut meadow quarry violin saddle marble thistle beacon"
).split()
#: Each pass may run this long: a short `ambry mcp` session.
BUDGET = 0.5


def claude_export(path: Path, conversations: int, turns: int, words: int) -> None:
    """A Claude export of one conversation a day, ``turns`` turns of ``words`` words each."""
    rng = random.Random(7)
    start = datetime(2025, 1, 1, 9, tzinfo=UTC)
    chats = []
    for c in range(conversations):
        day = start + timedelta(days=c)
        messages = [
            {
                "uuid": f"{c:08d}-{m:04d}-4000-8000-000000000000",
                "sender": "human" if m % 2 == 0 else "assistant",
                "text": " ".join(rng.choice(WORDS) + rng.choice("abcdefgh") for _ in range(words)),
                "created_at": (day + timedelta(minutes=m)).isoformat().replace("+00:00", "Z"),
            }
            for m in range(turns)
        ]
        chats.append(
            {
                "uuid": f"{c:08d}-0000-4000-8000-000000000000",
                "name": f"Chat {c}",
                "created_at": messages[0]["created_at"],
                "updated_at": messages[-1]["created_at"],
                "chat_messages": messages,
            }
        )
    path.write_text(json.dumps(chats), encoding="utf-8")


def test_short_passes_over_a_long_history_each_keep_their_days(
    service: MemoryService, tmp_path: Path
) -> None:
    # About 3.8 million characters: counting all their terms before the first day
    # took longer than a pass was given, so no pass ever wrote one.
    export = tmp_path / "claude.json"
    claude_export(export, 200, 40, 60)
    run(service, service.open_session("g", Actor.OPERATOR, "tests"), SourceKind.CLAUDE, export)
    store = service.store_for("g")
    now = utc_now()
    written = 0
    for _ in range(3):
        deadline = time.perf_counter() + BUDGET
        result = compress(store, now, should_stop=lambda t=deadline: time.perf_counter() > t)
        assert not result.complete and result.days >= 1, result
        written += result.days
        # Every day the pass finished is kept, and the next pass goes on after it.
        days = store.execute("SELECT count(*) FROM layer_summaries WHERE level = 'day'").get
        assert days == written
    assert is_due(store, now, timedelta(hours=6))
    rest = compress(store, now)
    assert rest.complete and rest.days == 200 - written
    assert not is_due(store, now, timedelta(hours=6))
