"""A file Ambry cannot read or write is one clear message with what to do: a full
disk, a disk mounted read-only, a folder where a file must be (core.model.file_errors)."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest

from core.model.entries import Actor
from core.model.file_errors import FileError, access_problem, explain, file_error
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.test_faults_storage import _cli, _namespace_mounts, _read_only_runner

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes and mounts")


def _disk_full_error() -> OSError:
    """The error a write to a full disk really raises (``/dev/full`` is always full)."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with pytest.raises(OSError) as caught, open("/dev/full", "wb", buffering=0) as fh:
        fh.write(b"{}")
    return caught.value


def test_a_full_disk_is_named_as_such_with_what_to_do(tmp_path: Path) -> None:
    exc = _disk_full_error()
    assert exc.errno == errno.ENOSPC
    path = tmp_path / "config.json"
    found = file_error(exc, path, "save the settings")
    assert isinstance(found, FileError) and found.code == "storage_error"
    assert found.message == (
        f"{path}: cannot save the settings: the disk is full; free some space and try again"
    )
    assert found.fix == "free some space and try again"


def test_a_folder_where_a_file_must_be_says_it_must_be_a_file(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.mkdir()
    with pytest.raises(OSError) as caught:
        path.read_bytes()
    found = explain(caught.value, path, write=False)
    assert found.cause == f"{path} is a folder, but must be a file"
    assert "chmod" not in str(found)


def test_a_file_where_a_folder_must_be_is_named(tmp_path: Path) -> None:
    (tmp_path / "backups").write_text("not a folder")
    target = tmp_path / "backups" / "claims" / "main.json"
    with pytest.raises(OSError) as caught:
        target.parent.mkdir(parents=True, exist_ok=True)
    found = explain(caught.value, target, write=True)
    assert found.cause == f"{tmp_path / 'backups'} is a file, but must be a folder"


def test_nothing_is_in_the_way_of_a_writable_folder(tmp_path: Path) -> None:
    assert access_problem(tmp_path / "new" / "config.json", write=True) is None
    assert access_problem(tmp_path, write=False) is None


def _data(tmp_path: Path) -> DataDir:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    svc.store(svc.open_session("main", Actor.OPERATOR), {"type": "fact", "content": "tea"})
    svc.close()
    return data


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr and "bug in ambry" not in stderr
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, stderr
    return lines[0]


@posix_only
def test_settings_on_a_read_only_data_dir_is_one_error_line(tmp_path: Path) -> None:
    # Before: "error: bug in ambry settings" and OSError: [Errno 30] Read-only file system.
    data = _data(tmp_path)
    wrap, prelude = _read_only_runner(data.root)
    try:
        changed = _cli(data.root, "settings", "recency_weight", "0.3", wrap=wrap, prelude=prelude)
        reset = _cli(data.root, "--json", "settings", "trash_days", "--reset", wrap=wrap)
        as_json = _cli(data.root, "--json", "settings", "trash_days", "7", wrap=wrap)
    finally:
        for p in (data.root, data.memory_dir):
            p.chmod(0o700)
    assert changed.returncode == 1
    line = _one_error_line(changed.stderr)
    assert line.startswith(f"error: {data.config_file}: cannot save the settings: ")
    if wrap is not None:  # root: a read-only mount, not a mode
        assert "is mounted read-only; remount it read-write" in line
    assert reset.returncode == 0  # already the default: nothing to write
    assert as_json.returncode == 1 and "Traceback" not in as_json.stderr
    error = json.loads(as_json.stderr)["error"]
    assert error["code"] == "storage_error" and "cannot save the settings" in error["message"]
    assert not data.config_file.exists()


@posix_only
def test_claims_mode_apply_on_a_read_only_data_dir_is_one_error_line(tmp_path: Path) -> None:
    # Before: "error: bug in ambry claims", OSError … Read-only file system: '…/backups'.
    data = _data(tmp_path)
    wrap, prelude = _read_only_runner(data.root)
    try:
        done = _cli(
            data.root, "claims", "mode", "apply", "diagnostic", "--yes", wrap=wrap, prelude=prelude
        )
    finally:
        for p in (data.root, data.memory_dir):
            p.chmod(0o700)
    assert done.returncode == 1
    line = _one_error_line(done.stderr)
    assert "cannot write the backup of the claims mode (the mode was not changed)" in line
    assert not (data.root / "backups").exists()


def test_settings_and_claims_mode_on_a_really_full_disk(tmp_path: Path) -> None:
    unshare = _namespace_mounts()
    if unshare is None:
        pytest.skip("no mount namespaces here: cannot mount a tiny file system")
    data = _data(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(data.root, copy)
    fill = (
        f"mount -t tmpfs -o size=1m tmpfs {data.root} && cp -a {copy}/. {data.root}/ && "
        f'(cat /dev/zero > {data.root}/filler 2>/dev/null; true) && exec "$0" "$@"'
    )
    wrap = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", fill]
    changed = _cli(data.root, "settings", "recency_weight", "0.3", wrap=wrap)
    assert changed.returncode == 1
    line = _one_error_line(changed.stderr)
    assert line.endswith(
        "cannot save the settings: the disk is full; free some space and try again"
    )
    mode = _cli(data.root, "claims", "mode", "apply", "enforce", "--yes", wrap=wrap)
    assert mode.returncode == 1
    assert _one_error_line(mode.stderr).endswith("the disk is full; free some space and try again")
