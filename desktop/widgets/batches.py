"""The person's bulk writes: at once when small, else in the background in batches.

A delete, tag, undo or trash restore of up to :data:`AT_ONCE_UP_TO` memories is
one transaction on the GUI thread, as every ordinary write is (see
:mod:`desktop.widgets.ops`): it takes tens of milliseconds and shows no
progress. A larger one runs like an import or a forget: alone, on a thread and
connection of its own (:func:`~desktop.widgets.ops.run_alone`), in the person's
session (:func:`~desktop.widgets.ops.as_operator`), but in batches of
:data:`~core.memory.batching.BATCH` memories, each its own transaction
(core.memory.bulk), so an agent's write waits at most one batch. A
:class:`BatchProgress` says how far it got, and its Cancel stops it after the
batch under way; what was done stays done.

One such job runs at a time, for the whole window: while it does, the bulk
actions, deletes and Ctrl+Z are refused with a word on why
(:meth:`BatchJob.refuse`), so two bulk writes never interleave and the undo
stack keeps its order. Editing one memory goes on as usual.

Quitting while a job runs asks first (:meth:`BatchJob.may_quit`): the undo stack
ends with the app, so what is done by then can no longer be taken back. At quit
(:meth:`BatchJob.shutdown`) no batch starts after the one under way, and that
one is rolled back: what the earlier batches did stays, each memory wholly done
or untouched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from core.memory.batching import AT_ONCE, BATCH, PAUSE_S, Batched, Batching
from core.model.changes import Changes
from core.model.errors import AmbryError
from core.service import Caller, MemoryService
from desktop.widgets import messages
from desktop.widgets.ops import Executor, as_operator, default_failure, run_alone
from desktop.widgets.watch import AppState

T = TypeVar("T")

#: Up to this many memories a bulk write is one transaction on the GUI thread: 50 to
#: 90 ms on a 10,000-memory store (docs/desktop.md, "Bulk changes in the background").
AT_ONCE_UP_TO = 500

#: While a job runs, how often the views are told that its batches changed memories.
REFRESH_S = 1.0

#: At quit, how long to wait for the batch under way to roll back and the thread to
#: end: a batch takes well under a second, but one may be waiting for a lock.
SHUTDOWN_WAIT_S = 2.0

#: A bulk write: runs against a service, in a caller's session, batched as told.
Work = Callable[[MemoryService, Caller, Batching], Batched[T]]


class BatchJob(QObject):
    """The window's one bulk write at a time.

    Args:
        state: the shared app state (service, data dir, settings, sessions).
        parent: the owning QObject.

    Attributes:
        at_once_up_to: up to how many memories a write is done at once (tests lower it).
        batch: memories per batch in the background (tests lower it).
        pause: seconds between two batches, for other writers to take the lock.

    Signals:
        started(str, int): a background job began: its verb ("Deleting") and how many.
        progressed(int, int): done and total, after each batch (emitted on the worker,
            delivered on the GUI thread).
        cancelling(): Cancel was pressed; the batch under way finishes first.
        ended(): the job is over and its handler has run.
    """

    started = Signal(str, int)
    progressed = Signal(int, int)
    cancelling = Signal()
    ended = Signal()

    def __init__(self, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.at_once_up_to = AT_ONCE_UP_TO
        self.batch = BATCH
        self.pause = PAUSE_S
        self._job: Executor | None = None
        self._stop = threading.Event()
        # Set at quit: the worker's next commit is turned into a rollback.
        self._abort = threading.Event()
        self._verb = ""
        self._group = ""
        self._done = self._total = 0
        self._told = 0.0
        self.progressed.connect(self._on_progress)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)

    @property
    def running(self) -> bool:
        """A background job is under way."""
        return self._job is not None

    @property
    def state(self) -> AppState:
        """The shared app state the job writes through."""
        return self._state

    @property
    def group(self) -> str:
        """The group the running job writes to (empty when none runs)."""
        return self._group if self.running else ""

    def elsewhere(self) -> str:
        """`` in group work`` while the window shows another group than the job's; else ``""``."""
        if self.running and self._group != self._state.group:
            return f" in group {self._group}"
        return ""

    def under_way(self) -> str:
        """What runs, in words: *Deleting 10,000 memories (1,000 done)*."""
        return f"{self._verb} {self._total:,} memories ({self._done:,} done)"

    def refuse(self) -> None:
        """Tell the person why another bulk write must wait."""
        messages.info(
            f"{self.under_way()} is still under way: wait for it to end, or cancel it, "
            "before another bulk change or Ctrl+Z."
        )

    def may_quit(self, parent: QWidget | None) -> bool:
        """Whether to quit: asks first while a job runs, and stops it if told to.

        What is done stays done; the undo stack ends with the app, so it can no
        longer be taken back. No job running: ``True`` without a question.
        """
        if not self.running:
            return True
        question = (
            f"{self.under_way()} is under way. Stop it and quit? What is done stays "
            "done; it cannot be undone after quitting."
        )
        if not messages.confirm(parent, "Quit", question, "Stop and quit", "Keep working"):
            return False
        self.shutdown()
        return True

    def run(
        self,
        verb: str,
        group: str,
        total: int,
        work: Work[T],
        done: Callable[[Batched[T]], None],
        lost: Callable[[], None] | None = None,
    ) -> bool:
        """Do ``work`` on ``total`` memories of ``group``; ``done`` gets what it did, on
        the GUI thread. At once for a few, else in the background (see the module).
        ``lost`` is called instead of ``done`` when the work ends in an error that is
        no Ambry error (what it did is then unknown), so a caller can keep what it
        needs to try again.

        Returns:
            Whether it was done or started (not refused, and no error before it began).
        """
        if self.running:
            self.refuse()
            return False
        if total <= self.at_once_up_to:
            try:
                result = work(self._state.service, self._state.operator(group), AT_ONCE)
            except AmbryError as exc:
                messages.report(exc)
                return False
            done(result)
            return True
        self._stop.clear()
        self._abort.clear()
        self._done, self._total = 0, total
        batching = Batching(self.batch, self.progressed.emit, self._stop.is_set, self.pause)

        def succeeded(result: Batched[T]) -> None:
            self._end(group)
            done(result)
            self.ended.emit()

        def failed(exc: BaseException) -> None:
            self._end(group)
            try:
                if lost is not None:
                    lost()
                default_failure(exc)
            finally:
                self.ended.emit()

        def vetoed(service: MemoryService, caller: Caller) -> Batched[T]:
            # At quit the batch under way must not commit: interrupt() stops a
            # statement SQLite is running, but not one about to start, nor COMMIT.
            conn = service.store_for(group).conn
            conn.set_commit_hook(self._abort.is_set)
            try:
                return work(service, caller, batching)
            finally:
                conn.set_commit_hook(None)

        state = self._state
        self._verb, self._group, self._told = verb, group, time.monotonic()
        self._job = run_alone(
            state.data_dir,
            state.config,
            "ambry-bulk",
            group,
            as_operator(group, lambda service, caller: vetoed(service, caller)),
            succeeded,
            failed,
            self,
        )
        self.started.emit(verb, total)
        return True

    def cancel(self) -> None:
        """Stop after the batch under way."""
        if self.running and not self._stop.is_set():
            self._stop.set()
            self.cancelling.emit()

    def _on_progress(self, done: int, _total: int) -> None:
        self._done = done
        # The worker's commits are another connection's: say so to the views now and
        # then, not after every batch (each refresh lists the group again).
        if self.running and time.monotonic() - self._told >= REFRESH_S:
            self._told = time.monotonic()
            self._tell(self._group)

    def _tell(self, group: str) -> None:
        self._state.service.emit(Changes(group=group, entries=True, review=True, audit=True))

    def _end(self, group: str) -> None:
        self._job = None
        self._tell(group)

    def shutdown(self) -> None:
        """Stop a running job (at quit), waiting for its thread a little while.

        No batch starts after this, and the one under way is rolled back (its
        statements interrupted, its commit refused); the earlier ones stay done.
        """
        job, self._job = self._job, None
        if job is None:
            return
        self._stop.set()
        self._abort.set()
        job.close(SHUTDOWN_WAIT_S)


