"""Near-duplicates: memories said twice in other words, and keeping one of each.

The finder (``core.recall.duplicates``) compares every current public memory
with every other, about a second at 10,000 memories and over a minute at
100,000, so it runs on the executor's thread while a bar shows how many of the
comparisons are done. Its progress hook comes back by a queued signal, and
raises once the person presses Cancel (or Escape), which stops the search
within one block of comparisons. Keeping one goes
through :meth:`MemoryActions.keep` on the GUI thread (the one writer), which
puts the deleted memories on the memory page's undo stack: Ctrl+Z here or on
the page brings them back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from core.model.entries import MemoryEntry
from core.model.text import plural
from core.recall.duplicates import Cluster, Survey, near_duplicates
from core.semantic.embedding import unavailable_reason
from core.service import MemoryService
from desktop.memories.action_texts import first_words, kept_text, memories
from desktop.memories.actions import MemoryActions
from desktop.memories.values import is_locked, is_masked
from desktop.widgets.ops import Executor, default_failure
from desktop.widgets.watch import AppState

#: What the empty state says counts as a near-duplicate.
WHAT_COUNTS = (
    "Two memories are near-duplicates when they say nearly the same thing in other "
    "words, and neither names a person, number or day the other does not, nor says "
    "“not” or “used to” where the other does not."
)
_ID = Qt.ItemDataRole.UserRole
_TYPE, _TEXT, _TAGS, _SIMILAR, _KEEP = range(5)
#: The bar's range: comparisons run to billions, past what a QProgressBar holds.
STEPS = 1000


class _Stopped(Exception):
    """Raised from the finder's progress hook once the person asked to stop."""


@dataclass(frozen=True)
class Found:
    """A survey and its memories as lists show them (a secret masked)."""

    survey: Survey
    entries: dict[str, MemoryEntry]


def left_out(survey: Survey) -> str:
    """What was not compared: ``12 memories are not compared yet: …``; empty if none."""
    parts = []
    if survey.waiting:
        are = "is" if survey.waiting == 1 else "are"
        parts.append(
            f"{memories(survey.waiting)} {are} not compared yet: "
            f"{'it is' if survey.waiting == 1 else 'they are'} still being embedded."
        )
    if survey.sealed:
        one = survey.sealed == 1
        parts.append(
            f"{plural(survey.sealed, 'private or secret memory', 'private or secret memories')} "
            f"{'is' if one else 'are'} never compared (Ambry keeps no vector of "
            f"{'it' if one else 'them'})."
        )
    return " ".join(parts)


def _ids_of(head: QTreeWidgetItem) -> tuple[str, ...]:
    children = (head.child(k) for k in range(head.childCount()))
    return tuple(str(c.data(0, _ID)) for c in children if c is not None)


def one_line(entry: MemoryEntry) -> str:
    if is_masked(entry) or is_locked(entry):
        return first_words(entry)
    return " ".join(entry.content.split())


