"""Clear: delete a whole kind of memory from the group, after showing how much goes.

The app's ``ambry clear``. The counts of each choice
(``core.memory.forgetting.clear_counts``) are read on the query thread when the
dialog opens; the clear runs after the person confirms the counts (and, for
everything, confirms a second time, as the CLI asks twice), alone on a thread
and connection of its own, through ``MemoryService.clear`` in the person's
session. Afterwards the group's undo history goes, as after a forget.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from core.memory.forgetting import Scope, clear_counts, cleared_text
from core.model.errors import AmbryError
from core.model.text import plural
from core.service import MemoryService
from desktop.widgets import messages
from desktop.widgets.ops import Executor, as_operator, run_alone
from desktop.widgets.watch import AppState

#: Each choice: its label and what it takes.
CHOICES: dict[Scope, tuple[str, str]] = {
    Scope.EPISODIC: (
        "Conversation turns",
        "The turns agents logged, the notes sessions left for the next one, and the "
        "summaries drawn from the turns.",
    ),
    Scope.SEMANTIC: (
        "Memories",
        "Every memory, old versions included, and the memories agents deleted that "
        "wait in the trash.",
    ),
    Scope.ALL: (
        "Everything",
        "Memories, conversation turns, threads and their handoffs, attachment receipts "
        "and claims. The settings and the claims mode stay.",
    ),
}


class ClearDialog(QDialog):
    """Choose turns, memories or everything; see the counts; delete (after asking).

    Escape closes (not while a clear runs).

    Args:
        state: the shared app state (service, current group).
        executor: the query thread the counts are read on.
        parent: the parent widget.

    Signals:
        cleared(str): a clear ended, deleting what it says.
        counted(): the counts of the current group are on screen.
    """

    cleared = Signal(str)
    counted = Signal()

    def __init__(self, state: AppState, executor: Executor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Clear")
        self.setObjectName("clearDialog")
        self._state, self._executor = state, executor
        self._job: Executor | None = None
        #: The counts on screen, per choice, and the group they are of.
        self.counts: dict[Scope, dict[str, int]] = {}
        self._counted_group = ""

        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.choices = QButtonGroup(self)
        self.buttons: dict[Scope, QRadioButton] = {}
        self.count_labels: dict[Scope, QLabel] = {}
        choices = QVBoxLayout()
        choices.setSpacing(12)
        for scope, (label, help_text) in CHOICES.items():
            button = QRadioButton(label, self)
            button.setObjectName(f"clear-{scope.value}")
            what = QLabel(help_text, self)
            what.setObjectName("hint")
            what.setWordWrap(True)
            count = QLabel(self)
            count.setWordWrap(True)
            self.choices.addButton(button)
            self.buttons[scope], self.count_labels[scope] = button, count
            # The words under a choice line up with its label, past the round button.
            below = QVBoxLayout()
            below.setContentsMargins(button.iconSize().width() + 10, 0, 0, 0)
            below.setSpacing(1)
            below.addWidget(what)
            below.addWidget(count)
            choice = QVBoxLayout()
            choice.setSpacing(2)
            choice.addWidget(button)
            choice.addLayout(below)
            choices.addLayout(choice)
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(6)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        never = QLabel("Clearing cannot be undone.", self)
        never.setObjectName("hint")
        self.close_button = QPushButton("Close", self)
        self.clear_button = QPushButton("Clear…", self)
        self.clear_button.setObjectName("danger")
        for push in (self.close_button, self.clear_button):
            push.setAutoDefault(False)  # a stray Enter never deletes

        buttons = QHBoxLayout()
        buttons.addWidget(never, 1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addSpacing(6)
        layout.addLayout(choices)
        layout.addStretch(1)
        layout.addWidget(self.busy)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

        self.choices.buttonToggled.connect(lambda *_a: self._update_button())
        self.close_button.clicked.connect(self.reject)
        self.clear_button.clicked.connect(self.clear)
        state.group_changed.connect(self._group_changed)
        self.setMinimumWidth(460)
        self.resize(560, 420)
        self._show_group()
        self.busy.hide()
        self._update_button()

    @property
    def busy_clearing(self) -> bool:
        return self._job is not None

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.recount()

    def _group_changed(self, _group: str) -> None:
        self._show_group()
        self.status.clear()
        if self.isVisible():
            self.recount()

    def _show_group(self) -> None:
        self.intro.setText(
            "Delete a whole kind of memory from group "
            f"<b>{html.escape(self._state.group)}</b>, for good. Ambry shows what goes "
            "and asks before anything is deleted."
        )

    # -- counting ----------------------------------------------------------------

    def recount(self) -> None:
        """Read, in the background, how much each choice would delete."""
        if self._executor.closed or self.busy_clearing:
            return
        group = self._state.group

        def count(service: MemoryService) -> dict[Scope, dict[str, int]]:
            return {scope: clear_counts(service, group, scope) for scope in Scope}

        def failed(exc: BaseException) -> None:
            if not isinstance(exc, AmbryError):
                raise exc
            self._say(False, f"Could not count: {exc.message}")

        self._executor.submit(
            group, count, lambda found: self._show_counts(group, found), failed, self.recount
        )

    def _show_counts(self, group: str, found: dict[Scope, dict[str, int]]) -> None:
        if group != self._state.group:
            self.recount()
            return
        self.counts, self._counted_group = found, group
        for scope, label in self.count_labels.items():
            listed = cleared_text(found[scope])
            label.setText(listed[:1].upper() + listed[1:] + "." if listed else "Nothing to delete.")
        self._update_button()
        self.counted.emit()

    def _size(self, scope: Scope | None) -> int:
        if scope is None or self._counted_group != self._state.group:
            return 0
        return sum(self.counts.get(scope, {}).values())

    def chosen(self) -> Scope | None:
        return next((s for s, b in self.buttons.items() if b.isChecked()), None)

    def choose(self, scope: Scope) -> None:
        self.buttons[scope].setChecked(True)

    def _update_button(self) -> None:
        size = self._size(self.chosen())
        self.clear_button.setText(f"Delete {plural(size, 'item')}…" if size else "Clear…")
        self.clear_button.setEnabled(bool(size) and not self.busy_clearing)

    # -- clearing ----------------------------------------------------------------

    def clear(self) -> None:
        """Ask with the counts (everything: twice), then delete the chosen kind."""
        scope = self.chosen()
        if scope is None or not self.clear_button.isEnabled():
            return
        group = self._counted_group
        listing = cleared_text(self.counts[scope])
        if not messages.confirm(
            self,
            "Clear",
            f"Delete {listing} from group {group!r}?\n\n"
            "This cannot be undone: Ctrl+Z does not bring them back.",
            "Delete",
        ):
            return
        if scope is Scope.ALL and not messages.confirm(
            self,
            "Clear everything",
            f"Really delete everything in group {group!r}? Its memories, conversation "
            "turns, threads, handoffs, attachment receipts and claims all go, and none of "
            "it can be brought back.",
            "Delete everything",
        ):
            return
        self._job = run_alone(
            self._state.data_dir,
            self._state.config,
            "ambry-clear",
            group,
            as_operator(group, lambda service, caller: service.clear(caller, scope)),
            lambda deleted: self._cleared(group, deleted),
            lambda exc: self._failed(exc),
            self,
        )
        # Its handlers run from the event loop, so never before this.
        self._set_clearing(True)
        self._say(True, f"Deleting {CHOICES[scope][0].lower()} from {group!r}…")

    def _cleared(self, group: str, deleted: dict[str, int]) -> None:
        self._job = None
        self._set_clearing(False)
        self._state.forgot(group)
        listing = cleared_text(deleted)
        text = f"Deleted {listing} from {group!r}." if listing else "There was nothing to delete."
        self._say(True, text)
        messages.info(text)
        self.cleared.emit(text)
        self.recount()

    def _failed(self, exc: BaseException) -> None:
        self._job = None
        self._set_clearing(False)
        if not isinstance(exc, AmbryError):
            raise exc  # a bug: the crash handler shows it
        # One transaction: a clear that failed deleted nothing.
        text = f"Not cleared: {exc.message}"
        self._say(False, text)
        messages.error(text)
        self.recount()

    def _say(self, ok: bool, text: str) -> None:
        self.status.setText(text)
        self.status.setProperty("ok", ok)
        self.status.style().polish(self.status)

    def _set_clearing(self, clearing: bool) -> None:
        self.busy.setVisible(clearing)
        for w in (*self.buttons.values(), self.close_button):
            w.setEnabled(not clearing)
        self._update_button()

    def reject(self) -> None:
        if self.busy_clearing:
            return  # it ends on its own, and says so
        super().reject()

    def shutdown(self) -> None:
        """Stop a running clear (the app is quitting): its transaction rolls back."""
        job, self._job = self._job, None
        if job is not None:
            job.close()
