"""Ctrl+Z after *Add tag* or *Remove tag* in the selection pane takes the change back
exactly; *Remove tag* offers the tags the selection has (desktop.memories.bulk)."""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.memory import trash
from core.memory.writing import StoreRequest
from core.model.entries import EntryType
from core.service import Caller, MemoryService
from core.storage import audit
from desktop.audit.sentences import sentence
from desktop.shell.main_window import MainWindow
from tests.core.test_tag_undo import every_row
from tests.core.test_tagging import current, kept, three
from tests.desktop.test_batches import fill, select_all, small_batches

CTRL = Qt.KeyboardModifier.ControlModifier


def test_ctrl_z_after_add_tag_makes_the_versions_from_before_current_again(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    agent: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    ids = list(three(service, operator, agent).values())
    browser = window.browser
    select_all(qtbot, window, 3)
    before = every_row(service)
    time.sleep(0.002)
    browser.editor.bulk.tag.setText("checked")
    browser.editor.bulk.tag_button.click()
    assert shown[-1] == ("info", "Tagged 3 memories with “checked”. Ctrl+Z to undo.")
    assert browser.undo_action.text() == "Undo tag" and browser.undo_action.isEnabled()
    assert window.edit.undo_action.text() == "Undo tag"
    browser.table.setFocus()
    qtbot.keyClick(browser.table, Qt.Key.Key_Z, CTRL)
    assert every_row(service) == before
    assert trash.list_trash(service, "main") == []
    assert shown[-1] == (
        "info",
        "Took back the tag “checked” on 3 memories: each is as it was before.",
    )
    assert not browser.undo_action.isEnabled()
    row = audit.recent(service.store_for("main"), actions=["update"], limit=1)[0]
    assert sentence(row, {}).endswith("took back a change of the tags of 3 memories")
    qtbot.waitUntil(lambda: set(browser.selected_ids()) == set(ids))


def test_an_undo_leaves_a_memory_edited_since_and_says_so(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    ids = [
        service.store(operator, {"type": "fact", "content": f"Note {i}"}).entry.id for i in (1, 2)
    ]
    select_all(qtbot, window, 2)
    window.commands.add_tag(window.browser.selected_ids(), "checked")
    edited = current(service, ids[0])
    service.store_entries(
        operator, [StoreRequest(EntryType.FACT, "Note 1, edited", supersedes=edited.id)]
    )
    window.edit.undo_action.trigger()  # Edit → Undo
    assert shown[-1] == (
        "info",
        "Took back the tag “checked” on 1 memory: each is as it was before. "
        "One was left as it is: edited or tagged again since.",
    )
    assert service.get("main", ids[1]).superseded_by is None
    chain = service.history("main", ids[0])
    assert [e.tags for e in chain] == [(), ("checked",), ()]
    assert chain[-1].content == "Note 1, edited" and chain[-1].superseded_by is None
    row = audit.recent(service.store_for("main"), actions=["update"], limit=1)[0]
    said = "took back a change of the tags of 1 memory; 1 changed since was left as it is"
    assert sentence(row, {}).endswith(said)


def test_remove_tag_offers_the_selections_tags_by_keyboard_and_undoes(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    agent: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    low = three(service, operator, agent)
    for entry_id in low.values():
        window.commands.add_tag([entry_id], "web")
    plain = service.store(operator, {"type": "fact", "content": "Plain", "tags": ["a"]}).entry.id
    select_all(qtbot, window, 4)
    bulk = window.browser.editor.bulk
    assert [bulk.untag.itemText(i) for i in range(bulk.untag.count())] == ["a (1)", "web (3)"]
    before = every_row(service)
    tagged = [current(service, i) for i in low.values()]
    # Keyboard only: Tab from Add tag to the chooser, pick "web", Tab, Space.
    bulk.tag_button.setFocus()
    qtbot.keyClick(bulk.tag_button, Qt.Key.Key_Tab)
    assert bulk.untag.hasFocus()
    qtbot.keyClick(bulk.untag, Qt.Key.Key_Down)
    assert bulk.untag.currentData() == "web"
    qtbot.keyClick(bulk.untag, Qt.Key.Key_Tab)
    assert bulk.untag_button.hasFocus()
    qtbot.keyClick(bulk.untag_button, Qt.Key.Key_Space)
    assert shown[-1] == (
        "info",
        "Removed the tag “web” from 3 memories; the one without it was left alone. Ctrl+Z to undo.",
    )
    for entry in tagged:
        new = current(service, entry.id)
        assert new.tags == () and kept(new) == kept(entry)
    assert every_row(service)[plain] == before[plain]
    assert window.browser.undo_action.text() == "Undo tag removal"
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Z, CTRL)
    assert every_row(service) == before
    # The pane follows the selection: with none of them tagged, nothing to remove.
    window.browser.table.clearSelection()
    window.browser.editor.show_bulk([plain, tagged[0].id], 0, 4, [])
    assert not bulk.untag.isEnabled() and not bulk.untag_button.isEnabled()


def test_remove_tag_and_its_undo_run_in_batches_with_cancel(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    count = 450
    fill(service, operator, count)
    before = every_row(service)
    seen = small_batches(window, 100)
    jobs, browser = window.commands.jobs, window.browser
    select_all(qtbot, window, count)
    bulk = browser.editor.bulk
    assert bulk.untag.currentData() == "bulk"
    bulk.untag_button.click()
    assert (
        jobs.running and browser.progress.label.text() == f"Removing the tag from {count} memories…"
    )
    assert not bulk.untag_button.isEnabled()
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert seen[-1] == (count, count)
    assert ("info", f"Removed the tag “bulk” from {count} memories. Ctrl+Z to undo.") in shown
    tags = service.store_for("main").execute(
        "SELECT DISTINCT tags FROM memory_entries WHERE superseded_by IS NULL"
    )
    assert [r[0] for r in tags] == ["[]"]

    seen.clear()
    browser.undo()
    assert browser.progress.label.text() == f"Undoing the tag change of {count} memories…"
    browser.progress.cancel_button.click()
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    done = seen[-1][0]
    assert 100 <= done < count
    said = f"Cancelled: Ctrl+Z takes back the other {count - done}."
    assert shown[-1][1].endswith(said)
    assert window.commands.undo_text == "Undo tag removal"
    browser.undo()
    qtbot.waitUntil(lambda: not jobs.running, timeout=20_000)
    assert every_row(service) == before
    assert not window.commands.can_undo
    undos = [
        r
        for r in audit.recent(service.store_for("main"), actions=["update"])
        if r.detail.get("undo")
    ]
    assert [r.count for r in undos] == [count - done, done]
