"""Privacy in the browser, and deleting everything a filter matches, against real stores."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType, Privacy
from core.service import Caller, MemoryService
from core.storage.crypto import KEY_NAME_FILE, is_encrypted
from core.storage.paths import DataDir
from core.storage.workspace import SECRET_MASK
from desktop.memories.values import is_locked, is_masked
from desktop.shell.main_window import MainWindow
from tests.desktop.conftest import Dialogs, add
from tests.desktop.test_browser import listed, select


def store(
    service: MemoryService,
    caller: Caller,
    content: str,
    privacy: Privacy,
    tags: tuple[str, ...] = (),
) -> str:
    request = StoreRequest(EntryType.FACT, content, tags, privacy=privacy)
    return service.store_entries(caller, [request])[0].entry.id


def cell(window: MainWindow, entry_id: str, column: str, role: int = Qt.ItemDataRole.DisplayRole):
    model = window.browser.model
    row = model.row_of(entry_id)
    assert row is not None
    keys = [c.key for c in model.columns]
    return model.index(row, keys.index(column)).data(role)


def audited_reveals(service: MemoryService, entry_id: str) -> int:
    rows = service.store_for("main").execute(
        "SELECT entry_ids FROM audit_log WHERE action = 'reveal'"
    )
    return sum(1 for (ids,) in rows if entry_id in ids)


def test_private_entry_is_encrypted_and_listed(
    qtbot: QtBot, qtmodeltester, memory_keyring: object, service: MemoryService, window: MainWindow
) -> None:
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    editor = window.browser.editor
    qtbot.keyClicks(editor.content, "Sees Dr. Moreau on Thursdays")
    editor.privacy_box.setCurrentIndex(editor.privacy_box.findData(Privacy.PRIVATE))
    assert "Encrypted on disk" in editor.privacy_hint.text()
    editor.save_button.click()
    qtbot.waitUntil(lambda: len(listed(window)) == 1)
    entry_id = listed(window)[0]

    raw = service.store_for("main").get(entry_id)
    assert raw is not None and raw.privacy is Privacy.PRIVATE and is_encrypted(raw.content)
    # Private content reads normally in the app, with the lock marker in front.
    assert cell(window, entry_id, "content") == "Sees Dr. Moreau on Thursdays"
    assert cell(window, entry_id, "content", Qt.ItemDataRole.DecorationRole) is not None
    assert "Private" in cell(window, entry_id, "content", Qt.ItemDataRole.ToolTipRole)
    qtmodeltester.check(window.browser.model)
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.id == entry_id)
    assert editor.content.toPlainText() == "Sees Dr. Moreau on Thursdays"
    assert not editor.reveal_button.isVisible()


def test_public_rows_have_no_marker(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    assert cell(window, filled["luna"], "content", Qt.ItemDataRole.DecorationRole) is None


def test_secret_is_masked_until_revealed_and_again_after(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    secret = store(service, operator, "The spare key is in locker 4417", Privacy.SECRET)
    select(qtbot, window, secret)
    editor = window.browser.editor
    assert cell(window, secret, "content") == SECRET_MASK
    assert editor.content.toPlainText() == SECRET_MASK and editor.content.isReadOnly()
    assert editor.reveal_button.isVisible() and not editor.privacy_box.isEnabled()
    assert audited_reveals(service, secret) == 0

    qtbot.mouseClick(editor.reveal_button, Qt.MouseButton.LeftButton)
    assert editor.content.toPlainText() == "The spare key is in locker 4417"
    assert editor.revealed and not editor.content.isReadOnly()
    assert not editor.is_dirty()
    assert audited_reveals(service, secret) == 1
    # The table never shows it: only the editor, on request.
    assert cell(window, secret, "content") == SECRET_MASK
    assert editor.reveal_button.text() == "Hide"
    editor.reveal_button.click()
    assert editor.content.toPlainText() == SECRET_MASK and not editor.revealed
    editor.reveal_button.click()
    assert editor.content.toPlainText() == "The spare key is in locker 4417"
    assert audited_reveals(service, secret) == 2

    select(qtbot, window, filled["luna"])
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.id == filled["luna"])
    select(qtbot, window, secret)
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.id == secret)
    assert editor.content.toPlainText() == SECRET_MASK and not editor.revealed


def test_masked_secret_keeps_its_text_through_a_tag_edit(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
) -> None:
    secret = store(
        service, operator, "The alarm panel is behind the coats", Privacy.SECRET, ("home",)
    )
    select(qtbot, window, secret)
    editor = window.browser.editor
    editor.tags.setText("home, alarm")
    assert editor.save_button.isEnabled()
    editor.save_button.click()
    qtbot.waitUntil(lambda: listed(window) and listed(window)[0] != secret)
    new = listed(window)[0]
    current = service.get("main", new, reveal=True)
    assert (current.content, current.tags, current.privacy) == (
        "The alarm panel is behind the coats",
        ("home", "alarm"),
        Privacy.SECRET,
    )
    assert service.get("main", secret).superseded_by == new
    # Saved without a reveal: still masked, and nothing was revealed.
    qtbot.waitUntil(lambda: editor.entry is not None and editor.entry.id == new)
    assert editor.content.toPlainText() == SECRET_MASK
    assert audited_reveals(service, secret) == audited_reveals(service, new) == 0


def test_changing_privacy_is_a_new_version(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    filled: dict[str, str],
    window: MainWindow,
) -> None:
    old = filled["office"]
    select(qtbot, window, old)
    editor = window.browser.editor
    editor.privacy_box.setCurrentIndex(editor.privacy_box.findData(Privacy.SECRET))
    assert editor.is_dirty()
    editor.save_button.click()
    qtbot.waitUntil(lambda: old not in listed(window))
    new = service.get("main", old).superseded_by
    assert new is not None
    assert service.get("main", new).content == SECRET_MASK
    assert service.get("main", new, reveal=True).content == "Works in the Lyon office"
    assert [e.id for e in service.history("main", new)] == [old, new]
    qtbot.waitUntil(lambda: cell(window, new, "content") == SECRET_MASK)
    # The public version it replaced is sealed with it: out of the word index, and
    # read only by revealing it.
    assert service.get("main", old).privacy is Privacy.SECRET
    assert service.get("main", old).content == SECRET_MASK
    assert service.get("main", old, reveal=True).content == "Works in the Lyon office"
    row = (
        service.store_for("main")
        .execute("SELECT search_text, content FROM memory_entries WHERE id = ?", (old,))
        .fetchone()
    )
    assert row[0] == "" and is_encrypted(row[1])


def test_without_a_keyring_the_message_says_so_and_nothing_is_lost(
    qtbot: QtBot,
    no_keyring: None,
    service: MemoryService,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    window.new_entry()
    editor = window.browser.editor
    qtbot.keyClicks(editor.content, "Bank PIN hint: birthday")
    editor.privacy_box.setCurrentIndex(editor.privacy_box.findData(Privacy.PRIVATE))
    editor.save_button.click()
    errors = [text for level, text in shown if level == "error"]
    assert len(errors) == 1 and "keyring" in errors[0] and errors[0].startswith("Not saved")
    qtbot.waitUntil(lambda: window.banner.isVisible())
    assert "keyring" in window.banner.text.text()
    assert service.store_for("main").total() == 0
    assert editor.is_new and editor.content.toPlainText() == "Bank PIN hint: birthday"


def test_delete_all_matching_counts_deletes_and_undoes(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    bar, browser = window.browser.filters, window.browser
    qtbot.waitUntil(lambda: bar.tag_box.findData("work") >= 0)
    bar.tag_box.setCurrentIndex(bar.tag_box.findData("work"))
    qtbot.waitUntil(lambda: set(listed(window)) == {filled["tests"], filled["office"]})

    dialogs.answer = False
    browser.delete_matching_button.click()
    assert dialogs.asked[-1].startswith("Delete 2 memories matching tag work?")
    assert service.store_for("main").total() == 4

    dialogs.answer = True
    browser.delete_matching_button.click()
    # The tag went with them, so the tag filter falls back to all tags.
    qtbot.waitUntil(lambda: set(listed(window)) == {filled["luna"], filled["tea"]})
    left = service.store_for("main").get_many(filled.values())
    assert set(left) == {filled["luna"], filled["tea"]}
    assert browser.undo_action.isEnabled()

    browser.table.setFocus()
    qtbot.keyClick(browser.table, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: set(listed(window)) == set(filled.values()))
    assert service.get("main", filled["office"]).content == "Works in the Lyon office"


def test_delete_all_matching_shows_the_exact_count(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
) -> None:
    requests = [StoreRequest(EntryType.FACT, f"Batch note number {i}") for i in range(1234)]
    service.store_entries(operator, requests)
    add(service, operator, "Unrelated memory")
    qtbot.keyClicks(window.browser.filters.search, "batch")
    qtbot.waitUntil(lambda: window.browser.model.total == 1234, timeout=5000)
    dialogs.answer = True
    window.browser.delete_matching_button.click()
    assert dialogs.asked[-1].startswith("Delete 1,234 memories matching “batch”?")
    qtbot.waitUntil(lambda: window.browser.model.total == 0, timeout=5000)
    assert service.store_for("main").total() == 1
    window.browser.undo()  # more than a few hundred: in the background
    qtbot.waitUntil(lambda: service.store_for("main").total() == 1235, timeout=20_000)


def test_an_entry_whose_key_is_missing_is_locked_against_edits(
    tmp_path: Path, memory_keyring: object
) -> None:
    home = tmp_path / "data"
    home.mkdir()
    svc = MemoryService(DataDir(home))
    entry_id = store(svc, svc.open_session("main", Actor.OPERATOR), "Sees Dr Ames", Privacy.PRIVATE)
    svc.close()
    # The folder as an earlier version left it, then moved: its key is under the old path.
    (home / KEY_NAME_FILE).unlink()
    moved = tmp_path / "moved"
    home.rename(moved)
    svc = MemoryService(DataDir(moved))
    try:
        entry = svc.get("main", entry_id)
        assert is_locked(entry) and not is_masked(entry)
    finally:
        svc.close()
