"""Export and import from Settings: real files, real stores, the real background executor."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtWidgets import QFileDialog, QInputDialog, QLineEdit, QPushButton, QWidget
from pytestqt.qtbot import QtBot

from core.continuity import episodes
from core.model.entries import EntryFilter, Privacy
from core.service import Caller, MemoryService
from core.storage.workspace import SECRET_MASK
from desktop.settings.data_view import DataPanel
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs, add
from tests.desktop.test_browser import listed
from tests.desktop.test_privacy_gui import store

#: Every entry, whatever its status.
EVERYTHING = EntryFilter(statuses=(), include_superseded=True)
JOB_MS = 15_000  # scrypt alone takes a fraction of a second; leave room on a slow machine


@dataclass
class FileDialogs:
    """Answers Qt's static file and text dialogs, recording the questions asked."""

    save_path: Path | None = None
    open_path: Path | None = None
    #: Passphrases to type, in order; None cancels.
    passwords: list[str | None] = field(default_factory=list)
    asked: list[str] = field(default_factory=list)

    def get_save_file_name(self, _parent: QWidget, title: str, *_args: object) -> tuple[str, str]:
        self.asked.append(title)
        return (str(self.save_path) if self.save_path else "", "")

    def get_open_file_name(self, _parent: QWidget, title: str, *_args: object) -> tuple[str, str]:
        self.asked.append(title)
        return (str(self.open_path) if self.open_path else "", "")

    def get_text(
        self, _parent: QWidget, _title: str, label: str, echo: QLineEdit.EchoMode, *_a: object
    ) -> tuple[str, bool]:
        assert echo == QLineEdit.EchoMode.Password, "passphrases are typed hidden"
        self.asked.append(label)
        answer = self.passwords.pop(0)
        return (answer or "", answer is not None)


@pytest.fixture
def files(monkeypatch: pytest.MonkeyPatch) -> FileDialogs:
    fake = FileDialogs()
    monkeypatch.setattr(QFileDialog, "getSaveFileName", fake.get_save_file_name)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", fake.get_open_file_name)
    monkeypatch.setattr(QInputDialog, "getText", fake.get_text)
    return fake


@pytest.fixture
def panel(window: MainWindow) -> Iterator[DataPanel]:
    window.go(Nav.SETTINGS)
    data = window.settings.data_panel
    yield data
    data.shutdown()


def run_job(qtbot: QtBot, panel: DataPanel, button: str) -> tuple[bool, str]:
    """Click ``button`` and wait for the job to end; returns (ok, summary)."""
    with qtbot.waitSignal(panel.finished, timeout=JOB_MS) as blocker:
        getattr(panel, button).click()
        # The work runs on its own thread: the panel is busy until it reports back.
        assert panel.busy and panel.progress.isVisibleTo(panel)
        assert not panel.export_button.isEnabled() and not panel.import_button.isEnabled()
    assert not panel.busy and not panel.progress.isVisibleTo(panel)
    ok, text = blocker.args
    assert panel.result.text() == text
    return ok, text


def entry_lines(path: Path) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [rec for rec in lines[1:] if rec.get("kind") == "entry"]


