"""The ``ambry`` launcher (ambry/__init__.py) imports Ambry's own ``core``, installed or not.

An installed wheel keeps ``core``, ``desktop`` and ``resources`` in
``ambry/_app/``; these tests lay out such a site-packages by hand (the launcher,
and stand-in packages that say whose they are), put another distribution's
``core`` beside it and check which one each import gets. The real wheel is
checked the same way by packaging/install_check.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ambry
from core import __version__
from core.cli import doctor
from core.cli import setup as cli_setup

ROOT = Path(__file__).resolve().parents[1]


def _package(folder: Path, owner: str) -> None:
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(f"OWNER = {owner!r}\n")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site-packages as the wheel lays it out: ambry/, with core & co. in ambry/_app/."""
    site = tmp_path / "site"
    shutil.copytree(ROOT / "ambry", site / "ambry", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ambry.APP_PACKAGES:
        _package(site / "ambry" / "_app" / name, "ambry")
    return site


@pytest.fixture
def other(tmp_path: Path) -> Path:
    """Another distribution's top-level ``core`` and ``resources``."""
    other = tmp_path / "other"
    _package(other / "core", "other")
    _package(other / "resources", "other")
    return other


def python(code: str, *path: Path, cwd: Path) -> str:
    """Run ``code`` in a new Python whose sys.path starts with ``path``; its stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, path))}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_in_the_checkout_the_packages_are_the_repository_folders() -> None:
    assert ambry.app_dir() == ROOT
    import core

    assert ambry.loads_from(core, ROOT)
    assert not ambry.loads_from(core, ROOT / "desktop")
    assert not ambry.loads_from(None, ROOT)


def test_installed_the_launcher_prefers_its_own_core_over_one_earlier_on_the_path(
    site: Path, other: Path, tmp_path: Path
) -> None:
    code = (
        "import core, ambry; before = core.OWNER; folder = ambry.use_app_dir(); "
        "import core, resources; "
        "print(before, core.OWNER, resources.OWNER, folder == ambry.app_dir())"
    )
    # The other distribution comes first on sys.path, and its core is already imported.
    assert python(code, other, site, cwd=tmp_path) == "other ambry ambry True"
    assert python("import ambry; print(ambry.app_dir())", other, site, cwd=tmp_path) == str(
        (site / "ambry" / "_app").resolve()
    )


def test_without_the_launcher_the_other_core_is_untouched(
    site: Path, other: Path, tmp_path: Path
) -> None:
    code = "import ambry, core, sys; print(core.OWNER, str(ambry.app_dir()) in sys.path)"
    assert python(code, site, other, cwd=tmp_path) == "other False"


def test_installed_without_its_packages_the_launcher_says_so(site: Path, tmp_path: Path) -> None:
    shutil.rmtree(site / "ambry" / "_app" / "core")
    code = (
        "import ambry\ntry:\n    ambry.use_app_dir()\nexcept ImportError as exc:\n    print(exc)\n"
    )
    assert "Ambry's packages are missing" in python(code, site, cwd=tmp_path)


def test_python_m_ambry_runs_from_a_folder_with_another_core(other: Path) -> None:
    # With -m, the current folder comes first on sys.path; it holds a core without cli.
    done = subprocess.run(
        [sys.executable, "-m", "ambry", "--version"],
        cwd=other,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"ambry {__version__}"


def test_main_runs_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    data = str(tmp_path / "data")
    assert ambry.main(["--data-dir", data, "--create", "store", "--type", "fact", "Owls"]) == 0
    assert ambry.main(["--data-dir", data, "search", "owls"]) == 0
    assert "Owls" in capsys.readouterr().out
    assert sys.path[0] == str(ROOT)


def test_relaunches_go_through_the_launcher(other: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `ambry setup` run as `python -m ambry` with no ambry on PATH, and `ambry doctor`
    # timing `ambry mcp`, both start this Python's `-m ambry`.
    monkeypatch.setattr(sys, "argv", [str(ROOT / "ambry" / "__main__.py")])
    monkeypatch.setattr(shutil, "which", lambda name: None)
    for command in (cli_setup.ambry_command(), doctor._ambry_command()):
        assert command == [sys.executable, "-m", "ambry"]
        done = subprocess.run(
            [*command, "--version"],
            cwd=other,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.stdout.strip() == f"ambry {__version__}", done.stderr


def test_the_python_client_is_importable_as_ambry_client() -> None:
    """The name docs/protocol.md gives, which an installed wheel can import (the
    wheel itself is run by packaging/install_check.py)."""
    from ambry import client
    from core.agent.client import AmbryClient
    from core.model.errors import RateLimited

    assert client.AmbryClient is AmbryClient and client.RateLimited is RateLimited
    assert "from ambry.client import AmbryClient" in (ROOT / "docs" / "protocol.md").read_text()
    assert "from core" not in (ROOT / "examples" / "agent.py").read_text()
