"""The Exchanges tab: a thread's turns, and a search over every logged turn.

With the search box empty the tab lists the selected thread's turns, newest
first. Typed words search all conversation turns of the group by words and
meaning (:func:`core.continuity.episodes.find_exchanges`, what ``exchange_search``
and ``ambry exchanges`` answer with): the selected thread's turns are lifted,
a clearly better match from another thread still comes first, and each result
says what found it. The search runs on the query thread once typing pauses, a
page of turns at a time: when more follow, **Show more** reads the next page.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.continuity.episodes import (
    DEFAULT_EXCHANGE_RESULTS,
    ExchangeHit,
    ExchangePage,
    find_exchanges_page,
)
from core.model.text import single_line
from core.semantic.hybrid import matched
from core.service import MemoryService
from desktop.threads.model import exchanges_model, fetch_exchanges, hits_model
from desktop.widgets.ops import Executor, default_failure
from desktop.widgets.record_model import record_table
from desktop.widgets.watch import AppState

#: Turns a search lists a page at a time.
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
        #: The turns the search found so far, where its next page starts (None: no
        #: more), and which search they belong to (a new one drops a late page).
        self._found: list[ExchangeHit] = []
        self._next_offset: int | None = None
        #: More turns match than paging reaches.
        self._truncated = False
        self._search_id = 0
        self.search = QLineEdit(self)
        self.search.setObjectName("exchangeSearch")
        self.search.setPlaceholderText("Search every conversation turn by words and meaning")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search conversation turns")
        self.turns = exchanges_model(self)
        self.turns_table = record_table(self.turns, "exchangesTable", self)
        self.turns_table.setAccessibleName("Conversation turns")
        self.hits = hits_model(self)
        self.hits_table = record_table(self.hits, "exchangeHitsTable", self)
        self.hits_table.setAccessibleName("Turns found")
        self.stack = QStackedWidget(self)
        self.stack.addWidget(self.turns_table)
        self.stack.addWidget(self.hits_table)
        self.status = QLabel(self)
        self.status.setObjectName("hint")
        self.more = QPushButton("Show more", self)
        self.more.setObjectName("exchangeSearchMore")
        self.more.setToolTip(f"Read the next {SEARCH_RESULTS} turns the search ranks")
        self.more.setVisible(False)
        self.more.clicked.connect(self._read_on)
        footer = QHBoxLayout()
        footer.addWidget(self.status, 1)
        footer.addWidget(self.more)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.addWidget(self.search)
        layout.addWidget(self.stack, 1)
        layout.addLayout(footer)
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
        # The pages of the search typed past are no longer wanted.
        self._search_id += 1
        self.more.setVisible(False)
        if self.query:
            self._timer.start()
            return
        self._timer.stop()
        self.stack.setCurrentWidget(self.turns_table)
        self.hits.load(None)
        self._show_status()

    def _run(self) -> None:
        self._search_id += 1
        self.more.setVisible(False)
        self._search(0)

    def _read_on(self) -> None:
        if self._next_offset is not None:
            self.more.setEnabled(False)  # one page at a time
            self._search(self._next_offset)

    def _search(self, offset: int) -> None:
        query, thread_id, group = self.query, self._thread_id, self._state.group
        search_id = self._search_id
        if not query:
            return

        def task(service: MemoryService) -> ExchangePage:
            store = service.store_for(group)
            return find_exchanges_page(
                store,
                query,
                thread_id=thread_id,
                limit=SEARCH_RESULTS,
                offset=offset,
                config=service.config,
            )

        def done(page: ExchangePage) -> None:
            if search_id != self._search_id or group != self._state.group:
                return  # typed past, searched again, or another group
            # The weak matches an agent's short list is filled with (no signal found
            # them) are not shown: a person reads an empty list as "nothing matches".
            found = [h for h in page.hits if matched(h.signals)]
            if offset:
                self._found.extend(found)
                self.hits.extend(found)
            else:
                shown = self._found = found
                self.hits.load(lambda loaded, limit: shown[len(loaded) : len(loaded) + limit])
            # A page of weak matches alone ends the list: what they hide ranks lower still.
            more = page.next_offset if found else None
            self._next_offset = more
            self._truncated = bool(found) and page.truncated
            self.stack.setCurrentWidget(self.hits_table)
            self.more.setEnabled(True)
            self.more.setVisible(more is not None)
            self._show_status(len(self._found), any(h.same_thread for h in self._found))

        def failed(exc: BaseException) -> None:
            self.more.setEnabled(True)
            default_failure(exc)

        self._executor.submit(group, task, done, failed)

    def _show_status(self, found: int | None = None, lifted: bool = False) -> None:
        if not self.query:
            self.status.setText(
                "Turns filed under no thread, newest first."
                if self._thread_id is None
                else "This thread's turns, newest first."
            )
        elif found is not None:
            lift = "; this thread's turns are lifted" if lifted else ""
            if not found:
                self.status.setText("No turn shares these words or comes close in meaning.")
                return
            text = f"{found:,} turn{'s' if found != 1 else ''} found, best first{lift}."
            if self._next_offset is not None:
                text += " More may follow."
            elif self._truncated:
                # Past the deepest page a search reads, the rest are reached by narrowing it.
                text += " More match: add words to narrow the search."
            self.status.setText(text)
