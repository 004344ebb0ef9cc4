"""Nothing the person typed or kept is lost by a click, a key or an agent's write."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import EntryType, Status
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs, add
from tests.desktop.test_browser import listed, select


def click_row(qtbot: QtBot, window: MainWindow, entry_id: str) -> None:
    table = window.browser.table
    row = window.browser.model.row_of(entry_id)
    assert row is not None
    rect = table.visualRect(window.browser.model.index(row, 1))
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def test_cancel_on_discard_puts_the_selection_back(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    a, b = filled["luna"], filled["tea"]
    select(qtbot, window, a)
    editor = window.browser.editor
    editor.content.setPlainText("Has a dog named Luna and a cat")
    dialogs.answer = False
    click_row(qtbot, window, b)
    assert dialogs.asked == ["Discard your changes to this memory?"]
    # The highlight is back on the memory being edited, with the edits.
    assert window.browser.selected_ids() == [a]
    assert editor.entry is not None and editor.entry.id == a
    assert editor.content.toPlainText() == "Has a dog named Luna and a cat"

    # Del now asks about A, by its words, and deletes A, never B.
    dialogs.answer = True
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    assert "“Has a dog named Luna”" in dialogs.asked[-1]
    qtbot.waitUntil(lambda: a not in listed(window))
    assert service.store_for("main").get(b) is not None


def test_delete_prompts_name_the_memories(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, dialogs: Dialogs
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    dialogs.answer = False
    window.browser.delete_ids([filled["tea"]])
    assert "Delete this memory?\n\n“Prefers green tea”" in dialogs.asked[-1]
    ids = [filled["luna"], filled["tea"], filled["tests"], filled["office"]]
    window.browser.delete_ids(ids)
    assert "Delete these 4 memories?" in dialogs.asked[-1]
    assert (
        "“Has a dog named Luna”, “Prefers green tea”, “Run the tests first”" in (dialogs.asked[-1])
    )
    assert "and 1 memory more" in dialogs.asked[-1]
    assert len(listed(window)) == 4


def test_reject_in_review_is_undone_with_ctrl_z(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    first = add(service, operator, "A forum says the server is in Oslo", low_trust=True)
    second = add(service, operator, "A page claims Luna is a cat", low_trust=True)
    window.go(Nav.REVIEW)
    review = window.review
    qtbot.waitUntil(lambda: review.model.rowCount() == 2)
    assert review.selected_ids() == [first]
    assert not review.undo_action.isEnabled()

    qtbot.keyClick(review.table, Qt.Key.Key_R)
    assert service.store_for("main").get(first) is None
    assert review.undo_action.isEnabled()
    qtbot.keyClick(review.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    back = service.store_for("main").get(first)
    assert back is not None and back.status is Status.CANDIDATE
    qtbot.waitUntil(lambda: review.model.rowCount() == 2)
    assert review.selected_ids() == [first]
    assert second in [review.model.id_at(r) for r in range(2)]
    assert window.nav.item(Nav.REVIEW).text() == "Review (2)"


def test_quitting_asks_about_unsaved_settings(
    qtbot: QtBot, window: MainWindow, dialogs: Dialogs
) -> None:
    window.go(Nav.SETTINGS)
    box = window.settings.editors["max_brief_entries"]
    assert not window.settings.is_dirty()
    box.setValue(7)  # type: ignore[union-attr]
    assert window.settings.is_dirty()
    dialogs.answer = False
    window.close()
    assert dialogs.asked == ["Quit without saving your changes to the settings?"]
    assert window.isVisible()

    # Ctrl+S saves them; then quitting asks nothing.
    field = window.settings.editors["stale_threshold"]
    field.setFocus()
    qtbot.keyClick(field, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert window.state.config.max_brief_entries == 7
    assert not window.settings.is_dirty()
    dialogs.answer = True
    window.close()
    assert len(dialogs.asked) == 1


def test_agent_supersede_during_an_edit_offers_to_save_on_top(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    agent_caller: Caller,
    window: MainWindow,
) -> None:
    a = filled["office"]
    select(qtbot, window, a)
    editor = window.browser.editor
    editor.content.setPlainText("Works in the Lyon office on Tuesdays")
    request = StoreRequest(EntryType.FACT, "Works in the Paris office", ("work",), supersedes=a)
    agents = service.store_entries(agent_caller, [request])[0].entry
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.is_superseded)
    # The person's text is still there, editable, with a way to keep it.
    assert editor.orphaned
    assert editor.content.toPlainText() == "Works in the Lyon office on Tuesdays"
    assert editor.content.isEnabled() and not editor.content.isReadOnly()
    assert editor.notice.save_on_top_button.isVisible()
    editor.content.setFocus()
    assert "replaced this memory while you were editing" in editor.notice.text.text()

    qtbot.keyClick(editor.content, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: editor.entry is not None and not editor.entry.is_superseded)
    mine = editor.entry
    assert mine is not None and mine.content == "Works in the Lyon office on Tuesdays"
    chain = [e.id for e in service.history("main", mine.id)]
    assert chain[-3:] == [a, agents.id, mine.id] or chain[:3] == [mine.id, agents.id, a]
    assert service.get("main", agents.id).superseded_by == mine.id
    assert not editor.notice.isVisible()


def test_saving_over_a_version_an_agent_just_replaced_says_so(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    agent_caller: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    a = filled["office"]
    select(qtbot, window, a)
    editor = window.browser.editor
    editor.content.setPlainText("Works in the Lyon office on Tuesdays")
    editor.content.setFocus()
    request = StoreRequest(EntryType.FACT, "Works in the Paris office", ("work",), supersedes=a)
    service.store_entries(agent_caller, [request])
    # Saved before the window has heard of the agent's version.
    qtbot.keyClick(editor.content, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert shown and shown[-1][0] == "warning"
    assert "an agent replaced this memory while you were editing" in shown[-1][1]
    assert not any("cannot supersede" in text for _level, text in shown)
    assert editor.orphaned and editor.notice.save_on_top_button.isVisible()
    assert editor.content.toPlainText() == "Works in the Lyon office on Tuesdays"


def test_agent_delete_during_an_edit_keeps_the_text_as_a_new_memory(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    agent_caller: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    a = filled["office"]
    select(qtbot, window, a)
    editor = window.browser.editor
    editor.content.setPlainText("Works in the Lyon office on Tuesdays")
    service.delete(agent_caller, a)
    qtbot.waitUntil(lambda: a not in listed(window))
    # Not dropped: the text stays, editable, and the pane says what happened.
    assert editor.is_new and editor.is_dirty()
    assert editor.content.toPlainText() == "Works in the Lyon office on Tuesdays"
    assert editor.tags.text() == "work"
    assert "deleted this memory while you were editing" in editor.notice.text.text()
    assert not editor.notice.save_on_top_button.isVisible()
    assert dialogs.asked == []

    editor.content.setFocus()
    qtbot.keyClick(editor.content, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: editor.entry is not None)
    mine = editor.entry
    assert mine is not None and mine.content == "Works in the Lyon office on Tuesdays"
    assert mine.tags == ("work",) and mine.id != a
    assert not editor.notice.isVisible()


def test_new_memory_cancel_and_escape(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, dialogs: Dialogs
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    editor = window.browser.editor
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert editor.is_new and editor.cancel_button.isVisible()
    assert not editor.revert_button.isVisible()
    qtbot.keyClick(editor.content, Qt.Key.Key_Escape)
    assert not editor.is_new and dialogs.asked == []  # nothing typed: nothing to ask

    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(editor.content, "Half a thought")
    dialogs.answer = False
    qtbot.keyClick(editor.content, Qt.Key.Key_Escape)
    assert dialogs.asked == ["Discard your changes to this memory?"]
    assert editor.is_new and editor.content.toPlainText() == "Half a thought"
    dialogs.answer = True
    qtbot.mouseClick(editor.cancel_button, Qt.MouseButton.LeftButton)
    assert not editor.is_new and len(listed(window)) == 4


def test_ctrl_s_saves_a_new_and_an_edited_memory(
    qtbot: QtBot, service: MemoryService, filled: dict[str, str], window: MainWindow
) -> None:
    editor = window.browser.editor
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(editor.content, "Lives in Lyon")
    editor.content.setFocus()
    qtbot.keyClick(editor.content, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: len(listed(window)) == 5)
    assert service.get("main", listed(window)[0]).content == "Lives in Lyon"

    select(qtbot, window, filled["tea"])
    editor.tags.setText("food, drinks")
    editor.tags.setFocus()
    qtbot.keyClick(editor.tags, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: service.get("main", filled["tea"]).is_superseded)
    assert window.browser.selected_ids() != [] and editor.entry is not None
    assert editor.entry.tags == ("food", "drinks")


def test_selection_restored_when_the_edited_memory_is_filtered_out(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, dialogs: Dialogs
) -> None:
    select(qtbot, window, filled["luna"])
    window.browser.editor.content.setPlainText("Edited")
    qtbot.keyClicks(window.browser.filters.search, "tea")
    qtbot.waitUntil(lambda: listed(window) == [filled["tea"]])
    dialogs.answer = False
    click_row(qtbot, window, filled["tea"])
    assert window.browser.selected_ids() == []
    assert window.browser.editor.content.toPlainText() == "Edited"
    assert window.browser.table.indexAt(QPoint(1, 1)).isValid()


def test_command_palette_and_keys_list(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, service: MemoryService
) -> None:
    service.store_for("work")
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.palette_dialog
    qtbot.waitUntil(palette.isVisible)
    qtbot.keyClicks(palette.search, "conn")
    assert palette.shown_names() == ["Go to Connect an agent"]
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert not palette.isVisible()
    assert window.pages.currentWidget() is window.connect_page

    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    palette = window.palette_dialog
    qtbot.keyClicks(palette.search, "group work")
    assert palette.shown_names() == ["Switch to group work"]
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    assert window.state.group == "work"
    # Keys that act in place are listed under F1, not run from the palette.
    assert "Cancel a new memory" not in [c.name for c in palette._commands]

    qtbot.keyClick(window, Qt.Key.Key_F1)
    keys = window.keys_dialog
    qtbot.waitUntil(keys.isVisible)
    text = keys.table.text()
    for key in ("Ctrl+K", "Ctrl+S", "Ctrl+Z", "Escape", "Ctrl+8", "F1"):
        assert f"<b>{key}</b>" in text
    keys.close()
