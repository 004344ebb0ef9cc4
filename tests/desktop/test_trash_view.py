"""The Trash page: what agents deleted, restored or deleted for good by the person."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from core.memory import trash
from core.model.entries import Actor
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs, add


def listed(window: MainWindow) -> list[str]:
    table = window.trash.table
    return [table.item(r, 0).text() for r in range(table.rowCount())]


def test_restore_and_delete_for_good_from_the_trash(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow, dialogs: Dialogs
) -> None:
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    ids = [add(service, operator, f"Window note {i}") for i in range(3)]
    window.go(Nav.TRASH)
    assert window.trash.stack.currentWidget() is window.trash.nothing
    for entry_id in ids:
        service.delete(agent, entry_id)
    qtbot.waitUntil(lambda: len(listed(window)) == 3)
    assert window.nav.item(Nav.TRASH).text() == "Trash"
    assert window.trash.table.item(0, 3).text() == "agent"

    window.trash.table.selectRow(listed(window).index("Window note 1"))
    window.trash.restore_button.click()
    assert service.store_for("main").get(ids[1]) is not None
    qtbot.waitUntil(lambda: "Window note 1" not in listed(window))

    window.trash.table.selectRow(listed(window).index("Window note 0"))
    dialogs.answer = False
    window.trash.delete_button.click()
    assert len(trash.list_trash(service, "main")) == 2  # the person said no
    dialogs.answer = True
    window.trash.delete_button.click()
    qtbot.waitUntil(lambda: listed(window) == ["Window note 2"])
    window.trash.empty_button.click()
    assert dialogs.asked[-1] == (
        "Delete all 1 memory in the trash for good? This cannot be undone."
    )
    qtbot.waitUntil(lambda: window.trash.stack.currentWidget() is window.trash.nothing)
    assert trash.list_trash(service, "main") == []
    assert service.store_for("main").get(ids[0]) is None


def test_restoring_what_was_stored_again_says_where_it_went(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    gone = add(service, operator, "User is allergic to peanuts")
    window.go(Nav.TRASH)
    service.delete(agent, gone)
    again = add(service, operator, "User is allergic to peanuts")
    qtbot.waitUntil(lambda: listed(window) == ["User is allergic to peanuts"])
    window.trash.table.selectRow(0)
    window.trash.restore_button.click()
    assert service.get("main", gone).superseded_by == again
    assert (
        "info",
        "Restored 1; 1 went back as an earlier version of a memory stored since with the "
        "same text, which stays current (see its history).",
    ) in shown


def test_a_restore_of_many_brings_back_all_it_can_and_names_the_others(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    ids = [add(service, operator, f"Shelf note {i}") for i in range(4)]
    for entry_id in ids:
        service.delete(agent, entry_id)
    window.go(Nav.TRASH)
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    window.trash.table.selectAll()
    # Meanwhile (before the page hears of it) one comes back from elsewhere, and a
    # copy of another is left in the trash after it came back.
    db = service.store_for("main")
    trash.restore(service, operator, ids[1])
    kept = db.execute("SELECT * FROM trash WHERE id = ?", (ids[2],)).fetchone()
    trash.restore(service, operator, ids[2])
    with db.transaction():
        db.execute("INSERT INTO trash VALUES (?, ?, ?, ?, ?, ?)", kept)
    window.trash.restore_button.click()
    assert set(db.get_many(ids)) == set(ids)
    level, text = shown[-1]
    assert level == "warning" and text.startswith("Restored 2 memories. Could not restore 2")
    assert "“Shelf note 1”: it is no longer in the trash" in text
    assert "“Shelf note 2”: a memory with its id is back already" in text
    qtbot.waitUntil(lambda: listed(window) == ["Shelf note 2"])
