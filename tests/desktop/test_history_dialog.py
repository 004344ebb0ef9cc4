"""Import from another app (Settings → Your data): preview, import, cancel, Markdown export."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from core.model.entries import Actor
from core.service import MemoryService
from desktop.settings.data_view import DataPanel
from desktop.settings.history_dialog import SOURCES, HistoryImportDialog
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets.watch import AppState

FIXTURES = Path(__file__).parents[1] / "core" / "fixtures" / "imports"
JOB_MS = 20_000


@pytest.fixture
def dialog(qtbot: QtBot, state: AppState) -> Iterator[HistoryImportDialog]:
    d = HistoryImportDialog(state)
    qtbot.addWidget(d)
    d.show()
    yield d
    d.shutdown()


def _choose(d: HistoryImportDialog, label: str, path: Path) -> None:
    d.source.setCurrentIndex([s[0] for s in SOURCES].index(label))
    d.path.setText(str(path))


def _click(qtbot: QtBot, d: HistoryImportDialog, button: str) -> tuple[bool, str]:
    with qtbot.waitSignal(d.job_ended, timeout=JOB_MS) as blocker:
        getattr(d, button).click()
        assert d.busy and d.progress.isVisibleTo(d) and d.cancel_button.text() == "Cancel"
    ok, text = blocker.args
    return ok, text


def _turns(service: MemoryService) -> int:
    return int(service.store_for("main").execute("SELECT count(*) FROM exchanges").fetchone()[0])


def test_preview_then_import_a_chatgpt_export(
    qtbot: QtBot, dialog: HistoryImportDialog, service: MemoryService
) -> None:
    assert not dialog.preview_button.isEnabled() and not dialog.import_button.isEnabled()
    _choose(dialog, "ChatGPT export", FIXTURES / "chatgpt_conversations.json")
    ok, text = _click(qtbot, dialog, "preview_button")
    assert ok and text.startswith("Would add 2 new threads, 4 new turns")
    assert dialog.import_button.isEnabled() and _turns(service) == 0

    ok, text = _click(qtbot, dialog, "import_button")
    assert ok and text.startswith("Added 2 new threads, 4 new turns")
    assert _turns(service) == 4 and not dialog.import_button.isEnabled()

    # The same file again: the preview says there is nothing to add.
    ok, text = _click(qtbot, dialog, "preview_button")
    assert ok and "4 turns already present" in text and not dialog.import_button.isEnabled()


def test_a_malformed_file_is_named_in_the_preview(
    qtbot: QtBot, dialog: HistoryImportDialog, tmp_path: Path
) -> None:
    bad = tmp_path / "memory.jsonl"
    bad.write_text('{"type":"entity","name":"A","observations":["x"]}\nnot json\n')
    _choose(dialog, "MCP memory server (memory.jsonl)", bad)
    ok, text = _click(qtbot, dialog, "preview_button")
    assert not ok and text.startswith("memory.jsonl line 2: not JSON")
    assert not dialog.import_button.isEnabled()
    # Choosing another source forgets the preview.
    _choose(dialog, "Markdown notes (a file or a folder)", FIXTURES / "notes")
    assert dialog.choose_folder.isEnabled() and dialog.preview_text.text() == ""


def test_cancel_during_the_write_leaves_nothing(
    qtbot: QtBot, dialog: HistoryImportDialog, service: MemoryService, tmp_path: Path
) -> None:
    big = tmp_path / "conversations.json"
    one = json.loads((FIXTURES / "chatgpt_conversations.json").read_text())[0]
    conversations = []
    for i in range(3000):
        conv = json.loads(json.dumps(one))
        conv["id"] = conv["conversation_id"] = f"conv-{i}"
        conversations.append(conv)
    big.write_text(json.dumps(conversations))
    _choose(dialog, "ChatGPT export", big)
    ok, _ = _click(qtbot, dialog, "preview_button")
    assert ok

    def cancel_when_writing(phase: str, done: int, total: int) -> None:
        if phase == "write" and dialog.cancel_button.isEnabled():
            dialog.cancel_button.click()

    dialog.progressed.connect(cancel_when_writing)
    ok, text = _click(qtbot, dialog, "import_button")
    assert (ok, text) == (False, "Cancelled: nothing was written.")
    assert _turns(service) == 0
    store = service.store_for("main")
    assert store.execute("SELECT count(*) FROM threads").fetchone()[0] == 0
    assert dialog.cancel_button.text() == "Close" and dialog.import_button.isEnabled()


def test_cancel_while_one_large_memory_file_is_written_leaves_nothing(
    qtbot: QtBot, dialog: HistoryImportDialog, service: MemoryService, tmp_path: Path
) -> None:
    # One file, read whole before its memories are written: Cancel must still stop it.
    big = tmp_path / "memory.jsonl"
    entity = {"type": "entity", "entityType": "thing"}
    big.write_text(
        "\n".join(
            json.dumps({**entity, "name": f"E{i}", "observations": [f"Fact {i} about tea"]})
            for i in range(2000)
        )
        + "\n"
    )
    _choose(dialog, "MCP memory server (memory.jsonl)", big)
    ok, text = _click(qtbot, dialog, "preview_button")
    assert ok and text.startswith("Would add 2,000 memories for review")

    def cancel_when_writing(phase: str, done: int, total: int) -> None:
        if phase == "write" and dialog.cancel_button.isEnabled():
            dialog.cancel_button.click()

    dialog.progressed.connect(cancel_when_writing)
    ok, text = _click(qtbot, dialog, "import_button")
    assert (ok, text) == (False, "Cancelled: nothing was written.")
    count = service.store_for("main").execute("SELECT count(*) FROM memory_entries").fetchone()
    assert count[0] == 0


def test_export_as_markdown_from_settings(
    qtbot: QtBot,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
    service: MemoryService,
    tmp_path: Path,
) -> None:
    window.go(Nav.SETTINGS)
    panel: DataPanel = window.settings.data_panel
    service.store(
        service.open_session("main", Actor.OPERATOR),
        {"type": "fact", "content": "Keeps bees on the roof"},
    )
    out = tmp_path / "md"
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *_a: str(out))
    with qtbot.waitSignal(panel.finished, timeout=JOB_MS) as blocker:
        panel.markdown_button.click()
    ok, text = blocker.args
    assert ok and text.startswith("Wrote 1 memory and 0 threads")
    assert "- Keeps bees on the roof" in (out / "memories.md").read_text()
    panel.history_button.click()
    assert panel.history_dialog is not None and panel.history_dialog.isVisible()
    panel.shutdown()
