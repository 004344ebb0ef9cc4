"""The review inbox: candidates, accept/reject/defer, keys, and the brief."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.entries import Status
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs, add


def candidate_ids(window: MainWindow) -> list[str]:
    model = window.review.model
    return [model.id_at(r) for r in range(model.rowCount())]


def test_accepting_a_candidate_moves_it_to_the_brief(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    add(service, operator, "Prefers tabs over spaces")
    web = add(service, operator, "The billing API drops XML next year", low_trust=True)
    qtbot.waitUntil(lambda: window.nav.item(Nav.REVIEW).text() == "Review (1)")

    window.go(Nav.BRIEF)
    assert "billing API" not in window.brief.raw_view.toPlainText()
    assert "Prefers tabs" in window.brief.raw_view.toPlainText()

    window.go(Nav.REVIEW)
    assert candidate_ids(window) == [web]
    detail = window.review.detail.toPlainText()
    assert "low-trust source" in detail and "web (low trust)" in detail
    qtbot.keyClick(window.review.table, Qt.Key.Key_A)
    assert service.get("main", web).status is Status.ACTIVE
    qtbot.waitUntil(lambda: window.review.stack.currentWidget() is window.review.nothing)
    assert window.nav.item(Nav.REVIEW).text() == "Review"

    window.go(Nav.BRIEF)
    qtbot.waitUntil(lambda: "billing API drops XML" in window.brief.raw_view.toPlainText())
    assert window.brief.brief is not None and window.brief.brief.brief_count == 2


def test_reject_deletes_and_defer_moves_to_the_end(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    first = add(service, operator, "A forum says the server is in Oslo", low_trust=True)
    second = add(service, operator, "A page claims Luna is a cat", low_trust=True)
    third = add(service, operator, "A blog says tea is bad", low_trust=True)
    window.go(Nav.REVIEW)
    qtbot.waitUntil(lambda: candidate_ids(window) == [first, second, third])
    assert window.review.selected_ids() == [first]

    qtbot.keyClick(window.review.table, Qt.Key.Key_D)
    qtbot.waitUntil(lambda: candidate_ids(window) == [second, third, first])
    assert window.review.selected_ids() == [second]

    qtbot.keyClick(window.review.table, Qt.Key.Key_R)
    assert service.store_for("main").get(second) is None
    assert candidate_ids(window) == [third, first]
    assert window.review.selected_ids() == [third]


def test_bulk_accept_from_the_inbox(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    ids = [add(service, operator, f"Web claim number {i}", low_trust=True) for i in range(3)]
    window.go(Nav.REVIEW)
    qtbot.waitUntil(lambda: len(candidate_ids(window)) == 3)
    window.review.table.selectAll()
    window.review.accept_button.click()
    assert all(service.get("main", i).status is Status.ACTIVE for i in ids)
    assert window.review.stack.currentWidget() is window.review.nothing
    assert ("info", "Accepted 3 memories. Ctrl+Z to undo.") in shown


def test_undoing_a_batch_accept_returns_the_batch_to_the_inbox_selected(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    ids = [add(service, operator, f"Web claim number {i}", low_trust=True) for i in range(14)]
    window.go(Nav.REVIEW)
    review, undo = window.review, window.acts["undo"]
    qtbot.waitUntil(lambda: len(candidate_ids(window)) == 14)
    for _ in range(11):
        qtbot.keyClick(review.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(review.table, Qt.Key.Key_A)
    # However many at once: an accept can be taken back, so it is not asked about.
    assert dialogs.asked == []
    assert all(service.get("main", i).status is Status.ACTIVE for i in ids[:12])
    assert candidate_ids(window) == ids[12:]
    assert ("info", "Accepted 12 memories. Ctrl+Z to undo.") in shown
    assert undo.isEnabled() and undo.text() == "Undo accept"

    qtbot.keyClick(review.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert all(service.get("main", i).status is Status.CANDIDATE for i in ids)
    assert sorted(candidate_ids(window)) == sorted(ids)
    assert sorted(review.selected_ids()) == sorted(ids[:12])
    assert "12 candidates selected" in review.detail.toPlainText()
    assert shown[-1] == ("info", "Returned 12 memories to review.")
    assert window.nav.item(Nav.REVIEW).text() == "Review (14)"
    assert not undo.isEnabled() and undo.text() == "Undo"
    window.go(Nav.BRIEF)
    assert "Web claim" not in window.brief.raw_view.toPlainText()


def test_undoing_an_accept_says_how_many_changed_since(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    ids = [add(service, operator, f"Forum post {i}", low_trust=True) for i in range(3)]
    window.go(Nav.REVIEW)
    review = window.review
    qtbot.waitUntil(lambda: len(candidate_ids(window)) == 3)
    review.table.selectAll()
    review.accept_button.click()
    # One of them is edited meanwhile: the new version stands, and so does the accept.
    service.store(
        operator, {"type": "fact", "content": "Forum post 0, edited", "supersedes": ids[0]}
    )
    window.edit.undo()
    assert sorted(candidate_ids(window)) == sorted(ids[1:])
    assert sorted(review.selected_ids()) == sorted(ids[1:])
    assert service.get("main", ids[0]).status is Status.ACTIVE
    assert shown[-1] == ("info", "Returned 2 memories to review; 1 could not be: it changed since.")


def test_agent_candidate_appears_while_the_inbox_is_open(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    window.go(Nav.REVIEW)
    assert window.review.stack.currentWidget() is window.review.nothing
    service.store(
        agent_caller,
        {"type": "fact", "content": "Docs say v2 is out", "source": {"type": "web_content"}},
    )
    qtbot.waitUntil(lambda: len(candidate_ids(window)) == 1)
    assert window.review.selected_ids() == candidate_ids(window)


def test_undoing_a_batch_reject_selects_the_batch_again(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    ids = [add(service, operator, f"Web claim number {i}", low_trust=True) for i in range(5)]
    window.go(Nav.REVIEW)
    review = window.review
    qtbot.waitUntil(lambda: len(candidate_ids(window)) == 5)
    for _ in range(2):
        qtbot.keyClick(review.table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert review.selected_ids() == ids[:3]
    qtbot.keyClick(review.table, Qt.Key.Key_R)
    assert candidate_ids(window) == ids[3:] and review.selected_ids() == [ids[3]]

    qtbot.keyClick(review.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    # (Restored rows stored in the same millisecond as another may list in either order.)
    assert sorted(candidate_ids(window)) == sorted(ids)
    # The three come back selected: D defers them all, without selecting them again.
    assert sorted(review.selected_ids()) == sorted(ids[:3])
    assert "3 candidates selected" in review.detail.toPlainText()
    qtbot.keyClick(review.table, Qt.Key.Key_D)
    now = candidate_ids(window)
    assert now[:2] == ids[3:] and sorted(now[2:]) == sorted(ids[:3])


def test_the_next_candidate_is_scrolled_into_view_after_a_batch_reject(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    for i in range(80):
        add(service, operator, f"Web page {i} says the API limit is {i}/min", low_trust=True)
    window.go(Nav.REVIEW)
    review, table = window.review, window.review.table
    qtbot.waitUntil(lambda: len(candidate_ids(window)) == 80)
    # From the first row down past the bottom of the list: it scrolls as it goes.
    for _ in range(49):
        qtbot.keyClick(table, Qt.Key.Key_Down, Qt.KeyboardModifier.ShiftModifier)
    assert len(review.selected_ids()) == 50
    assert table.verticalScrollBar().value() > 0
    qtbot.keyClick(table, Qt.Key.Key_R)
    assert len(candidate_ids(window)) == 30
    index = table.selectionModel().currentIndex()
    assert index.row() == 0 and review.selected_ids() == [review.model.id_at(0)]
    assert table.viewport().rect().intersects(table.visualRect(index))


def test_an_accept_replaces_the_version_stored_while_it_waited_and_says_so(
    qtbot: QtBot,
    service: MemoryService,
    agent: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    pixel = service.store(agent, {"type": "fact", "content": "User's phone is a Pixel 7"})
    web = {"type": "web_content"}
    iphone = service.store(
        agent,
        {
            "type": "fact",
            "content": "User's phone is an iPhone 15",
            "supersedes": pixel.entry.id,
            "source": web,
        },
    ).entry.id
    window.go(Nav.REVIEW)
    qtbot.waitUntil(lambda: candidate_ids(window) == [iphone])
    detail = window.review.detail.toPlainText()
    assert "Accepting it replaces: “User's phone is a Pixel 7”" in detail
    galaxy = service.store(
        agent,
        {"type": "fact", "content": "User's phone is a Galaxy S24", "supersedes": pixel.entry.id},
    ).entry.id
    since = (
        "Accepting it replaces: “User's phone is a Galaxy S24”, which replaced "
        "“User's phone is a Pixel 7” since this was written"
    )
    qtbot.waitUntil(lambda: since in window.review.detail.toPlainText())

    qtbot.keyClick(window.review.table, Qt.Key.Key_A)
    assert service.get("main", galaxy).superseded_by == iphone
    assert (
        "info",
        "Accepted 1 memory. It replaces “User's phone is a Galaxy S24”, which replaced "
        "“User's phone is a Pixel 7” since. Ctrl+Z to undo.",
    ) in shown
    window.go(Nav.BRIEF)
    qtbot.waitUntil(lambda: "iPhone 15" in window.brief.raw_view.toPlainText())
    brief = window.brief.raw_view.toPlainText()
    assert "Galaxy" not in brief and "Pixel" not in brief

    # Ctrl+Z: the Galaxy is current again, and the iPhone waits as it was written.
    window.go(Nav.REVIEW)
    qtbot.keyClick(window.review.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert service.get("main", galaxy).superseded_by is None
    assert candidate_ids(window) == [iphone]
