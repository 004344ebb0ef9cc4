"""Running the browser's id query in the background, newest request first.

At 100,000 entries a query takes from a millisecond to a few hundred, so it
runs on an :class:`~desktop.widgets.ops.Executor` thread. At most one query runs and
at most one waits: a newer request replaces the waiting one, and a running
query the person has typed past is interrupted (``Connection.interrupt()``),
as its answer would only be thrown away.

A new query that matches many entries answers twice: first its first
:data:`FIRST_IDS` ids (a screenful and more, in milliseconds at any size), then
all of them, which the table appends below. Listing 80,000 ids takes about as
long as a person notices; the first rows need not wait for the last.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from core.recall import ordering
from core.service import MemoryService
from desktop.memories.state import BrowserQuery
from desktop.widgets.ops import Executor, default_failure

#: Ids a new query lists before the rest: twice the rows the table first shows.
FIRST_IDS = 1000


@dataclass(frozen=True)
class Request:
    group: str
    query: BrowserQuery
    #: A refresh of the current query after a write (keep the selection),
    #: rather than a new query.
    refresh: bool
    #: ``time.perf_counter()`` when it was asked for.
    asked: float


class ListQuery(QObject):
    """Lists ids for the browser without blocking the GUI thread.

    Args:
        executor: the background thread the query runs on.
        parent: the owning QObject.

    Signals:
        ready(object, object, float, bool): the :class:`Request`, its ids
            (``list[str]``), the seconds since it was asked for, and whether
            these are all of them (False: the first :data:`FIRST_IDS`; the
            whole list follows in another ``ready``).
    """

    ready = Signal(object, object, float, bool)

    def __init__(self, executor: Executor, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._executor = executor
        self._running: Request | None = None
        self._waiting: Request | None = None

    @property
    def busy(self) -> bool:
        return self._running is not None or self._waiting is not None

    def run(self, group: str, query: BrowserQuery, *, refresh: bool = False) -> None:
        """Ask for the ids of ``query``; an older request still waiting is dropped."""
        if refresh and self._waiting is not None and not self._waiting.refresh:
            return  # a new query is coming anyway, and it reads fresh data
        self._waiting = Request(group, query, refresh, time.perf_counter())
        if self._running is None:
            self._start_waiting()
        elif not refresh:
            # Never for refreshes: a stream of agent writes would starve every query.
            self.cancel_running()

    def cancel_running(self) -> None:
        """The person typed past the running query: stop it, a newer one is coming."""
        if self._running is not None and not self._running.refresh:
            self._executor.interrupt()

    def _start_waiting(self) -> None:
        request, self._waiting = self._waiting, None
        if request is None:
            return
        self._running = request
        flt = request.query.entry_filter()

        query = request.query
        first = None if request.refresh or query.sort is not None else FIRST_IDS

        def task(service: MemoryService) -> list[str]:
            if query.sort is None:
                return service.list_ids(request.group, flt, query.text, first)
            return ordering.sorted_ids(
                service, request.group, flt, query.text, query.sort, descending=query.descending
            )

        def rest(service: MemoryService) -> list[str]:
            return service.list_ids(request.group, flt, query.text)

        def first_done(ids: list[str]) -> None:
            if first is None or len(ids) < first or self._obsolete():
                self._finish(request, ids)
                return
            self.ready.emit(request, ids, time.perf_counter() - request.asked, False)
            self._executor.submit(
                request.group,
                rest,
                lambda ids: self._finish(request, ids),
                self._failed,
                lambda: self._finish(request, None),
            )

        self._executor.submit(
            request.group,
            task,
            first_done,
            self._failed,
            lambda: self._finish(request, None),
        )

    def _obsolete(self) -> bool:
        # A newer query makes an answer useless; a pending refresh does not.
        return self._waiting is not None and not self._waiting.refresh

    def _finish(self, request: Request, ids: list[str] | None) -> None:
        self._running = None
        if ids is not None and not self._obsolete():
            self.ready.emit(request, ids, time.perf_counter() - request.asked, True)
        self._start_waiting()

    def _failed(self, exc: BaseException) -> None:
        self._running = None
        self._start_waiting()
        default_failure(exc)
