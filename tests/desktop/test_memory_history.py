"""Memory history: versions listed, a word diff between them, and a restore as a new version."""

from __future__ import annotations

import os
from pathlib import Path

from pytestqt.qtbot import QtBot

from core.cli.main import main
from core.memory.writing import StoreRequest
from core.model.entries import EntryType, Privacy
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.memories.history import HistoryDialog, word_diff_html
from desktop.shell.main_window import MainWindow
from desktop.widgets.version_diff import Compare
from tests.desktop.conftest import Dialogs, add
from tests.desktop.test_browser import listed, select
from tests.desktop.test_forget_gui import forget, look, opened


def edit(
    service: MemoryService, caller: Caller, old: str, content: str, tags: tuple[str, ...]
) -> str:
    request = StoreRequest(EntryType.FACT, content, tags, supersedes=old)
    return service.store_entries(caller, [request])[0].entry.id


def open_history(qtbot: QtBot, window: MainWindow, entry_id: str) -> HistoryDialog:
    select(qtbot, window, entry_id)
    window.browser.editor.history_button.click()
    dialog = window.browser.history_dialog
    assert isinstance(dialog, HistoryDialog)
    return dialog


def test_word_diff_marks_only_changed_words() -> None:
    out = word_diff_html("Has a dog named Luna", "Has a dog named <Luna> Belle")
    assert "<span class='del'><s>Luna</s></span>" in out
    assert "<span class='add'>&lt;Luna&gt; Belle</span>" in out
    assert out.startswith("Has a dog named ")


