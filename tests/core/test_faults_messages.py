"""A fault's message names its cause and the fix that helps: a folder or file of
another user (chown, not chmod), a disk mounted read-only (neither), a log folder
that cannot be used; and a read-only data dir warns once, only of what is so."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli.main import main
from core.storage.paths import DataDir
from tests.core.test_faults_files import ambry_bound_by_modes
from tests.core.test_faults_storage import _read_only_runner

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX owners, modes and mounts")
#: Another user's id (nobody's on most systems).
OTHER_UID = 65534


@pytest.fixture
def data(tmp_path: Path) -> DataDir:
    assert main(["--data-dir", str(tmp_path / "data"), "--create", "store", "Likes tea"]) == 0
    return DataDir(tmp_path / "data")


def _give_away(path: Path, mode: int) -> None:
    """Make ``path`` another user's, with ``mode``."""
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another user")
    os.chown(path, OTHER_UID, OTHER_UID)
    path.chmod(mode)


@pytest.fixture
def taken_back(data: DataDir) -> Iterator[None]:
    yield
    for path in (data.memory_dir, data.group_db("main")):
        os.chown(path, 0, 0)
        path.chmod(0o700 if path.is_dir() else 0o600)


@posix_only
def test_a_memory_folder_of_another_user_needs_chown_not_chmod(
    data: DataDir, taken_back: None
) -> None:
    # Before: "make it yours to read (chmod 700 …)" for a folder that already was 0700.
    _give_away(data.memory_dir, 0o700)
    listed = ambry_bound_by_modes("--data-dir", str(data.root), "--group", "work", "list")
    opened = ambry_bound_by_modes("--data-dir", str(data.root), "list")
    doctor = ambry_bound_by_modes("--data-dir", str(data.root), "doctor", "--no-mcp", "--json")
    chown = f"sudo chown -R $USER '{data.memory_dir}'"
    for done in (listed, opened):
        assert done.returncode == 1 and "Traceback" not in done.stderr
        [line] = done.stderr.splitlines()
        assert f"{data.memory_dir} belongs to " in line and "not to you" in line
        assert line.endswith(chown) and "chmod" not in line
    found = {f["check"]: f for f in json.loads(doctor.stdout)}["data dir"]
    assert found["status"] == "fail" and found["fix"] == chown


@posix_only
def test_a_group_file_of_another_user_names_the_owner_and_doctor_the_fix(
    data: DataDir, taken_back: None
) -> None:
    # Before: "cannot read the file (Permission denied)", and doctor gave no fix line.
    db = data.group_db("main")
    _give_away(db, 0o600)
    done = ambry_bound_by_modes("--data-dir", str(data.root), "search", "tea")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: cannot read the database: {db} belongs to ")
    assert line.endswith(f"sudo chown $USER '{db}'")
    doctor = ambry_bound_by_modes("--data-dir", str(data.root), "doctor", "--no-mcp", "--json")
    found = {f["check"]: f for f in json.loads(doctor.stdout)}["group main"]
    assert found["status"] == "fail" and found["fix"] == f"sudo chown $USER '{db}'"


@posix_only
def test_a_log_folder_of_another_user_fails_in_doctor_with_the_fix(
    data: DataDir, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: doctor died with PermissionError at the log file's path.exists(), and
    # commands warned "cannot write the log file …: Permission denied" with no fix.
    logs = tmp_path / "their-logs"
    logs.mkdir()
    _give_away(logs, 0o700)
    monkeypatch.setenv("AMBRY_LOG_DIR", str(logs))
    doctor = ambry_bound_by_modes("--data-dir", str(data.root), "doctor", "--no-mcp", "--json")
    assert "Traceback" not in doctor.stderr
    found = {f["check"]: f for f in json.loads(doctor.stdout)}["log"]
    assert found["status"] == "fail" and f"{logs} belongs to " in found["detail"]
    assert found["fix"] == f"sudo chown -R $USER '{logs}'"
    listed = ambry_bound_by_modes("--data-dir", str(data.root), "list")
    assert listed.returncode == 0
    [warning] = listed.stderr.splitlines()
    assert warning.startswith("warning: cannot ")
    assert f"sudo chown -R $USER '{logs}'" in warning


def test_a_log_dir_naming_a_file_says_it_must_name_a_folder(
    data: DataDir,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Before: "cannot log to …/ambry.log: File exists".
    named = tmp_path / "ambry-logs"
    named.write_text("not a folder")
    monkeypatch.setenv("AMBRY_LOG_DIR", str(named))
    assert main(["--data-dir", str(data.root), "list"]) == 0
    err = capsys.readouterr().err
    assert f"AMBRY_LOG_DIR={named} names a file, but must name a folder" in err
    assert "File exists" not in err


def _on_a_read_only_mount(data: DataDir, script: str) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0:
        pytest.skip("needs a read-only mount (root and mount namespaces)")
    wrap, _ = _read_only_runner(data.root)
    assert wrap is not None
    return subprocess.run(
        [*wrap, sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@posix_only
def test_a_read_only_mount_is_named_as_such_by_doctor_and_commands(data: DataDir) -> None:
    # Before: doctor said "fix: chown $USER …", commands "check that its folder exists
    # and is writable".
    doctor = _on_a_read_only_mount(
        data,
        "import sys\nfrom core.cli.main import main\n"
        f"sys.exit(main(['--data-dir', {str(data.root)!r}, 'doctor', '--no-mcp', '--json']))",
    )
    found = {f["check"]: f for f in json.loads(doctor.stdout)}["data dir"]
    assert found["status"] == "fail" and "is mounted read-only" in found["detail"]
    assert "chown" not in found["fix"] and found["fix"].startswith("remount it read-write")
    store = _on_a_read_only_mount(
        data,
        "import sys\nfrom core.cli.main import main\n"
        f"sys.exit(main(['--data-dir', {str(data.root)!r}, 'store', 'a new fact']))",
    )
    assert store.returncode == 1 and "Traceback" not in store.stderr
    assert "is mounted read-only; remount it read-write" in store.stderr.splitlines()[-1]
    assert "check that its folder exists" not in store.stderr


@posix_only
def test_a_read_only_data_dir_warns_once_and_only_of_a_loose_mode(data: DataDir) -> None:
    # Before: a server's two connections printed "cannot make … private on a
    # read-only disk" for a file that was 0600, and the CantOpenError warning, twice.
    db = data.group_db("main")
    twice = (
        "import logging\nfrom pathlib import Path\nfrom core.storage.store import GroupStore\n"
        "logging.basicConfig(format='%(levelname)s %(message)s')\n"
        f"for _ in range(2):\n    GroupStore(Path({str(db)!r}), 'main').close()\n"
    )
    private = _on_a_read_only_mount(data, twice)
    assert private.returncode == 0, private.stderr
    assert private.stderr.count("it is open read-only") == 1, private.stderr
    assert "is mounted read-only" in private.stderr
    assert "private" not in private.stderr and "readable by others" not in private.stderr
    db.chmod(0o644)
    loose = _on_a_read_only_mount(data, twice)
    assert loose.stderr.count(f"{db} stays readable by others (mode 0644)") == 1, loose.stderr
    assert stat.S_IMODE(db.stat().st_mode) == 0o644
