"""A thread's history by layer, as the person sees it (``ambry layers``, the desktop view).

For each layer: what the agent would see today (Flash turns verbatim, Warm and
Recent summaries with the detail their age allows) and what faded (Archive: the
hook and how many turns it points to). Rollups (weeks, months) are listed with
their children, so the DAG can be walked from either end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.layers.ages import FLASH_AGE, Layer, layer_of, parse_time
from core.layers.compression import last_pass, redraw_pending
from core.layers.recall import SUMMARY_COLUMNS, summary_view
from core.model.entries import iso
from core.storage.store import GroupStore

#: Summaries listed at most per level (the newest).
MAX_LISTED = 500


@dataclass(frozen=True)
class Timeline:
    thread_id: str | None
    flash_turns: tuple[dict[str, Any], ...]
    #: Day summaries, newest first, each with its layer and the detail that layer shows.
    days: tuple[dict[str, Any], ...]
    #: Week and month summaries, newest first, each with ``children`` (ids).
    rollups: tuple[dict[str, Any], ...]
    last_pass: str | None
    #: Summaries wait to be drawn again (a rebuild stopped part way): the next pass does it.
    redraw_pending: bool = False

    def counts(self) -> dict[str, int]:
        out = {layer.value: 0 for layer in Layer}
        out[Layer.FLASH.value] = len(self.flash_turns)
        for d in self.days:
            if d["layer"] != Layer.FLASH.value:
                out[d["layer"]] += 1
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "counts": self.counts(),
            "flash": list(self.flash_turns),
            "days": list(self.days),
            "rollups": list(self.rollups),
            "last_pass": self.last_pass,
            "redraw_pending": self.redraw_pending,
        }


def _scope(thread_id: str | None) -> str:
    return "thread_id IS NULL" if thread_id is None else "thread_id = :thread"


def timeline(store: GroupStore, thread_id: str | None, now: datetime) -> Timeline:
    """The thread's layers as of ``now`` (None: history filed under no thread)."""
    params = {"thread": thread_id, "since": iso(now - FLASH_AGE)}
    flash = tuple(
        {"id": int(r[0]), "speaker": r[1], "name": r[2], "text": r[3], "at": r[4]}
        for r in store.execute(
            f"SELECT seq, speaker, name, text, said_at FROM exchanges WHERE {_scope(thread_id)} "
            "AND said_at >= :since ORDER BY said_at, seq",
            params,
        )
    )
    days: list[dict[str, Any]] = []
    rollups: list[dict[str, Any]] = []
    for row in store.execute(
        f"SELECT {SUMMARY_COLUMNS} FROM layer_summaries s WHERE s.{_scope(thread_id)} "
        f"ORDER BY s.end_at DESC, s.id LIMIT {MAX_LISTED * 3}",
        params,
    ).fetchall():
        layer = layer_of(parse_time(row[9]), now)
        view = summary_view(row, layer)
        view["layer"] = layer.value
        view["all_points"] = len(json.loads(row[5]))
        if row[1] == "day":
            view["turn_ids"] = [
                int(r[0])
                for r in store.execute(
                    "SELECT exchange_seq FROM layer_sources WHERE summary_id = ? ORDER BY 1",
                    (row[0],),
                )
            ]
            days.append(view)
        else:
            view["children"] = [
                r[0]
                for r in store.execute(
                    "SELECT c.child_id FROM layer_children c JOIN layer_summaries s "
                    "ON s.id = c.child_id WHERE c.parent_id = ? ORDER BY s.start_at",
                    (row[0],),
                )
            ]
            rollups.append(view)
    return Timeline(
        thread_id,
        flash,
        tuple(days[:MAX_LISTED]),
        tuple(rollups[:MAX_LISTED]),
        last_pass(store),
        redraw_pending(store),
    )
