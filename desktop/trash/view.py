"""The trash: memories agents deleted, for the person to restore or delete for good.

An agent's delete is never final (core.memory.trash): the entry waits here, sealed
content still sealed, until the person restores it, empties it, or the
configured days pass. The list is short by construction (deletes are rate
limited and purged), so it is loaded whole on refresh.
"""

from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QMenu,
    QPushButton,
    QStackedWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.memory import trash
from core.memory.batching import Batched, Batching
from core.model.changes import Changes
from core.model.errors import AmbryError, Conflict, NotFound
from core.service import Caller, MemoryService
from desktop.memories.action_texts import memories
from desktop.memories.values import local_time
from desktop.widgets import messages
from desktop.widgets.batches import BatchJob, BatchProgress
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.placeholder import placeholder
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command, on_right_click, row_menu
from desktop.widgets.tables import item_table
from desktop.widgets.watch import AppState

_INTRO = (
    "Memories an agent deleted wait here, out of the brief and search, until you restore "
    "them or delete them for good. They are removed after the days set in Settings."
)
_COLUMNS = ("Memory", "Type", "Deleted", "By", "Removed after")
#: Up to how many memories a restore names with the reason each could not come back.
LEFT_NAMED = 3


def _short(preview: str, words: int = 6) -> str:
    parts = preview.split()
    return " ".join(parts[:words]) + ("…" if len(parts) > words else "")


def _why(left: trash.Left) -> str:
    """Why a memory did not come back, in the app's words."""
    match left.error:
        case Conflict():
            return "a memory with its id is back already (delete this copy for good)"
        case NotFound():
            return "it is no longer in the trash (restored or emptied meanwhile)"
    return left.reason


