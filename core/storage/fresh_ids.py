"""Ids that are never given again: a conversation turn's and a session handoff's.

Both tables number their rows with SQLite's rowid, which takes the highest id
in the table plus one, so deleting the newest rows (a forget, a clear) handed
their ids to the next rows written. A claim or an agent citing turn 61 would
then find another turn there. A trigger (schema v12) keeps the highest id ever
deleted in ``meta``; new rows are numbered after both.
"""

from __future__ import annotations

from typing import Final


def _after_both(table: str, column: str, key: str) -> str:
    return (
        f"(SELECT max(coalesce((SELECT max({column}) FROM {table}), 0), "
        f"coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '{key}'), 0)) + 1)"
    )


#: SQL for the next conversation turn's ``seq``.
NEXT_EXCHANGE_SEQ: Final = _after_both("exchanges", "seq", "exchanges_deleted_up_to")
#: SQL for the next session handoff's ``id``.
NEXT_SESSION_HANDOFF_ID: Final = _after_both(
    "session_handoffs", "id", "session_handoffs_deleted_up_to"
)
