"""The audit log: what happened, who did it, when. Metadata only, never content."""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.continuity.sessions import session_clients
from core.model.changes import Changes
from core.model.entries import Actor
from core.service import MemoryService
from core.storage import audit
from core.storage.audit import Action, AuditRecord
from core.storage.store import GroupStore
from desktop.audit.sentences import actions_described_by, sentence
from desktop.memories.values import local_time
from desktop.widgets.flow import FlowLayout
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.placeholder import placeholder
from desktop.widgets.row_menu import Command, copy_command, on_right_click, row_menu
from desktop.widgets.tables import FlatTableModel, Header, list_table
from desktop.widgets.text_room import keep_whole
from desktop.widgets.times import short_time
from desktop.widgets.watch import AppState

AnyIndex = QModelIndex | QPersistentModelIndex

HEADERS = (Header("When"), Header("What happened"), Header("About"))
#: Bookkeeping rows: every command run in a terminal opens and ends a session of
#: its own, so shown they would stand around every useful row. Listed when the
#: person ticks *Session starts and ends* or picks one of them in *Show*.
SESSION_ACTIONS = (Action.SESSION_START.value, Action.SESSION_END.value)
ID_COLUMN = 2
#: How long typing may pause before the search runs.
SEARCH_DEBOUNCE_MS = 200


def ids_text(ids: Sequence[str]) -> str:
    """The first id, shortened, and how many more there are."""
    if not ids:
        return ""
    first = ids[0]
    short = first[:12] if first.startswith(("mem-", "clm-")) else first
    return short if len(ids) == 1 else f"{short} +{len(ids) - 1}"


def link_for(entry_id: str) -> str | None:
    """The ``ambry:`` link that opens ``entry_id`` in its view, if it has one."""
    if entry_id.startswith("mem-"):
        return f"memory:{entry_id}"
    if entry_id.startswith("att_"):
        return f"receipt:{entry_id}"
    if entry_id.startswith("thr-"):
        return f"thread:{entry_id}"
    if entry_id.startswith("clm-"):
        return f"claim:{entry_id}"
    return None


def _value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def detail_html(record: AuditRecord, clients: dict[str, str]) -> str:
    """Everything the row holds, ids as links (escaped: client names come from agents)."""
    ids = list(record.entry_ids)
    thread = record.detail.get("thread")
    if isinstance(thread, str):
        ids.append(thread)
    links = []
    for entry_id in ids:
        href = link_for(entry_id)
        text = html.escape(entry_id)
        links.append(f"<a href='{html.escape(href)}'>{text}</a>" if href else text)
    session = record.session_id or ""
    client = clients.get(session, "")
    rows = [
        ("When", local_time(record.at)),
        ("Action", record.action.replace("_", " ")),
        ("Who", record.actor + (f" ({client})" if client else "")),
        ("Session", session or "none"),
    ]
    rows += [(k.replace("_", " "), _value(v)) for k, v in record.detail.items()]
    cells = "".join(
        f"<tr><td class='key'>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows
    )
    about = "<p>" + " · ".join(links) + "</p>" if links else ""
    return f"<p><b>{html.escape(sentence(record, clients))}</b></p>{about}<table>{cells}</table>"


