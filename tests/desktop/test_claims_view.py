"""The Claims view: candidates beside their sources, keyboard decisions, badges, history,
and extraction from handoffs and summaries."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.claims import gate, records
from core.claims.extract import Counts, Extraction
from core.claims.model import ClaimStatus, Decision, Origin
from core.continuity import context as continuity
from core.continuity import handoffs
from core.continuity.episodes import log_exchange
from core.model.entries import Actor
from core.model.errors import Forbidden
from core.service import Caller, MemoryService
from desktop.claims.render import extraction_needs_attention, extraction_text
from desktop.claims.view import EXTRACT, EXTRACTING
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs

#: A handoff with three statements; the next step and the open question are not ones.
HANDOFF = """# Billing rewrite

## Configuration
- The staging database runs Postgres 16 on port 5433.
- Invoices are rendered by the pdf-worker service.

## Preferences
- The person wants short answers without preambles.

## Next steps
- I will migrate the billing tables tomorrow.
- [ ] Ask Dana whether the VAT rules changed.
"""
STATEMENTS = {
    "The staging database runs Postgres 16 on port 5433.",
    "Invoices are rendered by the pdf-worker service.",
    "The person wants short answers without preambles.",
}


def _claim(service: MemoryService, agent: Caller, said: str, claim: str) -> str:
    seq = log_exchange(service, agent, "user", said).exchange.id
    args = {"text": claim, "kind": "fact", "sources": [{"kind": "exchange", "id": seq}]}
    return gate.propose(service, agent, args).claim.id


def rows(window: MainWindow) -> list[str]:
    table = window.claims.table
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_review_with_keys_badges_and_history(
    qtbot: QtBot, service: MemoryService, window: MainWindow, dialogs: Dialogs, tmp_path: Path
) -> None:
    agent = service.open_session("main", Actor.AGENT, "view-test")
    exact = _claim(service, agent, "The cache is cold on Mondays.", "The cache is cold on Mondays")
    partial = _claim(
        service,
        agent,
        "The person prefers dark mode.",
        "The person prefers dark mode and short answers",
    )
    wrong = _claim(service, agent, "Lunch is at noon.", "The office is at 44 Elm Street")
    window.resize(1280, 720)
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: len(rows(window)) == 3)
    assert window.nav.item(Nav.CLAIMS).text() == "Claims"
    badges = {page.table.item(r, 0).text(): page.table.item(r, 4).text() for r in range(3)}
    assert badges == {
        "The cache is cold on Mondays": "✓ exact match",
        "The person prefers dark mode and short answers": "≈ partial",
        "The office is at 44 Elm Street": "⚠ drifted",
    }
    # The detail shows the claim beside what its source said then and says now.
    page.table.selectRow(rows(window).index("The person prefers dark mode and short answers"))
    detail = page.detail.toPlainText()
    assert "Cited (then)" in detail and "Says now" in detail
    assert "The person prefers dark mode." in detail and "narrow" in detail
    qtbot.waitUntil(lambda: page.mode_label.width() >= page.mode_label.sizeHint().width())
    assert page.mode_label.text() == "Claims mode: observe (no claim reaches the brief)"
    if os.environ.get("AMBRY_SCREENSHOT_DIR"):
        window.grab().save(str(Path(os.environ["AMBRY_SCREENSHOT_DIR"]) / "claims-view.png"))

    # A unsupported claim cannot be accepted: the key changes nothing.
    page.table.selectRow(rows(window).index("The office is at 44 Elm Street"))
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_A)
    store = service.store_for("main")
    assert records.get_claim(store, wrong).status is ClaimStatus.CANDIDATE
    qtbot.keyClick(page.table, Qt.Key.Key_R)
    assert records.get_claim(store, wrong).status is ClaimStatus.REJECTED

    page.table.selectRow(rows(window).index("The cache is cold on Mondays"))
    qtbot.keyClick(page.table, Qt.Key.Key_A)
    assert records.get_claim(store, exact).status is ClaimStatus.VERIFIED
    qtbot.waitUntil(lambda: "The cache is cold on Mondays" not in rows(window))

    page.table.selectRow(rows(window).index("The person prefers dark mode and short answers"))
    qtbot.keyClick(page.table, Qt.Key.Key_D)
    assert records.get_claim(store, partial).deferred_at is not None

    # Verified: the filter lists it, with its decision receipt; retract asks first.
    page.filter.setCurrentIndex(1)
    qtbot.waitUntil(lambda: rows(window) == ["The cache is cold on Mondays"])
    page.table.selectRow(0)
    assert "accept_verified by the operator" in page.detail.toPlainText()
    assert not page.accept_button.isEnabled() and page.retract_button.isEnabled()
    dialogs.answer = False
    page.retract_button.click()
    assert records.get_claim(store, exact).status is ClaimStatus.VERIFIED
    dialogs.answer = True
    page.retract_button.click()
    assert records.get_claim(store, exact).status is ClaimStatus.RETRACTED
    qtbot.waitUntil(lambda: rows(window) == [])


def test_an_agent_proposal_appears_live_and_stale_reviews_are_refused(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    agent = service.open_session("main", Actor.AGENT, "view-test")
    window.go(Nav.CLAIMS)
    cid = _claim(service, agent, "Deploys go through staging.", "Deploys go through staging")
    qtbot.waitUntil(lambda: rows(window) == ["Deploys go through staging"])
    page = window.claims
    page.table.selectRow(0)
    # The person decides elsewhere (the CLI) while the pane still shows a candidate.
    gate.decide(service, operator, cid, Decision.REJECT)
    page.decide(Decision.ACCEPT)
    assert records.get_claim(service.store_for("main"), cid).status is ClaimStatus.REJECTED


def test_an_accept_is_taken_back_with_ctrl_z(
    qtbot: QtBot,
    service: MemoryService,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    agent = service.open_session("main", Actor.AGENT, "view-test")
    cid = _claim(service, agent, "The cache is cold on Mondays.", "The cache is cold on Mondays")
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: rows(window) == ["The cache is cold on Mondays"])
    page.table.selectRow(0)
    page.table.setFocus()
    store = service.store_for("main")
    assert not page.undo_action.isEnabled()
    qtbot.keyClick(page.table, Qt.Key.Key_A)
    assert records.get_claim(store, cid).status is ClaimStatus.VERIFIED
    assert shown[-1] == ("info", "Verified “The cache is cold on Mondays”. Ctrl+Z to undo.")
    assert window.acts["undo"].text() == "Undo claim accept"

    # Out of the trusted lane by the same workflow in reverse: a retract, with its receipt.
    qtbot.keyClick(page.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert records.get_claim(store, cid).status is ClaimStatus.RETRACTED
    receipts = records.decisions(store, cid)
    assert [d.decision for d in receipts] == [Decision.ACCEPT, Decision.RETRACT]
    assert receipts[-1].note == "undo of the accept (Ctrl+Z)"
    assert shown[-1][1].startswith("Took back the accept of “The cache is cold on Mondays”")
    assert window.nav.currentRow() == Nav.CLAIMS  # the page stays on screen
    assert not page.undo_action.isEnabled() and not window.acts["undo"].isEnabled()


def test_an_accept_changed_since_is_not_taken_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    agent = service.open_session("main", Actor.AGENT, "view-test")
    cid = _claim(service, agent, "Deploys go through staging.", "Deploys go through staging")
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: rows(window) == ["Deploys go through staging"])
    page.table.selectRow(0)
    page.decide(Decision.ACCEPT)
    # Retracted meanwhile, with `ambry claims retract` say: Ctrl+Z has nothing left to do.
    text = "Deploys go through staging"
    gate.decide(service, operator, cid, Decision.RETRACT, confirmed_text=text)
    window.edit.undo()  # as Edit → Undo does
    assert len(records.decisions(service.store_for("main"), cid)) == 2
    assert shown[-1][0] == "error" and "Could not take back the accept" in shown[-1][1]
    assert not window.acts["undo"].isEnabled()
    assert window.nav.currentRow() == Nav.CLAIMS


def test_the_person_changes_the_mode_after_a_confirmation_and_can_undo_it(
    qtbot: QtBot, service: MemoryService, window: MainWindow, dialogs: Dialogs
) -> None:
    from core.claims import modes
    from core.claims.model import Mode

    window.go(Nav.CLAIMS)
    page = window.claims
    store = service.store_for("main")
    qtbot.waitUntil(lambda: page.mode_box.currentText() == "observe")
    assert not page.rollback_button.isEnabled()  # nothing to undo yet
    dialogs.answer = False
    page.mode_box.setCurrentText("enforce")
    page.mode_box.activated.emit(page.mode_box.currentIndex())
    assert "from observe to enforce" in dialogs.asked[-1]
    assert modes.current_mode(store) is Mode.OBSERVE
    qtbot.waitUntil(lambda: page.mode_box.currentText() == "observe")  # put back
    dialogs.answer = True
    page.mode_box.setCurrentText("enforce")
    page.mode_box.activated.emit(page.mode_box.currentIndex())
    assert modes.current_mode(store) is Mode.ENFORCE
    qtbot.waitUntil(lambda: "enforce" in page.mode_label.text())
    assert len(modes.backups(service, "main")) == 1 and page.rollback_button.isEnabled()
    qtbot.mouseClick(page.rollback_button, Qt.MouseButton.LeftButton)
    assert modes.current_mode(store) is Mode.OBSERVE
    qtbot.waitUntil(lambda: page.mode_box.currentText() == "observe")


def test_undo_walks_back_through_mode_changes_and_stops_at_the_first(
    qtbot: QtBot, service: MemoryService, window: MainWindow, dialogs: Dialogs
) -> None:
    from core.claims import modes
    from core.claims.model import Mode

    window.go(Nav.CLAIMS)
    page = window.claims
    store = service.store_for("main")
    dialogs.answer = True
    for target in ("diagnostic", "enforce"):
        page.mode_box.setCurrentText(target)
        page.mode_box.activated.emit(page.mode_box.currentIndex())
    # Choosing the mode already set asks nothing and writes no backup.
    asked = len(dialogs.asked)
    page.mode_box.setCurrentText("enforce")
    page.mode_box.activated.emit(page.mode_box.currentIndex())
    assert len(dialogs.asked) == asked and len(modes.backups(service, "main")) == 2
    for before in (Mode.DIAGNOSTIC, Mode.OBSERVE):
        qtbot.waitUntil(page.rollback_button.isEnabled)
        qtbot.mouseClick(page.rollback_button, Qt.MouseButton.LeftButton)
        assert f"back to {before.value}, as it was before the last change" in dialogs.asked[-1]
        assert modes.current_mode(store) is before
        qtbot.waitUntil(lambda b=before: page.mode_box.currentText() == b.value)
    qtbot.waitUntil(lambda: not page.rollback_button.isEnabled())
    assert page.rollback_button.toolTip() == "No mode change is left to undo"


def test_diagnostics_show_recurring_and_ready_candidates_read_only(
    qtbot: QtBot, service: MemoryService, window: MainWindow, operator: Caller
) -> None:
    from core.claims import modes

    agent = service.open_session("main", Actor.AGENT, "view-test")
    cid = _claim(service, agent, "We deploy on Fridays.", "We deploy on Fridays")
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: rows(window) == ["We deploy on Fridays"])
    assert not page.diagnostics_button.isEnabled()  # observe mode does not report
    modes.apply(service, operator, "diagnostic", yes=True)
    qtbot.waitUntil(page.diagnostics_button.isEnabled)
    before = records.get_claim(service.store_for("main"), cid)
    qtbot.mouseClick(page.diagnostics_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.diagnostics.isVisible())
    text = page.diagnostics.text.toPlainText()
    assert "Ready (1)" in text and "We deploy on Fridays" in text and "Conflicting (0)" in text
    assert records.get_claim(service.store_for("main"), cid) == before  # nothing changed
    page.diagnostics.reject()


# -- extraction ----------------------------------------------------------------------------


def _thread_with_handoff(service: MemoryService, agent: Caller, markdown: str) -> str:
    entry = continuity.enter_thread(service, agent, "Billing rewrite")
    assert entry.thread is not None
    handoffs.write_handoff(service, entry.caller, entry.thread.id, markdown)
    return entry.thread.id


def test_extract_finds_candidates_in_a_handoff_and_a_second_run_adds_none(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    _thread_with_handoff(service, agent_caller, HANDOFF)
    window.resize(1280, 720)
    window.go(Nav.CLAIMS)
    page = window.claims
    page.filter.setCurrentIndex(1)  # Verified: the new candidates bring the list back
    qtbot.waitUntil(lambda: page.table.rowCount() == 0)
    assert page.extract_button.text() == EXTRACT
    qtbot.mouseClick(page.extract_button, Qt.MouseButton.LeftButton)
    # It runs in the background: the button is busy until the result is back.
    assert not page.extract_button.isEnabled() and page.extract_button.text() == EXTRACTING
    qtbot.waitUntil(lambda: set(rows(window)) == STATEMENTS)
    assert page.extract_button.isEnabled() and page.extract_button.text() == EXTRACT
    # Its whole text fits again once the layout catches up.
    button = page.extract_button
    qtbot.waitUntil(lambda: button.width() >= button.sizeHint().width())
    assert page.filter.currentText() == "Candidates"
    # Long handoff labels are cut short rather than pushing the claims out of sight;
    # the Status column is left out while the filter shows a single status.
    assert page.table.isColumnHidden(2) and not page.table.horizontalScrollBar().isVisible()
    assert "handoff thr-" in page.table.item(0, 3).toolTip()
    found = "Found 3 statements in 1 handoff: 3 new candidates."
    assert ("info", found) in shown
    store = service.store_for("main")
    made = records.list_claims(store)
    assert {c.origin for c in made} == {Origin.EXTRACTION}
    assert {c.status for c in made} == {ClaimStatus.CANDIDATE}
    if os.environ.get("AMBRY_SCREENSHOT_DIR"):
        window.grab().save(str(Path(os.environ["AMBRY_SCREENSHOT_DIR"]) / "claims-extract.png"))

    # The same handoff again: every statement is known, nothing is added.
    shown.clear()
    qtbot.mouseClick(page.extract_button, Qt.MouseButton.LeftButton)
    again = "Found 3 statements in 1 handoff: no new candidates, 3 already known."
    qtbot.waitUntil(lambda: ("info", again) in shown)
    assert page.extract_button.text() == EXTRACT
    assert len(records.list_claims(store)) == 3 and len(rows(window)) == 3


def test_extract_from_the_palette_says_where_candidates_come_from_when_none_are_found(
    qtbot: QtBot, window: MainWindow, shown: list[tuple[str, str]]
) -> None:
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.palette_dialog
    qtbot.waitUntil(palette.isVisible)
    qtbot.keyClicks(palette.search, "extract")
    assert palette.shown_names() == ["Claims: extract candidates from handoffs and summaries"]
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert window.pages.currentWidget() is window.claims
    qtbot.waitUntil(lambda: bool(shown))
    [(level, text)] = shown
    assert level == "warning"
    assert text.startswith("Nothing to extract from: no thread has a handoff")
    assert "“Compress now” in Layers" in text and "thread handoffs" in text
    assert window.banner.isVisible() and window.banner.text.text() == text
    assert window.claims.extract_button.isEnabled()


def test_extract_failure_shows_the_error_and_frees_the_button(
    qtbot: QtBot,
    window: MainWindow,
    shown: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(_self: MemoryService, _caller: Caller, _thread: str | None = None) -> Extraction:
        raise Forbidden("extraction is switched off here")

    monkeypatch.setattr(MemoryService, "extract_claims", refuse)
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.mouseClick(page.extract_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(page.extract_button.isEnabled)
    assert ("error", "extraction is switched off here") in shown
    assert page.extract_button.text() == EXTRACT


@pytest.mark.parametrize(
    ("handoffs_read", "summaries_read", "statements", "created", "unsourced", "expected"),
    [
        (
            3,
            4,
            7,
            5,
            0,
            "Found 7 statements in 3 handoffs and 4 day summaries: "
            "5 new candidates, 2 already known.",
        ),
        (0, 1, 1, 1, 0, "Found 1 statement in 1 day summary: 1 new candidate."),
        (
            2,
            3,
            0,
            0,
            0,
            "No statements found in 2 handoffs and 3 day summaries. Candidates come from",
        ),
        (
            0,
            2,
            0,
            0,
            2,
            "No statements found in 2 day summaries. Candidates come from",
        ),
        (
            1,
            2,
            2,
            2,
            2,
            "Found 2 statements in 1 handoff and 2 day summaries: 2 new candidates. "
            "2 day summaries were built",
        ),
    ],
)
def test_extraction_message(
    handoffs_read: int,
    summaries_read: int,
    statements: int,
    created: int,
    unsourced: int,
    expected: str,
) -> None:
    result = Extraction(
        Counts(handoffs_read, 0, 0, 0),
        Counts(summaries_read, statements, created, 0),
        unsourced,
        (),
    )
    text = extraction_text(result)
    assert text.startswith(expected)
    tail = (
        "2 day summaries were built before points recorded their turns, so they gave nothing; "
        "the next compression pass (“Compress now” in Layers) lets them yield claims."
    )
    assert text.endswith(tail) is bool(unsourced)
    # Nothing found, or summaries to draw again: a warning, shown in the banner.
    assert extraction_needs_attention(result) is (not statements or bool(unsourced))


def test_an_empty_list_says_what_belongs_there_and_how_claims_arrive(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: "No candidate claims" in page.detail.toPlainText())
    assert "claim_propose" in page.detail.toPlainText()
    assert "Extract candidates" in page.detail.toPlainText()
    page.filter.setCurrentIndex(1)  # Verified
    qtbot.waitUntil(lambda: "No claim is verified yet" in page.detail.toPlainText())


def test_a_source_deleted_since_says_its_quote_went_with_it(
    qtbot: QtBot, service: MemoryService, window: MainWindow
) -> None:
    from core.memory.forgetting import Scope

    agent = service.open_session("main", Actor.AGENT, "view-test")
    _claim(service, agent, "The spare key hangs by the door.", "The spare key hangs by the door")
    operator = service.open_session("main", Actor.OPERATOR)
    service.clear(operator, Scope.EPISODIC)  # the cited turn goes, and its quote with it
    window.resize(1280, 720)
    window.go(Nav.CLAIMS)
    page = window.claims
    qtbot.waitUntil(lambda: rows(window) == ["The spare key hangs by the door"])
    page.table.selectRow(0)
    detail = page.detail.toPlainText()
    assert "not kept: the source was deleted" in detail
    assert "hangs by the door." not in detail.split("Cited (then)")[1]


def test_a_reject_asks_first_and_a_reject_or_defer_is_final(
    qtbot: QtBot,
    service: MemoryService,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    agent = service.open_session("main", Actor.AGENT, "view-test")
    wrong = _claim(service, agent, "Lunch is at noon.", "The office is at 44 Elm Street")
    later = _claim(service, agent, "The cache is cold on Mondays.", "The cache is cold on Mondays")
    window.resize(1280, 720)
    window.go(Nav.CLAIMS)
    page = window.claims
    assert "R reject (asks first; final)" in page.intro.text()
    qtbot.waitUntil(lambda: len(rows(window)) == 2)
    store = service.store_for("main")
    page.table.selectRow(rows(window).index("The office is at 44 Elm Street"))
    page.table.setFocus()
    # No receipt can take a rejected claim back to the candidates: R asks first.
    dialogs.answer = False
    qtbot.keyClick(page.table, Qt.Key.Key_R)
    assert "Reject “The office is at 44 Elm Street”?" in dialogs.asked[-1]
    assert "Ctrl+Z does not take it back" in dialogs.asked[-1]
    assert records.get_claim(store, wrong).status is ClaimStatus.CANDIDATE
    assert records.decisions(store, wrong) == []
    dialogs.answer = True
    qtbot.keyClick(page.table, Qt.Key.Key_R)
    assert records.get_claim(store, wrong).status is ClaimStatus.REJECTED
    assert shown[-1] == ("info", "Rejected “The office is at 44 Elm Street”.")
    # Nothing on the undo stack: Ctrl+Z leaves the reject as it is.
    assert not page.undo_action.isEnabled()
    qtbot.keyClick(page.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert records.get_claim(store, wrong).status is ClaimStatus.REJECTED

    # A defer asks nothing: the claim stays a candidate, and nothing goes on the stack.
    qtbot.waitUntil(lambda: rows(window) == ["The cache is cold on Mondays"])
    page.table.selectRow(0)
    asked = len(dialogs.asked)
    qtbot.keyClick(page.table, Qt.Key.Key_D)
    assert len(dialogs.asked) == asked
    claim = records.get_claim(store, later)
    assert claim.status is ClaimStatus.CANDIDATE and claim.deferred_at is not None
    deferred = "Deferred “The cache is cold on Mondays”: still a candidate, to decide later."
    assert shown[-1] == ("info", deferred)
    assert not page.undo_action.isEnabled()
    if os.environ.get("AMBRY_SCREENSHOT_DIR"):
        window.grab().save(str(Path(os.environ["AMBRY_SCREENSHOT_DIR"]) / "claims-deferred.png"))