def test_diff_between_versions_and_against_current(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    v1 = add(service, operator, "Has a dog named Luna", tags=("pets",))
    v2 = edit(service, operator, v1, "Has a dog named Luna Belle", ("pets", "family"))
    v3 = edit(service, operator, v2, "Has a cat named Luna Belle", ("pets", "family"))
    dialog = open_history(qtbot, window, v3)
    assert dialog.versions.count() == 3
    # Each version says who wrote it, beside what and when.
    newest = dialog.versions.item(0).text().splitlines()
    assert newest[0] == "Version 3 · current" and newest[1].startswith("fact · you · ")
    assert dialog.chosen() is not None and dialog.chosen().id == v3  # type: ignore[union-attr]
    assert not dialog.restore_button.isEnabled()  # the current version
    text = dialog.view.toPlainText()
    assert "Changed from version 2" in text and "dogcat" in text.replace(" ", "")
    dialog.select_version(2)
    text = dialog.view.toPlainText()
    assert "Version 2" in text and "tags added: family" in text and "Changed from version 1" in text
    assert dialog.restore_button.isEnabled()
    dialog.compare_box.setCurrentIndex(dialog.compare_box.findData(Compare.CURRENT))
    assert "From this version to version 3" in dialog.view.toPlainText()
    dialog.select_version(1)
    dialog.compare_box.setCurrentIndex(dialog.compare_box.findData(Compare.PREVIOUS))
    assert "Has a dog named Luna" in dialog.view.toPlainText()
    assert "Changed from" not in dialog.view.toPlainText()  # the oldest: its text alone
    dialog.close()


def test_restore_saves_the_old_version_on_top(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    v1 = add(service, operator, "Has a dog named Luna", tags=("pets",))
    v2 = edit(service, operator, v1, "Has a cat named Tom", ("cats",))
    dialog = open_history(qtbot, window, v2)
    dialog.select_version(1)
    dialogs.answer = False
    dialog.restore_button.click()
    assert "version 1" in dialogs.asked[-1] and "saved as version 3" in dialogs.asked[-1]
    assert [e.id for e in service.history("main", v2)] == [v1, v2]  # Cancel changed nothing
    dialogs.answer = True
    dialog.restore_button.click()
    chain = service.history("main", v2)
    assert len(chain) == 3 and chain[1].id == v2
    restored = chain[-1]
    assert (restored.content, restored.tags) == ("Has a dog named Luna", ("pets",))
    assert restored.superseded_by is None and restored.id != v1
    qtbot.waitUntil(lambda: window.browser.selected_ids() == [restored.id])
    assert listed(window) == [restored.id]


def test_restore_of_a_secret_version_keeps_its_unseen_text(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    memory_keyring: object,
) -> None:
    request = StoreRequest(
        EntryType.FACT, "The spare key is in locker 4412", (), privacy=Privacy.SECRET
    )
    v1 = service.store_entries(operator, [request])[0].entry.id
    v2 = edit(service, operator, v1, "The spare key moved, ask Ana", ())
    dialog = open_history(qtbot, window, v2)
    dialog.select_version(1)
    assert "4412" not in dialog.view.toPlainText()
    assert "not compared" not in dialog.view.toPlainText()  # no previous: the mask alone
    dialog.select_version(2)
    assert "not compared here" in dialog.view.toPlainText()
    dialog.select_version(1)
    dialog.restore_button.click()
    head = service.history("main", v2)[-1]
    assert head.privacy is Privacy.SECRET
    assert service.get("main", head.id, reveal=True).content == "The spare key is in locker 4412"


def shows_no_word_of(dialog: HistoryDialog, *texts: str) -> None:
    """The dialog keeps none of ``texts``: not in the list, the diff or the title,
    and Restore has nothing to save."""
    on_screen = [dialog.view.toPlainText(), dialog.windowTitle()]
    on_screen += [dialog.versions.item(i).text() for i in range(dialog.versions.count())]
    for text in texts:
        assert not any(text in shown for shown in on_screen)
    assert dialog.versions.count() == 0 and dialog.chosen() is None
    assert not dialog.restore_button.isEnabled()


def test_ambry_forget_in_a_terminal_empties_an_open_history(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    data_dir: DataDir,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    v1 = add(service, operator, "Sees Dr Moreau about the knee on Fridays")
    v2 = edit(service, operator, v1, "Sees Dr Moreau about the knee on Tuesdays", ())
    dialog = open_history(qtbot, window, v2)
    dialog.select_version(1)
    assert "Fridays" in dialog.view.toPlainText()
    assert main(["--data-dir", str(data_dir.root), "forget", "Moreau", "--yes"]) == 0
    window.state.poll()  # as the app's timer does, twice a second
    qtbot.waitUntil(lambda: dialog.gone.isVisible())
    assert dialog.gone.text() == "This memory was forgotten: its versions are no longer shown."
    shows_no_word_of(dialog, "Moreau", "Fridays", "Tuesdays")
    dialog.restore()  # Restore does nothing: nothing to save back
    assert dialogs.asked == []
    if os.environ.get("AMBRY_SCREENSHOT_DIR"):
        dialog.grab().save(str(Path(os.environ["AMBRY_SCREENSHOT_DIR"]) / "history-forgotten.png"))
    dialog.close()


def test_a_forget_in_the_app_that_takes_an_old_version_empties_the_history_too(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
) -> None:
    v1 = add(service, operator, "Owes Marguerite the deposit for the flat")
    v2 = edit(service, operator, v1, "Paid the deposit for the flat", ())
    dialog = open_history(qtbot, window, v2)
    forgetting = opened(window)
    look(qtbot, forgetting, "Marguerite")
    forget(qtbot, forgetting)
    qtbot.waitUntil(lambda: dialog.gone.isVisible())
    assert dialog.gone.text().startswith("1 of the 2 versions of this memory were forgotten")
    shows_no_word_of(dialog, "Marguerite", "deposit")
    dialog.close()


def test_forgetting_another_topic_leaves_an_open_history_alone(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    data_dir: DataDir,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    v2 = edit(service, operator, filled["luna"], "Has a dog named Luna Belle", ("pets",))
    dialog = open_history(qtbot, window, v2)
    assert main(["--data-dir", str(data_dir.root), "forget", "tea", "--yes"]) == 0
    window.state.poll()
    qtbot.waitUntil(lambda: filled["tea"] not in listed(window))
    assert dialog.versions.count() == 2 and not dialog.gone.isVisible()
    assert "Luna Belle" in dialog.view.toPlainText()
    dialog.close()


def test_the_version_list_shows_each_line_whole(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    first = service.store_entries(
        operator, [StoreRequest(EntryType.INSTRUCTION, "Answer in British English", ())]
    )[0].entry.id
    latest = edit(service, operator, first, "Answer in British English, briefly", ())
    dialog = open_history(qtbot, window, latest)
    qtbot.waitExposed(dialog)
    versions = dialog.versions
    oldest = versions.item(1)
    assert oldest.text().splitlines()[1].startswith("instruction · you · ")
    # No line cut at the list's edge ("instruction · you · 2026-11-25 07:("), no
    # sideways scrolling.
    metrics = versions.fontMetrics()
    widest = max(metrics.horizontalAdvance(line) for line in oldest.text().splitlines())
    assert widest <= versions.viewport().width()
    assert versions.horizontalScrollBar().maximum() == 0
    dialog.close()