class TrashPage(LazyPage):
    """Lists the trash of the current group; restore, delete for good, or empty it.

    A restore of many runs as the window's other bulk changes do (``jobs``: in the
    background in batches, with progress and Cancel, above a few hundred).

    Args:
        state: the shared app state.
        jobs: the window's one bulk change at a time.
        parent: the parent widget.
    """

    def __init__(self, state: AppState, jobs: BatchJob, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._jobs = jobs
        self._ids: list[str] = []
        #: The opening words of each listed memory, to name one a restore left.
        self._previews: dict[str, str] = {}
        self.table = item_table(
            _COLUMNS, "trashTable", self, QAbstractItemView.SelectionMode.ExtendedSelection
        )
        self.table.setAccessibleName("Deleted memories")

        intro = QLabel(_INTRO, self)
        intro.setObjectName("hint")
        intro.setWordWrap(True)
        self.restore_button = QPushButton("Restore", self)
        self.restore_button.setObjectName("primary")
        self.delete_button = QPushButton("Delete for good…", self)
        self.delete_button.setObjectName("danger")
        self.empty_button = QPushButton("Empty trash…", self)
        self.restore_button.clicked.connect(self.restore_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.empty_button.clicked.connect(self.empty_all)
        buttons = QHBoxLayout()
        for button in (self.restore_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.empty_button)

        list_page = QWidget(self)
        list_layout = QVBoxLayout(list_page)
        list_layout.setContentsMargins(0, 0, 0, 0)
        list_layout.addWidget(self.table, 1)
        list_layout.addLayout(buttons)
        self.progress = BatchProgress(jobs, list_page)
        list_layout.addWidget(self.progress)
        self.nothing = placeholder(
            "The trash is empty",
            "Memories an agent deletes land here first and can be restored exactly as they "
            "were, until the days set in Settings have passed. Your own deletes are undone "
            "with Ctrl+Z instead.",
            self,
        )
        self.stack = QStackedWidget(self)
        self.stack.addWidget(list_page)
        self.stack.addWidget(self.nothing)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.stack, 1)

        self.table.itemSelectionChanged.connect(self._on_selection)
        on_right_click(self.table, self.row_menu)
        state.changed.connect(self._on_changes)
        state.group_changed.connect(lambda _g: self._invalidate(reload=True))
        jobs.started.connect(lambda *_: self._on_selection())
        jobs.ended.connect(self._on_selection)

    def _on_changes(self, changes: Changes) -> None:
        # Agent deletes change entries; emptying the trash only leaves an audit row.
        if changes.group == self._state.group and (changes.entries or changes.audit):
            self._invalidate()

    def refresh(self) -> None:
        self._begin_refresh()
        items = trash.list_trash(self._state.service, self._state.group)
        # Rows are rebuilt; the selection follows the ids, not the row numbers.
        keep = set(self.selected_ids())
        self.table.clearSelection()
        self._ids = [i.id for i in items]
        self._previews = {i.id: _short(i.preview) for i in items}
        self.table.setRowCount(len(items))
        for row, item in enumerate(items):
            cells = (
                item.preview,
                item.type,
                local_time(item.deleted_at),
                item.deleted_by,
                local_time(item.expires_at),
            )
            for column, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if column == 0:
                    cell.setToolTip(item.id)
                self.table.setItem(row, column, cell)
        rows = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for row, entry_id in enumerate(self._ids):
            if entry_id in keep:
                self.table.selectionModel().select(self.table.model().index(row, 0), rows)
        self.stack.setCurrentIndex(0 if items else 1)
        self.empty_button.setEnabled(bool(items))
        self._on_selection()

    def selected_ids(self) -> list[str]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self._ids[r] for r in rows if r < len(self._ids)]

    def _on_selection(self) -> None:
        chosen = bool(self.selected_ids()) and not self._jobs.running
        self.restore_button.setEnabled(chosen)
        self.delete_button.setEnabled(chosen)

    def row_menu(self) -> QMenu:
        """The right-click menu: restore or delete for good the selected memories."""
        return row_menu(
            self,
            [
                Command("Restore", self.restore_selected, self.restore_button.isEnabled()),
                copy_command(self.selected_ids(), "memory"),
                SEPARATOR,
                Command("Delete for good…", self.delete_selected, self.delete_button.isEnabled()),
            ],
        )

    def restore_selected(self) -> None:
        ids = self.selected_ids()
        if not ids:
            return

        def work(
            service: MemoryService, caller: Caller, batching: Batching
        ) -> Batched[trash.TrashRestore]:
            # One audit line; every memory that can come back does.
            return trash.restore_in_batches(service, caller, ids, batching)

        def done(did: Batched[trash.TrashRestore]) -> None:
            self._say_restored(did)
            self._invalidate()

        self._jobs.run("Restoring", self._state.group, len(ids), work, done)

    def _say_restored(self, did: Batched[trash.TrashRestore]) -> None:
        """``Restored 3 memories.``, where those not simply back went, and why any
        could not come back, each named by its first words."""
        done = did.result
        if did.error is not None and not done.restored:
            messages.report(did.error)
            return
        said = f"Restored {memories(len(done.restored))}." if done.restored else ""
        behind = sum(r.duplicate_of is not None for r in done.restored)
        if behind:
            # Restored, but not as a memory of its own: say where it is.
            said = (
                f"Restored {len(done.restored):,}; {behind:,} went back as an earlier version "
                "of a memory stored since with the same text, which stays current (see its "
                "history)."
            )
        if did.error is not None:
            messages.error(f"{said} Then it stopped: {did.error.message}")
            return
        if did.stopped:
            said += f" Cancelled: {did.total - did.done:,} not restored, still in the trash."
        if not done.left:
            messages.info(said)
            return
        why = [f"“{self._previews.get(x.entry_id, x.entry_id)}”: {_why(x)}" for x in done.left]
        more = len(why) - LEFT_NAMED
        listed = "; ".join(why[:LEFT_NAMED]) + (f"; and {more:,} more" if more > 0 else "")
        messages.warning(f"{said} Could not restore {memories(len(done.left))}: {listed}.".lstrip())

    def delete_selected(self) -> None:
        ids = self.selected_ids()
        if not ids or not messages.confirm(
            self,
            "Delete for good",
            f"Delete {len(ids)} memor{'y' if len(ids) == 1 else 'ies'} for good? "
            "This cannot be undone.",
            "Delete",
        ):
            return
        self._empty(ids)

    def empty_all(self) -> None:
        if self._ids and messages.confirm(
            self,
            "Empty trash",
            f"Delete all {memories(len(self._ids))} in the trash for good? This cannot be undone.",
            "Empty trash",
        ):
            self._empty([])

    def _empty(self, ids: list[str]) -> None:
        try:
            trash.empty(self._state.service, self._state.operator(), ids)
        except AmbryError as exc:
            messages.report(exc)
        self._invalidate()
