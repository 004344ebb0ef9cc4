"""One background thread per job, woken when there is work: the embedding and layers workers.

A subclass keeps what it is asked to do under ``_lock`` and implements ``_run``;
this class starts the thread on the first :meth:`_start`, lets a caller wait
until it is idle, and stops it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys
import threading
from typing import Any

log = logging.getLogger(__name__)

_libc: Any = None


def release_freed_memory() -> bool:
    """Give the heap's freed pages back to the system (glibc only; False elsewhere).

    A batch of long texts through the model frees tens of megabytes that glibc
    keeps for reuse; a server that then sits idle for hours would hold them
    all that time. Returns whether anything was released.
    """
    global _libc
    if not sys.platform.startswith("linux"):
        return False
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):  # musl and others have no malloc_trim
            _libc = False
    if _libc is False:
        return False
    return bool(_libc.malloc_trim(0))


class BackgroundWorker:
    """Thread, wake-up, idle and stop plumbing shared by Ambry's background workers.

    Args:
        name: the thread's name (shows in a debugger and in crash reports).
        start_delay: seconds the thread waits before its first step (an app draws
            its window first).
    """

    def __init__(self, name: str, start_delay: float = 0.0) -> None:
        self.name = name
        self.start_delay = start_delay
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        """Mark work as wanted and wake the thread, starting it the first time.

        Call with ``_lock`` held, after recording the work.
        """
        self._idle.clear()
        if self._thread is None:
            self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
            self._thread.start()

    def _main(self) -> None:
        if self.start_delay > 0:
            self._stop.wait(self.start_delay)
        self._run()

    def _run(self) -> None:
        raise NotImplementedError

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until nothing is left to do (tests and benchmarks use this)."""
        return self._idle.wait(timeout)

    def close(self, timeout: float = 5.0) -> None:
        """Stop after the current step; what is left is picked up next time."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
