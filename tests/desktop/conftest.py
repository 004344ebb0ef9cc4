"""Fixtures for the desktop tests: real widgets over real stores, headless."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType, Source, SourceType, Trust
from core.model.errors import AmbryError
from core.service import Caller, MemoryService
from core.storage.paths import DataDir, validate_group
from desktop.shell import groups
from desktop.shell.app import load_style
from desktop.shell.main_window import MainWindow
from desktop.widgets import messages
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

#: The offscreen platform cannot pass size hints to a window manager (there is
#: none) and says so at warning level for every top-level window shown.
OFFSCREEN_NOISE = r"This plugin does not support propagateSizeHints\(\)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(pytest.mark.qt_log_ignore(OFFSCREEN_NOISE))


@dataclass
class Dialogs:
    """Stands in for questions to the person: records them, answers as told."""

    answer: bool = True
    text: str | None = None
    asked: list[str] = field(default_factory=list)
    #: The yes and no buttons of each question asked.
    buttons: list[tuple[str, str]] = field(default_factory=list)

    def confirm(
        self, _parent: object, _title: str, question: str, action: str, keep: str | None = None
    ) -> bool:
        self.asked.append(question)
        self.buttons.append((action, keep or "Cancel"))
        return self.answer

    def ask_text(self, _parent: object, _title: str, label: str) -> str | None:
        self.asked.append(label)
        return self.text

    def ask_group_name(
        self, _parent: object, _title: str, label: str, check: object, *_args: object
    ) -> str | None:
        """As the real dialog: a name its check refuses is never returned."""
        self.asked.append(label)
        if self.text is None:
            return None
        try:
            check(validate_group(self.text))  # type: ignore[operator]
        except AmbryError:
            return None
        return self.text


@pytest.fixture(autouse=True)
def dialogs(monkeypatch: pytest.MonkeyPatch) -> Dialogs:
    fake = Dialogs()
    monkeypatch.setattr(messages, "confirm", fake.confirm)
    monkeypatch.setattr(messages, "ask_text", fake.ask_text)
    monkeypatch.setattr(groups, "ask_group_name", fake.ask_group_name)
    return fake


@pytest.fixture
def shown(qtbot: QtBot) -> list[tuple[str, str]]:
    """Every message sent through the messages bridge during the test."""
    seen: list[tuple[str, str]] = []
    messages.bridge.shown.connect(lambda level, text: seen.append((level, text)))
    return seen


@pytest.fixture
def state(qtbot: QtBot, service: MemoryService, data_dir: DataDir) -> Iterator[AppState]:
    app_state = AppState(service, data_dir, "main")
    yield app_state
    app_state.close()


@pytest.fixture
def executor(service: MemoryService, data_dir: DataDir) -> Iterator[Executor]:
    ex = Executor(data_dir, service.config, "test-query")
    yield ex
    ex.close()


@pytest.fixture
def window(
    qtbot: QtBot, qapp: object, state: AppState, executor: Executor, tmp_path: Path
) -> Iterator[MainWindow]:
    qapp.setStyleSheet(load_style())  # type: ignore[attr-defined]
    win = MainWindow(state, executor, None, tmp_path / "agent.sock", "not started in tests")
    qtbot.addWidget(win)
    win.show()
    # Shortcuts only reach the active window.
    win.activateWindow()
    qtbot.waitActive(win)
    win.start()
    yield win
    win.close()


def add(
    service: MemoryService,
    caller: Caller,
    content: str,
    entry_type: EntryType = EntryType.FACT,
    tags: tuple[str, ...] = (),
    *,
    low_trust: bool = False,
) -> str:
    """Store one entry; returns its id."""
    source = Source(SourceType.WEB_CONTENT, Trust.LOW) if low_trust else None
    request = StoreRequest(entry_type, content, tags, source=source)
    return service.store_entries(caller, [request])[0].entry.id


def embed_all(service: MemoryService) -> None:
    """Start the service's embedding worker and wait until every row has its vector."""
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)


@pytest.fixture
def filled(service: MemoryService, operator: Caller) -> dict[str, str]:
    """A few entries of different types and tags, by a short name."""
    return {
        "luna": add(service, operator, "Has a dog named Luna", EntryType.FACT, ("pets",)),
        "tea": add(service, operator, "Prefers green tea", EntryType.PREFERENCE, ("food",)),
        "tests": add(service, operator, "Run the tests first", EntryType.INSTRUCTION, ("work",)),
        "office": add(service, operator, "Works in the Lyon office", EntryType.FACT, ("work",)),
    }


@pytest.fixture
def agent_caller(service: MemoryService) -> Caller:
    return service.open_session("main", Actor.AGENT, "test-agent")


#: The installed console script, beside the interpreter running the tests.
AMBRY = Path(sys.executable).with_name("ambry")


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    # Not tmp_path: a Unix socket path must fit in ~100 bytes.
    path = Path(tempfile.mkdtemp(prefix="ambry-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class Served:
    """A real ``ambry serve`` on its own data dir and socket."""

    proc: subprocess.Popen[str]
    data: Path
    sock: Path
    env: dict[str, str]


def start_serve(tmp_path: Path, sock_dir: Path) -> Served:
    """Start ``ambry serve`` (its stderr piped) and wait until its socket exists."""
    data = tmp_path / "serve-data"
    data.mkdir()  # a data dir AMBRY_DATA_DIR names must exist
    sock = sock_dir / "serve.sock"
    env = {**os.environ, "AMBRY_SOCKET": str(sock), "AMBRY_DATA_DIR": str(data)}
    proc = subprocess.Popen(
        [str(AMBRY), "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 30
    while not sock.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return Served(proc, data, sock, env)


@pytest.fixture(autouse=True)
def _no_key_left_held(qtbot: QtBot) -> Iterator[None]:
    """Release the modifier keys a test left held: a shortcut that hides its window
    (Ctrl+W) gets no key release, and Qt would then read every later click as
    Ctrl+click, adding rows to a selection instead of replacing it."""
    yield
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QWidget

    held = QApplication.keyboardModifiers()
    keys = {
        Qt.KeyboardModifier.ControlModifier: Qt.Key.Key_Control,
        Qt.KeyboardModifier.ShiftModifier: Qt.Key.Key_Shift,
        Qt.KeyboardModifier.AltModifier: Qt.Key.Key_Alt,
        Qt.KeyboardModifier.MetaModifier: Qt.Key.Key_Meta,
    }
    if held != Qt.KeyboardModifier.NoModifier:
        target = QWidget()
        for modifier, key in keys.items():
            if held & modifier:
                QTest.keyRelease(target, key)
        target.deleteLater()
