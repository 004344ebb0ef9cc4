"""Verifying receipts from the window: plan on the GUI thread, hash on the executor, record.

core.attachments.verification splits a run into three steps so a GUI never blocks on file
I/O: :func:`~core.attachments.verification.pending_checks` reads the store (GUI thread),
:func:`~core.attachments.verification.check_sources` touches files only (the executor's
thread, which never uses the GUI thread's store) and
:func:`~core.attachments.verification.record_checks` writes the results through the GUI
thread's service, so the change record reaches every view and the agent socket
shares one writer.

The executor has one thread, shared with the memory browser's searches. A run
is therefore cut into batches, one task each: a search typed during a long run
waits for one batch, not for every file.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal

from core.attachments.verification import (
    SourceCheck,
    Verification,
    check_sources,
    pending_checks,
    record_checks,
)
from core.model.errors import AmbryError
from core.service import MemoryService
from desktop.widgets import messages
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

#: A batch ends after this many files or this many recorded bytes, whichever comes first.
BATCH_FILES = 25
BATCH_BYTES = 64 * 1024 * 1024


def batches(checks: Sequence[SourceCheck]) -> list[list[SourceCheck]]:
    """``checks`` in order, cut into batches of a bounded number of files and bytes."""
    out: list[list[SourceCheck]] = []
    size = 0
    for check in checks:
        if not out or len(out[-1]) >= BATCH_FILES or size + check.size > BATCH_BYTES:
            out.append([])
            size = 0
        out[-1].append(check)
        size += check.size
    return out


class Verifier(QObject):
    """Runs one verification at a time and reports its progress on the GUI thread.

    Args:
        state: the shared app state (its service records the results).
        executor: the background thread that hashes the files.
        parent: the owning QObject.

    Signals:
        started(int): a run began; how many sources it checks.
        progress(int, int): sources checked so far, of how many.
        finished(object): the run ended and its results (a list of
            :class:`~core.attachments.verification.Verification`) are recorded; a stopped
            run records the sources checked before it stopped.
        _ticked(int, int): internal; a worker's progress, delivered on the GUI thread.
    """

    started = Signal(int)
    progress = Signal(int, int)
    finished = Signal(object)
    _ticked = Signal(int, int)

    def __init__(self, state: AppState, executor: Executor, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._executor = executor
        # Read by the worker between files; set from the GUI thread.
        self._stop = threading.Event()
        self._group = ""
        self._batches: list[list[SourceCheck]] = []
        self._results: list[Verification] = []
        self._total = 0
        self._running = False
        self._ticked.connect(self.progress)

    @property
    def running(self) -> bool:
        return self._running

    def start(self, ids: Sequence[str] | None = None) -> bool:
        """Verify the receipts ``ids`` (None: all) of the current group.

        Returns:
            False when a run is already under way (or a receipt is gone: reported).
        """
        if self._running:
            return False
        group = self._state.group
        try:
            checks = pending_checks(self._state.service.store_for(group), ids)
        except AmbryError as exc:  # a receipt deleted under the selection
            messages.report(exc)
            return False
        self._group = group
        self._batches = batches(checks)
        self._results = []
        self._total = len(checks)
        self._stop.clear()
        self._running = True
        self.started.emit(self._total)
        self.progress.emit(0, self._total)
        self._next()
        return True

    def stop(self) -> None:
        """End the run after the file being hashed; what was checked is still recorded."""
        self._stop.set()

    def _next(self) -> None:
        if not self._batches or self._stop.is_set():
            self._finish()
            return
        batch = self._batches.pop(0)
        offset = len(self._results)

        def task(_service: MemoryService) -> list[Verification]:
            # Files only: the worker's own service is not needed, the GUI's never touched.
            return check_sources(
                batch,
                lambda done, _total: self._ticked.emit(offset + done, self._total),
                self._stop.is_set,
            )

        self._executor.submit(self._group, task, self._on_batch, self._on_failure, self._finish)

    def _on_batch(self, results: list[Verification]) -> None:
        self._results.extend(results)
        self._next()

    def _on_failure(self, exc: BaseException) -> None:
        # Record what was checked before the failure, then let it be reported.
        self._finish()
        if not isinstance(exc, AmbryError):
            raise exc
        messages.report(exc)

    def _finish(self) -> None:
        if not self._running:
            return
        self._running = False
        self._batches = []
        results, self._results = self._results, []
        if results:
            try:
                record_checks(self._state.service, self._state.operator(self._group), results)
            except AmbryError as exc:
                messages.report(exc)
        self.finished.emit(results)
