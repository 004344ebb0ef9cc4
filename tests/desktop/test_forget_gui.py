"""Forget a topic from the app: the plan listed, the confirmation, the forget, and undo."""

from __future__ import annotations

import logging

import apsw
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from core.continuity import handoffs, session_handoffs, threads
from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.memory.forgetting import plan_counts, plan_forget
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType, Privacy
from core.model.text import plural
from core.service import Caller, MemoryService
from core.storage import db, workspace
from core.storage.paths import DataDir
from desktop.settings.forget_dialog import ForgetDialog
from desktop.settings.forget_list import FOUND_BY_TAGS, memory_kind
from desktop.shell.main_window import MainWindow, Nav
from desktop.shell.palette import CommandPalette
from tests.desktop.conftest import Dialogs, add
from tests.desktop.test_browser import listed, select
from tests.desktop.test_privacy_gui import store

TOPIC = "divorce"
LOOK_MS = 10_000


def opened(window: MainWindow) -> ForgetDialog:
    """Edit → Forget a topic…"""
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    edit = menus["Edit"]
    assert isinstance(edit, QMenu)
    [forget] = [a for a in edit.actions() if a.text() == "Forget a topic…"]
    forget.trigger()
    dialog = window.settings.data_panel.forget_dialog
    assert dialog is not None and dialog.isVisible()
    return dialog


def look(qtbot: QtBot, dialog: ForgetDialog, topic: str) -> None:
    """Type ``topic`` and press Enter; returns once the answer is on screen."""
    dialog.topic.clear()
    qtbot.keyClicks(dialog.topic, topic)
    with qtbot.waitSignal(dialog.looked, timeout=LOOK_MS):
        qtbot.keyClick(dialog.topic, Qt.Key.Key_Return)


def forget(qtbot: QtBot, dialog: ForgetDialog) -> None:
    """Click the forget button and wait until the forget has ended."""
    qtbot.mouseClick(dialog.forget_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.busy_forgetting, timeout=LOOK_MS)


@pytest.fixture
def about(service: MemoryService, operator: Caller, memory_keyring: object) -> dict[str, object]:
    """Things about the topic of every kind a forget takes, and one thread's handoff
    that stays; by a short name."""
    agent = service.open_session("main", Actor.AGENT, "tests")
    public = add(service, operator, "Dana's divorce is final", tags=("family",))
    private = store(service, operator, "Lawyer meeting on Friday", Privacy.PRIVATE, ("divorce",))
    secret = store(service, operator, "The settlement figure", Privacy.SECRET, ("divorce",))
    old = add(service, operator, "Divorce papers are in the drawer")
    request = StoreRequest(EntryType.FACT, "Divorce papers are in the safe now", supersedes=old)
    new = service.store_entries(operator, [request])[0].entry.id
    thread, _ = threads.open_thread(service, agent, title="Dana")
    handoffs.write_handoff(service, agent, thread.id, "- Plant the garden")
    handoffs.write_handoff(service, agent, thread.id, "- Plant the garden\n- Dana's divorce")
    inside = enter_thread(service, agent, thread.id).caller
    turn = log_exchange(service, inside, "user", "We talked about the divorce today").exchange.id
    session_handoffs.end_session_with_handoff(service, inside, "The divorce came up again.")
    trashed = service.store(agent, {"type": "fact", "content": "Divorce lawyer is Sam"})
    service.delete(agent, trashed.entry.id)
    return {
        "memories": [public, private, secret, old, new],
        "turn": turn,
        "thread": thread.id,
        "trashed": trashed.entry.id,
    }


