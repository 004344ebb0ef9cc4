"""Bookkeeping writes that must not stop a person from reading their memories.

On a read-only data dir or a full disk a group opens read-only (see
:func:`core.storage.db.open_database`) or its writes fail. Searching and exporting must
still work there, so the writes a read makes on the side (its audit row, the
CLI's operator session, start-up upkeep such as decay and purging) go through
:func:`best_effort`: a storage failure is logged as a warning, once per group
at warning level, and the read goes on. Writes the person or an agent asked
for are never best-effort: they fail with the storage error.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Protocol

from core.model.entries import Actor
from core.model.errors import StorageError

log = logging.getLogger(__name__)


class _Store(Protocol):
    group: str
    #: The database could only be opened for reading; the open already warned.
    read_only: bool
    #: Set at the first failed bookkeeping write, so later ones log quietly.
    write_failure: str | None


@contextlib.contextmanager
def best_effort(store: _Store, what: str) -> Iterator[None]:
    """Run the block; if storage refuses the write, warn and carry on.

    Args:
        store: the group store the block writes to.
        what: what is not recorded if the write fails, for the warning.
    """
    try:
        yield
    except StorageError as exc:
        if store.write_failure is None and not store.read_only:
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
