"""The memory browser against a real store: search, filters, edit, delete and undo."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QPalette
from pytestqt.qtbot import QtBot

from core.cli.main import main
from core.memory.writing import StoreRequest
from core.model.entries import MAX_CONTENT_CHARS, EntryType, MemoryEntry, Status
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.memories.state import StatusFilter
from desktop.shell.main_window import MainWindow
from tests.desktop.conftest import Dialogs, add


def listed(window: MainWindow) -> list[str]:
    model = window.browser.model
    return [model.id_at(r) for r in range(model.rowCount())]


def select(qtbot: QtBot, window: MainWindow, entry_id: str) -> None:
    qtbot.waitUntil(lambda: entry_id in listed(window))
    window.browser.open_entry(entry_id)
    qtbot.waitUntil(lambda: window.browser.editor.entry is not None)


def test_lists_entries_newest_first(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 4)
    assert listed(window)[0] == filled["office"]
    assert window.browser.count_label.text() == "4 memories"
    assert window.memories.currentWidget() is window.browser


def test_typing_filters_rows(qtbot: QtBot, filled: dict[str, str], window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 4)
    qtbot.keyClicks(window.browser.filters.search, "lun")
    qtbot.waitUntil(lambda: listed(window) == [filled["luna"]])
    assert window.browser.count_label.text() == "1 memory match"
    window.browser.filters.search.clear()
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == 4)


def test_type_tag_and_behavioral_filters(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    bar = window.browser.filters
    qtbot.waitUntil(lambda: bar.tag_box.count() == 4)  # All tags + food, pets, work
    bar.type_box.setCurrentIndex(bar.type_box.findData(EntryType.FACT))
    qtbot.waitUntil(lambda: set(listed(window)) == {filled["luna"], filled["office"]})
    bar.tag_box.setCurrentIndex(bar.tag_box.findData("work"))
    qtbot.waitUntil(lambda: listed(window) == [filled["office"]])
    bar.type_box.setCurrentIndex(0)
    bar.behavioral_box.setCurrentIndex(bar.behavioral_box.findData(True))
    qtbot.waitUntil(lambda: listed(window) == [filled["tests"]])


def test_status_filter_shows_candidates_and_superseded(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    web = add(service, operator, "A page says the API changes", low_trust=True)
    bar = window.browser.filters
    bar.set_status(StatusFilter.CANDIDATE)
    qtbot.waitUntil(lambda: listed(window) == [web])
    bar.set_status(StatusFilter.SUPERSEDED)
    qtbot.waitUntil(lambda: listed(window) == [])
    bar.set_status(StatusFilter.STALE)
    qtbot.waitUntil(lambda: listed(window) == [])
    bar.set_status(StatusFilter.ACTIVE)
    qtbot.waitUntil(lambda: len(listed(window)) == 4)


def test_editing_supersedes_and_keeps_history(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    old = filled["luna"]
    select(qtbot, window, old)
    editor = window.browser.editor
    editor.content.setPlainText("Has a dog named Luna Belle")
    assert editor.save_button.isEnabled()
    qtbot.mouseClick(editor.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: old not in listed(window) and len(listed(window)) == 4)
    new = listed(window)[0]
    assert service.get("main", new).content == "Has a dog named Luna Belle"
    assert service.get("main", old).superseded_by == new
    assert [e.id for e in service.history("main", new)] == [old, new]
    qtbot.waitUntil(lambda: window.browser.selected_ids() == [new])
    editor.history_button.click()
    dialog = window.browser.history_dialog
    text = dialog.view.toPlainText()
    assert "Version 2" in text and "Luna Belle" in text and "Changed from version 1" in text
    assert dialog.versions.count() == 2
    window.browser.history_dialog.close()


def test_editing_type_supersedes(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    old = filled["office"]
    select(qtbot, window, old)
    editor = window.browser.editor
    editor.type_box.setCurrentIndex(editor.type_box.findData(EntryType.CONTEXT))
    editor.save_button.click()
    qtbot.waitUntil(lambda: old not in listed(window))
    current = service.get("main", service.get("main", old).superseded_by or "")
    assert current.type is EntryType.CONTEXT
    assert current.content == "Works in the Lyon office"


def test_editing_tags_supersedes(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    old = filled["tea"]
    select(qtbot, window, old)
    window.browser.editor.tags.setText("food, drinks")
    window.browser.editor.save_button.click()
    qtbot.waitUntil(lambda: old not in listed(window))
    assert service.get("main", listed(window)[0]).tags == ("food", "drinks")


def test_new_memory_with_ctrl_n(qtbot: QtBot, service: MemoryService, window: MainWindow) -> None:
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    editor = window.browser.editor
    assert editor.is_new and window.memories.currentWidget() is window.browser
    qtbot.keyClicks(editor.content, "Lives in Lyon")
    editor.tags.setText("home")
    editor.save_button.click()
    qtbot.waitUntil(lambda: len(listed(window)) == 1)
    entry = service.get("main", listed(window)[0])
    assert (entry.content, entry.tags, entry.source.type.value) == (
        "Lives in Lyon",
        ("home",),
        "operator",
    )


def test_switching_group_asks_before_dropping_a_new_memory(
    qtbot: QtBot, window: MainWindow, dialogs: Dialogs
) -> None:
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    editor = window.browser.editor
    qtbot.keyClicks(editor.content, "Half-typed thought")
    dialogs.answer, dialogs.text = False, "work"
    window.group_box.activated.emit(window.group_box.count() - 1)
    assert dialogs.asked[-1] == "Switch group without saving your changes to this memory?"
    assert window.state.group == "main"
    assert editor.is_new and editor.content.toPlainText() == "Half-typed thought"


def test_delete_asks_and_undo_restores(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    target = filled["tea"]
    select(qtbot, window, target)
    dialogs.answer = False
    window.browser.editor.delete_button.click()
    assert len(dialogs.asked) == 1 and "Delete this memory?" in dialogs.asked[0]
    assert target in listed(window)

    dialogs.answer = True
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: target not in listed(window))
    assert service.store_for("main").get(target) is None
    # The next row takes the deleted one's place, for a keyboard flow.
    qtbot.waitUntil(lambda: window.browser.selected_ids() == [filled["luna"]])
    assert window.browser.undo_action.isEnabled()

    qtbot.keyClick(window.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: target in listed(window))
    assert service.get("main", target).content == "Prefers green tea"
    assert window.browser.selected_ids() == [target]
    assert not window.browser.undo_action.isEnabled()


def test_deleting_the_current_version_says_the_earlier_one_returns_and_undo_puts_it_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    volvo = add(service, operator, "User drives a Volvo")
    [tesla] = [
        o.entry.id
        for o in service.store_entries(
            operator,
            [StoreRequest(EntryType.FACT, "User drives a Tesla", supersedes=volvo)],
        )
    ]
    select(qtbot, window, tesla)
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    assert (
        "It replaced “User drives a Volvo”: that earlier version becomes current again."
        in (dialogs.asked[-1])
    )
    qtbot.waitUntil(lambda: listed(window) == [volvo])
    assert ("info", "Deleted 1 memory. An earlier version is current again. Ctrl+Z to undo.") in (
        shown
    )

    qtbot.keyClick(window.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: listed(window) == [tesla])
    assert [e.id for e in service.history("main", tesla)] == [volvo, tesla]


def test_bulk_accept_and_delete(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    web = add(service, operator, "A page says the API changes", low_trust=True)
    qtbot.waitUntil(lambda: len(listed(window)) == 5)
    window.browser.table.selectAll()
    editor = window.browser.editor
    assert editor.bulk.title.text() == "5 memories selected"
    assert editor.bulk.accept_button.text() == "Accept 1 candidate"
    editor.bulk.accept_button.click()
    qtbot.waitUntil(lambda: service.get("main", web).status.value == "active")

    window.browser.table.selectAll()
    editor.bulk.delete_button.click()
    qtbot.waitUntil(lambda: listed(window) == [])
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.empty)
    window.browser.undo()
    qtbot.waitUntil(lambda: len(listed(window)) == 5)


def test_an_accept_in_the_list_is_undone_with_ctrl_z(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    web = add(service, operator, "A page says the API changes", low_trust=True)
    qtbot.waitUntil(lambda: len(listed(window)) == 5)
    browser = window.browser
    select(qtbot, window, web)
    browser.editor.accept_button.click()
    qtbot.waitUntil(lambda: service.get("main", web).status is Status.ACTIVE)
    assert browser.undo_action.isEnabled() and browser.undo_action.text() == "Undo accept"

    browser.table.setFocus()
    qtbot.keyClick(browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert service.get("main", web).status is Status.CANDIDATE
    qtbot.waitUntil(lambda: browser.selected_ids() == [web])
    assert not browser.undo_action.isEnabled()


def test_a_selection_of_part_of_a_long_list_says_so(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    requests = [StoreRequest(EntryType.FACT, f"Note number {i}") for i in range(1_200)]
    service.store_entries(operator, requests)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.total == 1_200)
    # A list drawn afresh (not grown by live inserts) hands the view its first rows only.
    qtbot.keyClicks(browser.filters.search, "note")
    qtbot.waitUntil(lambda: browser.count_label.text() == "1,200 memories match")
    browser.table.setFocus()
    qtbot.keyClick(browser.table, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    bulk = browser.editor.bulk
    shown = browser.model.rowCount()
    assert shown < 1_200
    assert bulk.title.text() == f"{shown:,} of 1,200 memories selected"
    assert "Delete all matching" in bulk.rest.text() and not bulk.rest.isHidden()
    browser.model.show_rows(1_200)
    browser.table.selectAll()
    assert bulk.title.text() == "1,200 memories selected" and bulk.rest.isHidden()


def test_selecting_a_long_list_counts_candidates_without_reading_every_row(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    requests = [StoreRequest(EntryType.FACT, f"Note number {i}") for i in range(1_200)]
    service.store_entries(operator, requests)
    web = [add(service, operator, f"A page says thing {i}", low_trust=True) for i in range(3)]
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.total == 1_203)
    browser.model.show_rows(1_203)
    browser.model.refresh_rows()  # nothing loaded: rows are read when drawn
    asked: list[str] = []

    def loader(ids: list[str]) -> dict[str, MemoryEntry]:
        asked.extend(ids)
        return service.entries("main", ids)

    browser.model.set_loader(loader)
    browser.table.selectAll()
    assert asked == []
    bulk = browser.editor.bulk
    assert bulk.title.text() == "1,203 memories selected"
    assert bulk.accept_button.text() == "Accept 3 candidates"
    # A row taken out of the selection is out of what the actions act on.
    sel = browser.table.selectionModel()
    row = browser.model.row_of(web[1])
    assert row is not None
    sel.select(
        browser.model.index(row, 0),
        QItemSelectionModel.SelectionFlag.Deselect | QItemSelectionModel.SelectionFlag.Rows,
    )
    assert len(browser.selected_ids()) == 1_202 and web[1] not in browser.selected_ids()
    assert bulk.accept_button.text() == "Accept 2 candidates"


def test_bulk_tag_adds_a_version_per_entry(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    window.browser.table.selectAll()
    editor = window.browser.editor
    editor.bulk.tag.setText("reviewed")
    editor.bulk.tag_button.click()
    qtbot.waitUntil(lambda: not set(filled.values()) & set(listed(window)), timeout=2000)
    entries = service.store_for("main").get_many(listed(window)).values()
    assert len(entries) == 4 and all("reviewed" in e.tags for e in entries)


def test_pin_toggles(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    select(qtbot, window, filled["tests"])
    window.browser.editor.pin_button.click()
    qtbot.waitUntil(lambda: service.get("main", filled["tests"]).pinned)
    row = window.browser.model.row_of(filled["tests"])
    assert row is not None
    qtbot.waitUntil(lambda: window.browser.model.index(row, 6).data() == "active · pinned")


def test_ctrl_f_focuses_search(qtbot: QtBot, window: MainWindow) -> None:
    window.go(window.nav.currentRow() + 2)  # away from Memories
    window.activateWindow()
    window.find_action.trigger()
    assert window.pages.currentWidget() is window.memories
    assert window.browser.filters.search.hasFocus() or window.focusWidget() is (
        window.browser.filters.search
    )


def test_escape_clears_the_search_then_leaves_it(
    qtbot: QtBot, window: MainWindow, filled: dict[str, str]
) -> None:
    qtbot.waitUntil(lambda: window.browser.model.rowCount() == len(filled))
    search = window.browser.filters.search
    window.browser.focus_search()
    qtbot.keyClicks(search, "tea")
    qtbot.keyClick(search, Qt.Key.Key_Escape)
    assert search.text() == "" and window.focusWidget() is search
    qtbot.keyClick(search, Qt.Key.Key_Escape)
    assert window.focusWidget() is window.browser.table


def test_a_large_result_shows_its_first_rows_then_the_rest(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from desktop.memories import query

    monkeypatch.setattr(query, "FIRST_IDS", 3)
    ids = [add(service, operator, f"Kite number {n} flies well") for n in range(8)]
    add(service, operator, "A red balloon")
    answers: list[tuple[int, bool]] = []
    window.browser.runner.ready.connect(lambda _r, got, _t, done: answers.append((len(got), done)))
    qtbot.keyClicks(window.browser.filters.search, "kite")
    qtbot.waitUntil(lambda: window.browser.count_label.text() == "8 memories match")
    # The first three came on their own, then all eight, appended without a reset.
    assert answers[-2:] == [(3, False), (8, True)]
    assert sorted(window.browser.model.ids()) == sorted(ids)
    # A query with few matches answers once, with all of them.
    window.browser.filters.search.clear()
    qtbot.waitUntil(lambda: window.browser.count_label.text() == "9 memories")
    answers.clear()
    qtbot.keyClicks(window.browser.filters.search, "balloon")
    qtbot.waitUntil(lambda: window.browser.count_label.text() == "1 memory match")
    assert answers[-1] == (1, True) and all(done for _, done in answers)


def test_tab_leaves_the_memory_list_and_keeps_the_selection(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    select(qtbot, window, filled["tea"])
    table = window.browser.table
    table.setFocus()
    qtbot.waitUntil(table.hasFocus)
    qtbot.keyClick(table, Qt.Key.Key_Tab)
    assert not table.hasFocus()
    assert window.browser.selected_ids() == [filled["tea"]]


def test_text_over_the_limit_says_how_much_to_cut_in_red(qtbot: QtBot, window: MainWindow) -> None:
    editor = window.browser.editor
    window.new_entry()
    editor.content.setPlainText("y" * (MAX_CONTENT_CHARS + 100))
    assert not editor.save_button.isEnabled()
    assert editor.counter.text() == "2,100 / 2,000 characters: shorten it by 100 to save"
    red = editor.counter.palette().color(QPalette.ColorRole.WindowText)
    assert red.name() == "#b42318"
    editor.content.setPlainText("y" * MAX_CONTENT_CHARS)
    assert editor.save_button.isEnabled()
    assert editor.counter.text() == "2,000 / 2,000 characters"
    assert editor.counter.palette().color(QPalette.ColorRole.WindowText) != red


def test_a_forget_in_another_process_takes_away_the_undo_of_what_it_forgot(
    qtbot: QtBot,
    service: MemoryService,
    data_dir: DataDir,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    # One memory about tea deleted in the app (Ctrl+Z could bring it back), then
    # everything about tea forgotten with `ambry forget` in a terminal: an undo must
    # not bring back a memory about a forgotten topic.
    other = add(service, window.state.operator(), "Drinks tea before noon")
    target = filled["tea"]
    select(qtbot, window, target)
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: target not in listed(window))
    assert window.browser.undo_action.isEnabled()
    assert main(["--data-dir", str(data_dir.root), "forget", "tea", "--yes"]) == 0
    assert service.store_for("main").get(other) is None
    window.state.poll()
    assert not window.browser.undo_action.isEnabled()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert service.store_for("main").get(target) is None


def test_an_undo_after_a_forget_in_a_group_not_shown_brings_nothing_back(
    qtbot: QtBot,
    service: MemoryService,
    data_dir: DataDir,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    other = add(service, window.state.operator(), "Drinks tea before noon")
    target = filled["tea"]
    select(qtbot, window, target)
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: target not in listed(window))
    window.state.set_group("work")  # the forget below happens where the app is not looking
    assert main(["--data-dir", str(data_dir.root), "forget", "tea", "--yes"]) == 0
    assert service.store_for("main").get(other) is None
    assert window.browser.commands.undo() == []
    assert service.store_for("main").get(target) is None
    assert shown[-1][1].startswith("Nothing to undo in 'main': memories were forgotten")
    assert not window.browser.undo_action.isEnabled()


def test_a_new_search_starts_at_its_first_rows(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    requests = [
        StoreRequest(EntryType.FACT, f"{'Lisbon trip' if i % 3 == 0 else 'Note'} number {i}", ())
        for i in range(300)
    ]
    service.store_entries(operator, requests)
    browser = window.browser
    browser._on_query(browser.filters.query())  # the list of the memories stored above
    qtbot.waitUntil(lambda: browser.model.total == 300 and not browser.model.partial)
    bar = browser.table.verticalScrollBar()
    browser.table.scrollToBottom()
    qtbot.waitUntil(lambda: bar.value() > 0)
    browser.filters.search.setText("lisbon")
    qtbot.waitUntil(lambda: browser.model.total == 100 and not browser.model.partial)
    assert bar.value() == 0


def test_the_selection_pane_counts_follow_the_list(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    browser = window.browser
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    browser.table.selectAll()
    assert browser.editor.bulk.title.text() == "4 memories selected"
    add(service, operator, "Moved to Porto")
    qtbot.waitUntil(lambda: len(listed(window)) == 5)
    qtbot.waitUntil(lambda: browser.editor.bulk.title.text() == "4 of 5 memories selected")


def test_deleting_thousands_says_how_many_earlier_versions_come_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    made = service.store_entries(
        operator, [StoreRequest(EntryType.FACT, f"Fact {i}", ()) for i in range(1200)]
    )
    first = [o.entry.id for o in made]
    newer = service.store_entries(
        operator,
        [
            StoreRequest(EntryType.FACT, f"Fact {i} again", (), supersedes=first[i])
            for i in range(300)
        ],
    )
    # The newer versions, and of 50 of them the earlier version too: those come back never.
    doomed = [o.entry.id for o in newer] + first[:50] + first[300:1100]
    assert window.commands.delete(doomed, window)
    assert dialogs.asked[-1].startswith("Delete these 1,150 memories?")
    assert "250 earlier versions they replaced become current again." in dialogs.asked[-1]
    # More than a few hundred: in the background, in batches.
    qtbot.waitUntil(lambda: not window.commands.jobs.running, timeout=20_000)
    assert (
        "info",
        "Deleted 1,150 memories. 250 earlier versions are current again. Ctrl+Z to undo.",
    ) in shown
