"""The attachments page: attaching, verifying off the GUI thread, and how gaps read."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.attachments import attach as attachments
from core.attachments.receipts import list_receipts
from core.service import Caller, MemoryService
from desktop.attachments import verifier
from desktop.attachments.view import AttachmentsPage
from desktop.shell.main_window import MainWindow, Nav


def badges(page: AttachmentsPage) -> dict[str, str]:
    """The state badge of each row, by file name."""
    model = page.model
    return {model.index(r, 1).data(): model.index(r, 0).data() for r in range(model.rowCount())}


def make_files(folder: Path, count: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"note-{i:02}.txt" for i in range(count)]
    for i, path in enumerate(paths):
        path.write_text(f"Note number {i}: the launch moves to May.\n", encoding="utf-8")
    return paths


def test_attach_edit_and_verify_all_shows_changed(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, qtmodeltester: object
) -> None:
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    assert page.stack.currentIndex() == 1  # the empty state, with its own Attach button
    assert not page.toolbar.isVisible()
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n\nShip on Friday.\n", encoding="utf-8")
    page.choose_file = lambda _parent: str(plan)
    qtbot.mouseClick(page.empty_attach_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    qtmodeltester.check(page.model)  # type: ignore[attr-defined]
    assert page.stack.currentIndex() == 0
    assert badges(page) == {"plan.md": "✓ verified"}
    assert page.selected() is not None and page.selected().filename == "plan.md"
    assert "Ship on Friday." in page.detail.toPlainText()

    plan.write_text("# Plan\n\nShip on Monday.\n", encoding="utf-8")
    with qtbot.waitSignal(page.verifier.finished, timeout=5000):
        qtbot.mouseClick(page.verify_all_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: badges(page) == {"plan.md": "⚠ changed"})
    detail = page.detail.toPlainText()
    assert "Verification gap" in detail
    assert "may be stale" in detail
    assert "1 verification gap" in page.summary.text()
    page.table.grab()  # the badge delegate paints a gap without complaint


def test_missing_file_and_progress_to_the_end(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
) -> None:
    # More files than one batch, so the run spans several executor tasks.
    paths = make_files(tmp_path / "notes", verifier.BATCH_FILES + 5)
    for path in paths:
        attachments.attach(service, agent_caller, str(path))
    paths[3].unlink()
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    qtbot.waitUntil(lambda: page.model.rowCount() == len(paths))
    steps: list[tuple[int, int]] = []
    page.verifier.progress.connect(lambda done, total: steps.append((done, total)))
    with qtbot.waitSignal(page.verifier.finished, timeout=5000) as finished:
        page.verify_all_button.click()
        assert page.progress_row.isVisible()
        assert not page.verify_all_button.isEnabled()  # one run at a time
    total = len(paths)
    assert len(finished.args[0]) == total
    assert steps[0] == (0, total) and steps[-1] == (total, total)
    assert [done for done, _ in steps] == sorted(done for done, _ in steps)
    assert page.progress.value() == page.progress.maximum() == total
    assert not page.progress_row.isVisible()
    qtbot.waitUntil(lambda: badges(page)["note-03.txt"] == "⚠ missing")
    assert sum(1 for b in badges(page).values() if b == "✓ verified") == total - 1
    assert page.summary.text().startswith(f"{total} receipts")


def test_verify_selected_and_stop(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paths = make_files(tmp_path / "notes", 3)
    for path in paths:
        attachments.attach(service, agent_caller, str(path))
    for path in paths:
        path.write_text("rewritten", encoding="utf-8")
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    qtbot.waitUntil(lambda: page.model.rowCount() == 3)
    target = page.model.row_of(page.model.record_at(1).id)
    assert target == 1
    page.table.selectRow(1)
    name = page.model.record_at(1).filename
    with qtbot.waitSignal(page.verifier.finished, timeout=5000):
        page.verify_button.click()
    qtbot.waitUntil(lambda: badges(page)[name] == "⚠ changed")
    assert sorted(badges(page).values()) == ["⚠ changed", "✓ verified", "✓ verified"]

    # Stopped before its first file: nothing more is checked, and the run still ends.
    monkeypatch.setattr(verifier, "BATCH_FILES", 1)
    with qtbot.waitSignal(page.verifier.finished, timeout=5000) as finished:
        assert page.verifier.start(None)
        page.stop_button.click()
    assert len(finished.args[0]) < 3
    assert not page.verifier.running


def test_open_source_folder(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
    shown: list[tuple[str, str]],
) -> None:
    folder = tmp_path / "reports"
    (path,) = make_files(folder, 1)
    attachments.attach(service, agent_caller, str(path))
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    opened: list[Path] = []
    page.open_folder = opened.append
    qtbot.waitUntil(lambda: page.folder_button.isEnabled())
    page.folder_button.click()
    assert opened == [folder]

    path.unlink()
    folder.rmdir()
    page.folder_button.click()
    assert opened == [folder]
    assert ("warning", f"The folder {folder} no longer exists.") in shown


def test_attach_errors_are_reported(
    qtbot: QtBot, window: MainWindow, tmp_path: Path, shown: list[tuple[str, str]]
) -> None:
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    page.choose_file = lambda _parent: str(tmp_path)
    page.empty_attach_button.click()
    qtbot.waitUntil(lambda: any(level == "error" for level, _ in shown))
    assert any("is a directory" in text for _, text in shown)
    assert page.model.rowCount() == 0
    page.choose_file = lambda _parent: None  # cancelled: nothing happens
    page.empty_attach_button.click()


def test_receipts_of_an_agent_appear_live(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
) -> None:
    window.go(Nav.ATTACHMENTS)
    page = window.attachments
    (path,) = make_files(tmp_path, 1)
    attachments.attach(service, agent_caller, str(path), observation="Launch moves to May")
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    assert "Launch moves to May" in page.detail.toPlainText()
    store = service.store_for("main")
    assert [r.id for r in list_receipts(store)] == [page.model.record_at(0).id]


def test_sidebar_keys_reach_the_new_pages(qtbot: QtBot, window: MainWindow) -> None:
    assert [window.nav.item(i).text() for i in range(window.nav.count())][2:6] == [
        "Brief",
        "Attachments",
        "Threads",
        "Audit",
    ]
    qtbot.keyClick(window, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    assert window.pages.currentWidget() is window.attachments
    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    assert window.pages.currentWidget() is window.threads
    qtbot.keyClick(window, Qt.Key.Key_7, Qt.KeyboardModifier.ControlModifier)
    assert window.pages.currentWidget() is window.settings
