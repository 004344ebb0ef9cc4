"""Finding near-duplicates from the memory page, keeping one, and taking the keep back."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMenu
from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import EntryType
from core.recall.duplicates import Cluster, Survey
from core.service import Caller, MemoryService
from desktop.memories.duplicates import DuplicatesDialog, Found
from desktop.shell.main_window import MainWindow
from desktop.shell.palette import CommandPalette
from desktop.widgets.ops import Executor
from tests.desktop.conftest import add, embed_all

DARK = "User prefers dark mode in the editor"
DARK2 = "The user prefers dark mode in editors"


def opened(qtbot: QtBot, window: MainWindow) -> DuplicatesDialog:
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    edit = menus["Edit"]
    assert isinstance(edit, QMenu)
    [find] = [a for a in edit.actions() if a.text() == "Find near-duplicates…"]
    find.trigger()
    dialog = window.browser.duplicates_dialog
    qtbot.waitUntil(lambda: not dialog.busy.isVisible(), timeout=20_000)
    return dialog


def test_lists_a_paraphrase_and_not_a_dog_and_a_cat(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    dark = add(service, operator, DARK, EntryType.PREFERENCE, ("ui",))
    dark2 = add(service, operator, DARK2)
    add(service, operator, "User's dog is named Luna")
    add(service, operator, "User's cat is named Luna")
    embed_all(service)
    dialog = opened(qtbot, window)
    assert dialog.ids_listed() == [(dark, dark2)]
    assert dialog.tree.isVisible() and not dialog.empty.isVisible()
    assert dialog.status.text() == "1 group of near-duplicates among 4 memories."
    row = dialog.tree.topLevelItem(0).child(0)  # type: ignore[union-attr]
    assert [row.text(c) for c in range(3)] == ["preference", DARK, "ui"]
    assert row.toolTip(1) == DARK and float(row.text(3)) >= 0.9


def test_keep_this_one_deletes_the_other_moves_its_tags_and_ctrl_z_brings_it_back(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    dark = add(service, operator, DARK, tags=("ui",))
    dark2 = add(service, operator, DARK2, tags=("editor",))
    embed_all(service)
    dialog = opened(qtbot, window)
    assert dialog.selected_id() == dark  # the first memory is selected: Enter keeps it
    qtbot.keyClick(dialog.tree, Qt.Key.Key_Down)
    assert dialog.selected_id() == dark2
    qtbot.keyClick(dialog.tree, Qt.Key.Key_Up)
    qtbot.keyClick(dialog.tree, Qt.Key.Key_Return)

    store = service.store_for("main")
    assert store.get(dark2) is None
    kept = service.get("main", store.get(dark).superseded_by)  # type: ignore[union-attr, arg-type]
    assert kept.tags == ("ui", "editor")
    assert dialog.ids_listed() == [] and dialog.empty.isVisible()
    said = "Kept 1 (it took the tag 'editor'), deleted 1; Ctrl+Z to undo."
    assert dialog.status.text() == said and ("info", said) in shown
    assert window.acts["undo"].text() == "Undo delete"

    qtbot.keyClick(dialog.tree, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    back = store.get(dark2)
    assert back is not None and back.tags == ("editor",)
    assert ("info", "Restored 1 memory.") in shown
    qtbot.waitUntil(lambda: not dialog.busy.isVisible(), timeout=20_000)


def test_keeping_one_takes_the_pin_and_undo_gives_back_the_earlier_version(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    dark = add(service, operator, DARK)
    light = add(service, operator, "User prefers light mode")
    [dark2] = [
        o.entry.id
        for o in service.store_entries(
            operator, [StoreRequest(EntryType.FACT, DARK2, supersedes=light)]
        )
    ]
    service.set_pinned(operator, dark2, True)
    embed_all(service)
    dialog = opened(qtbot, window)
    assert dialog.ids_listed() == [(dark, dark2)]
    qtbot.keyClick(dialog.tree, Qt.Key.Key_Return)  # keeps the first, the unpinned one

    store = service.store_for("main")
    assert store.get(dark2) is None
    kept = store.get(dark)
    assert kept is not None and kept.pinned and kept.superseded_by is None
    # The deleted copy's earlier version is not current again: it is the kept one's.
    assert store.get(light).superseded_by == dark  # type: ignore[union-attr]
    said = "Kept 1 (it took the pin), deleted 1; Ctrl+Z to undo."
    assert dialog.status.text() == said and ("info", said) in shown

    qtbot.keyClick(dialog.tree, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert [e.id for e in service.history("main", dark2)] == [light, dark2]
    assert [e.id for e in service.history("main", dark)] == [dark]
    qtbot.waitUntil(lambda: not dialog.busy.isVisible(), timeout=20_000)


def test_the_keep_button_keeps_its_memory_and_deletes_the_other(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    a = add(service, operator, "User's favourite editor is Neovim")
    b = add(service, operator, "The user's favorite editor is Neovim")
    embed_all(service)
    dialog = opened(qtbot, window)
    assert dialog.ids_listed() == [(a, b)]
    head = dialog.tree.topLevelItem(0)
    assert head is not None
    button = dialog.tree.itemWidget(head.child(1), 4)
    assert button is not None and button.text() == "Keep this one"  # type: ignore[attr-defined]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    assert service.store_for("main").get(a) is None
    assert service.store_for("main").get(b) is not None


def test_empty_state_and_what_was_not_compared(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    memory_keyring: object,
) -> None:
    add(service, operator, "User's dog is named Luna")
    add(service, operator, "Prefers green tea")
    service.store(operator, {"type": "fact", "content": "A private note", "privacy": "private"})
    dialog = opened(qtbot, window)  # no worker ran in this test: no vectors yet
    assert dialog.ids_listed() == []
    assert dialog.empty.isVisible() and not dialog.tree.isVisible()
    assert "No near-duplicates." in dialog.empty.text()
    assert dialog.left_out.text().startswith(
        "2 memories are not compared yet: they are still being embedded. "
        "1 private or secret memory is never compared"
    )
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()


def test_palette_opens_the_finder(qtbot: QtBot, window: MainWindow) -> None:
    palette = CommandPalette(window.command_list(), window)
    qtbot.addWidget(palette)
    qtbot.keyClicks(palette.search, "near-dup")
    assert palette.shown_names() == ["Find near-duplicates…"]
    palette.run_selected()
    qtbot.waitUntil(lambda: getattr(window.browser, "duplicates_dialog", None) is not None)
    dialog = window.browser.duplicates_dialog
    qtbot.waitUntil(lambda: not dialog.busy.isVisible(), timeout=20_000)
    assert dialog.empty.isVisible()


def test_one_dialog_serves_every_opening_and_looks_again(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    first = opened(qtbot, window)
    assert first.ids_listed() == []
    qtbot.keyClick(first, Qt.Key.Key_Escape)
    dark = add(service, operator, DARK, EntryType.PREFERENCE)
    dark2 = add(service, operator, DARK2)
    embed_all(service)
    # Opened again: the same dialog (a new one each time stayed connected and looked
    # again at every group switch), looking at the store as it is now.
    again = opened(qtbot, window)
    assert again is first
    qtbot.waitUntil(lambda: again.ids_listed() == [(dark, dark2)], timeout=20_000)


def test_while_looking_it_never_says_there_are_none(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    add(service, operator, "User's dog is named Luna")
    dialog = opened(qtbot, window)
    assert dialog.empty.isVisible()
    dialog.refresh()
    # Before: "No near-duplicates." stayed shown under the "Looking…" bar.
    assert dialog.busy.isVisible() and not dialog.empty.isVisible()
    qtbot.waitUntil(lambda: not dialog.busy.isVisible(), timeout=20_000)
    assert dialog.empty.isVisible()


def test_a_thousand_groups_are_listed_each_under_its_spanning_heading(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    dialog = opened(qtbot, window)
    ids = [add(service, operator, f"Note {i} about herons") for i in range(2000)]
    pairs = [(ids[i], ids[i + 1]) for i in range(0, 2000, 2)]
    clusters = tuple(Cluster(p, dict.fromkeys(p, 0.9), 0.9) for p in pairs)
    dialog._show(Found(Survey(clusters, 2000, 0, 0, False), service.entries("main", ids)))
    assert dialog.ids_listed() == pairs
    root = dialog.tree.rootIndex()
    spanned = [dialog.tree.isFirstColumnSpanned(r, root) for r in range(len(pairs))]
    assert all(spanned)
    assert dialog.tree.topLevelItem(999).text(0) == "2 memories, 0.90 or more alike"  # type: ignore[union-attr]


def test_the_bar_counts_the_comparisons_and_cancel_stops_the_search(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    dark = add(service, operator, DARK)
    dark2 = add(service, operator, DARK2)
    embed_all(service)
    dialog = opened(qtbot, window)
    seen: list[tuple[int, int, str, bool]] = []

    def while_looking(_done: int, _total: int) -> None:
        # Blocking: the finder waits on its thread until this has run, after the
        # dialog's own handler, so the bar is seen mid-search and Cancel lands then.
        seen.append(
            (
                dialog.busy.maximum(),
                dialog.busy.value(),
                dialog.status.text(),
                dialog.cancel_button.isVisible(),
            )
        )
        qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)

    dialog.progressed.connect(while_looking, Qt.ConnectionType.BlockingQueuedConnection)
    dialog.refresh()
    assert dialog.cancel_button.isVisible() and not dialog.again.isVisible()
    qtbot.waitUntil(lambda: not dialog.looking, timeout=20_000)
    dialog.progressed.disconnect(while_looking)

    # Before: an endless "Looking…" bar, no count and no Cancel.
    assert seen == [
        (
            1000,
            1000,
            "Looking for near-duplicates: compared 1 of 1 pair; reading the closest ones…",
            True,
        )
    ]
    # Stopped before the words of the close pair were read: nothing listed, and it says so.
    assert dialog.isVisible() and dialog.ids_listed() == []
    assert dialog.status.text() == (
        "The search was stopped after comparing 1 of 1 pair: nothing is listed. "
        "Look again to search from the start."
    )
    assert not dialog.busy.isVisible() and not dialog.cancel_button.isVisible()
    assert dialog.again.isVisible() and dialog.again.isEnabled()
    qtbot.mouseClick(dialog.again, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.ids_listed() == [(dark, dark2)], timeout=20_000)


def test_escape_while_looking_stops_the_search_and_keeps_the_dialog_open(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow, executor: Executor
) -> None:
    add(service, operator, DARK)
    add(service, operator, DARK2)
    embed_all(service)
    dialog = opened(qtbot, window)
    # Hold the query thread so the search is still queued when Escape is pressed.
    gate = threading.Event()
    executor.submit("main", lambda _service: gate.wait(20), lambda _ok: None)
    dialog.refresh()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    # Before: Escape closed the dialog and the search ran on unseen.
    assert dialog.isVisible() and dialog.status.text() == "Stopping…"
    assert not dialog.cancel_button.isEnabled()
    gate.set()
    qtbot.waitUntil(lambda: not dialog.looking, timeout=20_000)
    assert dialog.isVisible() and dialog.ids_listed() == []
    assert dialog.status.text() == (
        "The search was stopped: nothing is listed. Look again to search from the start."
    )
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # nothing under way: Escape closes
    assert not dialog.isVisible()
