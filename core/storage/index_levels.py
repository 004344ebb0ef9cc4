"""Keeping the contentless full-text indexes readable after many merges.

Every delete is followed by FTS5's ``optimize`` (core.storage.scrub), so that a
deleted row's words leave the index segments. On a ``contentless_delete`` table
SQLite moves the merged segment one level up each time it purges tombstones, and
leaves the emptied level in the index's structure record: after 2,000 such merges
the record holds more levels than FTS5 accepts and every read and write of the
index fails with "fts5: corrupt structure record" (measured with SQLite 3.54.1:
2,000 single deletes, each followed by ``optimize``, whatever the table's size).

The rows themselves are whole: the index is derived from them. So the number of
levels is read from the structure record (its first varint after the cookie and
the format marker), and an index past :data:`MAX_LEVELS` is emptied with FTS5's
``delete-all`` (which writes a fresh structure, even over one that no longer
reads) and filled again from its table, with the statement its insert trigger
uses. A store is checked when it opens and after every scrub.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Final

from core.storage.fts import entry_grams, text_grams
from core.storage.store import GroupStore

log = logging.getLogger(__name__)

#: Levels an index may reach before it is filled again: a quarter of FTS5's limit
#: (2,000), far above the few a merge of new rows makes, so a refill comes once
#: every 500 or so deletes (250,000 short memories refill in 0.8 s).
MAX_LEVELS: Final = 500

#: The rowid of an FTS5 index's structure record in its ``_data`` table.
_STRUCTURE_ROWID: Final = 10
#: The marker after the cookie of a structure record that also counts origins.
_V2_MARKER: Final = b"\xff\x00\x00\x01"

#: How each contentless index is filled from its table, as its insert trigger does
#: (core.storage.migrations).
REFILL: Final[dict[str, str]] = {
    "memory_fts": (
        "INSERT INTO memory_fts(rowid, content, tags) SELECT seq, search_text, "
        "(SELECT group_concat(value, ' ') FROM json_each(tags)) FROM memory_entries"
    ),
    "memory_grams": (
        "INSERT INTO memory_grams(rowid, grams) SELECT seq, search_grams "
        "FROM memory_entries WHERE search_grams != ''"
    ),
    "exchanges_fts": "INSERT INTO exchanges_fts(rowid, text) SELECT seq, text FROM exchanges",
    "exchange_grams": (
        "INSERT INTO exchange_grams(rowid, grams) SELECT seq, text_grams "
        "FROM exchanges WHERE text_grams != ''"
    ),
    "claims_fts": "INSERT INTO claims_fts(rowid, text) SELECT seq, text FROM claims",
}


def _varint(data: bytes, at: int) -> int:
    """SQLite's variable-length integer at ``at`` (7 bits a byte, high bit: more)."""
    value = 0
    for i in range(at, min(at + 9, len(data))):
        if i == at + 8:
            return (value << 8) | data[i]
        value = (value << 7) | (data[i] & 0x7F)
        if not data[i] & 0x80:
            return value
    raise ValueError("structure record ends inside a number")


def levels(store: GroupStore, table: str) -> int | None:
    """How many levels the structure of index ``table`` holds (``None``: no record
    yet, or one in a format this code does not read)."""
    row = store.execute(
        f"SELECT block FROM {table}_data WHERE id = ?", (_STRUCTURE_ROWID,)
    ).fetchone()
    if row is None or not isinstance(row[0], bytes) or len(row[0]) < 5:
        return None
    data: bytes = row[0]
    at = 8 if data[4:8] == _V2_MARKER else 4
    try:
        return _varint(data, at)
    except ValueError:
        return None


def refill(store: GroupStore, table: str) -> None:
    """Empty index ``table`` and fill it again from its rows (inside a transaction)."""
    store.execute(f"INSERT INTO {table}({table}) VALUES ('delete-all')")
    store.execute(REFILL[table])


def over(store: GroupStore, tables: tuple[str, ...] = tuple(REFILL)) -> tuple[str, ...]:
    """Those of ``tables`` whose structure is past :data:`MAX_LEVELS` (reads only)."""
    return tuple(t for t in tables if (levels(store, t) or 0) > MAX_LEVELS)


def keep_levels(store: GroupStore, tables: tuple[str, ...] = tuple(REFILL)) -> tuple[str, ...]:
    """Refill each of ``tables`` whose structure is past :data:`MAX_LEVELS`; the
    ones refilled. Call it inside the caller's transaction."""
    refilled = over(store, tables)
    for table in refilled:
        started = time.perf_counter()
        refill(store, table)
        log.info(
            "rebuilt the index %s of group %s from its rows (%.0f ms)",
            table,
            store.group,
            (time.perf_counter() - started) * 1000,
        )
    return refilled


#: The index of the layers' summaries keeps its own text, so FTS5 rebuilds it.
_WITH_TEXT: Final = ("layer_fts",)


def regram_all(store: GroupStore) -> int:
    """Write every row's gram column again from its text (inside a transaction), as
    a write does: a row an older Ambry wrote after this file was upgraded has none.
    Returns how many rows changed."""
    changed = 0
    rows = store.execute("SELECT seq, search_text, tags, search_grams FROM memory_entries")
    memories = [(g, seq) for seq, text, tags, old in rows if (g := _grams(text, tags)) != old]
    store.conn.executemany("UPDATE memory_entries SET search_grams = ? WHERE seq = ?", memories)
    changed += len(memories)
    turns = store.execute("SELECT seq, text, text_grams FROM exchanges")
    made = [(g, seq) for seq, text, old in turns if (g := text_grams(text)) != old]
    store.conn.executemany("UPDATE exchanges SET text_grams = ? WHERE seq = ?", made)
    return changed + len(made)


def _grams(search_text: str, tags: str) -> str:
    return entry_grams(search_text, json.loads(tags))


def rebuild_all(store: GroupStore) -> tuple[str, ...]:
    """Rebuild every full-text index of the group from its rows (inside a
    transaction): ``ambry reindex --words``, for an index found damaged. The gram
    columns are written again first (:func:`regram_all`)."""
    regram_all(store)
    for table in REFILL:
        refill(store, table)
    for table in _WITH_TEXT:
        store.execute(f"INSERT INTO {table}({table}) VALUES ('rebuild')")
    return (*REFILL, *_WITH_TEXT)
