"""Bookkeeping writes that must not stop a person from reading their memories.

On a read-only data dir or a full disk a group opens read-only (see
:func:`core.storage.db.open_database`) or its writes fail. Searching and exporting must
still work there, so the writes a read makes on the side (its audit row, the
CLI's operator session, start-up upkeep such as decay and purging) go through
:func:`best_effort`: a storage failure is logged as a warning, once per group
at warning level, and the read goes on. Writes the person or an agent asked
for are never best-effort: they fail with the storage error.

Once a bookkeeping write of a group has failed, the next ones for a minute wait
only a moment for another program's lock (a warning is given once), and start-up
upkeep waits seconds rather than the full :data:`core.storage.db.BUSY_TIMEOUT_MS`:
a command run while another program holds the group waits for its own write,
not four times over.
"""

from __future__ import annotations

import contextlib
import logging
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import apsw

from core.model.entries import Actor
from core.model.errors import StorageError
from core.storage.db import waiting_at_most

log = logging.getLogger(__name__)


#: How long start-up upkeep waits for another program's lock, in ms.
UPKEEP_WAIT_MS = 3_000
#: How long a bookkeeping write waits once one in its group has failed, in ms ...
AFTER_FAILURE_WAIT_MS = 500
#: ... for this long after that failure (then the full wait again).
_SHORT_AFTER_FAILURE_S = 60.0
#: When each store's last bookkeeping write failed (monotonic seconds).
_failed_at: weakref.WeakKeyDictionary[Any, float] = weakref.WeakKeyDictionary()


class _Store(Protocol):
    conn: apsw.Connection
    path: Path
    group: str
    #: The database could only be opened for reading; the open already warned.
    read_only: bool
    #: Set at the first failed bookkeeping write, so later ones log quietly.
    write_failure: str | None


@contextlib.contextmanager
def best_effort(store: _Store, what: str, *, wait_ms: int | None = None) -> Iterator[None]:
    """Run the block; if storage refuses the write, warn and carry on.

    Args:
        store: the group store the block writes to.
        what: what is not recorded if the write fails, for the warning.
        wait_ms: how long to wait at most for another program's lock (default: as
            long as the work around it, or :data:`AFTER_FAILURE_WAIT_MS` in the
            minute after a failure).
    """
    if time.monotonic() - _failed_at.get(store, -_SHORT_AFTER_FAILURE_S) < _SHORT_AFTER_FAILURE_S:
        wait_ms = AFTER_FAILURE_WAIT_MS
    waiting = (
        contextlib.nullcontext()
        if wait_ms is None
        else waiting_at_most(store.conn, store.path, wait_ms)
    )
    try:
        with waiting:
            yield
    except StorageError as exc:
        _failed_at[store] = time.monotonic()
        busy = isinstance(exc.__cause__, (apsw.BusyError, apsw.LockedError))
        if busy and store.write_failure is None:
            log.warning(
                "group %s is locked by another program, so %s is not recorded this time",
                store.group,
                what,
            )
        elif store.write_failure is None and not store.read_only:
            log.warning(
                "group %s cannot be written, so %s and other bookkeeping are not recorded; "
                "search and export still work: %s",
                store.group,
                what,
                exc.message,
            )
        else:
            log.info("group %s: %s not recorded: %s", store.group, what, exc.message)
        store.write_failure = exc.message


@contextlib.contextmanager
def operator_best_effort(store: _Store, actor: Actor, what: str) -> Iterator[None]:
    """:func:`best_effort` for the person; an agent's write fails as usual."""
    if actor is Actor.AGENT:
        yield
        return
    with best_effort(store, what):
        yield
