"""Forget a topic: everything in the group that mentions it, listed, then deleted for good.

The app's ``ambry forget``. As the person types (after a pause), or at once on
Enter, the plan (``core.memory.forgetting.plan_forget``) and what it names
(``core.continuity.forget_preview``) are read on the query thread and listed.
The forget runs after a second, explicit yes, alone on a thread and connection
of its own (:func:`~desktop.widgets.ops.run_alone`), through
``MemoryService.forget`` in the person's session. Just before it deletes, the
worker plans again: if what mentions the topic changed since it was listed
(an agent wrote or deleted meanwhile), nothing is deleted and the new list is
shown, so what goes is always what the person confirmed. Afterwards the
group's undo history goes (:meth:`~desktop.widgets.watch.AppState.forgot`): an
undo must never bring back a memory about a forgotten topic.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.continuity import forget_preview
from core.continuity.forget_preview import ForgetPreview
from core.memory.forgetting import ForgetPlan, plan_counts, plan_forget
from core.model.errors import AmbryError
from core.model.text import plural
from core.service import Caller, MemoryService
from core.storage.db import backups_note
from core.storage.fts import STOPWORDS, query_terms
from desktop.settings.forget_list import ForgetList
from desktop.widgets import messages
from desktop.widgets.ops import Executor, as_operator, run_alone
from desktop.widgets.watch import AppState

#: The pause in typing after which the plan is read (Enter reads it at once).
LOOK_DELAY_MS = 300


def _key(plan: ForgetPlan) -> tuple[object, ...]:
    """What a plan deletes, by id: two plans with the same key take the same things."""
    return (
        tuple(e.id for e in plan.entries),
        plan.exchange_ids,
        plan.claim_ids,
        plan.trash_ids,
        plan.handoff_versions,
        plan.session_handoff_ids,
    )


@dataclass(frozen=True)
class Forgotten:
    """What a forget job did: ``done``, or nothing because the plan had changed to ``fresh``."""

    done: bool
    fresh: ForgetPreview | None = None


class ForgetDialog(QDialog):
    """Type a topic, read what mentions it, forget it all (after asking).

    Enter looks at once, Escape closes (not while a forget runs).

    Args:
        state: the shared app state (service, current group).
        executor: the query thread the plans are read on.
        parent: the parent widget.

    Signals:
        forgot(str): a forget ended, deleting what it says.
        looked(): a plan, or the reason there is none, is on screen.
    """

    forgot = Signal(str)
    looked = Signal()

    def __init__(self, state: AppState, executor: Executor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Forget a topic")
        self.setObjectName("forgetDialog")
        self._state, self._executor = state, executor
        #: The plan on screen, its group and topic; None while there is none.
        self.preview: ForgetPreview | None = None
        self._shown_for: tuple[str, str] = ("", "")
        self._looking = False
        self._again = False
        self._job: Executor | None = None

        self.intro = QLabel(self)
        self.intro.setWordWrap(True)
        self.topic = QLineEdit(self)
        self.topic.setObjectName("forgetTopic")
        self.topic.setPlaceholderText("A name, a place, a word…")
        self.topic.setClearButtonEnabled(True)
        self.topic.setAccessibleName("Topic to forget")
        self.look_button = QPushButton("Look", self)
        self.busy = QProgressBar(self)
        self.busy.setRange(0, 0)
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(6)
        self.busy.hide()
        self.counts = QLabel(self)
        self.counts.setObjectName("counts")
        self.counts.setWordWrap(True)
        self.caution = QLabel(self)
        self.caution.setObjectName("warningLabel")
        self.caution.setWordWrap(True)
        self.tree = ForgetList(self)
        self.empty = QLabel(self)
        self.empty.setObjectName("hint")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        never = QLabel("Forgetting cannot be undone.", self)
        never.setObjectName("hint")
        self.close_button = QPushButton("Close", self)
        self.forget_button = QPushButton("Forget…", self)
        self.forget_button.setObjectName("danger")
        # Enter looks; only a click (or Space on the focused button) forgets.
        for button in (self.look_button, self.close_button, self.forget_button):
            button.setAutoDefault(False)

        search = QHBoxLayout()
        search.addWidget(self.topic, 1)
        search.addWidget(self.look_button)
        buttons = QHBoxLayout()
        buttons.addWidget(never, 1)
        buttons.addWidget(self.close_button)
        buttons.addWidget(self.forget_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(search)
        layout.addWidget(self.busy)
        layout.addWidget(self.counts)
        layout.addWidget(self.caution)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.status)
        layout.addLayout(buttons)

        self._pause = QTimer(self)
        self._pause.setSingleShot(True)
        self._pause.setInterval(LOOK_DELAY_MS)
        self._pause.timeout.connect(self.look)
        self.topic.textEdited.connect(self._typed)
        self.topic.returnPressed.connect(self.look)
        self.topic.installEventFilter(self)
        self.look_button.clicked.connect(self.look)
        self.close_button.clicked.connect(self.reject)
        self.forget_button.clicked.connect(self.forget)
        # A bound method: the connection goes with the dialog.
        state.group_changed.connect(self._group_changed)
        self.setMinimumSize(480, 360)
        self.resize(720, 520)
        self._show_intro()
        self._show_nothing("")

    # -- looking -----------------------------------------------------------------

    @property
    def busy_forgetting(self) -> bool:
        return self._job is not None

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._show_intro()
        self.topic.setFocus()
        self.topic.selectAll()
        if self.topic.text().strip():
            self.look()  # opened again: what the topic takes may have changed since

    def _show_intro(self) -> None:
        self.intro.setText(
            f"Everything in group <b>{html.escape(self._state.group)}</b> that contains every word "
            "of the topic is deleted for good: memories (their old versions too), "
            "conversation turns, thread and session handoffs, the claims drawn from them, "
            "and memories agents deleted that wait in the trash; thread titles and speaker "
            "names lose it. It is all listed here first."
        )

    def _typed(self, _text: str) -> None:
        # What is listed is for the words before: the button waits for the new ones.
        self.status.clear()
        self._update_button()
        self._pause.start()

    def _group_changed(self, _group: str) -> None:
        self._show_intro()
        self.status.clear()
        if self.isVisible():
            self.look()

    def look(self) -> None:
        """Read, in the background, what the topic typed would forget in the current group."""
        self._pause.stop()
        if self.busy_forgetting:
            return
        group, topic = self._state.group, self.topic.text().strip()
        if not topic:
            self._show_nothing("")
            return
        if not query_terms(topic):
            self._show_nothing(f"“{topic}” has no word to look for: type a name or a word.")
            return
        if self._looking:
            self._again = True  # the answer under way is for other words: ask again after it
            return
        if self._executor.closed:
            return
        self._looking, self._again = True, False
        self._set_looking(True)

        def read(service: MemoryService) -> ForgetPreview:
            plan = plan_forget(service, group, topic)
            return forget_preview.preview(service, group, plan)

        def failed(exc: BaseException) -> None:
            self._looking = False
            self._set_looking(False)
            if not isinstance(exc, AmbryError):
                raise exc  # a bug: the crash handler shows it
            self._show_nothing(f"Could not look: {exc.message}")

        self._executor.submit(
            group,
            read,
            lambda found: self._looked(group, topic, found),
            failed,
            self._cancelled,
        )

    def _cancelled(self) -> None:
        # A search typed in the window stopped the query thread's work: ask again.
        self._looking = False
        self._set_looking(False)
        self.look()

    def _looked(self, group: str, topic: str, found: ForgetPreview) -> None:
        self._looking = False
        self._set_looking(False)
        if self._again or (group, topic) != (self._state.group, self.topic.text().strip()):
            self.look()
            return
        self.show_preview(group, topic, found)

    def _set_looking(self, looking: bool) -> None:
        self.busy.setVisible(looking)

    # -- showing -----------------------------------------------------------------

    def _show_nothing(self, why: str) -> None:
        """No plan on screen; ``why`` says why (empty: the topic field is empty)."""
        self.preview = None
        self._shown_for = ("", "")
        self.tree.clear()
        self.tree.hide()
        self.counts.hide()
        self.caution.hide()
        self.empty.setText(
            why
            or "Type a topic above and press Enter: everything that contains all of its "
            "words is listed here before anything is deleted."
        )
        self.empty.show()
        self._update_button()
        self.looked.emit()

    def show_preview(self, group: str, topic: str, found: ForgetPreview) -> None:
        """List ``found``, the plan for ``topic`` in ``group``."""
        plan = found.plan
        if plan.empty:
            why = f"Nothing in {group!r} mentions “{topic}”."
            if plan.sealed_unsearched:
                # Not "nothing mentions it": their encrypted text was not looked at.
                sealed = plural(
                    plan.sealed_unsearched, "private or secret memory", "private or secret memories"
                )
                why = (
                    f"Nothing in {group!r} mentions “{topic}” where it can look: the words of "
                    f"{sealed} are encrypted, so only their tags were searched. Read them in "
                    "Memories, and delete any about it there."
                )
            self._show_nothing(why)
            return
        self.preview, self._shown_for = found, (group, topic)
        self.counts.setText(f"This deletes {plan_counts(plan)}.")
        self.counts.show()
        common = all(t in STOPWORDS for t in query_terms(topic))
        self.caution.setText(
            f"Every word of “{topic}” is a common one, so it matches a lot: read the list "
            "before you forget it."
            if common
            else ""
        )
        self.caution.setVisible(common)
        self.tree.show_preview(found)
        self.empty.hide()
        self.tree.show()
        self._update_button()
        self.looked.emit()

    def _update_button(self) -> None:
        shown = self.preview is not None and self._shown_for == (
            self._state.group,
            self.topic.text().strip(),
        )
        size = self.preview.plan.size if self.preview is not None and shown else 0
        self.forget_button.setText(f"Forget {plural(size, 'item')}…" if size else "Forget…")
        self.forget_button.setEnabled(bool(size) and not self.busy_forgetting)
        self.forget_button.setToolTip(
            "Delete everything listed, for good: it cannot be undone" if size else ""
        )

    # -- forgetting --------------------------------------------------------------

    def forget(self) -> None:
        """Ask, then delete everything listed; nothing is deleted without the second yes."""
        if not self.forget_button.isEnabled() or self.preview is None:
            return
        group, topic = self._shown_for
        plan = self.preview.plan
        question = (
            f"Forget everything about “{topic}” in group {group!r}?\n\n"
            f"This deletes {plan_counts(plan)}. Agents will no longer find any of it.\n\n"
            "This cannot be undone: Ctrl+Z does not bring it back."
        )
        if not messages.confirm(
            self, "Forget a topic", question, f"Forget {plural(plan.size, 'item')}"
        ):
            return

        def work(service: MemoryService, caller: Caller) -> Forgotten:
            fresh = plan_forget(service, group, topic)
            if _key(fresh) != _key(plan):
                return Forgotten(False, forget_preview.preview(service, group, fresh))
            service.forget(caller, fresh)
            return Forgotten(True)

        self._job = run_alone(
            self._state.data_dir,
            self._state.config,
            "ambry-forget",
            group,
            as_operator(group, work),
            lambda outcome: self._forgot(group, topic, plan, outcome),
            lambda exc: self._failed(group, exc),
            self,
        )
        # Its handlers run from the event loop, so never before this.
        self._set_forgetting(f"Forgetting “{topic}”…")

    def _forgot(self, group: str, topic: str, plan: ForgetPlan, outcome: Forgotten) -> None:
        self._job = None
        self._set_forgetting(None)
        if not outcome.done:
            assert outcome.fresh is not None
            self.show_preview(group, topic, outcome.fresh)
            self.caution.setText(
                f"What mentions “{topic}” changed since it was listed (an agent wrote or "
                "deleted something meanwhile), so nothing was forgotten. This is the list "
                "now: read it, then forget again."
            )
            self.caution.show()
            return
        self._state.forgot(group)
        text = f"Forgot {plan_counts(plan)} about “{topic}” from {group!r}."
        self._show_nothing(f"Nothing in {group!r} mentions “{topic}” now.")
        copies = backups_note(self._state.data_dir.group_db(group))
        if copies:
            self.caution.setText(f"Note: {copies}.")
            self.caution.show()
        self._say(True, text)
        messages.info(text)
        self.forgot.emit(text)

    def _failed(self, group: str, exc: BaseException) -> None:
        self._job = None
        self._set_forgetting(None)
        if not isinstance(exc, AmbryError):
            raise exc  # a bug: the crash handler shows it
        # The deletes are one transaction, so a forget that failed took nothing (a
        # lock held too long, a full disk). The list is read again to show what is there.
        text = f"Not forgotten: {exc.message}"
        self._say(False, text)
        messages.error(text)
        if group == self._state.group:
            self._state.poll()  # in case the failure came after the commit, in the scrub
        self.look()

    def _say(self, ok: bool, text: str) -> None:
        self.status.setText(text)
        self.status.setProperty("ok", ok)
        self.status.style().polish(self.status)

    def _set_forgetting(self, status: str | None) -> None:
        forgetting = status is not None
        self.busy.setVisible(forgetting)
        for w in (self.topic, self.look_button, self.close_button, self.tree):
            w.setEnabled(not forgetting)
        if status is not None:
            self._say(True, status)
        self._update_button()

    # -- keys and lifetime -------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # Down moves from the topic into the list, as in the memory page's search.
        if (
            watched is self.topic
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() == Qt.Key.Key_Down
            and self.tree.isVisible()
        ):
            self.tree.setFocus()
            return True
        return super().eventFilter(watched, event)

    def reject(self) -> None:
        if self.busy_forgetting:
            return  # Escape while it deletes: it ends on its own, and says so
        super().reject()

    def shutdown(self) -> None:
        """Stop a running forget (the app is quitting): its transaction rolls back."""
        job, self._job = self._job, None
        if job is not None:
            job.close()