def test_export_then_import_into_another_group_round_trips(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    window: MainWindow,
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    private = store(service, operator, "Therapist on Tuesdays", Privacy.PRIVATE)
    secret = store(service, operator, "The spare key is in locker 4417", Privacy.SECRET)
    files.save_path = tmp_path / "backup"  # no suffix: .jsonl is added
    files.passwords = ["correct horse", "correct horse"]
    panel.include_private.setChecked(True)
    ok, text = run_job(qtbot, panel, "export_button")
    path = tmp_path / "backup.jsonl"
    assert ok and text.startswith("Exported 6 memories") and str(path) in text
    assert len(files.asked) == 3  # the file, then the passphrase twice
    records = entry_lines(path)
    assert len(records) == 6
    # The words, not "4417" alone: four digits turn up by chance in ids and sealed text.
    assert not any("Therapist" in json.dumps(r) or "locker 4417" in json.dumps(r) for r in records)

    window.state.set_group("copy")
    files.open_path = path
    files.passwords = ["correct horse"]
    ok, text = run_job(qtbot, panel, "import_button")
    assert ok and text.startswith("Imported 6 memories from backup.jsonl into 'copy'.")
    assert "Passphrase it was exported with" in files.asked[-1]
    assert service.get("copy", private).content == "Therapist on Tuesdays"
    assert service.get("copy", secret).content == SECRET_MASK
    assert service.get("copy", secret, reveal=True).content == "The spare key is in locker 4417"
    assert set(service.store_for("copy").get_many(filled.values())) == set(filled.values())
    # The import is another connection's commit: the browser shows it without a restart.
    qtbot.waitUntil(lambda: len(listed(window)) == 6)


def test_export_leaves_private_out_unless_asked(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    store(service, operator, "Therapist on Tuesdays", Privacy.PRIVATE)
    files.save_path = tmp_path / "public.jsonl"
    ok, text = run_job(qtbot, panel, "export_button")
    assert ok and "Exported 4 memories" in text and "1 private or secret memory left out" in text
    assert files.asked == ["Export memories"]  # no passphrase asked
    assert len(entry_lines(files.save_path)) == 4


def test_the_export_summary_says_the_turns_stay_behind(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    # Before, the summary did not say that no conversation turn is in the file.
    episodes.log_exchange(service, operator, "user", "Where did we put the river maps?")
    files.save_path = tmp_path / "public.jsonl"
    ok, text = run_job(qtbot, panel, "export_button")
    assert ok and text.endswith(
        " 1 conversation turn not exported: an export holds no turns. To keep them, copy "
        "the data folder; to read them, use Export as Markdown."
    )


def test_import_of_a_conflicting_file_changes_nothing(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    filled: dict[str, str],
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
    shown: list[tuple[str, str]],
) -> None:
    files.save_path = tmp_path / "main.jsonl"
    assert run_job(qtbot, panel, "export_button")[0]
    lines = files.save_path.read_text(encoding="utf-8").splitlines()
    altered = []
    for line in lines:
        record = json.loads(line)
        if record.get("id") == filled["tea"]:
            record["content"] = "Prefers black coffee"
        altered.append(json.dumps(record))
    conflicting = tmp_path / "conflicting.jsonl"
    conflicting.write_text("\n".join(altered) + "\n", encoding="utf-8")
    # Deleted since the export: the file would bring it back, were it not all or nothing.
    service.delete(operator, filled["luna"])
    add(service, operator, "Written after the export")
    before = sorted(service.store_for("main").ids(EVERYTHING))

    files.open_path = conflicting
    ok, text = run_job(qtbot, panel, "import_button")
    assert not ok and text.startswith("Nothing imported: 1 record in the file")
    assert filled["tea"] in text
    assert ("error", text) in shown
    assert sorted(service.store_for("main").ids(EVERYTHING)) == before
    assert service.get("main", filled["tea"]).content == "Prefers green tea"
    assert service.store_for("main").get(filled["luna"]) is None


def test_an_imported_memory_that_is_only_a_secret_is_skipped_and_said_so(
    qtbot: QtBot,
    service: MemoryService,
    filled: dict[str, str],
    window: MainWindow,
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    files.save_path = tmp_path / "main.jsonl"
    assert run_job(qtbot, panel, "export_button")[0]
    lines = files.save_path.read_text(encoding="utf-8").splitlines()
    edited = []
    for line in lines:
        record = json.loads(line)
        if record.get("id") == filled["tea"]:
            record["content"] = "ghp_Q7wErT9yUiOp3AsDfGh2JkLzXc8VbNm4Lk5J"
        edited.append(json.dumps(record))
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(edited) + "\n", encoding="utf-8")

    window.state.set_group("copy")
    files.open_path = path
    ok, text = run_job(qtbot, panel, "import_button")
    assert ok and text == (
        "Imported 3 memories from edited.jsonl into 'copy'. 1 memory skipped (nothing but a "
        "secret)."
    )
    assert service.store_for("copy").get(filled["tea"]) is None
    assert service.get("copy", filled["luna"]).content == "Has a dog named Luna"


def test_mismatched_passphrases_export_nothing(
    qtbot: QtBot,
    memory_keyring: object,
    filled: dict[str, str],
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
    shown: list[tuple[str, str]],
) -> None:
    files.save_path = tmp_path / "x.jsonl"
    files.passwords = ["one", "two"]
    panel.include_private.setChecked(True)
    panel.export_button.click()
    assert not panel.busy and not files.save_path.exists()
    assert shown[-1] == ("error", "Not exported: the two passphrases differ. Nothing was written.")


def test_import_passphrase_cancelled_or_wrong(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    store(service, operator, "Therapist on Tuesdays", Privacy.PRIVATE)
    files.save_path = files.open_path = tmp_path / "sealed.jsonl"
    files.passwords = ["pw", "pw"]
    panel.include_private.setChecked(True)
    assert run_job(qtbot, panel, "export_button")[0]
    window.state.set_group("other")

    files.passwords = [None]
    ok, text = run_job(qtbot, panel, "import_button")
    assert not ok and "passphrase" in text
    files.passwords = ["not it"]
    ok, text = run_job(qtbot, panel, "import_button")
    assert not ok and "wrong passphrase" in text
    assert service.store_for("other").total() == 0


def test_export_without_keyring_refuses_instead_of_writing_placeholders(
    qtbot: QtBot,
    memory_keyring: object,
    service: MemoryService,
    operator: Caller,
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    store(service, operator, "Therapist on Tuesdays", Privacy.PRIVATE)
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        files.save_path = tmp_path / "nokey.jsonl"
        files.passwords = ["pw", "pw"]
        panel.include_private.setChecked(True)
        ok, text = run_job(qtbot, panel, "export_button")
    finally:
        keyring.set_keyring(previous)
    assert not ok and text.startswith("Not exported:") and "keyring" in text
    assert not files.save_path.exists()


def test_export_progress_reaches_the_total(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    for i in range(250):
        service.store(operator, {"type": "fact", "content": f"progress fact {i}"})
    reports: list[tuple[int, int]] = []
    panel.progressed.connect(lambda done, total: reports.append((done, total)))
    files.save_path = tmp_path / "big.jsonl"
    ok, _ = run_job(qtbot, panel, "export_button")
    assert ok
    qtbot.waitUntil(lambda: bool(reports) and reports[-1][0] == reports[-1][1])
    assert reports[-1][1] >= 250


def test_a_name_completed_with_its_extension_is_asked_about_before_it_is_replaced(
    tmp_path: Path, files: FileDialogs, dialogs: Dialogs
) -> None:
    from desktop.settings.data_dialogs import ask_save_path

    (tmp_path / "backup.jsonl").write_text("")
    files.save_path = tmp_path / "backup"  # typed without the extension
    dialogs.answer = False
    assert ask_save_path(None, tmp_path / "x.jsonl") is None
    assert dialogs.asked == ["backup.jsonl already exists. Replace it?"]
    dialogs.answer = True
    assert ask_save_path(None, tmp_path / "x.jsonl") == tmp_path / "backup.jsonl"
    # A new name, or one the dialog already asked about, is not asked again.
    files.save_path = tmp_path / "fresh"
    assert ask_save_path(None, tmp_path / "x.jsonl") == tmp_path / "fresh.jsonl"
    assert len(dialogs.asked) == 2


def test_the_import_summary_says_when_a_version_chain_was_mended() -> None:
    from core.portability.importing import ImportReport
    from desktop.settings.data_dialogs import import_text

    report = ImportReport(entries=2, secret_only=["mem-b"], relinked=["mem-a"])
    assert import_text(report, Path("notes.jsonl"), "main") == (
        "Imported 2 memories from notes.jsonl into 'main'. 1 memory skipped (nothing but a "
        "secret). 1 older version now follows the next version imported, or is current "
        "again, because the memory that replaced it was left out."
    )
    report = ImportReport(entries=1, empty=["mem-c", "mem-d"])
    assert import_text(report, Path("notes.jsonl"), "main") == (
        "Imported 1 memory from notes.jsonl into 'main'. 2 empty memories skipped."
    )


def test_the_import_summary_counts_records_a_newer_export_brought_up_to_date() -> None:
    from core.portability.importing import ImportReport
    from desktop.settings.data_dialogs import import_text

    report = ImportReport(duplicates=["mem-a"], updated=["mem-b", "thread thr-1"])
    assert import_text(report, Path("e2.jsonl"), "copy") == (
        "Imported 0 memories from e2.jsonl into 'copy'. 1 record already here, skipped. "
        "2 records already here brought up to date (tags, last seen, activity)."
    )


def test_an_import_that_leaves_empty_tags_out_says_so(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    panel: DataPanel,
    files: FileDialogs,
    tmp_path: Path,
) -> None:
    service.store(operator, {"type": "fact", "content": "Works on billing", "tags": ["work"]})
    files.save_path = tmp_path / "older.jsonl"
    assert run_job(qtbot, panel, "export_button")[0]
    lines = files.save_path.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[1])
    entry["tags"] = ["work", " "]  # as a file from before (or edited by hand) may hold
    files.save_path.write_text("\n".join([lines[0], json.dumps(entry), *lines[2:]]) + "\n")
    window.state.set_group("copy")
    files.open_path = files.save_path
    ok, text = run_job(qtbot, panel, "import_button")
    assert ok and text.endswith(" 1 empty tag left out.")
    assert service.get("copy", str(entry["id"])).tags == ("work",)


def test_every_button_of_your_data_is_documented(panel: DataPanel) -> None:
    """Settings → Your data, in docs/desktop.md: a new button cannot slip in unsaid."""
    docs = (Path(__file__).parents[2] / "docs" / "desktop.md").read_text(encoding="utf-8")
    section = docs[docs.index("**Settings → Your data**") :]
    buttons = [b.text() for b in panel.findChildren(QPushButton)]
    assert "Import from another app…" in buttons and "Export as Markdown…" in buttons
    missing = [text for text in buttons if f"**{text}**" not in section]
    assert missing == []
