"""``ambry doctor`` on the data dir: it creates nothing there, and it finds a full
disk, a held write lock, a damaged group (with the fix that exists), a socket path
no server can use (core.cli.doctor_storage, core.cli.doctor)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import pytest

from core.cli import doctor
from core.cli.doctor_storage import Status, check_free_space
from core.cli.main import main
from core.storage import db
from core.storage.paths import DataDir
from tests.core.test_faults_storage import _cli, _namespace_mounts

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX locks and statvfs")


@pytest.fixture
def data(tmp_path: Path) -> DataDir:
    assert main(["--data-dir", str(tmp_path / "data"), "--create", "store", "Likes tea"]) == 0
    return DataDir(tmp_path / "data")


def _doctor(data: DataDir, **run: Any) -> dict[str, dict[str, str]]:
    done = _cli(data.root, "doctor", "--no-mcp", "--json", **run)
    assert "Traceback" not in done.stderr, done.stderr
    return {f["check"]: f for f in json.loads(done.stdout)}


def test_doctor_creates_nothing_beside_the_databases(
    data: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: it left main.sqlite-wal and main.sqlite-shm behind, although it "never
    # creates or changes anything".
    before = sorted(p.name for p in data.memory_dir.iterdir())
    assert before == ["main.sqlite"]
    main(["--data-dir", str(data.root), "doctor", "--no-mcp"])
    assert "ok    group main: schema v" in capsys.readouterr().out
    assert sorted(p.name for p in data.memory_dir.iterdir()) == before


def test_a_truncated_group_gets_the_fix_that_exists(
    data: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "restore it from a .bak file or move it aside" with no fix line, and
    # no .bak file anywhere.
    path = data.group_db("main")
    with path.open("r+b") as fh:
        fh.truncate(5000)
    found = _doctor(data)["group main"]
    assert found["status"] == "fail"
    assert ".bak" not in found["detail"] and ".bak" not in found["fix"]
    assert ".recover" in found["fix"] and "docs/storage.md" in found["fix"]
    assert main(["--data-dir", str(data.root), "list"]) == 1
    err = capsys.readouterr().err
    assert ".bak file" not in err and ".recover" in err
    # With the copy an upgrade left, both name it.
    copy = db.backup_path(path, 11)
    copy.write_bytes(b"a copy")
    found = _doctor(data)["group main"]
    assert found["fix"].endswith(f"put the newest copy of the group in its place: {copy}")
    assert main(["--data-dir", str(data.root), "list"]) == 1
    assert str(copy) in capsys.readouterr().err


def test_free_space_is_reported_low_and_full_by_its_thresholds(tmp_path: Path) -> None:
    fine = check_free_space(tmp_path)
    assert fine is not None and fine.status is Status.OK and "free on the disk" in fine.detail
    low = check_free_space(tmp_path, low_below=1 << 62)
    assert low is not None and low.status is Status.WARN and "nearly full" in low.detail
    full = check_free_space(tmp_path, full_below=1 << 62)
    assert full is not None and full.status is Status.FAIL and "the disk is full" in full.detail
    assert full.fix == "free some space on it"


def test_doctor_fails_a_really_full_disk(data: DataDir, tmp_path: Path) -> None:
    # Before: every check said ok while every write failed.
    unshare = _namespace_mounts()
    if unshare is None:
        pytest.skip("no mount namespaces here: cannot mount a tiny file system")
    copy = tmp_path / "copy"
    shutil.copytree(data.root, copy)
    fill = (
        f"mount -t tmpfs -o size=1m tmpfs {data.root} && cp -a {copy}/. {data.root}/ && "
        f'(cat /dev/zero > {data.root}/filler 2>/dev/null; true) && exec "$0" "$@"'
    )
    wrap = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", fill]
    found = _doctor(data, wrap=wrap)["disk"]
    assert found["status"] == "fail" and "the disk is full" in found["detail"]


@posix_only
def test_doctor_reports_another_program_holding_the_write_lock(data: DataDir) -> None:
    # Before: "ok" while every write waited 15 s and failed.
    holder = apsw.Connection(str(data.group_db("main")))
    try:
        holder.execute("BEGIN IMMEDIATE")
        found = _doctor(data)["group main"]
        holder.execute("ROLLBACK")
    finally:
        holder.close()
    assert found["status"] == "warn"
    assert "another program holds the database" in found["detail"]
    assert "close the program" in found["fix"]
    assert _doctor(data)["group main"]["status"] == "ok"


def test_doctor_fails_a_socket_path_too_long_to_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: "ok … no server running", while `ambry serve` refused the path.
    long = tmp_path / ("s" * 120) / "agent.sock"
    monkeypatch.setenv("AMBRY_SOCKET", str(long))
    found = doctor.check_socket()
    assert found.status is Status.FAIL and "longer than the 103" in found.detail
    assert found.fix == "set AMBRY_SOCKET to a shorter path"


def test_serve_names_the_option_that_gave_a_socket_path_too_long(tmp_path: Path) -> None:
    # Before: "set AMBRY_SOCKET to a shorter path" although --socket gave it.
    long = tmp_path / ("s" * 120) / "agent.sock"
    argv = ["--data-dir", str(tmp_path / "data"), "--create", "serve", "--socket", str(long)]
    done = subprocess.run(
        [sys.executable, "-m", "ambry", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().endswith("give --socket a shorter path")
