"""The Claims view: candidates beside their sources, the person's decisions, their history.

A claim is checked against its sources when it is selected (the detail pane
shows what each source said when cited and what it says now, with a badge).
Keys A, R and D accept, reject or defer the selected candidate, confirming
exactly the text and source state on screen: if either changed meanwhile, the
service refuses and the pane shows the new state to review. Retract takes a
verified claim back out of the brief. Ctrl+Z takes back the last accept, by
the same retraction (the app's undo stack, shared with Review and the memory list).
A reject or a defer is final: no decision a receipt can record takes a claim back
to the candidates, so a reject asks first.

**Extract candidates…** reads the current handoff of every thread of the group and
the day summaries, and records the statements in them as candidates, on the
window's background thread, as the person; a message says what it found.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QBrush, QColor, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.claims import gate, modes, records
from core.claims.diagnostics import diagnose
from core.claims.extract import Extraction
from core.claims.model import Claim, ClaimStatus, Decision, Mode, SourceState
from core.claims.sources import FileCheck
from core.claims.verify import ClaimReport, verify_claim
from core.model.changes import Changes
from core.model.errors import AmbryError
from core.service import MemoryService
from desktop.claims.diagnostics import DiagnosticsDialog
from desktop.claims.render import (
    BADGE_COLOURS,
    badge_text,
    extraction_needs_attention,
    extraction_text,
    report_html,
)
from desktop.memories.actions import MemoryActions
from desktop.widgets import messages
from desktop.widgets.flow import FlowLayout
from desktop.widgets.lazy_page import LazyPage
from desktop.widgets.ops import Executor, default_failure
from desktop.widgets.row_menu import SEPARATOR, Command, copy_command, on_right_click, row_menu
from desktop.widgets.stacking import stack_when_narrow
from desktop.widgets.tables import fit_columns, item_table
from desktop.widgets.watch import AppState

_INTRO = (
    "Claims are statements with the sources they came from. A candidate never reaches the "
    "agent's brief; only what you verify does, in enforce mode. Keys: A accept (Ctrl+Z "
    "takes it back), R reject (asks first; final), D defer (stays a candidate)."
)
_COLUMNS = ("Claim", "Kind", "Status", "Sources", "Check")
#: The narrowest the list and the detail get side by side.
LIST_WIDTH = 300
DETAIL_WIDTH = 220
#: Each filter: its name, the statuses it lists, and what the pane says when it lists none.
_FILTERS: tuple[tuple[str, tuple[ClaimStatus, ...], str], ...] = (
    ("Candidates", (ClaimStatus.CANDIDATE,), "No candidate claims wait for a decision."),
    (
        "Verified",
        (ClaimStatus.VERIFIED,),
        "No claim is verified yet: accept a candidate to verify it.",
    ),
    (
        "Rejected and retracted",
        (ClaimStatus.REJECTED, ClaimStatus.RETRACTED),
        "No claim has been rejected or retracted.",
    ),
    ("All", (), "No claims yet."),
)
#: How claims get here, said under every empty list.
_WHERE_FROM = (
    "Agents propose claims with the sources they came from (<code>claim_propose</code>), "
    "and <b>Extract candidates…</b> below records the statements in every thread's "
    "handoff and in the day summaries."
)
#: Rows loaded at once; the list is for review, search finds the rest.
LIMIT = 500
#: The Sources column's width: longer lists are cut short, their tooltip has them all.
SOURCES_WIDTH = 110
#: The extract button's text, and while an extraction runs.
EXTRACT = "Extract candidates…"
EXTRACTING = "Extracting…"


class ClaimsPage(LazyPage):
    """Lists claims of the current group by status; review and decide on the selected one.

    Args:
        state: the shared app state.
        executor: the background thread extraction runs on.
        commands: the app's commands, with the undo stack an accept goes on.
        parent: the parent widget.
    """

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
        self._commands = commands
        self._claims: list[Claim] = []
        self._report: ClaimReport | None = None

        self.intro = intro = QLabel(_INTRO, self)
        intro.setObjectName("hint")
        intro.setWordWrap(True)
        self.filter = QComboBox(self)
        self.filter.setObjectName("claimsFilter")
        self.filter.setAccessibleName("Show claims")
        self.filter.setAccessibleDescription("Which claims the list shows")
        self.filter.addItems([name for name, _, _ in _FILTERS])
        self.mode_label = QLabel(self)
        self.mode_label.setObjectName("claimsMode")
        self.mode_box = QComboBox(self)
        self.mode_box.setObjectName("claimsModeBox")
        self.mode_box.setAccessibleName("Claims mode")
        self.mode_label.setBuddy(self.mode_box)
        self.mode_box.addItems([m.value for m in Mode])
        self.mode_box.setToolTip(
            "Change the claims mode (asks first; the prior setting is backed up)"
        )
        self.rollback_button = QPushButton("Undo last mode change…", self)
        self.rollback_button.setObjectName("flat")
        self.diagnostics_button = QPushButton("Diagnostics…", self)
        self.diagnostics_button.setToolTip(
            "Recurring, conflicting, ready and decayed claims (diagnostic and enforce modes)"
        )
        choice = QHBoxLayout()
        choice.addWidget(QLabel("Mode:", self))
        choice.addWidget(self.mode_box)
        mode_buttons = QHBoxLayout()
        mode_buttons.addWidget(self.rollback_button)
        mode_buttons.addWidget(self.diagnostics_button)
        mode = FlowLayout()
        mode.addLayout(choice)
        mode.addLayout(mode_buttons)
        # The mode's controls go to a second row, together, in a narrow window; in
        # a narrower one (640x400) its two buttons go under the box.
        top = FlowLayout(spacing=12)
        top.addWidget(self.filter)
        top.addWidget(self.mode_label)
        top.addStretch()
        top.addLayout(mode)

        self.table = item_table(_COLUMNS, "claimsTable", self)
        self.table.setAccessibleName("Claims")
        char = self.table.fontMetrics().averageCharWidth()
        #: The widest each column beside the claim gets: the claim's text takes the rest.
        #: A handoff's label names its thread id: sized to its text, the claim had no room.
        badge = max(self.table.fontMetrics().horizontalAdvance(badge_text(s)) for s in SourceState)
        self.column_caps = {1: 12 * char, 2: 11 * char, 3: SOURCES_WIDTH, 4: badge + 2 * char}
        fit_columns(self.table, self.column_caps)
        # Two lines a claim: a narrow list wraps its text before cutting it short.
        self.table.setWordWrap(True)
        rows = self.table.verticalHeader()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setDefaultSectionSize(2 * self.table.fontMetrics().lineSpacing() + 10)
        self.extract_button = QPushButton(EXTRACT, self)
        self.extract_button.setObjectName("claimsExtract")
        self.extract_button.setToolTip(
            "Record the statements in every thread's handoff and in the day summaries as "
            "candidates (runs in the background; nothing read is changed)"
        )
        self.detail = QTextBrowser(self)
        self.detail.setObjectName("claimDetail")
        self.detail.setAccessibleName("Claim details")
        self.detail.setOpenLinks(False)
        # Under the list (640x400), a few lines of the claim and its sources at least.
        self.detail.setMinimumHeight(150)

        self.accept_button = QPushButton("Accept (A)", self)
        self.accept_button.setObjectName("primary")
        self.reject_button = QPushButton("Reject (R)", self)
        self.defer_button = QPushButton("Defer (D)", self)
        self.retract_button = QPushButton("Retract…", self)
        self.retract_button.setObjectName("danger")
        buttons = FlowLayout()
        for button, decision in (
            (self.accept_button, Decision.ACCEPT),
            (self.reject_button, Decision.REJECT),
            (self.defer_button, Decision.DEFER),
            (self.retract_button, Decision.RETRACT),
        ):
            button.clicked.connect(lambda _c=False, d=decision: self.decide(d))
            buttons.addWidget(button)
        #: Each decision's key, answered anywhere on the page.
        self.keys: dict[Decision, QAction] = {}
        for key, decision in (
            ("A", Decision.ACCEPT),
            ("R", Decision.REJECT),
            ("D", Decision.DEFER),
        ):
            action = QAction(self)
            action.setShortcut(QKeySequence(key))
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            action.triggered.connect(lambda _c=False, d=decision: self.decide(d))
            self.addAction(action)
            self.keys[decision] = action
        self.undo_action = commands.undo_action(self, self.undo)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        list_buttons = QHBoxLayout()
        list_buttons.addWidget(self.extract_button)
        list_buttons.addStretch(1)
        left_layout.addLayout(list_buttons)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.detail, 1)
        right_layout.addLayout(buttons)
        split = QSplitter(Qt.Orientation.Horizontal, self)
        split.addWidget(left)
        split.addWidget(right)
        split.setChildrenCollapsible(False)
        # The list keeps the larger share as the window narrows: its claims stay readable.
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([720, 440])
        # Where the list and the detail do not both fit (640x400), the detail and its
        # decisions go under the list rather than squeezing the claims to a letter.
        left.setMinimumWidth(LIST_WIDTH)
        self.stacking = stack_when_narrow(self, split, second_width=DETAIL_WIDTH)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(top)
        layout.addWidget(split, 1)

        self.filter.currentIndexChanged.connect(lambda _i: self._invalidate(reload=True))
        self.mode_box.activated.connect(lambda i: self.change_mode(Mode(self.mode_box.itemText(i))))
        self.rollback_button.clicked.connect(self.roll_back_mode)
        self.diagnostics_button.clicked.connect(self.show_diagnostics)
        self.extract_button.clicked.connect(self.extract)
        self.table.itemSelectionChanged.connect(self._on_selection)
        on_right_click(self.table, self.row_menu)
        state.changed.connect(self._on_changes)
        state.group_changed.connect(lambda _g: self._invalidate(reload=True))

    def _on_changes(self, changes: Changes) -> None:
        if changes.group == self._state.group and (changes.claims or changes.entries):
            self._invalidate()

    # -- the list ---------------------------------------------------------------------

    def refresh(self) -> None:
        self._begin_refresh()
        store = self._state.service.store_for(self._state.group)
        mode = modes.current_mode(store)
        reach = "verified claims reach the brief" if mode.injects else "no claim reaches the brief"
        self.mode_label.setText(f"Claims mode: {mode.value} ({reach})")
        self.mode_box.setCurrentText(mode.value)
        self.diagnostics_button.setEnabled(mode.reports)
        try:
            back = modes.rollback_target(self._state.service, self._state.group)
            tip = (
                f"Put the claims mode back to {back.value}, as it was before the last change"
                if back is not None
                else "No mode change is left to undo"
            )
        except AmbryError as exc:  # a backup that cannot be read: say which, and what to do
            back, tip = None, exc.message
        self.rollback_button.setEnabled(back is not None)
        self.rollback_button.setToolTip(tip)
        keep = self.selected_id()
        statuses = _FILTERS[self.filter.currentIndex()][1]
        self._claims = records.list_claims(store, statuses=statuses, limit=LIMIT)
        # Under a one-status filter the Status column would repeat it on every row.
        self.table.setColumnHidden(2, len(statuses) == 1)
        self.table.clearSelection()
        self.table.setRowCount(len(self._claims))
        for row, claim in enumerate(self._claims):
            # The list uses the receipts' recorded states; the detail hashes files again.
            state = verify_claim(store, claim, files=FileCheck.RECORDED).state
            cells = (
                claim.text,
                claim.kind.value,
                claim.status.value,
                ", ".join(s.label for s in claim.sources),
                badge_text(state),
            )
            for column, text in enumerate(cells):
                cell = QTableWidgetItem(text)
                if column == 0:
                    cell.setToolTip(claim.id)
                if column == 3:
                    cell.setToolTip("\n".join(s.label for s in claim.sources))
                if column == 4:
                    bg, fg = BADGE_COLOURS[state]
                    cell.setBackground(QBrush(QColor(bg)))
                    cell.setForeground(QBrush(QColor(fg)))
                self.table.setItem(row, column, cell)
        fit_columns(self.table, self.column_caps)
        ids = [c.id for c in self._claims]
        if ids:
            self.table.selectRow(ids.index(keep) if keep in ids else 0)
        self._on_selection()

    def select(self, claim_id: str) -> None:
        """Select ``claim_id``, listing every claim if the filter on screen leaves it out."""
        ids = [c.id for c in self._claims]
        if claim_id not in ids and self.filter.currentIndex() != len(_FILTERS) - 1:
            self.filter.setCurrentIndex(len(_FILTERS) - 1)  # All
            if self._stale:  # off screen: the change waited
                self.refresh()
            ids = [c.id for c in self._claims]
        if claim_id in ids:
            self.table.selectRow(ids.index(claim_id))
        else:
            messages.info(f"Claim {claim_id} is no longer listed: it was cleared or forgotten.")

    def selected_id(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self._claims):
            return None
        return self._claims[rows[0].row()].id

    def _on_selection(self) -> None:
        cid = self.selected_id()
        store = self._state.service.store_for(self._state.group)
        self._report = None
        if cid is not None:
            try:
                claim = records.get_claim(store, cid)
            except AmbryError as exc:
                messages.report(exc)
                cid = None
            else:
                self._report = verify_claim(store, claim)
                self.detail.setHtml(report_html(self._report, records.decisions(store, cid)))
        if cid is None and not self._claims:
            none = _FILTERS[self.filter.currentIndex()][2]
            self.detail.setHtml(f"<h3>{none}</h3><p>{_WHERE_FROM}</p>")
        elif cid is None:
            self.detail.setHtml("<p><i>No claim selected.</i></p>")
        status = None if self._report is None else self._report.claim.status
        for button in (self.accept_button, self.reject_button, self.defer_button):
            button.setEnabled(status is ClaimStatus.CANDIDATE)
        self.retract_button.setEnabled(status is ClaimStatus.VERIFIED)

    # -- decisions ----------------------------------------------------------------------

    def row_menu(self) -> QMenu:
        """The right-click menu: the decision buttons, with their keys, and the claim's id."""

        def decision(text: str, button: QPushButton, d: Decision) -> Command:
            key = self.keys.get(d)
            keys = None if key is None else key.shortcut()
            return Command(text, lambda: self.decide(d), button.isEnabled(), keys)

        selected = self.selected_id()
        return row_menu(
            self,
            [
                decision("Accept", self.accept_button, Decision.ACCEPT),
                decision("Reject", self.reject_button, Decision.REJECT),
                decision("Defer", self.defer_button, Decision.DEFER),
                copy_command([] if selected is None else [selected], "claim"),
                SEPARATOR,
                decision("Retract…", self.retract_button, Decision.RETRACT),
            ],
        )

    def decide(self, decision: Decision) -> None:
        """Apply ``decision`` to the claim on screen, confirming what the pane shows."""
        report = self._report
        if report is None:
            return
        if decision is Decision.RETRACT and not messages.confirm(
            self,
            "Retract claim",
            f"Retract “{report.claim.text}”? It leaves the agent's brief at once.",
            "Retract",
        ):
            return
        # The receipts record accept, reject, defer and retract only: nothing takes a
        # rejected claim back to the candidates, so Ctrl+Z cannot, and R asks first.
        if decision is Decision.REJECT and not messages.confirm(
            self,
            "Reject claim",
            f"Reject “{report.claim.text}”? A reject is final: Ctrl+Z does not take it "
            "back. If an agent proposes the statement again, it is a new candidate.",
            "Reject",
        ):
            return
        row = self.table.currentRow()
        try:
            outcome = gate.decide(
                self._state.service,
                self._state.operator(),
                report.claim.id,
                decision,
                confirmed_text=report.claim.text,
                confirmed_state=report.state,
            )
        except AmbryError as exc:
            messages.report(exc)
            self._on_selection()
            return
        if decision is Decision.ACCEPT:
            self._commands.claim_accepted(self._state.group, outcome.claim.id, outcome.claim.text)
            messages.info(f"Verified “{outcome.claim.text}”. Ctrl+Z to undo.")
        elif decision is Decision.REJECT:
            messages.info(f"Rejected “{outcome.claim.text}”.")
        elif decision is Decision.DEFER:
            messages.info(f"Deferred “{outcome.claim.text}”: still a candidate, to decide later.")
        self._invalidate()
        # Work through the list without the mouse: the next row is selected.
        if self._claims:
            self.table.selectRow(min(max(row, 0), len(self._claims) - 1))

    def undo(self) -> None:
        """Take back the last accept (or the memory list's or Review's last step)."""
        self._commands.undo()
        self._invalidate()

    # -- the mode -----------------------------------------------------------------------

    def change_mode(self, target: Mode) -> None:
        """Plan the change, show what it does, and apply it only if the person confirms."""
        service, group = self._state.service, self._state.group
        plan = modes.plan(service, group, target)
        if not plan.changes:
            return
        effects = "\n".join(f"• {line}" for line in modes.effects(target))
        question = (
            f"Change the claims mode of group {group} from {plan.current.value} to "
            f"{target.value}?\n\n{effects}\n\nThe current setting is backed up first; "
            "no claim is verified, retracted or changed."
        )
        if messages.confirm(self, "Change claims mode", question, "Change mode"):
            try:
                done = modes.apply(service, self._state.operator(), target, yes=True)
            except AmbryError as exc:
                messages.report(exc)
            else:
                messages.info(f"Claims mode is now {target.value} (backup: {done.backup})")
        self._invalidate(reload=True)

    def roll_back_mode(self) -> None:
        """Restore the mode the last change replaced, after asking; again, one further."""
        try:
            back = modes.rollback_target(self._state.service, self._state.group)
        except AmbryError as exc:
            messages.report(exc)
            return
        if back is None:
            self._invalidate(reload=True)
            return
        if not messages.confirm(
            self,
            "Undo mode change",
            f"Put the claims mode back to {back.value}, as it was before the last change?",
            "Restore",
        ):
            return
        try:
            done = modes.rollback(self._state.service, self._state.operator(), yes=True)
        except AmbryError as exc:
            messages.report(exc)
        else:
            messages.info(f"Claims mode is back to {done.target.value}")
        self._invalidate(reload=True)

    def show_diagnostics(self) -> None:
        """The read-only diagnostics report, in a dialog (diagnostic and enforce modes)."""
        try:
            report = diagnose(self._state.service.store_for(self._state.group))
        except AmbryError as exc:
            messages.report(exc)
            return
        self.diagnostics = DiagnosticsDialog(report, self)
        self.diagnostics.open()

    # -- extraction ---------------------------------------------------------------------

    @property
    def extracting(self) -> bool:
        return not self.extract_button.isEnabled()

    def extract(self) -> None:
        """Record candidates from every thread's handoff and the day summaries of the group.

        Runs on the window's background thread as the person; when it ends a message
        says what was found and the list shows the new candidates.
        """
        if self.extracting:
            return
        caller = self._state.operator()
        self._set_extracting(True)

        def task(service: MemoryService) -> Extraction:
            return service.extract_claims(caller)

        def failed(exc: BaseException) -> None:
            self._set_extracting(False)
            default_failure(exc)

        def stopped() -> None:
            self._set_extracting(False)
            messages.warning("Extraction was stopped before it finished; nothing was recorded.")

        self._executor.submit(
            caller.group, task, lambda r: self._extracted(caller.group, r), failed, stopped
        )

    def _set_extracting(self, busy: bool) -> None:
        self.extract_button.setEnabled(not busy)
        self.extract_button.setText(EXTRACTING if busy else EXTRACT)

    def _extracted(self, group: str, result: Extraction) -> None:
        self._set_extracting(False)
        text = extraction_text(result)
        if group == self._state.group:
            # The commit was the background thread's: the views learn of it by looking.
            self._state.poll()
            statuses = _FILTERS[self.filter.currentIndex()][1]
            if result.created and statuses and ClaimStatus.CANDIDATE not in statuses:
                self.filter.setCurrentIndex(0)  # the list shows the new candidates
            else:
                self._invalidate()
        else:
            text = f"Group {group}: {text}"
        (messages.warning if extraction_needs_attention(result) else messages.info)(text)
