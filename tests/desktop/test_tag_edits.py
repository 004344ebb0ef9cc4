"""Tagging in the Memories page changes the tags and nothing else; one bulk action,
one audit row (core.memory.tagging)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from core.memory import curation, trash
from core.model.entries import Actor, MemoryEntry
from core.service import Caller, MemoryService
from core.storage import audit
from desktop.audit.sentences import sentence
from desktop.shell.main_window import MainWindow, Nav
from tests.core.test_tagging import current, kept, three
from tests.desktop.conftest import add


def listed(window: MainWindow) -> list[str]:
    model = window.browser.model
    return [model.id_at(r) for r in range(model.rowCount())]


def test_bulk_add_tag_leaves_review_source_and_staleness_alone(
    qtbot: QtBot, service: MemoryService, operator: Caller, agent: Caller, window: MainWindow
) -> None:
    ids = three(service, operator, agent)
    before = service.store_for("main").get_many(list(ids.values()))
    qtbot.waitUntil(lambda: set(listed(window)) == set(ids.values()))
    window.browser.table.selectAll()
    editor = window.browser.editor
    editor.bulk.tag.setText("checked")
    editor.bulk.tag_button.click()
    qtbot.waitUntil(lambda: not set(ids.values()) & set(listed(window)), timeout=2000)
    for old in ids.values():
        new = current(service, old)
        assert new.tags == ("checked",) and kept(new) == kept(before[old])
    assert curation.candidate_ids(service.store_for("main")) == [
        current(service, ids["candidate"]).id
    ]
    row = audit.recent(service.store_for("main"), limit=1)[0]
    assert sentence(row, {}).endswith("changed the tags of 3 memories")


def test_removing_a_tag_in_the_editor_keeps_a_candidate_in_review(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    old = add(service, operator, "A page says the API moved", tags=("web", "api"), low_trust=True)
    before: MemoryEntry = service.get("main", old)
    qtbot.waitUntil(lambda: old in listed(window))
    window.browser.open_entry(old)
    qtbot.waitUntil(lambda: window.browser.editor.entry is not None)
    window.browser.editor.tags.setText("api")
    window.browser.editor.save_button.click()
    qtbot.waitUntil(lambda: old not in listed(window))
    new = current(service, old)
    assert new.tags == ("api",) and kept(new) == kept(before)


def test_restoring_many_from_the_trash_is_one_audit_row(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    ids = [add(service, operator, f"Window note {i}") for i in range(3)]
    for entry_id in ids:
        service.delete(agent, entry_id)
    window.go(Nav.TRASH)
    qtbot.waitUntil(lambda: window.trash.table.rowCount() == 3)
    window.trash.table.selectAll()
    window.trash.restore_button.click()
    qtbot.waitUntil(lambda: trash.list_trash(service, "main") == [])
    rows = audit.recent(service.store_for("main"), actions=["restore"])
    assert len(rows) == 1 and sorted(rows[0].entry_ids) == sorted(ids)
    assert sentence(rows[0], {}).endswith("restored 3 memories from the trash")
    assert [len(service.history("main", i)) for i in ids] == [1, 1, 1]


def test_enter_in_tag_to_add_keeps_the_memories_selected_and_the_keyboard_there(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    chosen = [add(service, operator, "Works in the Lyon office"), add(service, operator, "Tea")]
    other = add(service, operator, "Has a dog named Luna")
    browser = window.browser
    qtbot.waitUntil(lambda: len(listed(window)) == 3)
    browser._select(chosen)
    bulk = browser.editor.bulk
    qtbot.waitUntil(bulk.isVisible)
    bulk.tag.setFocus()
    qtbot.keyClicks(bulk.tag, "checked")
    qtbot.keyClick(bulk.tag, Qt.Key.Key_Return)
    tagged = [current(service, i).id for i in chosen]
    assert not set(tagged) & set(chosen)
    # The same memories, now at their new versions, stay selected, and the keyboard
    # stays in the field for another tag.
    qtbot.waitUntil(lambda: sorted(browser.selected_ids()) == sorted(tagged))
    qtbot.waitUntil(lambda: bulk.isVisible() and QApplication.focusWidget() is bulk.tag)
    assert other in listed(window) and other not in browser.selected_ids()
    # So Remove tag acts on them at once, and keeps them selected too.
    qtbot.waitUntil(lambda: bulk.untag.currentData() == "checked")
    bulk.untag_button.click()
    untagged = [current(service, i).id for i in tagged]
    qtbot.waitUntil(lambda: sorted(browser.selected_ids()) == sorted(untagged))
    assert all(service.get("main", i).tags == () for i in untagged)


def test_a_tag_change_in_the_background_keeps_the_selection_too(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    chosen = [add(service, operator, f"Planning note {i}") for i in range(4)]
    add(service, operator, "Has a dog named Luna")
    browser = window.browser
    browser.commands.jobs.at_once_up_to = 1  # four memories: in batches
    qtbot.waitUntil(lambda: len(listed(window)) == 5)
    browser._select(chosen)
    bulk = browser.editor.bulk
    qtbot.waitUntil(bulk.isVisible)
    bulk.tag.setText("planning")
    bulk.tag_button.click()
    qtbot.waitUntil(lambda: not browser.commands.jobs.running, timeout=10_000)
    tagged = [current(service, i).id for i in chosen]
    qtbot.waitUntil(lambda: sorted(browser.selected_ids()) == sorted(tagged))