class AuditModel(FlatTableModel):
    """The newest audit rows first, a page at a time (``fetchMore``).

    Args:
        parent: the owning QObject.
    """

    PAGE = 200

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._store: GroupStore | None = None
        self._actions: tuple[str, ...] = ()
        self._actor: str | None = None
        self._skip: tuple[str, ...] = ()
        self._records: list[AuditRecord] = []
        self._cells: list[tuple[str, ...]] = []
        self._more = False
        #: The client name of every session seen on the loaded rows.
        self.clients: dict[str, str] = {}
        self._service: MemoryService | None = None
        self._text = ""

    def shown_rows(self) -> int:
        return len(self._records)

    def header_columns(self) -> Sequence[Header]:
        return HEADERS

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._records):
            return None
        record = self._records[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cells[index.row()][index.column()]
        if index.column() != ID_COLUMN or not record.entry_ids:
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            return "\n".join(record.entry_ids) + "\n\nClick to open"
        if role == Qt.ItemDataRole.FontRole and link_for(record.entry_ids[0]):
            font = QFont()
            font.setUnderline(True)
            return font
        if role == Qt.ItemDataRole.ForegroundRole and link_for(record.entry_ids[0]):
            return QGuiApplication.palette().color(QPalette.ColorRole.Link)
        return None

    def canFetchMore(self, parent: AnyIndex) -> bool:
        return not parent.isValid() and self._more

    def fetchMore(self, parent: AnyIndex) -> None:
        if parent.isValid() or self._store is None:
            return
        have = len(self._records)
        rows = self._query(have + self.PAGE)[have:]
        self._more = len(rows) == self.PAGE
        if rows:
            self.beginInsertRows(QModelIndex(), have, have + len(rows) - 1)
            self._append(rows)
            self.endInsertRows()

    def _query(self, limit: int) -> list[AuditRecord]:
        assert self._store is not None
        return audit.recent(
            self._store,
            limit=limit,
            actions=self._actions,
            actor=self._actor,
            text=self._text,
            text_actions=actions_described_by(self._text),
            skip_actions=self._skip,
        )

    def _learn_clients(self, rows: Sequence[AuditRecord]) -> None:
        unknown = {r.session_id for r in rows if r.session_id and r.session_id not in self.clients}
        if unknown and self._service is not None and self._store is not None:
            self.clients.update(session_clients(self._service, self._store.group, unknown))

    def _cells_of(self, record: AuditRecord) -> tuple[str, ...]:
        return (
            short_time(record.at),
            sentence(record, self.clients),
            ids_text(record.entry_ids),
        )

    def _append(self, rows: list[AuditRecord]) -> None:
        self._learn_clients(rows)
        self._records.extend(rows)
        self._cells.extend(self._cells_of(r) for r in rows)

    def record_at(self, row: int) -> AuditRecord:
        return self._records[row]

    def load(
        self,
        service: MemoryService,
        group: str,
        actions: Sequence[str],
        actor: str | None,
        text: str = "",
        skip: Sequence[str] = (),
    ) -> None:
        """Show ``group``'s log with these filters, from the newest row, without the
        rows of the actions in ``skip``."""
        self.beginResetModel()
        self._service, self._store = service, service.store_for(group)
        self._actions, self._actor, self._text = tuple(actions), actor, text
        self._skip = tuple(skip)
        self._records, self._cells = [], []
        rows = self._query(self.PAGE)
        self._more = len(rows) == self.PAGE
        self._append(rows)
        self.endResetModel()

    def refresh(self) -> None:
        """Add rows newer than the top one, keeping the selection and scroll position."""
        if self._store is None:
            return
        top = self._records[0].id if self._records else 0
        newest = [r for r in self._query(self.PAGE) if r.id > top]
        if not newest:
            return
        if len(newest) == self.PAGE and self._service is not None:  # too many: start over
            self.load(
                self._service,
                self._store.group,
                self._actions,
                self._actor,
                self._text,
                self._skip,
            )
            return
        self._learn_clients(newest)
        self.beginInsertRows(QModelIndex(), 0, len(newest) - 1)
        self._records[0:0] = newest
        self._cells[0:0] = [self._cells_of(r) for r in newest]
        self.endInsertRows()


_EMPTY_TITLE = "Nothing in the log yet"
_EMPTY_BODY = (
    "Every action on this group is written here: what an agent stored, searched or "
    "deleted, what you changed, what Ambry did on its own. Only metadata is kept "
    "(ids, counts, sizes, reasons), never memory content or search text."
)
_NO_MATCH_TITLE = "No entries match"
_NO_MATCH_BODY = "Nothing in this group's log matches the search and filters. Clear the search "
_NO_MATCH_BODY += "or choose <i>All actions</i> and <i>Everyone</i> to see every entry."


class AuditPage(LazyPage):
    """The audit log of the current group: sentences, filters, a search, links to what it names.

    Args:
        state: the shared app state.
        parent: the parent widget.

    Signals:
        filters_changed(): the action, actor or text filter changed.
        open_requested(str, str): open an item named by a row: its kind
            (``memory``, ``receipt``, ``thread``, ``claim``) and its id.
    """

    filters_changed = Signal()
    open_requested = Signal(str, str)

    def __init__(self, state: AppState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.model = AuditModel(self)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Search the log: an id, a client, a word…")
        self.search.setClearButtonEnabled(True)
        self.search.setAccessibleName("Search the audit log")
        self._debounce = QTimer(self, singleShot=True, interval=SEARCH_DEBOUNCE_MS)
        self.action_box = QComboBox(self)
        self.action_box.setAccessibleName("Action filter")
        self.action_box.addItem("All actions", None)
        for action in Action:
            self.action_box.addItem(action.value.replace("_", " "), action.value)
        self.actor_box = QComboBox(self)
        self.actor_box.setAccessibleName("Actor filter")
        self.actor_box.addItem("Everyone", None)
        for actor, label in (
            (Actor.AGENT, "agents"),
            (Actor.OPERATOR, "you"),
            (Actor.SYSTEM, "Ambry"),
        ):
            self.actor_box.addItem(label, actor.value)
        self.sessions_box = QCheckBox("Session starts and ends", self)
        self.sessions_box.setToolTip(
            "Also list when each session began and ended (every command run in a "
            "terminal is a session of its own)"
        )
        self.table = list_table(self.model, "auditTable", self)
        self.table.setAccessibleName("Audit log")
        self.table.setAccessibleDescription("What was done in this group, newest first")
        header = self.table.horizontalHeader()
        char = self.table.fontMetrics().averageCharWidth()
        header.resizeSection(0, 13 * char + 16)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        header.resizeSection(ID_COLUMN, 18 * char + 16)
        self.detail = QTextBrowser(self)
        self.detail.setObjectName("auditDetail")
        self.detail.setAccessibleName("Audit entry details")
        self.detail.setAccessibleDescription("Tab moves to a link; Enter opens it")
        self.detail.setOpenLinks(False)
        self.detail.document().setDefaultStyleSheet(
            "td.key { padding-right: 12px; color: #8b93a5; }"
        )
        self.stack = QStackedWidget(self)
        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        self.stack.addWidget(splitter)
        self.empty_page = placeholder(_EMPTY_TITLE, _EMPTY_BODY, self)
        self.no_match_page = placeholder(_NO_MATCH_TITLE, _NO_MATCH_BODY, self)
        self.stack.addWidget(self.empty_page)
        self.stack.addWidget(self.no_match_page)
        note = QLabel("Metadata only: never memory content or search text.", self)
        note.setObjectName("hint")
        show = QHBoxLayout()
        show.addWidget(QLabel("Show", self))
        show.addWidget(self.action_box)
        show.addWidget(QLabel("by", self))
        show.addWidget(self.actor_box)
        # A narrow page moves the note, then the choices, under the search box,
        # which keeps room for its placeholder; a narrower one (640x400) puts the
        # sessions box on a row of its own.
        keep_whole(self.search, self.search.placeholderText())
        filters = FlowLayout()
        filters.addWidget(self.search)
        filters.addLayout(show)
        filters.addWidget(self.sessions_box)
        filters.addStretch()
        filters.addWidget(note)
        layout = QVBoxLayout(self)
        layout.addLayout(filters)
        layout.addWidget(self.stack, 1)
        # Tab as the page reads: the filters along the top, then the log and its detail.
        order = (
            self.search,
            self.action_box,
            self.actor_box,
            self.sessions_box,
            self.table,
            self.detail,
        )
        for before, after in itertools.pairwise(order):
            QWidget.setTabOrder(before, after)
        self.search.textChanged.connect(lambda _t: self._debounce.start())
        self._debounce.timeout.connect(self._on_filters)
        self.action_box.currentIndexChanged.connect(self._on_filters)
        self.actor_box.currentIndexChanged.connect(self._on_filters)
        self.sessions_box.toggled.connect(self._on_filters)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.table.clicked.connect(self._on_click)
        on_right_click(self.table, self.row_menu)
        self.detail.anchorClicked.connect(lambda url: self.open_link(url.toString()))
        state.changed.connect(self._on_changes)
        state.group_changed.connect(lambda _g: self._invalidate(reload=True))

    def _on_filters(self) -> None:
        self._invalidate(reload=True)
        self.filters_changed.emit()

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and changes.audit:
            self._invalidate(reload=False)

    def _filtered(self) -> bool:
        return bool(
            self.search.text().strip()
            or self.action_box.currentData()
            or self.actor_box.currentData()
        )

    def refresh(self) -> None:
        if self._begin_refresh():
            action = self.action_box.currentData()
            # Picking a session action in Show lists it whatever the tick says.
            skip = () if action or self.sessions_box.isChecked() else SESSION_ACTIONS
            self.model.load(
                self._state.service,
                self._state.group,
                [action] if action else [],
                self.actor_box.currentData(),
                self.search.text(),
                skip,
            )
            if self.model.rowCount():
                self.table.selectRow(0)
        else:
            self.model.refresh()
        if self.model.rowCount():
            self.stack.setCurrentIndex(0)
        else:
            self.stack.setCurrentWidget(self.no_match_page if self._filtered() else self.empty_page)
        self._on_selection()

    def selected(self) -> AuditRecord | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.record_at(rows[0].row()) if rows else None

    def _on_selection(self, *_args: object) -> None:
        record = self.selected()
        self.detail.setHtml("" if record is None else detail_html(record, self.model.clients))

    def _on_click(self, index: QModelIndex) -> None:
        if index.column() == ID_COLUMN:
            ids = self.model.record_at(index.row()).entry_ids
            href = link_for(ids[0]) if ids else None
            if href:
                self.open_link(href)

    def row_menu(self) -> QMenu:
        """The right-click menu: open what the selected row names, or copy its ids."""
        record = self.selected()
        ids = [] if record is None else list(record.entry_ids)
        href = link_for(ids[0]) if ids else None
        text = f"Open {href.partition(':')[0]}" if href else "Open"
        opened = Command(text, lambda: self.open_link(href or ""), bool(href))
        return row_menu(self, [opened, copy_command(ids, "")])

    def open_link(self, href: str) -> None:
        """Follow a ``kind:id`` link from a row or the detail pane."""
        kind, _, item_id = href.partition(":")
        if kind in ("memory", "receipt", "thread", "claim") and item_id:
            self.open_requested.emit(kind, item_id)
