"""Bulk changes of many memories run in the background in batches, with progress and
Cancel; a few are done at once (desktop.widgets.batches, core.memory.bulk)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.memory import trash
from core.memory.batching import PAUSE_S
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType, utc_now
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir
from desktop.audit.sentences import sentence
from desktop.shell.main_window import MainWindow, Nav
from tests.core.test_bulk import rows
from tests.desktop.conftest import Dialogs, add

MANY = 1500


def fill(service: MemoryService, operator: Caller, count: int = MANY) -> list[str]:
    requests = [StoreRequest(EntryType.FACT, f"Bulk note {i}", ("bulk",)) for i in range(count)]
    return [o.entry.id for o in service.store_entries(operator, requests)]


def small_batches(
    window: MainWindow, batch: int = 100, pause: float = 0.002
) -> list[tuple[int, int]]:
    """Batches of ``batch`` above ``batch`` memories, ``pause`` seconds apart; returns
    the progress reports seen."""
    jobs = window.commands.jobs
    jobs.at_once_up_to, jobs.batch, jobs.pause = batch, batch, pause
    seen: list[tuple[int, int]] = []
    jobs.progressed.connect(lambda done, total: seen.append((done, total)))
    return seen


def select_all(qtbot: QtBot, window: MainWindow, count: int) -> None:
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.total == count, timeout=10_000)
    browser.model.show_rows(count)
    browser.table.selectAll()
    assert len(browser.selected_ids()) == count


def test_a_cancelled_delete_keeps_what_it_did_and_one_undo_brings_it_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    ids = fill(service, operator)
    before = rows(service)
    seen = small_batches(window)
    jobs, browser = window.commands.jobs, window.browser
    select_all(qtbot, window, MANY)
    browser.delete_ids(browser.selected_ids())
    assert jobs.running and browser.progress.isVisible()
    assert browser.progress.label.text() == f"Deleting {MANY:,} memories…"
    # The worker opens its connection first: Cancel comes during the first batches.
    browser.progress.cancel_button.click()
    assert browser.progress.label.text() == "Deleting: stopping after this batch…"
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    gone = seen[-1][0]
    assert 100 <= gone < MANY and seen == [(n, MANY) for n in range(100, gone + 1, 100)]
    assert not browser.progress.isVisible()
    assert ("info", f"Deleted {gone:,} of {MANY:,} memories; cancelled. Ctrl+Z to undo.") in shown
    row = audit.recent(service.store_for("main"), actions=["delete"])
    assert len(row) == 1 and row[0].count == gone
    assert row[0].detail == {"stopped": True, "asked": MANY}
    said = f"deleted {gone:,} memories (stopped before the end: {MANY:,} asked)"
    assert sentence(row[0], {}).endswith(said)
    deleted = row[0].entry_ids
    # Each memory either deleted or as it was: never half.
    now = rows(service)
    assert set(now) == set(ids) - set(deleted)
    assert all(now[i] == before[i] for i in now)

    seen.clear()
    jobs.at_once_up_to, jobs.batch = 10, 20
    qtbot.waitUntil(lambda: window.commands.can_undo)
    browser.undo()
    assert jobs.running and browser.progress.label.text() == f"Restoring {gone:,} memories…"
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert seen == [(n, gone) for n in range(20, gone + 1, 20)]
    assert rows(service) == before
    assert ("info", f"Restored {gone:,} memories.") in shown
    restores = audit.recent(service.store_for("main"), actions=["restore"])
    assert len(restores) == 1 and restores[0].entry_ids == deleted
    assert not window.commands.can_undo
    qtbot.waitUntil(lambda: browser.model.total == MANY, timeout=10_000)


def test_an_agent_writes_while_a_bulk_delete_runs(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow, data_dir: DataDir
) -> None:
    fill(service, operator)
    small_batches(window, 50, PAUSE_S)  # the pause that lets another writer in
    jobs, browser = window.commands.jobs, window.browser
    first = threading.Event()
    committed: list[float] = []

    def on_batch(_done: int, _total: int) -> None:  # on the worker, as each batch commits
        committed.append(time.monotonic())
        first.set()

    jobs.progressed.connect(on_batch, Qt.ConnectionType.DirectConnection)
    wrote: dict[str, Any] = {}

    def agent() -> None:
        # Another process's agent: a connection of its own, writing once the delete began.
        other = MemoryService(data_dir)
        try:
            caller = other.open_session("main", Actor.AGENT, "other-process")
            assert first.wait(10)
            start = time.monotonic()
            wrote["id"] = add(other, caller, "Stored while the person deletes")
            wrote["at"], wrote["waited"] = time.monotonic(), time.monotonic() - start
        finally:
            other.close()

    thread = threading.Thread(target=agent)
    select_all(qtbot, window, MANY)
    thread.start()
    browser.delete_ids(browser.selected_ids())
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    thread.join(10)
    assert len(committed) == MANY // 50
    # Written between batches, long before the last one: it did not wait for them all.
    assert wrote["at"] < committed[-1] and wrote["waited"] < 1.0
    assert service.store_for("main").get(wrote["id"]) is not None
    assert service.store_for("main").total() == 1


def test_while_one_runs_other_bulk_changes_and_undo_wait(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    fill(service, operator)
    small_batches(window, 100)
    jobs, browser = window.commands.jobs, window.browser
    bulk = browser.editor.bulk
    select_all(qtbot, window, MANY)
    bulk.tag.setText("checked")
    bulk.tag_button.click()
    assert jobs.running and browser.progress.label.text() == f"Tagging {MANY:,} memories…"
    assert bulk.waiting.isVisible() and not bulk.delete_button.isEnabled()
    assert not browser.delete_matching_button.isEnabled()
    assert not window.commands.can_undo
    assert not window.commands.delete(browser.selected_ids(), window)
    assert shown[-1][1].startswith(f"Tagging {MANY:,} memories (0 done) is still under way: wait")
    # Del in the list, its selection gone as the list follows the batches: the same word.
    # Before: nothing at all happened.
    shown.clear()
    browser.table.clearSelection()
    browser.table.setFocus()
    qtbot.keyClick(browser.table, Qt.Key.Key_Delete)
    assert shown and "is still under way: wait for it to end" in shown[-1][1]
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert ("info", f"Tagged {MANY:,} memories with “checked”. Ctrl+Z to undo.") in shown
    assert not bulk.waiting.isVisible() and bulk.delete_button.isEnabled()
    row = audit.recent(service.store_for("main"), actions=["update"])
    assert len(row) == 1 and row[0].count == MANY and "stopped" not in row[0].detail
    current = service.store_for("main").get_many(row[0].entry_ids[1::2])
    assert {e.tags for e in current.values()} == {("bulk", "checked")}


def test_a_few_are_done_at_once_with_no_progress_shown(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    ids = fill(service, operator, 5)
    started: list[Any] = []
    window.commands.jobs.started.connect(lambda *a: started.append(a))
    select_all(qtbot, window, 5)
    window.browser.delete_ids(ids[:3])
    assert service.store_for("main").total() == 2  # done before the call returned
    window.browser.undo()
    assert service.store_for("main").total() == 5
    assert started == [] and not window.browser.progress.isVisible()


def test_a_trash_restore_of_many_runs_in_batches(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    ids = fill(service, operator, 450)
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    store = service.store_for("main")
    with store.transaction():  # as many agent deletes would (each is rate limited)
        for entry_id in ids:
            trash.move_to_trash(store, agent, entry_id, service.config, utc_now() - timedelta(1))
    seen = small_batches(window, 100)
    window.go(Nav.TRASH)
    page = window.trash
    qtbot.waitUntil(lambda: page.table.rowCount() == 450, timeout=10_000)
    page.table.selectAll()
    page.restore_button.click()
    assert window.commands.jobs.running and page.progress.isVisible()
    assert not page.restore_button.isEnabled()
    qtbot.waitUntil(lambda: not window.commands.jobs.running, timeout=20_000)
    assert seen == [(100, 450), (200, 450), (300, 450), (400, 450), (450, 450)]
    assert set(store.get_many(ids)) == set(ids)
    assert ("info", "Restored 450 memories.") in shown
    row = audit.recent(store, actions=["restore"])
    assert len(row) == 1 and row[0].count == 450 and row[0].detail["source"] == "trash"
    qtbot.waitUntil(lambda: page.stack.currentWidget() is page.nothing)


def quit_at(qtbot: QtBot, window: MainWindow, seen: list[tuple[int, int]], done: int) -> int:
    """Close the window once ``done`` memories or more are deleted; returns how many."""
    qtbot.waitUntil(lambda: bool(seen) and seen[-1][0] >= done)
    gone = seen[-1][0]
    window.close()
    return gone


def test_quitting_during_a_bulk_delete_asks_then_stops_it_where_it_got(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    ids = fill(service, operator)
    seen = small_batches(window, 100, 0.05)
    jobs, browser = window.commands.jobs, window.browser
    select_all(qtbot, window, MANY)
    browser.delete_ids(browser.selected_ids())
    start = time.monotonic()
    gone = quit_at(qtbot, window, seen, 200)
    took = time.monotonic() - start
    assert dialogs.asked[-1] == (
        f"Deleting {MANY:,} memories ({gone:,} done) is under way. Stop it and quit? "
        "What is done stays done; it cannot be undone after quitting."
    )
    assert dialogs.buttons[-1] == ("Stop and quit", "Keep working")
    assert not window.isVisible() and not jobs.running and took < 1.5
    time.sleep(0.3)  # no batch commits after the window is gone
    left = service.store_for("main").total()
    assert left in (MANY - gone, MANY - gone - 100)  # the batch under way, if it had ended
    row = audit.recent(service.store_for("main"), actions=["delete"])
    assert len(row) == 1 and row[0].count == MANY - left
    assert set(ids) - set(row[0].entry_ids) == set(service.store_for("main").get_many(ids))


def test_keep_working_leaves_the_window_open_and_the_delete_running(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    fill(service, operator)
    seen = small_batches(window, 100, 0.02)
    jobs, browser = window.commands.jobs, window.browser
    select_all(qtbot, window, MANY)
    browser.delete_ids(browser.selected_ids())
    dialogs.answer = False
    quit_at(qtbot, window, seen, 100)
    assert window.isVisible() and jobs.running
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert service.store_for("main").total() == 0


def test_the_batch_under_way_at_quit_is_rolled_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    data_dir: DataDir,
) -> None:
    """The third batch waits for another program's lock when the window closes; once
    it gets the lock it does its writes, but they are not committed."""
    fill(service, operator)
    seen = small_batches(window, 100, 0.2)
    jobs, browser = window.commands.jobs, window.browser
    holding, release = threading.Event(), threading.Event()

    def other_program() -> None:
        other = MemoryService(data_dir)
        try:
            with other.store_for("main").transaction():
                holding.set()
                release.wait(10)
        finally:
            other.close()

    def on_batch(done: int, _total: int) -> None:  # on the worker, after each commit
        if done == 200:
            threading.Thread(target=other_program).start()
            assert holding.wait(10)

    jobs.progressed.connect(on_batch, Qt.ConnectionType.DirectConnection)
    select_all(qtbot, window, MANY)
    browser.delete_ids(browser.selected_ids())
    qtbot.waitUntil(lambda: (200, MANY) in seen)
    qtbot.wait(400)  # the third batch is waiting for the lock
    threading.Timer(0.3, release.set).start()
    window.close()
    assert not jobs.running
    time.sleep(0.3)
    assert service.store_for("main").total() == MANY - 200
    row = audit.recent(service.store_for("main"), actions=["delete"])
    assert row[0].count == 200 and row[0].detail == {"stopped": True, "asked": MANY}


def test_the_progress_line_names_the_group_while_another_is_shown(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    fill(service, operator)
    seen = small_batches(window, 100, 0.05)
    jobs, browser = window.commands.jobs, window.browser
    select_all(qtbot, window, MANY)
    bulk = browser.editor.bulk
    bulk.tag.setText("checked")
    bulk.tag_button.click()
    qtbot.waitUntil(lambda: bool(seen))
    assert " in group" not in browser.progress.label.text()
    window.switch_group("other")
    # Before: "Tagging 300 of 1,500…", with no word of which group.
    assert browser.progress.label.text().endswith(" in group main…")
    done = seen[-1][0]
    qtbot.waitUntil(lambda: seen[-1][0] > done)
    assert browser.progress.label.text() == f"Tagging {seen[-1][0]:,} of {MANY:,} in group main…"
    window.switch_group("main")
    assert " in group" not in browser.progress.label.text()
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)


def test_an_undo_that_ends_in_an_unexpected_error_keeps_its_step(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The step holds the only copy of the deleted memories: lost with the error before.
    from core.memory import bulk

    fill(service, operator, 300)
    small_batches(window)
    jobs, browser = window.commands.jobs, window.browser
    select_all(qtbot, window, 300)
    browser.delete_ids(browser.selected_ids())
    qtbot.waitUntil(lambda: not jobs.running and window.commands.can_undo, timeout=20_000)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("a bug in the restore")

    monkeypatch.setattr(bulk, "restore", broken)
    with qtbot.captureExceptions() as raised:
        browser.undo()
        qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert [str(e[1]) for e in raised] == ["a bug in the restore"]
    assert window.commands.can_undo
    monkeypatch.undo()
    browser.undo()
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert service.store_for("main").total() == 300
