"""Making the missing vectors: after each write in the background, or all at once.

A write is acknowledged once it is committed; the entry is found by keywords
from then on. :class:`EmbeddingWorker` (one thread, its own connection per
group) then embeds whatever has no vector yet, a batch per transaction. The
work list is the database itself (rows without a vector of the current model),
so a backfill killed half-way resumes where it stopped, and a database from
before semantic search is filled in the same way when it is first opened.

Rows another process wrote (``ambry store`` and ``ambry import`` load no model)
wake no worker of this one. A search calls :meth:`EmbeddingWorker.check`, which
compares the group's cheap :func:`~core.semantic.vectors.fingerprint` with the
one the worker last saw complete, and wakes it when they differ.

:func:`reindex` does the same work in the caller's thread, with progress, for
``ambry reindex`` and the settings view.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from core.model.errors import AmbryError
from core.semantic import vectors
from core.semantic.embedding import (
    DEFAULT_MODEL_ID,
    Embedder,
    EmbeddingUnavailable,
    Stopped,
    shared_embedder,
    unavailable_reason,
)
from core.semantic.hybrid import Mode
from core.storage.db import open_database, write_transaction
from core.storage.worker import BackgroundWorker, release_freed_memory

log = logging.getLogger(__name__)

#: Rows embedded per transaction. The model runs before the transaction, so a
#: writer waits only for the rows' insert; the rows are sorted by length across
#: the step, so a larger step leaves less padding in each model batch: 100
#: conversation turns a second at 64 rows, 110 at 256 (113 at 512). A kill loses
#: at most one step's work, about 2.5 s.
ROWS_PER_STEP = 256
#: The worker connection's page cache, in KiB (readers keep the larger default).
WORKER_CACHE_KIB = 2048
#: Rows embedded before the worker, once idle, hands freed heap pages back.
TRIM_AFTER = 32


@dataclass(frozen=True)
class Progress:
    """How far a group's vectors are: ``done`` of ``total`` rows have one."""

    group: str
    done: int
    total: int
    #: The group's fingerprint when the rows were counted (empty when not counted).
    mark: vectors.Fingerprint = field(default=(), compare=False)

    @property
    def complete(self) -> bool:
        return self.done >= self.total

    @property
    def pending(self) -> int:
        return max(0, self.total - self.done)

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "done": self.done, "total": self.total}


def progress_of(conn: Any, group: str, model_id: str) -> Progress:
    with conn:  # one snapshot: the fingerprint is that of the rows counted
        mark = vectors.fingerprint(conn)
        total = sum(vectors.eligible_count(conn, k) for k in vectors.TABLES)
        missing = sum(vectors.pending_count(conn, k, model_id) for k in vectors.TABLES)
    return Progress(group, total - missing, total, mark)


def lacking(rows: int) -> str:
    """``1 memory or turn has`` / ``3 memories and turns have`` (no vector yet)."""
    return "1 memory or turn has" if rows == 1 else f"{rows} memories and turns have"


def pending_note(
    pending: int, mode: Mode = Mode.AUTO, *, command_line: bool = False
) -> dict[str, Any]:
    """The keys a search in ``mode`` gains while ``pending`` rows have no vector yet.

    In ``auto`` mode those rows are still found by their words; in ``semantic`` mode
    (meaning alone) they are not searched at all until embedded, and the note says
    so and what to do. ``command_line`` words it for a reader the background worker
    does not serve (a command, which runs none: `ambry reindex` embeds them); the
    default is an agent's.
    """
    if pending <= 0:
        return {}
    one = pending == 1
    are, them = ("is", "it") if one else ("are", "them")
    if command_line:
        if mode is Mode.SEMANTIC:
            note = (
                f"{lacking(pending)} no vector yet and {are} not searched by meaning alone "
                f"(--mode semantic); run `ambry reindex`, or search with --mode auto to find "
                f"{them} by {'its' if one else 'their'} words"
            )
        else:
            note = (
                f"{lacking(pending)} no vector yet; run `ambry reindex` (until then "
                f"{'it is' if one else 'they are'} found by {'its' if one else 'their'} words)"
            )
    elif mode is Mode.SEMANTIC:
        note = (
            f"{lacking(pending)} no vector yet and {are} being embedded in the background; "
            f"a search by meaning alone (mode semantic) does not search {them} until then: "
            f"search again shortly, or use mode auto to find {them} by "
            f"{'its' if one else 'their'} words"
        )
    else:
        note = (
            f"{lacking(pending)} no vector yet and {are} being embedded in the background; "
            f"until then {'it is' if one else 'they are'} found by words only (mode auto or "
            "keyword), not by meaning"
        )
    return {"pending_vectors": pending, "note": note}


