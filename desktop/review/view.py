"""The review inbox: candidates wait here until the person accepts, rejects or defers them.

Writes from low-trust sources, and writes that may hold a secret, land as
candidates (core.policy.write_policy): kept, but out of the brief. Keys A, R and D decide
for the selected rows, then the next candidate is selected, so a person can
work through the inbox without the mouse.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QItemSelection, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.memory import curation
from core.memory.acceptance import on_accept
from core.memory.curation import Decision
from core.model.changes import Changes
from core.model.entries import EntryFilter, MemoryEntry, Status
from desktop.memories.action_texts import first_words
from desktop.memories.actions import MemoryActions
from desktop.memories.model import IdListModel
from desktop.memories.values import CANDIDATE_COLUMNS, local_time, source_text
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.placeholder import placeholder
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command, on_right_click, row_menu
from desktop.widgets.tables import list_table
from desktop.widgets.watch import AppState

_INTRO = (
    "These memories came from a low-trust source (web pages, unverified tool output) "
    "or may contain a secret. They stay out of the agent's brief until you accept them. "
    "Keys: A accept, R reject (delete), D defer; Ctrl+Z takes back an accept or a reject."
)


def candidate_html(entry: MemoryEntry, replaces: str = "") -> str:
    """The detail of one candidate; ``replaces`` says what accepting it replaces."""
    tags = ", ".join(entry.tags) or "none"
    replacing = f"<p><b>Accepting it replaces:</b> {html.escape(replaces)}</p>" if replaces else ""
    return (
        f"<p><b>Why review:</b> {html.escape(entry.review_reason or 'not given')}</p>"
        f"{replacing}"
        f"<p><b>Source:</b> {html.escape(source_text(entry))} · "
        f"<b>Type:</b> {html.escape(entry.type.value)} · <b>Tags:</b> {html.escape(tags)} · "
        f"<b>Stored:</b> {html.escape(local_time(entry.provenance.created_at))}</p>"
        f"<blockquote>{html.escape(entry.content).replace(chr(10), '<br/>')}</blockquote>"
    )


class ReviewPage(LazyPage):
    """Candidates with their reason and source; accept, reject or defer them.

    Args:
        state: the shared app state.
        commands: what the person can do (they report what they did).
        parent: the parent widget.

    Signals:
        count_changed(int): how many candidates await review in the current group.
    """

    count_changed = Signal(int)

    def __init__(
        self, state: AppState, commands: MemoryActions, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._state = state
        self._commands = commands
        self._count = -1
        self.model = IdListModel(self._load, CANDIDATE_COLUMNS, self)
        self.table = list_table(self.model, "reviewTable", self)
        self.table.setAccessibleName("Memories awaiting review")
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        header = self.table.horizontalHeader()
        char = self.table.fontMetrics().averageCharWidth()
        widths = {"type": 11, "reason": 34, "source": 12, "age": 6}
        for column, spec in enumerate(self.model.columns):
            if spec.key == "content":
                header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)
            else:
                header.resizeSection(column, widths.get(spec.key, 10) * char + 16)

        intro = QLabel(_INTRO, self)
        intro.setObjectName("hint")
        intro.setWordWrap(True)
        self.detail = QTextBrowser(self)
        self.detail.setObjectName("candidateDetail")
        self.detail.setAccessibleName("Candidate details")
        self.detail.setOpenLinks(False)
        #: Each decision's key, answered anywhere on the page.
        self.keys: dict[Decision, QAction] = {}
        self.accept_button = self._button("Accept", "A", Decision.ACCEPT, "primary")
        self.reject_button = self._button("Reject", "R", Decision.REJECT, "danger")
        self.defer_button = self._button("Defer", "D", Decision.DEFER, "")
        buttons = QHBoxLayout()
        buttons.addWidget(self.accept_button)
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.defer_button)
        buttons.addStretch(1)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        list_page = QWidget(self)
        list_layout = QVBoxLayout(list_page)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addWidget(splitter, 1)
        list_layout.addLayout(buttons)
        self.nothing = placeholder(
            "Nothing to review",
            "Memories from low-trust sources (web pages, unverified tool output), writes that "
            "may hold a secret and, if you ask for it in Settings, every agent write wait here "
            "for you. New ones appear as agents write.",
            self,
        )
        self.stack = QStackedWidget(self)
        self.stack.addWidget(list_page)
        self.stack.addWidget(self.nothing)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.stack, 1)
        self.undo_action = commands.undo_action(self, self.undo)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        on_right_click(self.table, self.row_menu)
        state.changed.connect(self._on_changes)
        state.group_changed.connect(lambda _g: self._invalidate())

    def _button(self, label: str, key: str, decision: Decision, role: str) -> QPushButton:
        button = QPushButton(f"{label}  ({key})", self)
        if role:
            button.setObjectName(role)
        button.clicked.connect(lambda: self.decide(decision))
        action = QAction(label, self)
        action.setShortcut(QKeySequence(key))
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(lambda: self.decide(decision))
        self.addAction(action)
        self.keys[decision] = action
        return button

    def _load(self, ids: list[str]) -> dict[str, MemoryEntry]:
        return self._state.service.entries(self._state.group, ids)

    # -- refreshing --------------------------------------------------------------

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and (changes.review or changes.entries):
            self._invalidate()

    def _invalidate(self, *, reload: bool = False) -> None:
        super()._invalidate(reload=reload)
        if not self.isVisible():
            self.recount()

    def recount(self) -> None:
        """Update the inbox badge without loading the candidates."""
        store = self._state.service.store_for(self._state.group)
        self._set_count(store.count(EntryFilter(statuses=(Status.CANDIDATE,))))

    def refresh(self) -> None:
        self._begin_refresh()
        # Only ids: the model loads the rows it shows.
        ids = curation.candidate_ids(self._state.service.store_for(self._state.group))
        if not self.model.update(ids):
            self.model.reset(ids)
        self.model.refresh_rows()
        self.model.show_rows(len(ids))
        self.stack.setCurrentIndex(0 if ids else 1)
        if ids and not self.table.selectionModel().hasSelection():
            self._select_row(0)
        self._on_selection()
        self._set_count(len(ids))

    def _set_count(self, count: int) -> None:
        if count != self._count:
            self._count = count
            self.count_changed.emit(count)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        # A, R and D work at once, without a click into the list first.
        self.table.setFocus()

    # -- deciding ----------------------------------------------------------------

    def selected_ids(self) -> list[str]:
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        return [self.model.id_at(r) for r in rows]

    def _select_row(self, row: int) -> None:
        if not self.model.rowCount():
            return
        row = max(0, min(row, self.model.rowCount() - 1))
        index = self.model.index(row, 0)
        self.table.selectionModel().setCurrentIndex(
            index,
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows,
        )
        # Rows removed above it leave the list scrolled past it otherwise.
        self.table.scrollTo(index)

    def decide(self, decision: Decision) -> None:
        ids = self.selected_ids()
        if not ids:
            return
        first = min(self.model.row_of(i) or 0 for i in ids)
        if self._commands.review(ids, decision):
            self.refresh()
            # Deferred ones move to the end; the next fresh candidate takes the row.
            self._select_row(first)

    def row_menu(self) -> QMenu:
        """The right-click menu: the buttons' decisions, with their keys, and the ids."""
        ids = self.selected_ids()

        def decision(text: str, d: Decision) -> Command:
            return Command(text, lambda: self.decide(d), bool(ids), self.keys[d].shortcut())

        return row_menu(
            self,
            [
                decision("Accept", Decision.ACCEPT),
                decision("Reject", Decision.REJECT),
                decision("Defer", Decision.DEFER),
                SEPARATOR,
                copy_command(ids, "memory"),
            ],
        )

    def undo(self) -> None:
        """Take back the last reject, delete or accept: the candidates wait here again, selected."""
        restored = self._commands.undo()
        if restored:
            self.refresh()
            rows = [r for r in (self.model.row_of(i) for i in restored) if r is not None]
            if rows:
                # The whole batch, so a mistaken decision can be made again at once.
                self._select_row(min(rows))
                selection = QItemSelection()
                for row in rows:
                    selection.select(self.model.index(row, 0), self.model.index(row, 0))
                self.table.selectionModel().select(
                    selection,
                    QItemSelectionModel.SelectionFlag.Select
                    | QItemSelectionModel.SelectionFlag.Rows,
                )

    def _replaces(self, entry: MemoryEntry) -> str:
        """What accepting ``entry`` replaces, in words: the current version of the
        memory it was written to replace, and whether that was stored since."""
        service, group = self._state.service, self._state.group
        plan = on_accept(service.store_for(group), entry.id)
        if plan is None:
            return ""
        if plan.current is None:
            return "nothing: the memory it was written to replace was deleted since"
        ids = [plan.current, plan.pending_supersedes]
        found = service.entries(group, ids)
        if plan.current not in found:
            return ""
        said = first_words(found[plan.current], 12)
        if plan.replaced_since and plan.pending_supersedes in found:
            meant = first_words(found[plan.pending_supersedes], 12)
            said += f", which replaced {meant} since this was written"
        return said

    def _on_selection(self, *_args: object) -> None:
        rows = sorted(i.row() for i in self.table.selectionModel().selectedRows())
        for b in (self.accept_button, self.reject_button, self.defer_button):
            b.setEnabled(bool(rows))
        if len(rows) == 1:
            entry = self.model.entry_at(rows[0])
            self.detail.setHtml(candidate_html(entry, self._replaces(entry)) if entry else "")
        elif rows:
            self.detail.setHtml(f"<p>{len(rows)} candidates selected.</p>")
        else:
            self.detail.clear()
