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
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Final

from core.layers.compression import PassResult, compress, is_due
from core.model.entries import utc_now
from core.model.errors import AmbryError
from core.storage.store import GroupStore

log = logging.getLogger(__name__)

#: The schedule: a pass is due when the last complete one is this old.
INTERVAL: Final = timedelta(hours=6)


class LayerWorker:
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
        self.interval = interval
        #: Seconds before the first pass (an app draws its window first).
        self.start_delay = start_delay
        self.on_pass = on_pass
        self._groups: dict[Path, str] = {}
        self._wanted: dict[Path, bool] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None

    def wake(self, path: Path, group: str, *, force: bool = False) -> None:
        """Check ``group`` now: a pass runs if one is due (always with ``force``)."""
        with self._lock:
            self._groups[path] = group
            self._wanted[path] = self._wanted.get(path, False) or force
            self._idle.clear()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="ambry-layers", daemon=True)
                self._thread.start()
        self._wake.set()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no pass is running or wanted (tests and benchmarks)."""
        return self._idle.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        stores: dict[Path, GroupStore] = {}
        try:
            if self.start_delay > 0:
                self._stop.wait(self.start_delay)
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