def embed_step(
    conn: Any,
    path: Path,
    embedder: Embedder,
    kind: vectors.VectorTable,
    should_stop: Callable[[], bool] = lambda: False,
) -> int:
    """Embed up to :data:`ROWS_PER_STEP` rows of ``kind``; returns how many were pending
    (0 when ``should_stop`` said so before the step was done: nothing is written)."""
    rows = vectors.pending(conn, kind, embedder.model_id, ROWS_PER_STEP)
    if not rows:
        return 0
    try:
        found = embedder.encode([text for _, text in rows], background=True, stop=should_stop)
    except Stopped:
        return 0
    with write_transaction(conn, path):
        vectors.write(conn, kind, embedder.model_id, rows, found)
    return len(rows)


def reindex(
    conn: Any,
    path: Path,
    group: str,
    embedder: Embedder,
    *,
    rebuild: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> Progress:
    """Embed every row of ``group`` that lacks a vector (all of them with ``rebuild``)."""
    if rebuild:
        with write_transaction(conn, path):
            for kind in vectors.TABLES:
                conn.execute(f"DELETE FROM {kind.table}")
    state = progress_of(conn, group, embedder.model_id)
    if on_progress is not None:
        on_progress(state)
    done = state.done
    for kind in vectors.TABLES:
        while not should_stop():
            step = embed_step(conn, path, embedder, kind, should_stop)
            if not step:
                break
            done += step
            if on_progress is not None:
                on_progress(Progress(group, min(done, state.total), state.total))
    final = progress_of(conn, group, embedder.model_id)
    if on_progress is not None and final != state:
        # Rows added or deleted meanwhile: the last step's count is not the end.
        on_progress(final)
    return final


def _waiting(conn: Any, model_id: str) -> tuple[bool, vectors.Fingerprint]:
    """Whether a row lacks a vector of ``model_id``, and the fingerprint of that snapshot."""
    with conn:
        mark = vectors.fingerprint(conn)
        return any(vectors.pending(conn, kind, model_id, 1) for kind in vectors.TABLES), mark


#: A group whose file another writer holds is tried again after this many seconds ...
BUSY_RETRY_SECONDS = 2.0
#: ... this many times in a row, before waiting for the next write.
BUSY_RETRIES = 30


class EmbeddingWorker(BackgroundWorker):
    """One background thread that keeps every open group's vectors complete.

    Args:
        model_dir: the ``embedding_model_dir`` setting ("" for the default model).
        on_progress: called from the worker thread after each step.
    """

    def __init__(
        self,
        model_dir: str = "",
        on_progress: Callable[[Progress], None] | None = None,
        *,
        start_delay: float = 0.0,
    ) -> None:
        super().__init__("ambry-embedding", start_delay)
        self.model_dir = model_dir
        self.on_progress = on_progress
        self._wanted: dict[Path, str] = {}
        #: Every group ever asked for, to ask again when the model changes.
        self._known: dict[Path, str] = {}
        self.progress: dict[str, Progress] = {}
        #: Called once, from the worker thread, with the reason when the model is missing.
        self.on_unavailable: Callable[[str], None] | None = None
        self._said_unavailable = False
        self._busy_tries: dict[Path, int] = {}
        #: Rows embedded since the heap was last trimmed.
        self._embedded = 0
        #: Per group file, the fingerprint at which no row lacked a vector of the model ...
        self._complete: dict[Path, vectors.Fingerprint] = {}
        #: ... and the one a search last woke the worker for (each change wakes it once).
        self._asked: dict[Path, vectors.Fingerprint] = {}

    def wake(self, path: Path, group: str) -> None:
        """Ask for ``group``'s missing vectors to be made (cheap; call after every write)."""
        with self._lock:
            self._wanted[path] = group
            self._known[path] = group
            self._start()
        self._wake.set()

    def check(self, path: Path, group: str, conn: Any) -> bool:
        """Whether some rows of ``group`` may lack a vector; wakes the worker when so.

        Cheap enough for every search (:func:`~core.semantic.vectors.fingerprint`
        on the caller's ``conn``). This is how rows written by another process, which
        woke no worker here, get their vectors. A state already asked about does not
        wake the worker again (a model that cannot load is not retried per search).
        """
        mark = vectors.fingerprint(conn)
        with self._lock:
            if self._complete.get(path) == mark:
                return False
            if self._asked.get(path) == mark:
                return True
            self._asked[path] = mark
        self.wake(path, group)
        return True

    def pending(self, group: str) -> int:
        """Rows of ``group`` without a vector when the worker last counted (0 if never)."""
        progress = self.progress.get(group)
        return 0 if progress is None else progress.pending

    def use_model(self, model_dir: str) -> None:
        """Embed with the model of ``model_dir`` from the next batch on.

        Every group seen so far is filled again: rows are embedded with the new
        model (each vector replaces the old model's), with progress as on a first
        start. A model that cannot be loaded is reported once again.
        """
        with self._lock:
            self.model_dir = model_dir
            self._said_unavailable = False
            self.progress.clear()
            self._complete.clear()
            self._asked.clear()
            self._wanted.update(self._known)
            if self._wanted:
                self._start()
        self._wake.set()

    def _run(self) -> None:
        conns: dict[Path, apsw.Connection] = {}
        try:
            while not self._stop.is_set():
                self._wake.wait()
                self._wake.clear()
                while not self._stop.is_set():
                    with self._lock:
                        if not self._wanted:
                            break
                        path, group = self._wanted.popitem()
                    self._embedded += self._fill(conns, path, group)
                if self._embedded >= TRIM_AFTER:
                    # The model's working memory for a batch is freed, not returned.
                    self._embedded = 0
                    release_freed_memory()
                with self._lock:
                    if not self._wanted:
                        self._idle.set()
        finally:
            for conn in conns.values():
                conn.close()
            self._idle.set()

    def _fill(self, conns: dict[Path, apsw.Connection], path: Path, group: str) -> int:
        """Embed what ``group`` lacks; returns how many rows it embedded."""
        try:
            conn = conns.get(path)
            if conn is None:
                conn = conns[path] = open_database(path)
                # Vectors are derived data: a power cut costs at most a re-embed.
                conn.execute("PRAGMA synchronous = NORMAL")
                # It reads each row once and appends: a small page cache will do.
                conn.execute(f"PRAGMA cache_size = -{WORKER_CACHE_KIB}")
            model_dir = self.model_dir
            if not model_dir:
                waiting, mark = _waiting(conn, DEFAULT_MODEL_ID)
                if not waiting:  # nothing to embed: the model is not loaded for nothing
                    self._done(path, group, model_dir, mark)
                    return 0
            embedder = shared_embedder(model_dir)
            if embedder is None:
                # Said once in the log (and to the app); keyword search carries on.
                self._say_unavailable(unavailable_reason(model_dir) or "no model")
                return 0
            seen: list[int] = []

            def report(progress: Progress) -> None:
                seen.append(progress.done)
                self._report(progress)

            final = reindex(
                conn,
                path,
                group,
                embedder,
                on_progress=report,
                # Another model chosen meanwhile: stop; use_model asked for the group again.
                should_stop=lambda: self._stop.is_set() or self.model_dir != model_dir,
            )
            if final.complete:
                self._done(path, group, model_dir, final.mark)
        except EmbeddingUnavailable as exc:  # the model failed on a row: it is off now
            self._say_unavailable(str(exc))
            return 0
        except (AmbryError, apsw.Error) as exc:
            busy = isinstance(exc, apsw.BusyError) or isinstance(exc.__cause__, apsw.BusyError)
            tries = self._busy_tries.get(path, 0)
            if busy and tries < BUSY_RETRIES:
                # Another writer held the file (a long import, say): try again shortly,
                # without waiting for the next write to wake us.
                self._busy_tries[path] = tries + 1
                log.info("embedding in group %s waits for another writer (%s)", group, exc)
                if not self._stop.wait(BUSY_RETRY_SECONDS):
                    with self._lock:
                        self._wanted.setdefault(path, group)
                return 0
            # The next write tries again; a broken disk is reported by the writes themselves.
            log.warning("embedding in group %s stopped: %s", group, exc)
            return 0
        self._busy_tries.pop(path, None)
        return seen[-1] - seen[0] if seen else 0

    def _done(self, path: Path, group: str, model_dir: str, mark: vectors.Fingerprint) -> None:
        """Record that no row lacked a vector of ``model_dir``'s model at ``mark``."""
        with self._lock:
            if self.model_dir != model_dir:
                return  # another model was chosen meanwhile: its rows are still to do
            self._complete[path] = mark
            # A later state may look like one asked about before (vectors deleted again).
            self._asked.pop(path, None)
            stale = self.progress.get(group)
        if stale is not None and not stale.complete:
            # Another process embedded the rest: the last count no longer holds.
            self._report(Progress(group, stale.total, stale.total, mark))

    def _say_unavailable(self, reason: str) -> None:
        """Tell the app once (per model) why the model cannot embed."""
        if self.on_unavailable is not None and not self._said_unavailable:
            self._said_unavailable = True
            self.on_unavailable(reason)

    def _report(self, progress: Progress) -> None:
        self.progress[progress.group] = progress
        if self.on_progress is not None:
            self.on_progress(progress)

    def settle(self, group: str) -> None:
        """Wait (at most :data:`SETTLE_SECONDS`) for ``group``'s backlog to be embedded,
        unless the worker counts more than :data:`SETTLE_ROWS` rows in it.

        Call it after :meth:`check` said rows may lack vectors. A search by meaning
        alone, or for an entry's neighbours, cannot see a row without its vector; a
        memory stored a moment before, here or by another process, would be missing.
        A larger backlog (an import, a model change) is not waited for: its rows are
        found by their words, and the progress is shown. The worker counts, not the
        search: counting takes 180 ms at 100,000 rows.
        """
        deadline = time.monotonic() + SETTLE_SECONDS
        while not self._idle.wait(min(SETTLE_POLL_SECONDS, max(0.0, deadline - time.monotonic()))):
            if self.pending(group) > SETTLE_ROWS or time.monotonic() >= deadline:
                return


#: The backlog a search by meaning waits for, and for how long at most.
SETTLE_ROWS = 64
SETTLE_SECONDS = 2.0
#: How often a waiting search looks at the worker's count of the backlog.
SETTLE_POLL_SECONDS = 0.02
