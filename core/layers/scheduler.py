"""Compression in the background: at most every 6 hours, and at agent session start when due.

One daemon thread with its own database connections (apsw connections are not
shared between threads). :meth:`LayerWorker.wake` only records the wish and
returns, so no call and no GUI event ever waits for a pass; the pass itself
writes one short transaction per summary, so a writer on another connection
waits at most a few milliseconds for one. :meth:`LayerWorker.close` stops it
between two summaries; what is left is done by the next pass (the pass is
resumable, core.layers.compression).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Final

from core.layers.compression import PassResult, compress, is_due
from core.model.entries import utc_now
from core.model.errors import AmbryError
from core.storage.store import GroupStore
from core.storage.worker import BackgroundWorker

log = logging.getLogger(__name__)

#: The schedule: a pass is due when the last complete one is this old.
INTERVAL: Final = timedelta(hours=6)


class LayerWorker(BackgroundWorker):
    """Runs due compression passes for the groups it is told about.

    Args:
        interval: how old the last pass must be before another is due.
        on_pass: called from the worker thread with the group and the result.
    """

    def __init__(
        self,
        interval: timedelta = INTERVAL,
        on_pass: Callable[[str, PassResult], None] | None = None,
        *,
        start_delay: float = 0.0,
    ) -> None:
        super().__init__("ambry-layers", start_delay)
        self.interval = interval
        self.on_pass = on_pass
        self._groups: dict[Path, str] = {}
        self._wanted: dict[Path, bool] = {}

    def wake(self, path: Path, group: str, *, force: bool = False) -> None:
        """Check ``group`` now: a pass runs if one is due (always with ``force``)."""
        with self._lock:
            self._groups[path] = group
            self._wanted[path] = self._wanted.get(path, False) or force
            self._start()
        self._wake.set()

    def _run(self) -> None:
        stores: dict[Path, GroupStore] = {}
        try:
            while not self._stop.is_set():
                # Woken by a session start, or by the clock for the 6-hourly pass.
                if not self._wake.wait(self.interval.total_seconds()):
                    with self._lock:
                        self._wanted.update(dict.fromkeys(self._groups, False))
                self._wake.clear()
                while not self._stop.is_set():
                    with self._lock:
                        if not self._wanted:
                            self._idle.set()
                            break
                        path, force = self._wanted.popitem()
                        group = self._groups[path]
                    self._pass(stores, path, group, force)
        finally:
            for store in stores.values():
                store.close()
            self._idle.set()

    def _pass(self, stores: dict[Path, GroupStore], path: Path, group: str, force: bool) -> None:
        try:
            store = stores.get(path)
            if store is None:
                store = stores[path] = GroupStore(path, group)
            now = utc_now()
            if store.read_only or not (force or is_due(store, now, self.interval)):
                return
            result = compress(store, now, should_stop=self._stop.is_set)
            log.info("layers: group %s: %s", group, result.to_dict())
            if self.on_pass is not None:
                self.on_pass(group, result)
        except AmbryError as exc:
            # An environment problem (disk full, locked): the next pass tries again.
            log.warning("layers: compression of group %s failed: %s", group, exc)
