"""Writes to many memories cut into batches, each its own transaction.

Done in one transaction, a delete of 10,000 memories held the group's write lock
for most of a second (several at 100,000), and every other writer (an agent's
store through the socket, ``ambry mcp`` in another process) waited all that
time. Cut up by :class:`Batching`, each batch of :attr:`Batching.size` memories
is a transaction of its own, so another writer waits at most one batch; between
batches the work can be stopped (:attr:`Batching.stop`), and what was done stays
done, each memory either wholly done or untouched.

An operation writes one audit row however many batches it takes (:class:`OneRow`):
the first batch writes it and each later one rewrites it in its own transaction
(:func:`core.storage.audit.rewrite`), so at every commit the row names exactly
what is done. A stopped operation's row says so (``stopped``, and ``asked``:
how many it was asked to do).

With a batch as large as the work (:data:`AT_ONCE`, the default of the
operations) an operation is one transaction.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from core.model.errors import AmbryError
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore

T = TypeVar("T")

#: The pause between two batches, long enough for a writer waiting on the lock to
#: take it (see :func:`Batching.chunks`).
PAUSE_S = 0.05

#: Memories per batch in the app: 20 ms (delete) to 75 ms (undo) of writes each on a
#: 10,000-memory store (docs/desktop.md, "Bulk changes in the background").
BATCH = 250


def _never() -> bool:
    return False


def _silent(_done: int, _total: int) -> None:
    pass


@dataclass(frozen=True)
class Batching:
    """How an operation is cut up, reported and stopped.

    Attributes:
        size: memories per transaction; 0 means all in one.
        progress: called after each batch commits with (done, total).
        stop: asked before each batch after the first; true stops the operation.
    """

    size: int = 0
    progress: Callable[[int, int], None] = _silent
    stop: Callable[[], bool] = _never
    pause: float = PAUSE_S

    def chunks(self, items: Sequence[T]) -> Iterator[Sequence[T]]:
        """``items`` in batches, stopping early when :attr:`stop` says so."""
        size = self.size if self.size > 0 else max(1, len(items))
        for start in range(0, len(items), size):
            if start:
                # Another writer's busy handler polls (core.storage.db.BusyWait): a
                # batch begun at once after the last would find the lock free
                # first, every time, and the other would wait for the whole.
                time.sleep(self.pause)
                if self.stop():
                    return
            yield items[start : start + size]

    def run(
        self, items: Sequence[T], batch: Callable[[Sequence[T], int], None]
    ) -> tuple[int, AmbryError | None]:
        """Call ``batch(chunk, done)`` for each batch of ``items`` (``done``: how many went
        through before it), saying the progress after each.

        Returns:
            How many of ``items`` went through, and the error that stopped a batch, if
            one did (the batches before it stay done).
        """
        done = 0
        try:
            for chunk in self.chunks(items):
                batch(chunk, done)
                done += len(chunk)
                self.progress(done, len(items))
        except AmbryError as exc:
            return done, exc
        return done, None


#: All in one transaction: what the functions here do unless told otherwise.
AT_ONCE = Batching()


@dataclass(frozen=True)
class Batched(Generic[T]):
    """What a batched operation did.

    Attributes:
        result: what the operation returns, for the batches that committed.
        done: how many of those asked it went through (done, or found done already).
        total: how many it was asked to do.
        error: why a batch failed (a lock held too long, a full disk); the batches
            before it stay done and are in ``result``.
    """

    result: T
    done: int
    total: int
    error: AmbryError | None = None

    @property
    def stopped(self) -> bool:
        """Stopped before the end: cancelled, or a batch failed."""
        return self.done < self.total


class OneRow:
    """The one audit row of a batched operation, written by its first batch and
    rewritten by each later one (inside each batch's transaction)."""

    def __init__(self, store: GroupStore, caller: Caller, action: Action, total: int) -> None:
        self._store, self._caller, self._action = store, caller, action
        self._total = total
        self._id: int | None = None

    def write(self, done: int, entry_ids: Sequence[str], count: int, **detail: Any) -> None:
        """Name what is done once this batch commits: ``done`` of those asked."""
        if done < self._total:
            # Until a later batch says otherwise: a cancel or a crash leaves it so.
            detail.update(stopped=True, asked=self._total)
        if self._id is None:
            audit.record(
                self._store,
                self._action,
                self._caller.actor,
                session_id=self._caller.session_id,
                entry_ids=entry_ids,
                count=count,
                **detail,
            )
            self._id = self._store.conn.last_insert_rowid()
        else:
            audit.rewrite(self._store, self._id, entry_ids=entry_ids, count=count, **detail)
