"""Shared fixtures. Every test runs headless and against a temporary data dir."""

from __future__ import annotations

import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from core.model.config import Config
from core.model.entries import Actor
from core.service import Caller, MemoryService
from core.storage.paths import DataDir

# The commands tests start (`ambry mcp`, `ambry serve`) run this checkout's code,
# even when the venv's editable install points at another checkout of Ambry.
_CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (_CHECKOUT, os.environ.get("PYTHONPATH", "")) if p
)


@pytest.fixture(autouse=True)
def _isolated_paths(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test ever touches the real data dir, runtime dir or log dir.

    ``AMBRY_DATA_DIR`` names a data dir that exists (as one the person set up
    would), beside the test's ``tmp_path`` rather than in it.
    """
    monkeypatch.setenv("AMBRY_DATA_DIR", str(tmp_path_factory.mktemp("default-data")))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("AMBRY_LOG_DIR", str(tmp_path / "logs"))


@pytest.fixture
def local_zone() -> Iterator[Callable[[str], None]]:
    """Set the process's local time zone (``local_zone("America/Los_Angeles")``);
    the machine's own is restored after, whatever it is."""
    before = os.environ.get("TZ")

    def use(zone: str) -> None:
        os.environ["TZ"] = zone
        time.tzset()

    yield use
    if before is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.fixture
def memory_keyring() -> Iterator[object]:
    """A working keyring for the test; the machine's (absent) one is restored after."""
    import keyring

    # Before the test backend is imported: keyring picks its default, on first use,
    # among the backend classes loaded, and would pick this one and keep it after.
    previous = keyring.get_keyring()

    from tests.keyring_backend import MemoryKeyring

    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def plain_file_keyring(tmp_path: Path) -> Iterator[object]:
    """A keyring backend that writes keys into a plain file, as keyrings.alt's does."""
    import keyring

    previous = keyring.get_keyring()

    from tests.keyring_backend import PlainFileKeyring

    backend = PlainFileKeyring(tmp_path / "keyring_pass.cfg")
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """The machine's own situation, made explicit: no keyring backend at all
    (whatever an earlier test in the process left installed)."""
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    yield
    keyring.set_keyring(previous)


@pytest.fixture
def data_dir(tmp_path: Path) -> DataDir:
    d = DataDir(tmp_path / "data")
    d.ensure()
    return d


@pytest.fixture
def service(data_dir: DataDir) -> Iterator[MemoryService]:
    svc = MemoryService(data_dir, Config())
    yield svc
    svc.close()


@pytest.fixture
def operator(service: MemoryService) -> Caller:
    return service.open_session("main", Actor.OPERATOR, "tests")


@pytest.fixture
def agent(service: MemoryService) -> Caller:
    return service.open_session("main", Actor.AGENT, "test-agent")


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    """A folder of one's own holding a copy of the installed model: a model with
    another id, so choosing it makes every row be embedded again."""
    import shutil

    from core.semantic.embedding import default_files

    installed = default_files()
    folder = tmp_path / "my model"
    folder.mkdir()
    shutil.copy(installed.model, folder / "model.onnx")
    shutil.copy(installed.tokenizer, folder / "tokenizer.json")
    return folder