class BatchProgress(QWidget):
    """How far a :class:`BatchJob` got (*Deleting 3,000 of 10,000…*), with Cancel.

    Hidden while no job runs, so a small selection, done at once, shows nothing.

    Args:
        job: the job it follows.
        parent: the parent widget.
    """

    def __init__(self, job: BatchJob, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("batchProgress")
        self._verb = ""
        self.bar = QProgressBar(self)
        self.bar.setTextVisible(False)
        self.bar.setMaximumWidth(160)
        self.label = QLabel(self)
        self.note = QLabel("Other bulk changes and Ctrl+Z wait until it ends.", self)
        self.note.setObjectName("hint")
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip(
            "Stop after the batch under way: what is done stays done, and Ctrl+Z undoes it"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.bar)
        layout.addWidget(self.label)
        layout.addWidget(self.note, 1)
        layout.addWidget(self.cancel_button)
        self.hide()
        self._job = job
        self._done = self._total = 0
        self.cancel_button.clicked.connect(job.cancel)
        job.started.connect(self._start)
        job.progressed.connect(self._progress)
        job.cancelling.connect(self._cancelling)
        job.ended.connect(self.hide)
        job.state.group_changed.connect(lambda _group: self._relabel())

    def _start(self, verb: str, total: int) -> None:
        self._verb, self._done, self._total = verb, 0, total
        self.bar.setRange(0, 0)  # busy until the first batch is in
        self.cancel_button.setEnabled(True)
        self._relabel()
        self.show()

    def _progress(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        self.bar.setRange(0, max(1, total))
        self.bar.setValue(done)
        self._relabel()

    def _cancelling(self) -> None:
        self.cancel_button.setEnabled(False)
        self._relabel()

    def _relabel(self) -> None:
        """*Tagging 5,250 of 10,000…*, naming the job's group when another is shown."""
        where = self._job.elsewhere()
        if not self.cancel_button.isEnabled():
            self.label.setText(f"{self._verb}{where}: stopping after this batch…")
        elif self._done:
            self.label.setText(f"{self._verb} {self._done:,} of {self._total:,}{where}…")
        else:
            self.label.setText(f"{self._verb} {self._total:,} memories{where}…")