def test_the_list_is_what_plan_forget_finds(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    about: dict[str, object],
    window: MainWindow,
) -> None:
    dialog = opened(window)
    look(qtbot, dialog, TOPIC)
    plan = plan_forget(service, "main", TOPIC)
    assert {e.id for e in plan.entries} == set(about["memories"])  # type: ignore[arg-type]
    assert dialog.counts.text() == f"This deletes {plan_counts(plan)}."
    secret = "a secret fact"
    memories = [
        [memory_kind(e), secret if e.privacy is Privacy.SECRET else e.content, ", ".join(e.tags)]
        for e in plan.entries
    ]
    shown = dialog.tree.listed()
    [[kind, note, _]] = shown.pop("1 session handoff")
    assert shown == {
        "5 memories": memories,
        "1 memory agents deleted, in the trash": [["fact", "Divorce lawyer is Sam", ""]],
        "1 version of 1 thread handoff": [
            ["handoff", "Dana: v2 (current) goes; v1 becomes current", ""]
        ],
        "1 conversation turn": [["turn", "Dana, user: We talked about the divorce today", ""]],
    }
    assert kind == "session handoff"
    assert note.startswith("Dana, ") and note.endswith(": The divorce came up again.")
    # An old version says so; a private memory reads as the memory list shows it.
    assert ["fact, superseded", "Divorce papers are in the drawer", ""] in memories
    assert ["fact", "Lawyer meeting on Friday", "divorce"] in memories
    head = dialog.tree.topLevelItem(0)
    assert head is not None
    rows = [head.child(k) for k in range(head.childCount())]
    sealed = [r for r in rows if r is not None and r.text(2) == "divorce"]
    assert len(sealed) == 2 and all(r.toolTip(2) == FOUND_BY_TAGS for r in sealed)
    assert dialog.forget_button.isEnabled()
    assert (
        dialog.forget_button.text() == f"Forget {plural(plan.size, 'item')}…" == "Forget 9 items…"
    )


def test_confirming_forgets_everything_listed(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    about: dict[str, object],
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="desktop.widgets.messages")
    dialog = opened(window)
    look(qtbot, dialog, TOPIC)
    counts = plan_counts(plan_forget(service, "main", TOPIC))
    with qtbot.waitSignal(dialog.forgot, timeout=LOOK_MS) as done:
        qtbot.mouseClick(dialog.forget_button, Qt.MouseButton.LeftButton)
        assert dialog.busy_forgetting and not dialog.topic.isEnabled()
        assert not dialog.forget_button.isEnabled()
    [question] = dialogs.asked
    assert question.startswith(f"Forget everything about “{TOPIC}” in group 'main'?")
    assert f"This deletes {counts}." in question and "cannot be undone" in question

    store_ = service.store_for("main")
    assert all(store_.get(i) is None for i in about["memories"])  # type: ignore[attr-defined]
    turns = store_.execute("SELECT count(*) FROM exchanges WHERE seq = ?", (about["turn"],)).get
    assert turns == 0
    versions = handoffs.handoff_history(service, "main", str(about["thread"]))
    assert [h.version for h in versions] == [1]  # the version that mentioned it is gone
    assert store_.execute("SELECT count(*) FROM trash").get == 0
    assert store_.execute("SELECT count(*) FROM session_handoffs").get == 0
    assert all(store_.get(i) is not None for i in filled.values())  # the rest stays

    said = f"Forgot {counts} about “{TOPIC}” from 'main'."
    assert done.args == [said] and dialog.status.text() == said and ("info", said) in shown
    # The log says what happened, never what was forgotten.
    logged = [r.getMessage() for r in caplog.records if r.name == "desktop.widgets.messages"]
    assert f"Forgot {counts} about “…” from 'main'." in logged
    assert not any(TOPIC in line for line in logged)
    assert dialog.empty.text() == f"Nothing in 'main' mentions “{TOPIC}” now."
    assert not dialog.forget_button.isEnabled()
    assert dialog.caution.isHidden()  # no upgrade left a copy here
    # The window's lists follow at once, without waiting for the next poll.
    qtbot.waitUntil(lambda: sorted(listed(window)) == sorted(filled.values()))


