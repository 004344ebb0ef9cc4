"""SQL for one group's memory entries. No policy here: the service decides.

A :class:`GroupStore` owns one apsw connection and must be used from the thread
that opened it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw

from core.model.entries import (
    EntryFilter,
    EntryType,
    MemoryEntry,
    Privacy,
    Status,
    iso,
    utc_now,
)
from core.storage.best_effort import best_effort
from core.storage.chains import Place, later_versions, pending_targets, unlink
from core.storage.db import mapped_errors, open_database, wait_for_writers, write_transaction
from core.storage.file_safety import make_private
from core.storage.fts import entry_grams, grams_held, match_expression
from core.storage.link_rows import drop_links
from core.storage.planner import QueryPlanner
from core.storage.rows import (
    AUDIT_INSERT_SQL,
    E_COLUMNS,
    ENTRY_COLUMNS,
    HIT_COLUMNS,
    Hit,
    NewRow,
    entry_from_row,
    filtered_source,
    where_clause,
)

log = logging.getLogger(__name__)

#: bm25 with content weighted above tags: the weights of the table's ``rank``
#: setting (schema v1), called directly. ``ORDER BY bm25(...) LIMIT n`` lets
#: SQLite keep only the best n rows, where ``ORDER BY rank`` has the index sort
#: every match first; with a few hundred matches that is about 30 % slower.
BM25 = "bm25(memory_fts, 1.0, 0.75)"
#: Ranked candidates of a gram search checked against the filter by the first query
#: (each next query checks twice as many).
_FILTER_BATCH = 500
# LIMIT and OFFSET of the hot queries are written into the SQL as integers, not
# bound: SQLite hands a bound LIMIT to the query planner, so binding a new value
# re-prepares the statement on every run (about 40 µs for a search).

#: How long closing waits for another program's lock before skipping ``PRAGMA optimize``.
CLOSE_WAIT_MS = 500
#: Rows changed by this connection between two ``PRAGMA optimize`` runs while it stays
#: open. A server or app holds its stores open for weeks; without statistics a store
#: that grew to 100K memories took about 19 ms a write, 0.7 ms with them.
OPTIMIZE_EVERY_CHANGES = 2000

#: A deferred read-audit row is written within this many seconds or rows.
READ_AUDIT_MAX_WAIT = 2.0
READ_AUDIT_MAX_ROWS = 200


class GroupStore:
    """One group's database: entries, sessions and the audit log live here."""

    def __init__(self, path: Path, group: str) -> None:
        self.path = path
        self.group = group
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.conn: apsw.Connection = open_database(path)
        #: The file could only be opened for reading (read-only folder, full disk).
        self.read_only = bool(self.conn.readonly("main"))
        #: Why the last best-effort write failed (see :mod:`core.storage.best_effort`).
        self.write_failure: str | None = None
        #: Term counts that steer the search queries (cached).
        self.planner = QueryPlanner(self.conn, self.path)
        #: Batch read-audit rows (see :meth:`audit_read`); off unless a server asks.
        self.defer_reads = False
        self._pending_reads: list[Callable[[], tuple[Any, ...]]] = []
        self._reads_since = time.monotonic()
        self._optimized_at = 0
        #: Seals the earlier versions of a chain whose new current version is sealed,
        #: returning whether it sealed any. The workspace, which holds the data key,
        #: sets it (:meth:`core.storage.workspace.Workspace.seal_earlier`).
        self.seal_earlier: Callable[[GroupStore, str], bool] | None = None
        #: Run once a transaction that sealed earlier versions has committed: their
        #: words leave the index segments and the log (a scrub).
        self.after_sealing: Callable[[GroupStore], None] | None = None
        self._sealed = False
        try:
            make_private(path, read_only=self.read_only)
        except BaseException:
            self.conn.close()
            raise

    def close(self) -> None:
        self.flush_reads()
        try:
            # Keeps planner statistics fresh; cheap, and skipped when nothing changed.
            # Not worth waiting for another program's lock: the next close runs it.
            if not self.read_only:
                wait_for_writers(self.conn, self.path, CLOSE_WAIT_MS)
                self.conn.execute("PRAGMA optimize")
        except (apsw.BusyError, apsw.LockedError) as exc:
            log.info("PRAGMA optimize skipped on %s: %s", self.path.name, exc)
        except apsw.Error as exc:  # a read-only or full disk must not stop the close
            log.warning("PRAGMA optimize failed on %s: %s", self.path.name, exc)
        self.conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[apsw.Connection]:
        """A write transaction; the write is durable when the block exits.

        Pending read-audit rows are written first in the same transaction: one
        wait for another program's lock, not one for them and one for the write
        (a write under an import's long lock failed after 30 s, not 15). If the
        write fails they stay pending for the next one.
        """
        rows, self._pending_reads = self._pending_reads, []
        try:
            with write_transaction(self.conn, self.path) as conn:
                self._write_reads(rows)
                yield conn
        except BaseException:
            self._pending_reads[:0] = rows
            self._sealed = False
            raise
        self._keep_statistics()
        if self._sealed:
            self._sealed = False
            if self.after_sealing is not None:
                self.after_sealing(self)

    def _write_reads(self, rows: Sequence[Callable[[], tuple[Any, ...]]]) -> None:
        """Insert read-audit rows in the open transaction; a bad row never stops a write."""
        if not rows:
            return
        self._reads_since = time.monotonic()
        try:
            self.conn.executemany(AUDIT_INSERT_SQL, [make() for make in rows])
        except apsw.Error as exc:  # a statement error leaves the transaction open
            log.warning(
                "group %s: the audit of %d reads not recorded: %s", self.group, len(rows), exc
            )

    def _keep_statistics(self) -> None:
        """``PRAGMA optimize`` once every :data:`OPTIMIZE_EVERY_CHANGES` rows written.

        Closing runs it too, but a long-running server may not close a store for
        weeks. SQLite re-analyses only a table that grew tenfold or was never
        analysed (at most about 0.1 s at 100K memories); otherwise the pragma takes
        about a millisecond. A lock held by another program skips it until next time.
        """
        changes = self.conn.total_changes()
        if changes - self._optimized_at < OPTIMIZE_EVERY_CHANGES:
            return
        self._optimized_at = changes
        try:
            self.conn.execute("PRAGMA optimize=0x10002")
        except apsw.Error as exc:
            log.info("PRAGMA optimize skipped on %s: %s", self.path.name, exc)

    @contextlib.contextmanager
    def relaxed_transaction(self, *, flush: bool = True) -> Iterator[None]:
        """A write transaction without the fsync, for read-side audit rows.

        It survives the process being killed (the WAL is in the OS cache) but not
        a power cut; entries themselves always use :meth:`transaction`.
        """
        if flush:
            self.flush_reads()
        self.execute("PRAGMA synchronous = NORMAL")
        try:
            with write_transaction(self.conn, self.path):
                yield
        finally:
            self.execute("PRAGMA synchronous = FULL")

    def audit_read(self, row: Callable[[], tuple[Any, ...]]) -> None:
        """Write the audit row of a read (``row()`` makes it) now, or, with ``defer_reads``, soon.

        A server that answers before it writes sets ``defer_reads`` and calls
        :meth:`flush_reads` once its replies are out, so the row costs the agent
        no latency. Rows wait at most :data:`READ_AUDIT_MAX_WAIT` seconds or
        :data:`READ_AUDIT_MAX_ROWS` rows, are written before any write
        transaction, and on close.
        """
        self._pending_reads.append(row)
        if (
            not self.defer_reads
            or len(self._pending_reads) >= READ_AUDIT_MAX_ROWS
            or time.monotonic() - self._reads_since >= READ_AUDIT_MAX_WAIT
        ):
            self.flush_reads()
        elif len(self._pending_reads) == 1:
            self._reads_since = time.monotonic()

    def flush_reads(self) -> int:
        """Write the pending read-audit rows in one transaction; returns how many."""
        rows, self._pending_reads = self._pending_reads, []
        self._reads_since = time.monotonic()
        if not rows:
            return 0
        # A read must work on a read-only or full disk; its audit row is best-effort.
        with best_effort(self, "the audit of reads"):
            with self.relaxed_transaction(flush=False):
                self.conn.executemany(AUDIT_INSERT_SQL, [make() for make in rows])
            return len(rows)
        return 0

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        with mapped_errors(self.path):
            return self.conn.execute(sql, params)

    def data_version(self) -> int:
        """Changes when another connection commits (for change polling)."""
        return int(self.execute("PRAGMA data_version").get)

    # -- entries ---------------------------------------------------------------

    def insert(self, row: NewRow) -> None:
        e = row.entry
        self.execute(
            "INSERT INTO memory_entries (id, type, content, search_text, search_grams, "
            "content_key, tags, behavioral, status, review_reason, superseded_by, "
            "superseded_at, confidence, pinned, privacy, source_type, trust, session_id, "
            "group_name, created_at, updated_at, last_seen_at, effective_confidence) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                e.id,
                e.type.value,
                e.content,
                row.search_text,
                entry_grams(row.search_text, e.tags),
                row.content_key,
                json.dumps(list(e.tags), ensure_ascii=False),
                int(e.behavioral),
                e.status.value,
                e.review_reason,
                e.superseded_by,
                e.superseded_at,
                e.confidence,
                int(e.pinned),
                e.privacy.value,
                e.source.type.value,
                e.source.trust.value,
                e.provenance.session_id,
                e.provenance.group,
                e.provenance.created_at,
                e.provenance.updated_at,
                e.last_seen_at or e.provenance.created_at,
                e.confidence,
            ),
        )

    def get(self, entry_id: str) -> MemoryEntry | None:
        row = self.execute(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE id = ?", (entry_id,)
        ).fetchone()
        return entry_from_row(row) if row else None

    def get_many(self, ids: Iterable[str]) -> dict[str, MemoryEntry]:
        ids = list(ids)
        found: dict[str, MemoryEntry] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.execute(
                f"SELECT {ENTRY_COLUMNS} FROM memory_entries WHERE id IN ({marks})", chunk
            ):
                entry = entry_from_row(row)
                found[entry.id] = entry
        return found

    def count_status(self, ids: Iterable[str], status: Status) -> int:
        """How many of ``ids`` have ``status``, in one query however many there are."""
        sql = (
            "SELECT count(*) FROM memory_entries "
            "WHERE status = ? AND id IN (SELECT value FROM json_each(?))"
        )
        return int(self.execute(sql, (status.value, json.dumps(list(ids)))).get)

    def find_duplicate(
        self, content_keys: Sequence[str], entry_type: EntryType, *, excluding: str = ""
    ) -> MemoryEntry | None:
        """A current (not superseded) entry with the same normalised content and type,
        under any of ``content_keys``, other than ``excluding``."""
        marks = ", ".join("?" * len(content_keys))
        row = self.execute(
            f"SELECT {ENTRY_COLUMNS} FROM memory_entries "
            f"WHERE content_key IN ({marks}) AND type = ? AND superseded_by IS NULL "
            "AND id != ? ORDER BY status = 'active' DESC, created_at LIMIT 1",
            (*content_keys, entry_type.value, excluding),
        ).fetchone()
        return entry_from_row(row) if row else None

    def replaced_earlier(self, content_keys: Sequence[str], entry_type: EntryType) -> str | None:
        """The current entry that replaced, through its chain, an entry of the same
        normalised content and type, under any of ``content_keys``; the latest
        replaced first. None when no such entry was replaced, or its chain has no
        current end."""
        marks = ", ".join("?" * len(content_keys))
        rows = self.execute(
            "SELECT superseded_by FROM memory_entries "
            f"WHERE content_key IN ({marks}) AND type = ? AND superseded_by IS NOT NULL "
            "ORDER BY superseded_at DESC LIMIT 10",
            (*content_keys, entry_type.value),
        ).fetchall()
        for (newer,) in rows:
            # The chain stops short of a current end at a deleted entry or a loop.
            later = later_versions(self, newer)
            end = "SELECT superseded_by IS NULL FROM memory_entries WHERE id = ?"
            if later and self.execute(end, (later[-1],)).get:
                return later[-1]
        return None

    def reinforce(self, entry_id: str, confidence: float, now: str) -> None:
        """Record a re-observation: new confidence as of ``now``, no longer stale."""
        self.execute(
            "UPDATE memory_entries SET confidence = ?, effective_confidence = ?, stale = 0, "
            "updated_at = ?, last_seen_at = ? WHERE id = ?",
            (confidence, confidence, now, now, entry_id),
        )

    def update_fields(self, entry_id: str, **fields: Any) -> None:
        """Set plain columns (status, confidence, pinned, review fields, ...)."""
        allowed = {
            "status",
            "review_reason",
            "deferred_at",
            "confidence",
            "pinned",
            "updated_at",
            "last_seen_at",
            "content",
            "search_text",
            "content_key",
            "tags",
            "pending_supersedes",
        }
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"not updatable: {sorted(unknown)}")
        sets = ", ".join(f"{name} = ?" for name in fields)
        self.execute(f"UPDATE memory_entries SET {sets} WHERE id = ?", (*fields.values(), entry_id))
        if "search_text" in fields or "tags" in fields:
            self.regram(entry_id)

    def regram(self, entry_id: str) -> None:
        """Write the gram column (and so the gram index) of ``entry_id`` again from its
        search text and tags, after either changed."""
        row = self.execute(
            "SELECT search_text, tags, search_grams FROM memory_entries WHERE id = ?",
            (entry_id,),
        ).fetchone()
        if row is None:
            return
        grams = entry_grams(row[0], json.loads(row[1]))
        if grams != row[2]:
            self.execute(
                "UPDATE memory_entries SET search_grams = ? WHERE id = ?", (grams, entry_id)
            )

    def mark_superseded(self, old_id: str, new_id: str, now: str) -> None:
        self.execute(
            "UPDATE memory_entries SET superseded_by = ?, superseded_at = ?, updated_at = ? "
            "WHERE id = ?",
            (new_id, now, now, old_id),
        )
        # Whatever made it an earlier version (a write, an accept, a merge, a
        # restore), it must not say more than the version that replaced it.
        self.seal_behind(new_id)

    def seal_behind(self, head_id: str) -> None:
        """Seal the versions before ``head_id`` that say more than it does (see
        :attr:`seal_earlier`); inside the caller's transaction."""
        if self.seal_earlier is not None and self.seal_earlier(self, head_id):
            self._sealed = True

    def seal(self, entry_id: str, privacy: Privacy, content: str, content_key: str) -> None:
        """Store ``entry_id`` sealed: its ``content`` (already encrypted, or as it was
        when it already was), keyed hash and ``privacy``; out of the word index (its
        tags stay), its grams and its vector."""
        self.execute(
            "UPDATE memory_entries SET privacy = ?, content = ?, content_key = ?, "
            "search_text = '' WHERE id = ?",
            (privacy.value, content, content_key, entry_id),
        )
        self.regram(entry_id)

    def unmark_superseded(self, old_id: str, now: str) -> None:
        """Make ``old_id`` current again (an accept that replaced it was taken back)."""
        self.execute(
            "UPDATE memory_entries SET superseded_by = NULL, superseded_at = NULL, updated_at = ? "
            "WHERE id = ?",
            (now, old_id),
        )

    def delete(
        self, entry_id: str, now: str | None = None, *, to_trash: bool = False
    ) -> Place | None:
        """Delete one entry, its version chain relinked around it (:mod:`core.storage.chains`),
        and its links (:mod:`core.storage.link_rows`), unless it goes ``to_trash``: a
        restored entry comes back with its id and finds them again.

        Returns:
            Where it stood in its chain, to put it back; ``None`` when there is no such entry.
        """
        place = unlink(self, entry_id, now or iso(utc_now()))
        if place is not None:
            self.execute("DELETE FROM memory_entries WHERE id = ?", (entry_id,))
            if not to_trash:
                drop_links(self, [entry_id])
        return place

    def delete_many(self, entry_ids: Sequence[str], now: str) -> dict[str, Place]:
        """Delete entries as :meth:`delete` does, in the order given, each chain
        relinked as it goes; their links go in one statement.

        Returns:
            Where each stood in its chain, by id (those that exist).
        """
        pending = pending_targets(self)
        places: dict[str, Place] = {}
        for entry_id in entry_ids:
            place = unlink(self, entry_id, now, pending)
            if place is not None:
                self.execute("DELETE FROM memory_entries WHERE id = ?", (entry_id,))
                places[entry_id] = place
        drop_links(self, list(places))
        return places

    def purge_superseded(self, cutoff: str) -> list[str]:
        """Delete entries superseded before ``cutoff``; returns their ids."""
        ids = [
            r[0]
            for r in self.execute(
                "SELECT id FROM memory_entries WHERE superseded_at IS NOT NULL "
                "AND superseded_at < ?",
                (cutoff,),
            )
        ]
        now = iso(utc_now())
        for entry_id in ids:  # a newer version may be kept longer: it is relinked
            self.delete(entry_id, now)
        return ids

    def history(self, entry_id: str) -> list[MemoryEntry]:
        """The supersession chain through ``entry_id``, oldest first."""
        chain: list[MemoryEntry] = []
        older = self.execute(
            f"""WITH RECURSIVE back(id, depth) AS (
                    SELECT ?, 0
                    UNION ALL
                    SELECT m.id, back.depth + 1 FROM memory_entries m
                    JOIN back ON m.superseded_by = back.id WHERE back.depth < 1000)
                SELECT {E_COLUMNS} FROM back JOIN memory_entries e ON e.id = back.id
                ORDER BY back.depth DESC""",
            (entry_id,),
        )
        chain.extend(entry_from_row(r) for r in older)
        current = chain[-1] if chain else self.get(entry_id)
        seen = {e.id for e in chain}
        while current is not None and current.superseded_by and len(seen) < 1000:
            nxt = self.get(current.superseded_by)
            if nxt is None or nxt.id in seen:
                break
            chain.append(nxt)
            seen.add(nxt.id)
            current = nxt
        return chain

    # -- queries ---------------------------------------------------------------

    def plan(self, terms: list[str], *, prefix_last: bool = False) -> tuple[list[str], bool]:
        """Which terms to search with, and whether to rank every match (see QueryPlanner)."""
        return self.planner.plan(terms, prefix_last=prefix_last)

    def term_freq(self, word: str) -> int:
        return self.planner.term_freq(word)

    def doc_freq(self, expression: str, cap: int) -> int:
        return self.planner.doc_freq(expression, cap)

    def recent(self, flt: EntryFilter, limit: int, offset: int = 0) -> list[MemoryEntry]:
        return [entry_from_row(r) for r in self._recent_rows(E_COLUMNS, flt, limit, offset)]

    def recent_hits(self, flt: EntryFilter, limit: int, offset: int = 0) -> list[Hit]:
        """:meth:`recent` read as search results (score 0)."""
        rows = self._recent_rows(f"{HIT_COLUMNS}, 0.0", flt, limit, offset)
        return [Hit._make(r) for r in rows]

    def _recent_rows(
        self, columns: str, flt: EntryFilter, limit: int, offset: int = 0
    ) -> Iterable[Sequence[Any]]:
        source, where, params = filtered_source(flt)
        rows: Iterable[Sequence[Any]] = self.execute(
            f"SELECT {columns} FROM {source} WHERE {where} "
            "ORDER BY e.created_at DESC, e.seq DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        )
        return rows

    def ids(
        self, flt: EntryFilter, match: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Ordered ids of every matching entry, or of the first ``limit`` (the browser
        loads rows lazily)."""
        if match is None:
            source, where, params = filtered_source(flt)
            sql = f"SELECT e.id FROM {source} WHERE {where} ORDER BY e.created_at DESC, e.seq DESC"
            return [r[0] for r in self.execute(sql + _limit(limit), params)]
        where, params = where_clause(flt)
        sql = (
            "SELECT e.id FROM memory_fts CROSS JOIN memory_entries e "
            f"ON e.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND {where} "
            f"ORDER BY {BM25}"
        )
        return [r[0] for r in self.execute(sql, (match, *params))]

    def browse_ids(
        self, flt: EntryFilter, terms: list[str], *, prefix_last: bool, limit: int | None = None
    ) -> list[str]:
        """Ids of every entry matching ``terms`` for the browser (or the first ``limit``),
        planned like :meth:`search`.

        Best match first when the matches are few enough to rank
        (:meth:`plan`); otherwise newest first, which is instant at any size.
        """
        if not terms:
            return []
        kept, exact = self.plan(terms, prefix_last=prefix_last)
        match = match_expression(kept, prefix_last=prefix_last and kept[-1] == terms[-1])
        where, params = where_clause(flt)
        order = BM25 if exact else "f.rowid DESC"
        sql = (
            "SELECT e.id FROM memory_fts AS f "
            f"CROSS JOIN memory_entries e ON e.seq = f.rowid "
            f"WHERE f.memory_fts MATCH ? AND {where} ORDER BY {order}"
        )
        return [r[0] for r in self.execute(sql + _limit(limit), (match, *params))]

    def unspaced_matches(
        self, flt: EntryFilter, grams: list[str], limit: int | None
    ) -> dict[int, int]:
        """Entries passing ``flt`` whose text or tags hold pieces of an unspaced
        query (:func:`core.storage.fts.unspaced_grams`), as {seq: pieces held}, most
        first, then newest; each piece is looked up in the gram index, among the
        newest :data:`~core.storage.fts.GRAM_CANDIDATES` entries holding it.

        The filter is checked on the ranked entries a batch at a time, best first,
        until ``limit`` pass: joining every candidate to its row first took four
        times as long (23 ms against 6 for a six-piece question at 100,000).
        """
        if not grams:
            return {}
        held, bound = grams_held("memory_grams", grams)
        ranked = self.execute(f"{held} ORDER BY held DESC, seq DESC", bound)
        where, params = where_clause(flt)
        # CROSS JOIN: the candidates lead, each a lookup by rowid (the planner would
        # otherwise walk every entry of a filter's index, 10 ms at 100,000).
        passing = (
            "SELECT e.seq FROM json_each(?) AS c CROSS JOIN memory_entries e "
            f"ON e.seq = c.value WHERE {where}"
        )
        found: dict[int, int] = {}
        size = _FILTER_BATCH
        while limit is None or len(found) < limit:
            batch = {int(r[0]): int(r[1]) for r in itertools.islice(ranked, size)}
            if not batch:
                break
            kept = {int(r[0]) for r in self.execute(passing, (json.dumps(list(batch)), *params))}
            found.update((seq, held) for seq, held in batch.items() if seq in kept)
            size *= 2  # a narrow filter passes few: fewer, larger checks
        return dict(list(found.items())[:limit])

    def ids_of(self, seqs: list[int]) -> list[str]:
        """The ids of ``seqs``, in their order."""
        if not seqs:
            return []
        marks = ", ".join("?" * len(seqs))
        rows = self.execute(f"SELECT seq, id FROM memory_entries WHERE seq IN ({marks})", seqs)
        found = {int(r[0]): str(r[1]) for r in rows}
        return [found[s] for s in seqs if s in found]

    def count(self, flt: EntryFilter) -> int:
        where, params = where_clause(flt)
        return int(self.execute(f"SELECT count(*) FROM memory_entries e WHERE {where}", params).get)

    def current_count(self) -> int:
        """Active, not superseded entries (kept by triggers, so this costs nothing)."""
        return int(self.execute("SELECT current FROM entry_stats WHERE id = 1").get)

    def total(self) -> int:
        return int(self.execute("SELECT count(*) FROM memory_entries").get)

    def all_tags(self) -> list[tuple[str, int]]:
        return [
            (r[0], r[1])
            for r in self.execute(
                "SELECT tag, count(*) FROM memory_tags GROUP BY tag COLLATE NOCASE ORDER BY tag"
            )
        ]

    def rebuild_index(self) -> int:
        """Rebuild the derived FTS index and tag table from the entries."""
        with self.transaction():
            self.execute("DELETE FROM memory_fts")
            self.execute("DELETE FROM memory_tags")
            self.execute(
                "INSERT INTO memory_fts(rowid, content, tags) SELECT seq, search_text, "
                "(SELECT group_concat(value, ' ') FROM json_each(tags)) FROM memory_entries"
            )
            self.execute(
                "INSERT OR IGNORE INTO memory_tags(entry_seq, tag) "
                "SELECT seq, j.value FROM memory_entries, json_each(memory_entries.tags) j"
            )
            self.execute("DELETE FROM memory_grams")
            rows = self.execute("SELECT seq, search_text, tags FROM memory_entries").fetchall()
            made = [(entry_grams(r[1], json.loads(r[2])), r[0]) for r in rows]
            self.execute("UPDATE memory_entries SET search_grams = '' WHERE search_grams != ''")
            self.conn.executemany(
                "UPDATE memory_entries SET search_grams = ? WHERE seq = ?",
                [m for m in made if m[0]],
            )
        return self.total()


def _limit(limit: int | None) -> str:
    return "" if limit is None else f" LIMIT {int(limit)}"