class DuplicatesDialog(QDialog):
    """The clusters of near-duplicates of the current group, each with Keep this one.

    Enter (or K) keeps the selected memory; Ctrl+Z takes back the last keep; Esc
    stops a search under way, and closes the dialog otherwise.

    Args:
        state: the shared app state (service, current group).
        executor: the background thread the finder runs on.
        commands: the memory commands, whose undo stack a keep goes on.
        undo: takes back the last delete as the memory page does (Ctrl+Z).
        parent: the parent widget.

    Signals:
        progressed(int, int): emitted on the finder's thread (comparisons done, of all).
    """

    progressed = Signal(int, int)

    def __init__(
        self,
        state: AppState,
        executor: Executor,
        commands: MemoryActions,
        undo: Callable[[], object],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Near-duplicates")
        self._state, self._executor, self._commands, self._undo = state, executor, commands, undo
        self._looking = False
        #: A refresh asked for while a look was under way.
        self._again = False
        #: Set by Cancel; the finder's progress hook raises once it is.
        self._stop = threading.Event()
        #: The last progress heard: (comparisons done, of all).
        self._heard = (0, 0)
        self._entries: dict[str, MemoryEntry] = {}

        intro = QLabel(
            "Memories that say the same thing twice. Keep one of each group: the others "
            "are deleted and their tags move onto the one you keep.",
            self,
        )
        intro.setWordWrap(True)
        self.busy = QProgressBar(self)
        self.busy.setTextVisible(False)
        self.progressed.connect(self._on_progress)
        self.status = QLabel(self)
        self.status.setObjectName("duplicatesStatus")
        self.status.setWordWrap(True)
        self.empty = QLabel(f"<b>No near-duplicates.</b><br>{WHAT_COUNTS}", self)
        self.empty.setObjectName("duplicatesEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.tree = self._make_tree()
        self.left_out = QLabel(self)
        self.left_out.setWordWrap(True)
        self.again = QPushButton("Look again", self)
        self.again.clicked.connect(self.refresh)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.setToolTip("Stop looking (Esc)")
        self.cancel_button.clicked.connect(self.cancel)
        close = QPushButton("Close", self)
        close.clicked.connect(self.close_dialog)
        for button in (self.again, self.cancel_button, close):
            button.setAutoDefault(False)  # Enter keeps the selected memory instead

        buttons = QHBoxLayout()
        buttons.addWidget(self.left_out, 1)
        buttons.addWidget(self.again)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.busy)
        layout.addWidget(self.status)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty, 1)
        layout.addLayout(buttons)

        self.undo_action = QAction("Undo", self)
        self.undo_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        self.undo_action.triggered.connect(self.undo)
        self.addAction(self.undo_action)
        # A bound method: the connection goes with the dialog.
        state.group_changed.connect(self._group_changed)
        self.resize(900, 520)
        self.refresh()

    def _make_tree(self) -> QTreeWidget:
        tree = QTreeWidget(self)
        tree.setObjectName("duplicatesList")
        tree.setHeaderLabels(["Type", "Memory", "Tags", "Similarity", ""])
        tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        tree.setRootIsDecorated(False)
        tree.setItemsExpandable(False)
        tree.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(_TEXT, QHeaderView.ResizeMode.Stretch)
        for column, width in ((_TYPE, 100), (_TAGS, 150), (_SIMILAR, 80), (_KEEP, 120)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            tree.setColumnWidth(column, width)
        tree.installEventFilter(self)
        return tree

    # -- finding -----------------------------------------------------------------

    def _group_changed(self, _group: str) -> None:
        if self.isVisible():
            self.refresh()

    def refresh(self) -> None:
        """Look for near-duplicates again, in the background."""
        if self._executor.closed:
            return
        if self._looking:
            # Another group's, or an older state's, look is under way: look again after it.
            self._again = True
            return
        self._again = False
        self._looking = True
        self._stop.clear()
        self._heard = (0, 0)
        self._set_busy(True)
        model_dir = self._state.service.config.embedding_model_dir
        group = self._state.group
        stop, progressed = self._stop, self.progressed

        def heard(done: int, total: int) -> None:  # on the finder's thread
            if stop.is_set():
                raise _Stopped
            progressed.emit(done, total)

        def find(service: MemoryService) -> Found | None:
            try:
                if stop.is_set():
                    raise _Stopped  # stopped before it started
                survey = near_duplicates(
                    service.store_for(group), model_dir=model_dir, progress=heard
                )
            except _Stopped:
                return None
            ids = [i for c in survey.clusters for i in c.ids]
            return Found(survey, service.entries(group, ids))

        def failed(exc: BaseException) -> None:
            self._looking = False
            self._set_busy(False)
            default_failure(exc)

        self._executor.submit(group, find, self._show, failed, lambda: self._show(None))

    @property
    def looking(self) -> bool:
        """A search is under way (or is stopping)."""
        return self._looking

    def cancel(self) -> None:
        """Stop the search under way; the dialog stays open and says so."""
        if not self._looking:
            return
        self._again = False  # a look asked for meanwhile is given up too
        self._stop.set()
        self.cancel_button.setEnabled(False)
        self.status.setText("Stopping…")

    def close_dialog(self) -> None:
        """Close, stopping a search under way: nobody would see what it found."""
        self.cancel()
        super().reject()

    def reject(self) -> None:
        # Escape, or the title bar's close button, while looking stops the search
        # and leaves the dialog open to say so.
        if self._looking:
            self.cancel()
            return
        super().reject()

    def _on_progress(self, done: int, total: int) -> None:
        if not self._looking or self._stop.is_set():
            return  # stopping: the bar stays where it was
        self._heard = (done, total)
        self.busy.setRange(0, STEPS)
        self.busy.setValue(STEPS * done // total if total else STEPS)
        said = f"Looking for near-duplicates: compared {done:,} of {plural(total, 'pair')}"
        # All compared: the words of the close pairs are read, the last part.
        self.status.setText(said + ("…" if done < total else "; reading the closest ones…"))

    def _set_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)
        self.again.setVisible(not busy)
        self.cancel_button.setVisible(busy)
        self.cancel_button.setEnabled(busy)
        self.tree.setEnabled(not busy)
        if busy:
            self.busy.setRange(0, 0)  # until the first block is compared
            self.status.setText("Looking for near-duplicates…")
            # Not "No near-duplicates." under the bar: nothing is known yet.
            self.empty.setVisible(False)
            self.tree.setVisible(True)

    def _show(self, found: Found | None) -> None:
        self._looking = False
        self._set_busy(False)
        if self._again:
            self.refresh()  # what was found is for a group or a state already left
            return
        self.tree.clear()
        if found is None:
            done, total = self._heard
            after = f" after comparing {done:,} of {plural(total, 'pair')}" if total else ""
            self.status.setText(
                f"The search was stopped{after}: nothing is listed. "
                "Look again to search from the start."
            )
            self.left_out.clear()
            self._show_empty(False)
            return
        survey, self._entries = found.survey, found.entries
        if survey.off:
            reason = unavailable_reason(self._state.service.config.embedding_model_dir)
            self.status.setText(
                f"Near-duplicates are found by meaning, and semantic search is off: {reason}."
            )
        else:
            self.status.setText(
                f"{plural(len(survey.clusters), 'group')} of near-duplicates among "
                f"{memories(survey.compared)}."
            )
        self.tree.setUpdatesEnabled(False)
        self.tree.setVisible(False)
        try:
            for cluster in survey.clusters:
                self._add_cluster(cluster)
            # Group rows span the columns once all are in: spanned while rows were
            # still added, each new row cost a pass over the spanned ones (2,000
            # groups took 80 s to list).
            for row in range(self.tree.topLevelItemCount()):
                self.tree.setFirstColumnSpanned(row, QModelIndex(), True)
        finally:
            self.tree.setUpdatesEnabled(True)
        self.left_out.setText(left_out(survey))
        self._after_change()

    def _add_cluster(self, cluster: Cluster) -> None:
        shown = [i for i in cluster.ids if i in self._entries]
        if len(shown) < 2:
            return  # changed meanwhile: nothing left to choose between
        head = QTreeWidgetItem(self.tree)
        head.setText(0, f"{len(shown)} memories, {cluster.lowest:.2f} or more alike")
        head.setFlags(Qt.ItemFlag.ItemIsEnabled)
        bold = head.font(0)
        bold.setBold(True)
        head.setFont(0, bold)
        for entry_id in shown:
            entry = self._entries[entry_id]
            item = QTreeWidgetItem(head)
            item.setData(0, _ID, entry_id)
            item.setText(_TYPE, entry.type.value)
            item.setText(_TEXT, one_line(entry))
            item.setToolTip(_TEXT, one_line(entry) if is_masked(entry) else entry.content)
            item.setText(_TAGS, ", ".join(entry.tags))
            item.setToolTip(_TAGS, ", ".join(entry.tags))
            item.setText(_SIMILAR, f"{cluster.similarity[entry_id]:.2f}")
            button = QPushButton("Keep this one", self.tree)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the list keeps the keys
            button.setToolTip("Keep this memory and delete the others of its group")
            button.clicked.connect(lambda _c=False, i=entry_id: self.keep(i))
            # A row as tall as its button, so the button's text is not cut off.
            item.setSizeHint(_KEEP, button.sizeHint())
            self.tree.setItemWidget(item, _KEEP, button)
        head.setExpanded(True)

    def _after_change(self) -> None:
        has = self.tree.topLevelItemCount() > 0
        self._show_empty(not has)
        if has and self.tree.currentItem() is None:
            self._select_first_of(0)
        self.undo_action.setEnabled(self._commands.can_undo)

    def _select_first_of(self, n: int) -> None:
        """Select the first memory of cluster ``n`` (the last one if fewer are left)."""
        head = self.tree.topLevelItem(min(n, self.tree.topLevelItemCount() - 1))
        first = head.child(0) if head is not None else None
        if first is not None:
            self.tree.setCurrentItem(first)

    def _show_empty(self, empty: bool) -> None:
        self.tree.setVisible(not empty)
        self.empty.setVisible(empty)

    # -- keeping -----------------------------------------------------------------

    def ids_listed(self) -> list[tuple[str, ...]]:
        """The memories listed, cluster by cluster."""
        heads = (self.tree.topLevelItem(n) for n in range(self.tree.topLevelItemCount()))
        return [_ids_of(head) for head in heads if head is not None]

    def selected_id(self) -> str | None:
        item = self.tree.currentItem()
        value = item.data(0, _ID) if item is not None else None
        return str(value) if value else None

    def keep(self, entry_id: str) -> bool:
        """Keep ``entry_id``, delete the rest of its cluster; the cluster leaves the list."""
        for n, ids in enumerate(self.ids_listed()):
            if entry_id not in ids:
                continue
            done = self._commands.keep(entry_id, [i for i in ids if i != entry_id])
            if done is None:
                return False
            self.tree.takeTopLevelItem(n)
            self.status.setText(kept_text(done))
            self._after_change()
            self._select_first_of(n)
            return True
        return False

    def keep_selected(self) -> bool:
        entry_id = self.selected_id()
        return self.keep(entry_id) if entry_id else False

    def undo(self) -> None:
        """Take back the last keep (or delete), then look again."""
        if not self._commands.can_undo:
            self.status.setText("Nothing to undo.")
            return
        self._undo()
        self.refresh()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.tree
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.modifiers()
            in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_K)
        ):
            self.keep_selected()
            return True
        return super().eventFilter(watched, event)
