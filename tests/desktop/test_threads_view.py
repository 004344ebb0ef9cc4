"""The threads page: handoffs rendered, edited with a conflict check, restored; threads managed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QCloseEvent
from PySide6.QtWidgets import QScrollArea
from pytestqt.qtbot import QtBot

from core.continuity import context as continuity
from core.continuity import episodes, handoffs, session_handoffs, threads
from core.memory import forgetting
from core.model.entries import Actor
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from desktop.threads.view import LOOSE_TITLE, Tab, ThreadsPage
from desktop.widgets import messages
from tests.desktop.conftest import Dialogs

HANDOFF = """# Website redesign

Status: header live on staging.

## Next steps
- move the blog templates
- [ ] ask Dana about the font licence
"""


@pytest.fixture
def thread_id(service: MemoryService, agent_caller: Caller) -> str:
    """A thread with one handoff version by an agent and two exchanges."""
    entry = continuity.enter_thread(service, agent_caller, "Website redesign")
    assert entry.thread is not None
    handoffs.write_handoff(service, entry.caller, entry.thread.id, HANDOFF)
    episodes.log_exchange(service, entry.caller, "user", "Move the blog list page.", "t1")
    episodes.log_exchange(service, entry.caller, "assistant", "Moved; pagination left.", "t1")
    return entry.thread.id


def open_page(qtbot: QtBot, window: MainWindow, thread_id: str) -> ThreadsPage:
    window.go(Nav.THREADS)
    page = window.threads
    qtbot.waitUntil(lambda: page.model.row_of(thread_id) is not None)
    page.select(thread_id)
    return page


def current(service: MemoryService, thread_id: str) -> handoffs.ThreadHandoff:
    handoff = handoffs.read_handoff(service, "main", thread_id)
    assert handoff is not None
    return handoff


def test_thread_list_and_its_handoff(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    thread_id: str,
    qtmodeltester: object,
) -> None:
    page = open_page(qtbot, window, thread_id)
    for model in (page.model, page.history.model, page.exchanges):
        qtmodeltester.check(model)  # type: ignore[attr-defined]
    row = [page.model.index(0, c).data() for c in range(page.model.columnCount())]
    assert row[0] == "Website redesign" and row[2:] == ["v1", "2"]
    assert page.title.text() == "Website redesign"
    rendered = page.handoff.rendered.toPlainText()
    assert "Website redesign" in rendered and "# Website" not in rendered  # markdown, rendered
    assert "by an agent" in page.handoff.meta.text()
    opened = page.handoff.open_view.toPlainText()
    assert "move the blog templates" in opened and "ask Dana about the font licence" in opened
    assert "No session of this thread has left a note." in page.handoff.session_view.toPlainText()
    assert page.exchanges.rowCount() == 2
    assert page.exchanges.index(0, 2).data() == "Moved; pagination left."

    # The last session's note, once the agent leaves one.
    caller = continuity.enter_thread(service, agent_caller, thread_id).caller
    session_handoffs.end_session_with_handoff(service, caller, "Stopped at the pagination.")
    qtbot.waitUntil(lambda: "Stopped at the pagination." in page.handoff.session_view.toPlainText())
    assert "waiting for the thread's next agent session" in page.handoff.session_view.toPlainText()


def test_a_long_thread_title_wraps_instead_of_widening_the_page(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    title = "<b>Kyoto</b> trip: " + "plan the temples, the trains and the food " * 4
    entry = continuity.enter_thread(service, agent_caller, title.strip())
    assert entry.thread is not None
    window.resize(1600, 1000)
    page = open_page(qtbot, window, entry.thread.id)
    assert page.title.text() == title.strip() and page.title.textFormat() is Qt.TextFormat.PlainText
    assert page.title.toolTip() == title.strip()
    # As wide as with a short title: the list and the tabs decide, not the title.
    assert page.minimumSizeHint().width() < 1000
    scroll = window.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    qtbot.waitUntil(lambda: not scroll.horizontalScrollBar().isVisible())


def test_edit_saves_a_new_version(
    qtbot: QtBot, service: MemoryService, window: MainWindow, thread_id: str
) -> None:
    page = open_page(qtbot, window, thread_id)
    pane = page.handoff
    pane.rendered.setFocus()
    qtbot.keyClick(pane.rendered, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert pane.editing and pane.base_version == 1
    assert pane.editor.toPlainText() == HANDOFF.rstrip()
    assert not page.table.isEnabled()  # one thread at a time while editing
    pane.editor.setPlainText(HANDOFF.replace("staging", "production"))
    qtbot.keyClick(pane.editor, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    assert not pane.editing and page.table.isEnabled()
    saved = current(service, thread_id)
    assert saved.version == 2 and saved.author == Actor.OPERATOR.value
    assert "header live on production" in saved.markdown
    assert "header live on production" in pane.rendered.toPlainText()
    qtbot.waitUntil(lambda: page.model.index(0, 2).data() == "v2")
    assert page.tabs.tabText(Tab.HISTORY) == "History (2)"


def test_conflict_on_a_stale_base_version(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    thread_id: str,
) -> None:
    page = open_page(qtbot, window, thread_id)
    pane = page.handoff
    pane.edit_button.click()
    mine = HANDOFF + "\n- my own note\n"
    pane.editor.setPlainText(mine)
    # An agent writes while the person edits: the editor is left alone.
    handoffs.write_handoff(service, agent_caller, thread_id, "# Website redesign\n\nAgent's text.")
    qtbot.waitUntil(lambda: page.model.index(0, 2).data() == "v2")
    assert pane.editor.toPlainText() == mine

    pane.save_button.click()
    assert pane.conflict.isVisible()
    assert "an agent saved version 2" in pane.conflict_text.text()
    assert "you started from version 1" in pane.conflict_text.text()
    assert pane.editing and pane.editor.toPlainText() == mine  # nothing lost
    assert current(service, thread_id).version == 2  # and nothing overwritten

    pane.reload_button.click()
    assert not pane.conflict.isVisible()
    assert pane.base_version == 2
    assert "Agent's text." in pane.editor.toPlainText()
    pane.editor.appendPlainText("- merged by hand")
    pane.save_button.click()
    assert current(service, thread_id).version == 3
    assert current(service, thread_id).markdown.endswith("- merged by hand")


def test_a_forgotten_handoff_leaves_the_page_and_an_edit_from_it_is_refused(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    operator: Caller,
    window: MainWindow,
    thread_id: str,
) -> None:
    handoffs.write_handoff(service, agent_caller, thread_id, HANDOFF + "- call Dana re divorce\n")
    ending = continuity.enter_thread(service, agent_caller, thread_id).caller
    session_handoffs.end_session_with_handoff(service, ending, "Dana's divorce came up.")
    page = open_page(qtbot, window, thread_id)
    pane = page.handoff
    qtbot.waitUntil(lambda: "divorce" in pane.rendered.toPlainText())
    assert "divorce" in pane.session_view.toPlainText()
    pane.edit_button.click()
    assert pane.base_version == 2
    mine = pane.editor.toPlainText() + "\n- my own note"
    pane.editor.setPlainText(mine)

    # `ambry forget divorce` while the person edits.
    service.forget(operator, forgetting.plan_forget(service, "main", "divorce"))
    qtbot.waitUntil(lambda: page.model.index(0, 2).data() == "v1")
    assert page.history.model.rowCount() == 1
    assert page.tabs.tabText(Tab.HISTORY) == "History (1)"
    assert "divorce" not in page.history.diff_view.toPlainText()
    for beside in (pane.open_view, pane.session_view):  # beside the editor too
        assert "divorce" not in beside.toPlainText()
    assert pane.editor.toPlainText() == mine  # the person's text is left alone

    # Saving it would bring the forgotten version back as current: refused, even
    # once an agent has written again since.
    handoffs.write_handoff(service, agent_caller, thread_id, "# Website redesign\n\nLater.")
    pane.save_button.click()
    assert pane.conflict.isVisible()
    assert current(service, thread_id).markdown.endswith("Later.")
    assert all(
        "divorce" not in h.markdown for h in handoffs.handoff_history(service, "main", thread_id)
    )
    pane.reload_button.click()
    pane.cancel()

    # Started from a version that was then forgotten, with nothing written since.
    handoffs.write_handoff(service, agent_caller, thread_id, "- the divorce, again")
    qtbot.waitUntil(lambda: page.model.index(0, 2).data() == "v4")
    pane.edit_button.click()
    service.forget(operator, forgetting.plan_forget(service, "main", "divorce"))
    pane.save_button.click()
    text = pane.conflict_text.text()
    assert "Version 4, which you started from, mentioned a topic that was forgotten" in text
    assert "version 3 is current again" in text
    assert current(service, thread_id).version == 3


def test_restore_an_older_version(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    thread_id: str,
    dialogs: Dialogs,
) -> None:
    handoffs.write_handoff(service, agent_caller, thread_id, "# Website redesign\n\nRewritten.")
    page = open_page(qtbot, window, thread_id)
    page.tabs.setCurrentIndex(Tab.HISTORY)
    history = page.history
    assert history.model.rowCount() == 2
    assert not history.restore_button.isEnabled()  # the current version is selected
    history.table.selectRow(1)
    diff = history.diff_view.toPlainText()
    assert "Version 1 is the oldest kept" in diff
    history.table.selectRow(0)
    assert "+Rewritten." in history.diff_view.toPlainText()
    assert "-Status: header live on staging." in history.diff_view.toPlainText()
    history.table.selectRow(1)
    history.compare_box.setCurrentIndex(1)  # against the current version
    assert "+++ version 2" in history.diff_view.toPlainText()

    dialogs.answer = False
    history.restore_button.click()
    assert len(dialogs.asked) == 1 and "version 1" in dialogs.asked[0]
    assert current(service, thread_id).version == 2

    dialogs.answer = True
    history.restore_button.click()
    restored = current(service, thread_id)
    assert restored.version == 3 and restored.markdown == HANDOFF.rstrip()
    assert history.model.rowCount() == 3
    assert "header live on staging" in page.handoff.rendered.toPlainText()


def test_restore_does_not_replace_a_version_written_while_the_person_chose(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    thread_id: str,
    shown: list[tuple[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handoffs.write_handoff(service, agent_caller, thread_id, "# Website redesign\n\nRewritten.")
    page = open_page(qtbot, window, thread_id)
    page.tabs.setCurrentIndex(Tab.HISTORY)
    history = page.history
    history.table.selectRow(1)

    def agent_writes_meanwhile(*args: object) -> bool:
        handoffs.write_handoff(service, agent_caller, thread_id, "Agent's newest text.")
        return True

    monkeypatch.setattr(messages, "confirm", agent_writes_meanwhile)
    history.restore_button.click()
    # The agent's version 3 stays current; the person is told, and sees it listed.
    assert current(service, thread_id).version == 3
    assert current(service, thread_id).markdown == "Agent's newest text."
    assert any("is at version 3, not 2" in text for _level, text in shown)
    assert history.model.rowCount() == 3


def test_rename_and_delete_ask_first(
    qtbot: QtBot,
    service: MemoryService,
    window: MainWindow,
    thread_id: str,
    dialogs: Dialogs,
) -> None:
    page = open_page(qtbot, window, thread_id)
    dialogs.text = "Website relaunch"
    page.rename_button.click()
    qtbot.waitUntil(lambda: page.title.text() == "Website relaunch")
    assert threads.get_thread(service, "main", thread_id).title == "Website relaunch"

    dialogs.answer = False
    page.table.setFocus()
    qtbot.keyClick(page.table, Qt.Key.Key_Delete)
    assert "Delete the thread “Website relaunch” and 1 handoff version?" in dialogs.asked[-1]
    assert "2 exchanges stay" in dialogs.asked[-1]
    assert page.model.rowCount() == 1

    dialogs.answer = True
    page.delete_button.click()
    qtbot.waitUntil(lambda: page.model.rowCount() == 0)
    assert threads.list_threads(service, "main") == []
    # Its turns stay, filed under no thread, and the page still shows them.
    assert page.stack.currentIndex() == 0 and page.title.text() == LOOSE_TITLE
    assert page.exchanges.rowCount() == 2
    assert page.tabs.currentIndex() == Tab.EXCHANGES
    assert not page.tabs.isTabEnabled(Tab.HANDOFF)


def test_turns_filed_under_no_thread_are_listed_and_searched(
    qtbot: QtBot, service: MemoryService, window: MainWindow, thread_id: str
) -> None:
    # Before, the page listed a thread's turns only: turns an agent logged outside
    # any thread never showed, and with no thread at all the page was empty.
    loose = service.open_session("main", Actor.AGENT, "no-thread-agent")
    episodes.log_exchange(service, loose, "user", "Remind me to renew the passport.")
    page = open_page(qtbot, window, thread_id)
    assert page.title.text() == "Website redesign" and page.exchanges.rowCount() == 2
    assert page.loose_button.isVisible() and page.loose_button.isEnabled()
    assert not page.no_threads.isVisible()
    page.loose_button.click()
    assert page.title.text() == LOOSE_TITLE
    assert [page.exchanges.record_at(0).text] == ["Remind me to renew the passport."]
    assert page.exchange_pane.status.text() == "Turns filed under no thread, newest first."
    # A refresh (another turn logged) keeps them on screen; choosing a thread leaves.
    episodes.log_exchange(service, loose, "assistant", "Noted: passport renewal.")
    qtbot.waitUntil(lambda: page.exchanges.rowCount() == 2)
    assert page.title.text() == LOOSE_TITLE
    page.select(thread_id)
    assert page.title.text() == "Website redesign" and page.tabs.isTabEnabled(Tab.HANDOFF)


def test_a_group_with_turns_but_no_threads_shows_them(
    qtbot: QtBot, service: MemoryService, window: MainWindow
) -> None:
    loose = service.open_session("main", Actor.AGENT, "no-thread-agent")
    episodes.log_exchange(service, loose, "user", "The allotment needs water on Friday.")
    window.go(Nav.THREADS)
    page = window.threads
    qtbot.waitUntil(lambda: page.stack.currentIndex() == 0)
    assert page.title.text() == LOOSE_TITLE and page.exchanges.rowCount() == 1
    assert not page.loose_button.isEnabled()  # already shown
    assert page.no_threads.isVisible()  # the list says how a thread begins
    pane = page.exchange_pane
    pane.search.setText("allotment water")
    qtbot.waitUntil(lambda: pane.hits.rowCount() == 1)
    assert pane.status.text() == "1 turn found, best first."  # no thread to lift


def test_empty_state(qtbot: QtBot, window: MainWindow) -> None:
    window.go(Nav.THREADS)
    page = window.threads
    assert page.stack.currentIndex() == 1
    assert page.handoff.edit_button.isEnabled() is False


def test_switching_group_asks_before_dropping_a_handoff_edit(
    qtbot: QtBot, window: MainWindow, thread_id: str, dialogs: Dialogs
) -> None:
    page = open_page(qtbot, window, thread_id)
    pane = page.handoff
    pane.edit_button.click()
    mine = HANDOFF + "\n- not saved yet\n"
    pane.editor.setPlainText(mine)
    box = window.group_box
    dialogs.text = "work"

    dialogs.answer = False  # keep editing
    box.activated.emit(box.count() - 1)
    assert window.state.group == "main" and box.currentText() == "main"
    assert pane.editing and pane.editor.toPlainText() == mine
    assert "Switch group without saving your edit of this thread's handoff?" in dialogs.asked

    dialogs.answer = True
    box.activated.emit(box.count() - 1)
    assert window.state.group == "work" and not pane.editing


def test_quitting_asks_before_dropping_a_handoff_edit(
    qtbot: QtBot, window: MainWindow, thread_id: str, dialogs: Dialogs
) -> None:
    pane = open_page(qtbot, window, thread_id).handoff
    pane.edit_button.click()
    assert window.may_leave("Quit") and not dialogs.asked  # nothing changed: nothing to lose

    pane.editor.setPlainText("# Website redesign\n\nRewritten before quitting.")
    dialogs.answer = False
    event = QCloseEvent()
    window.closeEvent(event)
    assert not event.isAccepted() and pane.editing
    assert dialogs.asked == ["Quit without saving your edit of this thread's handoff?"]


def test_the_title_column_takes_the_room_the_counts_do_not_need(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    for i in range(12):
        continuity.enter_thread(service, agent_caller, f"Chat about scheduler {i}")
    # Opened small, then maximised: the list grows with the window, not only the tabs.
    window.resize(900, 600)
    window.go(Nav.THREADS)
    page = window.threads
    qtbot.waitUntil(lambda: page.model.rowCount() == 12)
    table = page.table
    char = table.fontMetrics().averageCharWidth()
    for size in ((1600, 1000), (1200, 800)):
        window.resize(*size)
        qtbot.waitUntil(lambda s=size: window.width() == s[0])
        qtbot.wait(50)
        header = table.horizontalHeader()
        for column in (1, 2, 3):
            assert not table.isColumnHidden(column)
            fit = max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
            assert table.columnWidth(column) <= fit, (size, column)
        title = table.columnWidth(0)
        assert title >= (35 if size[0] == 1600 else 16) * char, size
        if size[0] == 1600:
            assert table.fontMetrics().horizontalAdvance("Chat about scheduler 11") < title
        assert table.horizontalScrollBar().maximum() == 0


def test_the_exchanges_tab_lists_turns_newest_said_first(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    # Before, turns came in the order they were logged: 24th, 22nd, 25th.
    entry = continuity.enter_thread(service, agent_caller, "Order")
    assert entry.thread is not None
    for at in ("2026-11-24T10:00:00Z", "2026-11-22T10:00:00Z", "2026-11-25T10:00:00Z"):
        episodes.log_exchange(service, entry.caller, "user", f"said {at[:10]}", at=at)
    page = open_page(qtbot, window, entry.thread.id)
    qtbot.waitUntil(lambda: page.exchanges.rowCount() == 3)
    texts = [page.exchanges.record_at(row).text for row in range(3)]
    assert texts == ["said 2026-11-25", "said 2026-11-24", "said 2026-11-22"]
    assert page.exchange_pane.status.text() == "This thread's turns, newest first."
