"""The Exchanges tab: a thread's turns, and a search over every logged turn.

With the search box empty the tab lists the selected thread's turns, newest
first. Typed words search all conversation turns of the group by words and
meaning (:func:`core.continuity.episodes.find_exchanges`, what ``exchange_search``
and ``ambry exchanges`` answer with): the selected thread's turns are lifted,
a clearly better match from another thread still comes first, and each result
says what found it. The search runs on the query thread once typing pauses.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.continuity.episodes import DEFAULT_EXCHANGE_RESULTS, ExchangeHit, find_exchanges
from core.model.text import single_line
from core.semantic.hybrid import matched
from core.service import MemoryService
from desktop.threads.model import exchanges_model, fetch_exchanges, hits_model
from desktop.widgets.ops import Executor
from desktop.widgets.record_model import record_table
from desktop.widgets.watch import AppState

#: Turns a search lists.
SEARCH_RESULTS = 2 * DEFAULT_EXCHANGE_RESULTS
#: The typing pause before a search runs.
PAUSE_MS = 250


class ExchangesPane(QWidget):
    """The selected thread's turns, or the turns a search finds.

    Args:
        state: the shared app state.
        executor: the background thread searches run on.
        parent: the parent widget.
    """

    def __init__(self, state: AppState, executor: Executor, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self._executor = executor
        self._thread_id: str | None = None
        #: Whether any turns were listed yet (None is a thread id here: no thread).
        self._listed = False
        self.search = QLineEdit(self)
        self.search.setObjectName("exchangeSearch")
        self.search.setPlaceholderText("Search every conversation turn by words and meaning")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search conversation turns")
        self.turns = exchanges_model(self)
        self.turns_table = record_table(self.turns, "exchangesTable", self)
        self.hits = hits_model(self)
        self.hits_table = record_table(self.hits, "exchangeHitsTable", self)
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.turns_table)
        self.stack.addWidget(self.hits_table)
        self.status = QLabel(self)
        self.status.setObjectName("hint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.search)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.status)
        self._timer = QTimer(self, singleShot=True, interval=PAUSE_MS)
        self._timer.timeout.connect(self._run)
        self.search.textChanged.connect(self._on_text)
        self.search.installEventFilter(self)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # As on the Memories page: Down or Enter in the search box moves into the list.
        if (
            watched is self.search
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
            and event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter)
        ):
            table = self.stack.currentWidget()
            assert isinstance(table, QTableView)
            if table.model().rowCount():
                table.setFocus(Qt.FocusReason.TabFocusReason)
                if not table.selectionModel().hasSelection():
                    table.selectRow(0)
            return True
        return super().eventFilter(watched, event)

    @property
    def query(self) -> str:
        return single_line(self.search.text()).strip()

    def show_thread(self, thread_id: str | None, *, reload: bool = True) -> None:
        """List ``thread_id``'s turns (None: those filed under no thread), or refresh them,
        and search again if searching."""
        changed = thread_id != self._thread_id or not self._listed
        self._thread_id = thread_id
        self._listed = True
        service, group = self._state.service, self._state.group
        if changed or reload:  # None: the turns filed under no thread
            self.turns.load(fetch_exchanges(service, group, thread_id))
        else:
            self.turns.refresh()
        if self.query:
            self._timer.start()  # the lift follows the selected thread
        self._show_status()

    def _on_text(self, _text: str) -> None:
        if self.query:
            self._timer.start()
            return
        self._timer.stop()
        self.stack.setCurrentWidget(self.turns_table)
        self.hits.load(None)
        self._show_status()

    def _run(self) -> None:
        query, thread_id, group = self.query, self._thread_id, self._state.group
        if not query:
            return

        def task(service: MemoryService) -> list[ExchangeHit]:
            store = service.store_for(group)
            return find_exchanges(
                store, query, thread_id=thread_id, limit=SEARCH_RESULTS, config=service.config
            )

        def done(hits: list[ExchangeHit]) -> None:
            if query != self.query or group != self._state.group:
                return  # typed past, or another group
            # The weak matches an agent's short list is filled with (no signal found
            # them) are not shown: a person reads an empty list as "nothing matches".
            found = [h for h in hits if matched(h.signals)]
            self.hits.load(lambda loaded, _limit: [] if loaded else found)
            self.stack.setCurrentWidget(self.hits_table)
            self._show_status(len(found), any(h.same_thread for h in found))

        self._executor.submit(group, task, done)

    def _show_status(self, found: int | None = None, lifted: bool = False) -> None:
        if not self.query:
            self.status.setText(
                "Turns filed under no thread, newest first."
                if self._thread_id is None
                else "This thread's turns, newest first."
            )
        elif found is not None:
            lift = "; this thread's turns are lifted" if lifted else ""
            self.status.setText(
                f"{found} turn{'s' if found != 1 else ''} found, best first{lift}."
                if found
                else "No turn shares these words or comes close in meaning."
            )
