"""Slow work off the GUI thread, results back on it.

Like Anki's ``QueryOp``: a task is a function run on a background thread with
a success handler and a failure handler, both called on the GUI thread. The
task never touches a widget.

apsw connections belong to the thread that opened them, so an
:class:`Executor` has one thread and one :class:`MemoryService` of its own,
opened on that thread. Reads there run next to the GUI's own connection
thanks to WAL; writes still go through the GUI thread's service, so the agent
socket, the views and the change records share one writer. The exceptions are
the person's long writes (an import, a forget): each runs alone, on a thread
and connection of its own that close when it ends (:func:`run_alone`), in the
person's session (:func:`as_operator`), and the views learn of it as of another
process's commit.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import apsw
from PySide6.QtCore import QObject, Signal

from core.model.config import Config
from core.model.entries import Actor
from core.model.errors import AmbryError
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.widgets import messages
from desktop.widgets.watch import CLIENT_NAME

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class _Done(Generic[T]):
    on_success: Callable[[T], None]
    on_failure: Callable[[BaseException], None] | None
    on_cancel: Callable[[], None] | None
    result: T | None = None
    error: BaseException | None = None
    cancelled: bool = False


def default_failure(exc: BaseException) -> None:
    """Errors a person can act on become a message; anything else is a bug."""
    if isinstance(exc, AmbryError):
        messages.report(exc)
        return
    raise exc


class Executor(QObject):
    """Runs tasks one at a time on a background thread that owns its own service.

    Args:
        data_dir: the data directory the background service opens.
        config: the settings it starts with (see :meth:`set_config`).
        name: the thread's name, for logs and debuggers.
        parent: the owning QObject.

    Signals:
        _finished(object): internal; hands a finished task back to the GUI thread.
    """

    _finished = Signal(object)

    def __init__(
        self, data_dir: DataDir, config: Config, name: str, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._data_dir = data_dir
        self._config = config
        self._name = name
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        # Only ever touched on the worker thread.
        self._service: MemoryService | None = None
        # The connection of the task running now, for interrupt() from the GUI thread.
        self._running: apsw.Connection | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._finished.connect(self._deliver)

    def submit(
        self,
        group: str,
        task: Callable[[MemoryService], T],
        on_success: Callable[[T], None],
        on_failure: Callable[[BaseException], None] | None = default_failure,
        on_cancel: Callable[[], None] | None = None,
    ) -> Future[None]:
        """Run ``task(service)`` in the background against ``group``'s database.

        A task cut short by :meth:`interrupt` calls ``on_cancel`` instead of the
        other handlers: someone asked for something newer.
        """
        if self._closed:
            raise RuntimeError("executor is closed")
        done: _Done[T] = _Done(on_success, on_failure, on_cancel)
        return self._pool.submit(self._run, group, task, done)

    def _run(self, group: str, task: Callable[[MemoryService], T], done: _Done[T]) -> None:
        if self._closed:
            return  # queued before close(); nobody waits for it any more
        try:
            if self._service is None:
                self._service = MemoryService(self._data_dir, self._config)
            store = self._service.store_for(group)
            with self._lock:
                self._running = store.conn
            try:
                done.result = task(self._service)
            finally:
                with self._lock:
                    self._running = None
        except apsw.InterruptError:
            done.cancelled = True
        except BaseException as exc:  # handed to the GUI thread, which decides
            done.error = exc
        if not self._closed:
            self._finished.emit(done)

    def _deliver(self, done: _Done[Any]) -> None:
        if self._closed:
            return
        if done.cancelled:
            if done.on_cancel is not None:
                done.on_cancel()
        elif done.error is None:
            done.on_success(done.result)
        elif done.on_failure is not None:
            done.on_failure(done.error)
        else:
            raise done.error

    def interrupt(self) -> None:
        """Stop the SQLite work of the running task, if any (safe from any thread)."""
        with self._lock:
            if self._running is not None:
                self._running.interrupt()

    def set_config(self, config: Config) -> None:
        self._config = config
        self._pool.submit(self._apply_config, config)

    def _apply_config(self, config: Config) -> None:
        if self._service is not None:
            self._service.set_config(config)

    def forget_group(self, group: str) -> None:
        """Close this thread's store of ``group``, waiting for the tasks queued before."""
        if self._closed:
            return
        self.interrupt()

        def close_store() -> None:
            if self._service is not None:
                self._service.close_store(group)

        self._pool.submit(close_store).result()

    @property
    def closed(self) -> bool:
        """The app is shutting down: nothing more may be submitted."""
        return self._closed

    def close(self, wait_s: float | None = None) -> bool:
        """Drop queued tasks, stop the running one, close the thread's connections.

        Args:
            wait_s: wait at most this long for the thread to end (``None``: as long
                as it takes).

        Returns:
            Whether the thread ended (always, without ``wait_s``).
        """
        if self._closed:
            return True
        self._closed = True
        self.interrupt()
        closing = self._pool.submit(self._close_service)
        self._pool.shutdown(wait=wait_s is None)
        try:
            closing.result(timeout=wait_s)
        except FutureTimeout:
            log.warning("%s: the background task did not end within %.1f s", self._name, wait_s)
            return False
        return True

    def _close_service(self) -> None:
        if self._service is not None:
            self._service.close()
            self._service = None


def as_operator(
    group: str, work: Callable[[MemoryService, Caller], T]
) -> Callable[[MemoryService], T]:
    """``work`` in a session of the person's own, opened on the worker's service."""

    def task(service: MemoryService) -> T:
        caller = service.open_session(group, Actor.OPERATOR, CLIENT_NAME)
        try:
            return work(service, caller)
        finally:
            service.end_session(caller)

    return task


def run_alone(
    data_dir: DataDir,
    config: Config,
    name: str,
    group: str,
    task: Callable[[MemoryService], T],
    on_success: Callable[[T], None],
    on_failure: Callable[[BaseException], None],
    parent: QObject | None = None,
) -> Executor:
    """Run one ``task`` on a thread and connection of its own, closed before a handler runs.

    For the person's writes: the query thread's work is interrupted whenever the
    person types a search, and a write must never be; and nothing stays open on
    the group once the job is done (a group is renamed or deleted only when no
    connection holds it). The returned executor stops the job if closed early.
    """
    executor = Executor(data_dir, config, name, parent)

    def end() -> None:
        executor.close()
        executor.deleteLater()

    def succeeded(result: T) -> None:
        end()
        on_success(result)

    def failed(exc: BaseException) -> None:
        end()
        on_failure(exc)

    executor.submit(group, task, succeeded, failed)
    return executor
