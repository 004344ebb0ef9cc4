"""Brief preview, audit log, settings, empty state and the group switcher."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from core.cli.main import main as cli_main
from core.model.config import Config, load_config
from core.model.entries import EntryFilter, Status
from core.semantic.embedding import shared_embedder
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets.watch import AppState
from tests.desktop.conftest import Dialogs, add


def test_brief_shows_what_the_agent_gets(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    for i in range(5):
        add(service, operator, f"Fact number {i} about the <b>project</b>")
    window.go(Nav.BRIEF)
    page = window.brief
    qtbot.waitUntil(lambda: page.brief is not None and page.brief.brief_count == 5)
    assert page.raw_view.toPlainText() == service.build_brief("main").markdown
    assert page.counts.text().startswith("5 of 5 memories")
    # Rendered: headings become rich text, and HTML in content stays text.
    assert "Memory Context" in page.rendered_view.toPlainText()
    assert "<b>project</b>" in page.rendered_view.toPlainText()
    assert "## Memory Context" not in page.rendered_view.toPlainText()

    page.raw_toggle.setChecked(True)
    assert page.stack.currentWidget() is page.raw_view
    page.copy_button.click()
    assert QGuiApplication.clipboard().text() == page.raw_view.toPlainText()


def test_brief_limits_apply_live_and_are_saved(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    data_dir: DataDir,
    window: MainWindow,
) -> None:
    for i in range(5):
        add(service, operator, f"Fact number {i}")
    window.go(Nav.BRIEF)
    page = window.brief
    page.spins["max_brief_entries"].setValue(2)
    qtbot.waitUntil(lambda: page.brief is not None and page.brief.brief_count == 2)
    assert "cut short by the entry limit" in page.counts.text()
    assert service.config.max_brief_entries == 2
    assert load_config(data_dir.config_file).max_brief_entries == 2
    # The settings page follows.
    assert window.settings.editors["max_brief_entries"].value() == 2  # type: ignore[union-attr]


def test_brief_follows_new_memories(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    window.go(Nav.BRIEF)
    qtbot.waitUntil(lambda: window.brief.brief is not None)
    add(service, operator, "Answer in British English")
    qtbot.waitUntil(lambda: "British English" in window.brief.raw_view.toPlainText())


def test_audit_lists_and_filters(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    entry = add(service, operator, "Something to delete")
    window.go(Nav.AUDIT)
    page = window.audit
    model = page.model
    qtbot.waitUntil(lambda: model.rowCount() >= 1)
    page.action_box.setCurrentIndex(page.action_box.findData("store"))
    assert [model.index(r, 1).data() for r in range(model.rowCount())] == [
        "You stored a fact (19 chars)"
    ]
    service.delete(operator, entry)
    page.action_box.setCurrentIndex(page.action_box.findData("delete"))
    assert model.rowCount() == 1 and model.record_at(0).entry_ids == [entry]
    page.action_box.setCurrentIndex(0)
    page.actor_box.setCurrentIndex(page.actor_box.findData("agent"))
    assert model.rowCount() == 0


def test_audit_adds_new_rows_on_top(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    window.go(Nav.AUDIT)
    page = window.audit
    model = page.model
    # Only sessions began: their rows wait behind a tick, so the log looks empty.
    qtbot.waitUntil(lambda: page.stack.currentWidget() is page.empty_page)
    assert model.rowCount() == 0
    service.search(agent_caller, {"query": "anything", "limit": 5})
    qtbot.waitUntil(lambda: model.rowCount() == 1, timeout=1000)
    assert model.index(0, 1).data() == "Agent test-agent searched memories (0 results)"
    assert page.stack.currentIndex() == 0
    service.search(agent_caller, {"query": "another", "limit": 5})
    qtbot.waitUntil(lambda: model.rowCount() == 2, timeout=1000)
    assert model.index(1, 1).data() == "Agent test-agent searched memories (0 results)"


def test_settings_save_validate_and_token(
    qtbot: QtBot,
    service: MemoryService,
    data_dir: DataDir,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    window.go(Nav.SETTINGS)
    page = window.settings
    assert page.data_dir.text() == str(data_dir.root)
    opened: list[Path] = []
    page.open_folder = opened.append
    page.open_button.click()
    assert opened == [data_dir.root]
    page.editors["rate_stores_per_hour"].setValue(7)  # type: ignore[union-attr]
    page.editors["review_agent_writes"].setChecked(True)  # type: ignore[union-attr]
    page.save_button.click()
    assert service.config.rate_stores_per_hour == 7
    assert service.config.review_agent_writes
    saved = json.loads(data_dir.config_file.read_text())
    assert saved["rate_stores_per_hour"] == 7

    page.copy_token()
    first = QGuiApplication.clipboard().text()
    assert first == data_dir.token_file.read_text().strip()
    dialogs.answer = False
    page.regenerate_token()
    assert data_dir.token_file.read_text().strip() == first
    dialogs.answer = True
    page.regenerate_token()
    assert data_dir.token_file.read_text().strip() != first
    assert any("New agent token" in text for _, text in shown)


def test_review_agent_writes_setting_routes_agent_writes(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    window.go(Nav.SETTINGS)
    window.settings.editors["review_agent_writes"].setChecked(True)  # type: ignore[union-attr]
    window.settings.save()
    outcome = service.store(agent_caller, {"type": "fact", "content": "Likes jazz"})
    assert outcome.entry.status is Status.CANDIDATE
    qtbot.waitUntil(lambda: window.nav.item(Nav.REVIEW).text() == "Review (1)")


def test_rebuild_index_runs_in_the_background(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    add(service, operator, "Indexed memory")
    window.go(Nav.SETTINGS)
    window.settings.rebuild_button.click()
    qtbot.waitUntil(lambda: any("Search index rebuilt" in t for _, t in shown))
    assert window.settings.rebuild_button.isEnabled()


def test_empty_state_explains_and_loads_examples(
    qtbot: QtBot, service: MemoryService, window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.empty)
    snippet = json.loads(window.empty.snippet.toPlainText())
    assert snippet["mcpServers"]["ambry"]["args"][-3:] == ["mcp", "--client", "claude-desktop"]
    assert window.empty.token_path.path().endswith("agent.token")
    assert window.empty.token_path.toolTip() == window.empty.token_path.path()
    window.empty.copy_button.click()
    assert json.loads(QGuiApplication.clipboard().text()) == snippet

    window.empty.examples_button.click()
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.browser)
    qtbot.waitUntil(lambda: window.browser.model.total >= 12)
    entries = service.store_for("main").recent(EntryFilter(statuses=()), 100)
    assert {e.type.value for e in entries} == {
        "preference",
        "fact",
        "instruction",
        "context",
        "correction",
    }
    assert sum(e.status is Status.CANDIDATE for e in entries) == 2


def test_empty_state_add_a_memory(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.empty)
    window.empty.add_button.click()
    assert window.memories.currentWidget() is window.browser
    assert window.browser.editor.is_new


def test_group_switcher_creates_and_switches(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    add(service, operator, "In the main group")
    qtbot.waitUntil(lambda: window.browser.model.total == 1)
    box = window.group_box
    dialogs.text = "bad name!"  # the real dialog stays open (tests/desktop/test_shell.py)
    box.activated.emit(box.count() - 1)
    assert window.state.group == "main" and box.currentText() == "main"
    dialogs.text = "work"
    box.activated.emit(box.count() - 1)
    assert window.state.group == "work"
    assert box.currentText() == "work"
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.empty)
    box.activated.emit(box.findText("main"))
    qtbot.waitUntil(lambda: window.browser.model.total == 1)
    assert window.windowTitle() == "Ambry — main"


def test_settings_edit_every_setting_and_say_what_ranks_by_meaning(
    service: MemoryService, data_dir: DataDir, window: MainWindow, tmp_path: Path
) -> None:
    window.go(Nav.SETTINGS)
    page = window.settings
    # Every setting has an editor; the model folder has its own row.
    fields = {f.name for f in dataclasses.fields(Config)}
    assert fields - set(page.editors) == {"embedding_model_dir"}
    assert page.model_folder.folder.objectName() == "embedding_model_dir"
    status = page.model_folder.status
    assert "all-MiniLM-L6-v2, installed with Ambry" in status.text()
    assert "model.onnx and tokenizer.json" in status.text()

    page.editors["recency_weight"].setValue(0.0)  # type: ignore[union-attr]
    page.editors["recency_half_life_days"].setValue(30.0)  # type: ignore[union-attr]
    page.editors["flash_token_budget"].setValue(0)  # type: ignore[union-attr]
    page.save_button.click()
    assert service.config.recency_weight == 0.0
    assert service.config.recency_half_life_days == 30.0
    assert service.config.flash_token_budget == 0
    saved = json.loads(data_dir.config_file.read_text())
    assert saved["recency_weight"] == 0.0 and saved["recency_half_life_days"] == 30.0

    # A model folder that cannot be used: search by words only, and the page says why.
    broken = tmp_path / "not-a-model"
    broken.mkdir()
    assert shared_embedder(str(broken)) is None
    page.show_config(service.config.with_changes(embedding_model_dir=str(broken)))
    assert status.text().startswith("Search by meaning is off:")
    assert "model.onnx is missing" in status.text()
    assert status.text().endswith("Search ranks by words only.")


def test_saving_settings_keeps_what_ambry_settings_changed_meanwhile(
    service: MemoryService,
    data_dir: DataDir,
    window: MainWindow,
    capsys: pytest.CaptureFixture[str],
) -> None:
    window.go(Nav.SETTINGS)
    page = window.settings
    # While the app runs, the person changes one setting from a terminal...
    assert cli_main(["--data-dir", str(data_dir.root), "settings", "recency_weight", "0.4"]) == 0
    capsys.readouterr()
    # ...and another in the window: both are kept, and the app ranks with both.
    page.editors["trash_days"].setValue(12)  # type: ignore[union-attr]
    page.save_button.click()
    saved = load_config(data_dir.config_file)
    assert saved.trash_days == 12 and saved.recency_weight == 0.4
    assert service.config.recency_weight == 0.4
    assert page.editors["recency_weight"].value() == 0.4  # type: ignore[union-attr]
    # A setting edited in the window wins over the file's.
    assert cli_main(["--data-dir", str(data_dir.root), "settings", "trash_days", "5"]) == 0
    page.editors["trash_days"].setValue(20)  # type: ignore[union-attr]
    page.save_button.click()
    assert load_config(data_dir.config_file).trash_days == 20


def test_settings_saved_elsewhere_show_without_undoing_unsaved_edits(
    qtbot: QtBot,
    service: MemoryService,
    state: AppState,
    data_dir: DataDir,
    window: MainWindow,
    capsys: pytest.CaptureFixture[str],
) -> None:
    window.go(Nav.SETTINGS)
    page = window.settings
    page.editors["trash_days"].setValue(12)  # type: ignore[union-attr]  # not saved yet
    seen: list[Config] = []
    state.config_changed.connect(seen.append)
    assert cli_main(["--data-dir", str(data_dir.root), "settings", "recency_weight", "0.4"]) == 0
    assert cli_main(["--data-dir", str(data_dir.root), "settings", "trash_days", "5"]) == 0
    capsys.readouterr()
    state.start_polling()
    qtbot.waitUntil(lambda: bool(seen), timeout=5_000)
    assert service.config.recency_weight == 0.4 and seen[-1].trash_days == 5
    assert page.editors["recency_weight"].value() == 0.4  # type: ignore[union-attr]
    assert page.editors["trash_days"].value() == 12  # type: ignore[union-attr]
    assert page.is_dirty()
    page.save_button.click()
    saved = load_config(data_dir.config_file)
    assert saved.trash_days == 12 and saved.recency_weight == 0.4
    assert not page.is_dirty()