def test_after_a_forget_the_copies_upgrades_left_are_named(
    qtbot: QtBot,
    service: MemoryService,
    about: dict[str, object],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    path = service.store_for("main").path
    path.with_name(path.name + ".bak-v10").write_bytes(b"a copy an upgrade left")
    dialog = opened(window)
    look(qtbot, dialog, TOPIC)
    with qtbot.waitSignal(dialog.forgot, timeout=LOOK_MS):
        qtbot.mouseClick(dialog.forget_button, Qt.MouseButton.LeftButton)
    assert dialog.caution.isVisibleTo(dialog)
    assert dialog.caution.text().startswith("Note: the copies upgrades left (main.sqlite.bak-v10")


def test_declining_deletes_nothing(
    qtbot: QtBot,
    service: MemoryService,
    about: dict[str, object],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    dialogs.answer = False
    dialog = opened(window)
    look(qtbot, dialog, TOPIC)
    before = plan_forget(service, "main", TOPIC)
    qtbot.mouseClick(dialog.forget_button, Qt.MouseButton.LeftButton)
    assert len(dialogs.asked) == 1 and not dialog.busy_forgetting
    after = plan_forget(service, "main", TOPIC)
    assert after == before and after.size == 9
    assert dialog.forget_button.isEnabled()  # the list stays, to forget later


def test_undo_does_not_bring_back_a_memory_about_the_forgotten_topic(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    # Deleted in the app first: Ctrl+Z could bring it back, until tea is forgotten.
    target = filled["tea"]
    other = add(service, window.state.operator(), "Drinks tea before noon")
    select(qtbot, window, target)
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Delete)
    qtbot.waitUntil(lambda: target not in listed(window))
    assert window.acts["undo"].isEnabled()

    dialog = opened(window)
    look(qtbot, dialog, "tea")
    forget(qtbot, dialog)
    assert service.store_for("main").get(other) is None
    # At once, not at the next poll: the undo history of the group is gone.
    assert not window.acts["undo"].isEnabled() and not window.browser.undo_action.isEnabled()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    window.browser.table.setFocus()
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    window.edit.undo()  # as the palette's Undo
    assert service.store_for("main").get(target) is None
    assert shown[-1] == ("info", "Nothing to undo.")


def test_an_empty_topic_or_one_without_words_cannot_be_forgotten(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    dialog = opened(window)
    assert not dialog.forget_button.isEnabled() and dialog.forget_button.text() == "Forget…"
    assert dialog.empty.text().startswith("Type a topic above and press Enter")
    assert not dialog.tree.isVisible() and not dialog.counts.isVisible()

    look(qtbot, dialog, "!?!")
    assert dialog.empty.text() == "“!?!” has no word to look for: type a name or a word."
    assert not dialog.forget_button.isEnabled()
    look(qtbot, dialog, "zebra")
    assert dialog.empty.text() == "Nothing in 'main' mentions “zebra”."
    assert not dialog.forget_button.isEnabled() and not dialog.tree.isVisible()

    # Common words alone are searched for; the dialog says they match a lot.
    look(qtbot, dialog, "the")
    assert dialog.tree.isVisible() and dialog.forget_button.isEnabled()
    assert "is a common one, so it matches a lot" in dialog.caution.text()
    assert dialog.caution.isVisible()
    # Typing again: the list on screen is for the old words until the new ones are read.
    qtbot.keyClicks(dialog.topic, "m")
    assert not dialog.forget_button.isEnabled()


def test_nothing_found_names_the_private_memories_searched_by_their_tags_only(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    memory_keyring: object,
    window: MainWindow,
) -> None:
    # Before: "Nothing in 'main' mentions “Marlowe”." while a private memory said it.
    store(service, operator, "User's therapist is Dr. Marlowe", Privacy.PRIVATE, ("health",))
    dialog = opened(window)
    look(qtbot, dialog, "Marlowe")
    assert dialog.empty.text() == (
        "Nothing in 'main' mentions “Marlowe” where it can look: the words of 1 private or "
        "secret memory are encrypted, so only their tags were searched. Read them in "
        "Memories, and delete any about it there."
    )
    assert not dialog.forget_button.isEnabled()


def test_typing_looks_after_a_pause(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    dialog = opened(window)
    with qtbot.waitSignal(dialog.looked, timeout=LOOK_MS):
        qtbot.keyClicks(dialog.topic, "Lyon")
    assert dialog.tree.listed() == {"1 memory": [["fact", "Works in the Lyon office", "work"]]}
    assert dialog.forget_button.text() == "Forget 1 item…"


def test_the_list_names_the_earlier_version_that_is_current_again_after(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    volvo = add(service, operator, "User drives a Volvo")
    request = StoreRequest(EntryType.FACT, "User drives a Tesla", supersedes=volvo)
    service.store_entries(operator, [request])
    dialog = opened(window)
    look(qtbot, dialog, "Tesla")
    assert dialog.tree.listed() == {
        "1 memory": [["fact", "User drives a Tesla", ""]],
        "1 earlier version without the topic, current again after": [
            ["fact, superseded", "User drives a Volvo", ""]
        ],
    }
    forget(qtbot, dialog)
    assert service.get("main", volvo).superseded_by is None


def test_a_long_plan_scrolls_under_its_counts(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    requests = [StoreRequest(EntryType.FACT, f"Box {n} goes to the new flat") for n in range(80)]
    service.store_entries(operator, requests)
    dialog = opened(window)
    look(qtbot, dialog, "flat")
    assert dialog.counts.text() == "This deletes 80 memories."
    assert len(dialog.tree.listed()["80 memories"]) == 80
    qtbot.waitUntil(lambda: dialog.tree.verticalScrollBar().maximum() > 0)
    dialog.tree.scrollToBottom()
    assert dialog.counts.isVisible() and dialog.forget_button.isVisible()


def test_a_locked_store_forgets_nothing_and_says_why(
    qtbot: QtBot,
    service: MemoryService,
    data_dir: DataDir,
    about: dict[str, object],
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    shown: list[tuple[str, str]],
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 300)
    monkeypatch.setattr(workspace, "UPKEEP_WAIT_MS", 50)
    dialog = opened(window)
    look(qtbot, dialog, TOPIC)
    before = plan_forget(service, "main", TOPIC)
    holder = apsw.Connection(str(data_dir.group_db("main")))
    holder.execute("BEGIN IMMEDIATE")  # another program's long write
    try:
        with qtbot.waitSignal(dialog.looked, timeout=LOOK_MS):  # it looks again after
            forget(qtbot, dialog)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    text = dialog.status.text()
    assert text.startswith("Not forgotten: ") and "another program held the database" in text
    assert dialog.status.property("ok") is False and ("error", text) in shown
    assert plan_forget(service, "main", TOPIC) == before  # nothing half-done
    assert dialog.tree.isVisible() and dialog.forget_button.isEnabled()


def test_what_changed_since_it_was_listed_is_shown_before_anything_goes(
    qtbot: QtBot,
    service: MemoryService,
    about: dict[str, object],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    dialog = opened(window)
    look(qtbot, dialog, TOPIC)
    agent = service.open_session("main", Actor.AGENT, "tests")
    late = service.store(agent, {"type": "fact", "content": "Divorce mediation on Monday"})
    with qtbot.waitSignal(dialog.looked, timeout=LOOK_MS):
        qtbot.mouseClick(dialog.forget_button, Qt.MouseButton.LeftButton)
    assert service.store_for("main").get(late.entry.id) is not None
    assert all(service.store_for("main").get(i) for i in about["memories"])  # type: ignore[attr-defined]
    assert "changed since it was listed" in dialog.caution.text() and dialog.caution.isVisible()
    assert ["fact", "Divorce mediation on Monday", ""] in dialog.tree.listed()["6 memories"]
    assert dialog.forget_button.text() == "Forget 10 items…"
    forget(qtbot, dialog)
    assert service.store_for("main").get(late.entry.id) is None
    assert len(dialogs.asked) == 2


def test_keys_open_look_and_close(qtbot: QtBot, filled: dict[str, str], window: MainWindow) -> None:
    assert window.acts["forget"].shortcut().toString() == "Ctrl+Shift+Del"
    window.browser.table.setFocus()
    qtbot.keyClick(
        window.browser.table,
        Qt.Key.Key_Delete,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    dialog = window.settings.data_panel.forget_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.focusWidget() is dialog.topic
    assert window.nav.currentRow() == Nav.MEMORIES  # opened over the page on screen
    look(qtbot, dialog, "tea")  # Enter looks; it never forgets
    assert dialog.forget_button.text() == "Forget 1 item…"
    assert window.state.service.store_for("main").get(filled["tea"]) is not None
    qtbot.keyClick(dialog.topic, Qt.Key.Key_Down)
    assert dialog.focusWidget() is dialog.tree
    qtbot.keyClick(dialog.tree, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_the_palette_and_settings_open_it(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    window.show_palette()
    palette = window.palette_dialog
    assert isinstance(palette, CommandPalette)
    qtbot.keyClicks(palette.search, "forget")
    assert palette.shown_names() == ["Forget a topic: delete everything that mentions it…"]
    qtbot.keyClick(palette.search, Qt.Key.Key_Return)
    dialog = window.settings.data_panel.forget_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.reject()
    window.go(Nav.SETTINGS)
    panel = window.settings.data_panel
    qtbot.mouseClick(panel.forget_button, Qt.MouseButton.LeftButton)
    assert panel.forget_dialog is dialog and dialog.isVisible()
