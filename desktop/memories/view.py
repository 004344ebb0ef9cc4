"""The Memories page: filters on top, the lazy table, the detail editor beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from PySide6.QtCore import (
    QEvent,
    QItemSelection,
    QItemSelectionModel,
    QObject,
    QSignalBlocker,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QMenu,
    QTableView,
    QWidget,
)

from core.memory.curation import Decision
from core.memory.tagging import tags_among
from core.model.changes import Changes
from core.model.entries import EntryType, MemoryEntry
from core.recall.ordering import SortKey, current_tag_counts
from desktop.memories.actions import MemoryActions
from desktop.memories.duplicates import DuplicatesDialog
from desktop.memories.editor import EntryEditor
from desktop.memories.editor import Page as EditorPage
from desktop.memories.filters import FilterBar
from desktop.memories.history import HistoryDialog
from desktop.memories.layout import arrange
from desktop.memories.meaning import MeaningMerge
from desktop.memories.model import IdListModel
from desktop.memories.no_results import NoResults
from desktop.memories.query import ListQuery, Request
from desktop.memories.related import RelatedList
from desktop.memories.row_menu import row_menu
from desktop.memories.rows import setup_memory_table, sort_key_of
from desktop.memories.state import BrowserQuery
from desktop.memories.values import Draft, count_text
from desktop.widgets import messages
from desktop.widgets.batches import BatchProgress
from desktop.widgets.ops import Executor
from desktop.widgets.row_menu import on_right_click
from desktop.widgets.watch import AppState, Forgetting

AGE_REFRESH_MS = 60_000  # how often ages on screen are redrawn ("now" becomes "1m")


class BrowserPage(QWidget):
    """Browse, search and curate the current group's memories.

    Args:
        state: the shared app state.
        executor: the background thread queries run on.
        commands: what the person can do (shared with the review inbox, with its undo stack).
        parent: the parent widget.

    Signals:
        listed(float): rows for a query or a refresh are in the table; the
            seconds since the query was asked for.
        emptiness_changed(bool): whether the group has no memories at all
            (decided on the unfiltered list).
    """

    listed = Signal(float)
    emptiness_changed = Signal(bool)

    def __init__(
        self,
        state: AppState,
        executor: Executor,
        commands: MemoryActions,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._state = state
        self._executor = executor
        self._query = BrowserQuery()
        #: The column order the person clicked, or None for newest / best match first.
        self._sort: tuple[SortKey | None, bool] = (None, False)
        self._empty: bool | None = None
        #: Ids to select once a list has them (a saved or restored entry).
        self._select_ids: list[str] = []
        #: The near-duplicates dialog, made when first asked for (Edit → Find near-duplicates…).
        self.duplicates_dialog: DuplicatesDialog | None = None
        #: A row to select once a list no longer has these ids (after a delete).
        self._select_row: tuple[int, set[str]] | None = None
        #: The selection a tag change from the bulk pane is given, and the control
        #: that had the keyboard: both come back once the new versions are listed.
        self._retagging: list[str] = []
        self._retag_focus: QWidget | None = None
        self._refocus: QWidget | None = None

        self.filters = FilterBar(self)
        self.model = IdListModel(self._load, parent=self)
        self.table = QTableView(self)
        self.table.setObjectName("memoryTable")
        self.table.setAccessibleName("Memories")
        self.table.setAccessibleDescription("The memories the search and filters match")
        self.table.setModel(self.model)
        setup_memory_table(self.table, self.model)
        self.no_results = NoResults(self.table, self.filters)
        self.editor = EntryEditor(self)
        self.related = RelatedList(executor, self)
        self.commands = commands
        self.runner = ListQuery(executor, self)
        # The person has selected or scrolled: results by meaning go at the end.
        touched = lambda: bool(self.selected_ids()) or self._top_id() is not None  # noqa: E731
        self.meaning = MeaningMerge(executor, touched, self)
        #: How far a bulk change in the background got, with its Cancel.
        self.progress = BatchProgress(commands.jobs, self)
        self.count_label, self.delete_matching_button = arrange(
            self, self.filters, self.table, self.editor, self.related, self.progress
        )

        self._add_actions()
        self.filters.changed.connect(self._on_query)
        self.filters.search.installEventFilter(self)
        self.table.horizontalHeader().sortIndicatorChanged.connect(self._on_sort)
        self._ages = QTimer(self, interval=AGE_REFRESH_MS)
        self._ages.timeout.connect(self._refresh_ages)
        self._ages.start()
        self.filters.typing.connect(self.runner.cancel_running)
        self.filters.typing.connect(self.meaning.hold)
        self.runner.ready.connect(self._on_ids)
        self.meaning.ready.connect(self._show_merged)
        self.meaning.pending_changed.connect(self.no_results.set_pending)
        sel = self.table.selectionModel()
        sel.selectionChanged.connect(self._on_selection)
        self.editor.save_requested.connect(self._save)
        self.editor.save_on_top_requested.connect(self._save_on_top)
        self.editor.cancel_requested.connect(self.cancel_new)
        self.editor.pin_requested.connect(self.commands.set_pinned)
        self.editor.delete_requested.connect(self.delete_ids)
        self.editor.history_requested.connect(self.show_history)
        self.editor.accept_requested.connect(self._accept)
        self.editor.tag_requested.connect(lambda ids, tag: self._retag(ids, tag, removed=False))
        self.editor.untag_requested.connect(lambda ids, tag: self._retag(ids, tag, removed=True))
        self.commands.retagged.connect(self._on_retagged)
        self.editor.open_requested.connect(self.open_entry)
        self.editor.reveal_requested.connect(self.reveal)
        self.related.open_requested.connect(self.open_entry)
        # What is related belongs to the memory in the form: once the form goes
        # (deleted, forgotten, several rows selected), the list goes with it.
        self.editor.pages.currentChanged.connect(self._on_editor_page)
        self.delete_matching_button.clicked.connect(self.delete_matching)
        on_right_click(self.table, self.row_menu)
        state.changed.connect(self._on_changes)
        state.memories_forgotten.connect(self._on_forgotten)
        commands.jobs.started.connect(lambda *_: self._on_job())
        commands.jobs.ended.connect(self._on_job)
        state.group_changed.connect(self._on_group)

    def _add_actions(self) -> None:
        delete = QAction("Delete", self.table)
        delete.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        delete.triggered.connect(lambda: self.delete_ids(self.selected_ids()))
        self.table.addAction(delete)
        edit = QAction("Edit", self.table)
        edit.setShortcuts([QKeySequence(Qt.Key.Key_Return), QKeySequence(Qt.Key.Key_Enter)])
        edit.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        edit.triggered.connect(self._edit_current)
        self.table.addAction(edit)
        self.undo_action = self.commands.undo_action(self, self.undo)

    # -- queries -----------------------------------------------------------------

    def _load(self, ids: list[str]) -> dict[str, MemoryEntry]:
        # Readable entries: private ones decrypted, secret ones masked.
        return self._state.service.entries(self._state.group, ids)

    def start(self) -> None:
        """List the current group (call once the window is up)."""
        self._state.service.store_for(self._state.group)  # created here, not by two threads
        self.runner.run(self._state.group, self._query)
        self._refresh_tags()

    def _on_query(self, query: BrowserQuery) -> None:
        sort, descending = self._sort
        self._query = replace(query, sort=sort, descending=descending)
        self.runner.run(self._state.group, self._query)

    def _on_sort(self, section: int, order: Qt.SortOrder) -> None:
        key = sort_key_of(self.model.columns[section].key) if section >= 0 else None
        self._sort = (key, order == Qt.SortOrder.DescendingOrder)
        self._on_query(self.filters.query())

    def clear_sort(self) -> None:
        """Back to newest first (or best match first while searching)."""
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)

    def _refresh_ages(self) -> None:
        if self.isVisible() and self.model.rowCount():
            self.model.refresh_rows()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Down or Enter in the search box moves into the results; Escape clears the
        # search, and in an empty box moves into the results too.
        if (
            watched is self.filters.search
            and isinstance(event, QKeyEvent)
            and event.type() == QEvent.Type.KeyPress
        ):
            if event.key() == Qt.Key.Key_Escape and self.filters.search.text():
                self.filters.search.clear()
                return True
            keys = (Qt.Key.Key_Down, Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape)
            if event.key() in keys:
                self.focus_results()
                return True
        return super().eventFilter(watched, event)

    def focus_results(self) -> None:
        """Put the keyboard in the list, on the selected row or the first one."""
        if not self.model.rowCount():
            return
        self.table.setFocus(Qt.FocusReason.ShortcutFocusReason)
        if not self.selected_ids():
            self._select([self.model.id_at(0)])

    def _on_group(self, group: str) -> None:
        self.filters.reset()
        with QSignalBlocker(self.table.horizontalHeader()):
            self.clear_sort()
        self._sort = (None, False)
        self._query = BrowserQuery()
        self._empty = None
        self.editor.show_nothing()
        self.runner.run(group, self._query)
        self._refresh_tags()

    def _on_changes(self, changes: Changes) -> None:
        if changes.group != self._state.group or not (changes.entries or changes.review):
            return
        self.model.refresh_rows(changes.entry_ids or None)
        self._reload_editor(changes.entry_ids)
        self.runner.run(self._state.group, self._query, refresh=True)
        self._refresh_tags()

    def _on_forgotten(self, erased: Forgetting) -> None:
        """A forget or a clear took the memory whose words the editor holds: they go
        from the screen too, with no draft left to save them back (a privacy action,
        unlike an agent's delete, whose edits are kept as a new memory)."""
        held = self.editor.memory_id
        if erased.group != self._state.group or held is None or not erased.took(held):
            return
        edited = self.editor.is_dirty()
        how = "cleared" if erased.cleared and held not in erased.entry_ids else "forgotten"
        # The pane's heading is large: the banner says the rest.
        edits = ", with your unsaved edits" if edited else ""
        self.editor.drop_forgotten(f"This memory was {how}{edits}.")
        self.related.show_for(self._state.group, None)
        if edited:
            messages.warning(
                f"The memory you were editing was {how}: your unsaved changes went with "
                "it, and nothing of it was saved back."
            )

    def _refresh_tags(self) -> None:
        group = self._state.group  # counted in the background: a large group takes a while

        def done(tags: list[tuple[str, int]]) -> None:
            if group == self._state.group:
                self.filters.set_tags(tags)

        self._executor.submit(
            group,
            lambda service: current_tag_counts(service.store_for(group)),
            done,
            on_cancel=self._refresh_tags,  # cut short by a search typed meanwhile
        )

    def _on_ids(self, request: Request, ids: list[str], elapsed: float, complete: bool) -> None:
        if request.group != self._state.group or request.query != self._query:
            return  # asked for before the person changed something
        if complete:
            ids = self.meaning.listed(request.group, request.query, ids)
            self.model.by_meaning = self.meaning.by_meaning
        if complete and not request.refresh and self.model.extend(ids):
            # The rest of a list whose first ids are on screen already.
            self._update_count()
            return
        anchor = self._top_id() if request.refresh else None
        self._replace_ids(ids, in_place=request.refresh, partial=not complete)
        if not request.refresh:
            self.table.scrollToTop()  # a new search starts at its best matches
        if anchor is not None:
            row = self.model.row_of(anchor)
            if row is not None and row < self.model.rowCount():
                self.table.scrollTo(
                    self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtTop
                )
        self._apply_pending_selection(new_query=not request.refresh)
        self._update_count()
        if self._query.is_default:
            empty = not ids
            if empty != self._empty:
                self._empty = empty
                self.emptiness_changed.emit(empty)
        self.listed.emit(elapsed)

    def _show_merged(self, ids: list[str]) -> None:
        self.model.by_meaning = self.meaning.by_meaning
        self._replace_ids(ids, in_place=True)
        self.model.refresh_rows()  # rows found by meaning say so
        self._update_count()

    def _replace_ids(self, ids: list[str], *, in_place: bool, partial: bool = False) -> None:
        """List ``ids``: rows inserted and removed where the order allows (``in_place``),
        else from the top, with the selection kept."""
        selected = self.selected_ids()
        if not (in_place and self.model.update(ids)):
            self.model.reset(ids, partial=partial)
            self._select(selected, scroll=False)

    def _top_id(self) -> str | None:
        """The entry at the top of the viewport, if the person scrolled down."""
        if self.table.verticalScrollBar().value() == 0:
            return None  # at the top, new rows should come into view
        row = self.table.rowAt(0)
        return self.model.id_at(row) if row >= 0 else None

    def _on_job(self) -> None:
        """A bulk change began or ended: the bulk actions wait while it runs."""
        self.editor.bulk.set_waiting(self.commands.jobs.running)
        self._update_count()

    def _update_count(self) -> None:
        total, partial, meant = self.model.total, self.model.partial, self.model.listed_by_meaning
        self.count_label.setText(count_text(total, partial, not self._query.is_default, meant))
        waiting = self.commands.jobs.running
        self.delete_matching_button.setEnabled(total > 0 and not partial and not waiting)
        # The selection pane counts the list too: it follows it, not the list it was shown for.
        if self.editor.pages.currentIndex() == EditorPage.BULK:
            rows = self.selected_rows()
            if len(rows) > 1:
                self._show_bulk(rows)

    # -- selection ---------------------------------------------------------------

    def selected_rows(self) -> list[int]:
        """The selected rows, top to bottom.

        Read range by range: Ctrl+A over 10,000 rows is one range, where
        ``selectedRows()`` would test every cell of every row.
        """
        selection = self.table.selectionModel().selection()
        rows: set[int] = set()
        for i in range(selection.count()):
            part = selection.at(i)
            rows.update(range(part.top(), part.bottom() + 1))
        shown = self.model.rowCount()
        return sorted(r for r in rows if r < shown)

    def selected_ids(self) -> list[str]:
        return [self.model.id_at(r) for r in self.selected_rows()]

    def _select(self, ids: Sequence[str], *, scroll: bool = True) -> bool:
        """Select the rows of ``ids`` the list has; False if it has none of them."""
        rows = [r for r in (self.model.row_of(i) for i in ids) if r is not None]
        if not rows:
            return False
        self.model.show_rows(max(rows) + 1)
        selection = QItemSelection()
        last = self.model.columnCount() - 1
        for r in rows:
            selection.select(self.model.index(r, 0), self.model.index(r, last))
        flags = QItemSelectionModel.SelectionFlag.ClearAndSelect
        sel = self.table.selectionModel()
        sel.select(selection, flags)
        sel.setCurrentIndex(
            self.model.index(rows[0], 0), QItemSelectionModel.SelectionFlag.NoUpdate
        )
        if scroll:
            self.table.scrollTo(self.model.index(rows[0], 0))
        return True

    def _apply_pending_selection(self, *, new_query: bool) -> None:
        # A list can arrive that was asked for before the write; wait for one after it.
        if self._select_ids and (self._select(self._select_ids) or new_query):
            self._select_ids = []
        if self._select_row is not None:
            row, gone = self._select_row
            if not new_query and any(self.model.row_of(i) is not None for i in gone):
                return
            self._select_row = None
            if not new_query and self.model.rowCount():
                self._select([self.model.id_at(min(row, self.model.rowCount() - 1))])

    def _on_selection(self, _selected: QItemSelection, _deselected: QItemSelection) -> None:
        rows = self.selected_rows()
        if not rows:
            # An editor showing nothing keeps saying why (the memory was deleted).
            if not (self.editor.is_new or self.editor.is_dirty() or self.editor.showing_nothing):
                self.editor.show_nothing()
            return
        if len(rows) > 1:
            self._show_bulk(rows)
            return
        entry = self.model.entry_at(rows[0])
        if entry is None:
            self.editor.show_nothing("This memory was deleted.")
            return
        if not self._may_show(entry):
            # Kept editing: the highlight goes back to what the editor shows, so
            # Del and the bulk actions act on that memory, not on the one clicked.
            self._restore_selection(self.editor.entry)
            return
        self._show(entry)

    def _show_bulk(self, rows: Sequence[int]) -> None:
        ids = [self.model.id_at(r) for r in rows]
        # Counted by the store: reading every selected entry took most of a second.
        candidates = self._state.service.candidate_count(self._state.group, ids)
        tags = tags_among(self._state.service.store_for(self._state.group), ids)
        self.editor.show_bulk(ids, candidates, self.model.total, tags)
        refocus, self._refocus = self._refocus, None
        if refocus is not None and self.editor.bulk.isAncestorOf(refocus):
            # After a tag change the keyboard goes back where it was (Tag to add),
            # for another tag or a Remove tag on the same memories.
            target = refocus if refocus.isEnabled() else self.editor.bulk.tag
            target.setFocus(Qt.FocusReason.OtherFocusReason)

    def _retag(self, ids: Sequence[str], tag: str, *, removed: bool) -> None:
        """Add or remove ``tag`` on the selected ``ids``, keeping them selected."""
        self._retagging = list(ids)
        self._retag_focus = QApplication.focusWidget()
        (self.commands.remove_tag if removed else self.commands.add_tag)(ids, tag)

    def _on_retagged(self, versions: Sequence[tuple[str, str]]) -> None:
        """The tag change ended: select the same memories at their new versions."""
        asked, self._retagging = self._retagging, []
        focused, self._retag_focus = self._retag_focus, None
        if not asked or not versions:
            return
        new = dict(versions)
        self._refocus = focused
        self._select_ids = [new.get(i, i) for i in asked]
        self._apply_pending_selection(new_query=False)

    def _may_show(self, entry: MemoryEntry) -> bool:
        """Whether the editor may move to ``entry``: unsaved edits of another memory
        are dropped only once the person agrees."""
        current = self.editor.entry
        moving = current is None or current.id != entry.id
        return not (moving and self.editor.is_dirty()) or self._discard_edits()

    def _on_editor_page(self, page: int) -> None:
        if page != EditorPage.FORM:
            self.related.show_for(self._state.group, None)

    def _show(self, entry: MemoryEntry) -> None:
        """``entry`` in the editor, and its related memories when it is another one."""
        current = self.editor.entry
        self.editor.show_entry(entry)
        if current is None or current.id != entry.id:
            self.related.show_for(self._state.group, entry.id)

    def _restore_selection(self, current: MemoryEntry | None) -> None:
        sel = self.table.selectionModel()
        with QSignalBlocker(sel):
            if current is None or not self._select([current.id]):
                sel.clear()
        self.table.viewport().update()

    def _discard_edits(self) -> bool:
        return messages.confirm(
            self, "Unsaved changes", "Discard your changes to this memory?", "Discard"
        )

    def _reload_editor(self, ids: Sequence[str]) -> None:
        entry = self.editor.entry
        if entry is None or (ids and entry.id not in ids):
            return
        fresh = self.commands.read(entry.id)
        if fresh is None:
            if not self.editor.keep_deleted_edits():
                self.editor.show_nothing("This memory was deleted.")
        else:
            self.editor.show_entry(fresh)

    # -- commands ----------------------------------------------------------------

    def focus_search(self) -> None:
        self.filters.focus_search()

    def row_menu(self) -> QMenu:
        """The right-click menu for the selected rows."""
        return row_menu(self, self.selected_ids(), self.edit_entry, self.delete_ids)

    def edit_entry(self, entry_id: str) -> None:
        """Show ``entry_id`` in the editor with the keyboard in its text."""
        self.open_entry(entry_id)
        editing = self.editor.entry
        if editing is not None and editing.id == entry_id:
            self._edit_current()

    def _edit_current(self) -> None:
        if self.editor.entry is not None and not self.editor.entry.is_superseded:
            self.editor.content.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def new_entry(self) -> None:
        if self.editor.is_dirty() and not self._discard_edits():
            return
        self.table.clearSelection()
        self.editor.show_new(EntryType.FACT)
        # The memory shown before is gone from the editor: its relatives go too.
        self.related.show_for(self._state.group, None)

    def cancel_new(self) -> None:
        """Drop the new memory being written (asks if it has text)."""
        if not self.editor.is_new or (self.editor.is_dirty() and not self._discard_edits()):
            return
        self.editor.show_nothing()
        self._on_selection(QItemSelection(), QItemSelection())
        self.table.setFocus(Qt.FocusReason.OtherFocusReason)

    def open_entry(self, entry_id: str) -> None:
        """Select ``entry_id`` if the current list has it, else show it in the editor
        (with its related memories), asking first if that would drop unsaved edits."""
        if self.model.row_of(entry_id) is not None:
            self._select([entry_id])  # the selection asks about unsaved edits
            return
        entry = self.commands.read(entry_id)
        if entry is None or not self._may_show(entry):
            return
        with QSignalBlocker(self.table.selectionModel()):
            self.table.clearSelection()
        self.table.viewport().update()
        self._show(entry)

    def _save(self, original: MemoryEntry | None, draft: Draft) -> None:
        saved = self.commands.save(original, draft)
        if saved is not None:
            self.editor.show_entry(saved)
            self._select_ids = [saved.id]
        elif original is not None:
            # Replaced or deleted by an agent before the window heard: say so now.
            self._reload_editor([original.id])

    def _save_on_top(self, replaced: MemoryEntry, draft: Draft) -> None:
        """Save the person's edits of ``replaced`` as a version on top of its current one."""
        current: MemoryEntry | None = replaced
        while current is not None and current.superseded_by:
            current = self.commands.read(current.superseded_by)
        # Deleted meanwhile: the person's text becomes a memory of its own.
        self._save(current, draft)

    def delete_ids(self, ids: Sequence[str]) -> None:
        rows = [r for r in (self.model.row_of(i) for i in ids) if r is not None]
        if self.commands.delete(ids, self):
            # Keep the keyboard flow: the row after the deleted ones gets selected.
            self._select_row = (min(rows), set(ids)) if rows else None
            self.editor.show_nothing()

    def reveal(self, entry_id: str) -> None:
        """Show a secret's text in the editor (until another entry is shown)."""
        entry = self.commands.reveal(entry_id)
        if entry is not None:
            self.editor.show_revealed(entry)

    def delete_matching(self) -> None:
        """Delete everything the search and filters match, after asking (the editor follows)."""
        self.commands.delete_matching(self._query, self, self.model.listed_by_meaning)

    def undo(self) -> None:
        self._select_ids = self.commands.undo()

    def find_duplicates(self) -> DuplicatesDialog:
        """Open the near-duplicates of the current group; a keep is undone here too."""
        # One dialog, shown again: each new one would stay connected and look again
        # at every group switch.
        if self.duplicates_dialog is None:
            self.duplicates_dialog = DuplicatesDialog(
                self._state, self._executor, self.commands, self.undo, self
            )
        else:
            self.duplicates_dialog.refresh()
        self.duplicates_dialog.open()
        return self.duplicates_dialog

    def _accept(self, ids: Sequence[str]) -> None:
        self.commands.review(ids, Decision.ACCEPT)

    def show_history(self, entry_id: str) -> None:
        chain = self._state.service.history(self._state.group, entry_id)
        dialog = HistoryDialog(self._state.group, chain, entry_id, self.commands, self._save, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        # Disconnected when the dialog closes (and is deleted).
        self._state.memories_forgotten.connect(dialog.drop_forgotten)
        dialog.open()
        self.history_dialog = dialog
