"""File-level faults: loose modes, interrupted exports, group names that collide."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.main import main
from core.model.entries import Actor
from core.model.errors import InvalidGroup
from core.service import MemoryService
from core.storage import pending_files
from core.storage.file_safety import tighten
from core.storage.paths import DataDir, validate_group

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes and signals")
AMBRY = Path(sys.executable).with_name("ambry")
#: Capabilities that let root read and change any file, whatever its mode.
FILE_CAPS = "dac_override,dac_read_search,fowner"


def ambry_bound_by_modes(*argv: str) -> subprocess.CompletedProcess[str]:
    """Run ``ambry`` as one whom file modes stop: root drops the capabilities that
    ignore them (setpriv); anyone else already is."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: file modes cannot stop it")
        drop = ",".join(f"-{cap}" for cap in FILE_CAPS.split(","))
        prefix = [setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}", "--"]
    return subprocess.run([*prefix, str(AMBRY), *argv], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "name", ["CON", "con", "Nul", "aux", "PRN", "COM1", "com9", "LPT1", "lpt0", "COM0"]
)
def test_windows_device_names_are_refused_everywhere(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidGroup, match="Windows reserves"):
        validate_group(name)
    svc = MemoryService(DataDir(tmp_path / "data"))
    with pytest.raises(InvalidGroup):
        svc.open_session(name, Actor.OPERATOR)
    svc.close()
    assert not list((tmp_path / "data").rglob("*.sqlite"))


@pytest.mark.parametrize("name", ["console", "con_1", "COM10", "nullable", "LPT", "auxiliary"])
def test_names_that_only_resemble_device_names_are_fine(name: str) -> None:
    assert validate_group(name) == name


def test_a_group_differing_only_in_case_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    op = svc.open_session("Work", Actor.OPERATOR)
    svc.store(op, {"type": "fact", "content": "the standup is at nine"})
    with pytest.raises(InvalidGroup, match=r"differs only in letter case.*'Work'"):
        svc.open_session("work", Actor.OPERATOR)
    with pytest.raises(InvalidGroup):
        svc.open_session("WORK", Actor.AGENT)
    # The existing group itself still opens.
    assert svc.open_session("Work", Actor.OPERATOR).group == "Work"
    svc.close()
    assert sorted(p.name for p in data.memory_dir.glob("*.sqlite")) == ["Work.sqlite"]

    code = main(["--data-dir", str(data.root), "--group", "work", "search", "standup"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert err == [err[0]] and err[0].startswith("error: group 'work' differs only")


@posix_only
def test_loose_data_dirs_are_tightened_at_open(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    data.memory_dir.mkdir(parents=True)
    for p in (data.root, data.memory_dir):
        p.chmod(0o755)
    svc = MemoryService(data)
    svc.open_session("main", Actor.OPERATOR)
    svc.close()
    for p in (data.root, data.memory_dir):
        assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
    assert stat.S_IMODE(data.group_db("main").stat().st_mode) == 0o600


@posix_only
def test_tightening_keeps_a_folder_read_only(tmp_path: Path) -> None:
    folder = tmp_path / "kept"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        assert tighten(folder)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o500
        assert not tighten(folder)
    finally:
        folder.chmod(0o700)


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@posix_only
def test_an_export_killed_midway_leaves_no_temp_file_after_the_next_start(
    tmp_path: Path,
) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    op = svc.open_session("main", Actor.OPERATOR)
    svc.store(op, {"type": "fact", "content": "the spare key is under the blue pot"})
    svc.close()
    target_dir = tmp_path / "exports"
    target_dir.mkdir()
    target = target_dir / "memories.jsonl"
    # Killed for real, after the data is written and before the rename.
    # (The note of the temp file is renamed into place too: that rename goes through.)
    killer = (
        "import os, signal\nreplace = os.replace\n"
        "os.replace = lambda a, b: os.kill(os.getpid(), signal.SIGKILL) "
        "if str(b).endswith('memories.jsonl') else replace(a, b)\n"
    )
    script = f"import sys\n{killer}from core.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    done = subprocess.run(
        [sys.executable, "-c", script, "--data-dir", str(data.root), "export", str(target)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL
    leftover = _hidden(target_dir)
    assert len(leftover) == 1 and leftover[0].endswith(pending_files.TEMP_SUFFIX)
    assert not target.exists()

    assert main(["--data-dir", str(data.root), "search", "key"]) == 0
    assert _hidden(target_dir) == []
    assert list(data.pending_dir.iterdir()) == []


def test_a_running_writers_temp_file_is_not_swept(tmp_path: Path) -> None:
    pending = tmp_path / "pending"
    pending.mkdir()
    tmp = tmp_path / f".out.jsonl.abc{pending_files.TEMP_SUFFIX}"
    tmp.write_text("half")
    (pending / "n.json").write_text(json.dumps({"path": str(tmp), "pid": os.getpid()}))
    assert pending_files.sweep(pending) == []
    assert tmp.exists()
    # A note naming a file that is not one of ours never deletes it.
    other = tmp_path / "notes.txt"
    other.write_text("mine")
    (pending / "m.json").write_text(json.dumps({"path": str(other), "pid": 2**22 + 7}))
    pending_files.sweep(pending)
    assert other.read_text() == "mine"


def test_a_completed_export_leaves_no_note(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    op = svc.open_session("main", Actor.OPERATOR)
    svc.store(op, {"type": "fact", "content": "exports are whole"})
    svc.close()
    target = tmp_path / "out.jsonl"
    assert main(["--data-dir", str(data.root), "export", str(target)]) == 0
    assert json.loads(target.read_text().splitlines()[0])["entries"] == 1
    assert _hidden(tmp_path) == []
    assert list(data.pending_dir.glob("*")) == []


@posix_only
def test_a_data_dir_that_cannot_be_read_is_one_clear_error(tmp_path: Path) -> None:
    # Before, every command (doctor too) died with a traceback, "bug in ambry":
    # the settings file could not even be looked for in a folder that cannot be searched.
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "--create", "store", "Likes tea"]) == 0
    data.chmod(0)
    try:
        done = ambry_bound_by_modes("--data-dir", str(data), "list")
    finally:
        data.chmod(0o700)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: {data / 'config.json'}: cannot read settings")
    assert f"chmod 700 '{data}'" in line


def _with_memory_unreadable(
    tmp_path: Path, *argv: str
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``ambry --data-dir DATA ARGV`` while DATA's ``memory`` folder (one group in it)
    cannot be read; returns what it did and the folder."""
    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "--create", "store", "Likes tea"]) == 0
    memory = data / "memory"
    memory.chmod(0)
    try:
        return ambry_bound_by_modes("--data-dir", str(data), *argv), memory
    finally:
        memory.chmod(0o700)


@posix_only
def test_doctor_says_a_memory_folder_that_cannot_be_read_is_not_empty(tmp_path: Path) -> None:
    # Before, doctor listed no group in it and said "ok schema: no groups yet".
    done, memory = _with_memory_unreadable(tmp_path, "doctor", "--no-mcp", "--json")
    findings = {f["check"]: f for f in json.loads(done.stdout)}
    assert done.returncode == 1 and "Traceback" not in done.stderr
    found = findings["data dir"]
    assert found["status"] == "fail" and "cannot be read by you" in found["detail"]
    assert found["fix"] == f"chmod 700 '{memory}'"
    assert "schema" not in findings and findings["config"]["status"] == "ok"


@posix_only
def test_a_memory_folder_that_cannot_be_read_is_not_listed_as_no_groups(tmp_path: Path) -> None:
    done, memory = _with_memory_unreadable(tmp_path, "--group", "work", "list")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "none yet" not in done.stdout
    assert done.stderr.startswith(f"error: cannot list the groups in {memory}")
    assert done.stderr.rstrip().endswith(f"keeps you from reading it; chmod 700 '{memory}'")


@posix_only
def test_a_note_is_written_whole_and_owner_only(tmp_path: Path) -> None:
    # Before: opened with the umask's mode (0644) and filled after, so a full disk
    # left an empty note.
    pending = tmp_path / "pending"
    tmp = tmp_path / f".out.jsonl.abc{pending_files.TEMP_SUFFIX}"
    note = pending_files._note(pending, tmp)
    assert note is not None and stat.S_IMODE(note.stat().st_mode) == 0o600
    assert json.loads(note.read_text()) == {"path": str(tmp), "pid": os.getpid()}
    assert [p.name for p in pending.iterdir()] == [note.name]


def test_an_empty_note_is_removed_once_saying_what_happened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Before: "ignoring the unreadable note …: Expecting value" at every start, forever.
    pending = tmp_path / "pending"
    pending.mkdir()
    (pending / "0123456789abcdef.json").write_bytes(b"")
    (pending / "fedcba9876543210.json").write_text('{"path": "/x/.y.ambry-tmp", "pi')
    pending_files.sweep(pending)
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(said) == 2 and all(m.startswith("removed an ") for m in said)
    assert "empty note" in said[0] and "could not finish writing it" in said[0]
    assert "unreadable note" in said[1]
    assert list(pending.iterdir()) == []
    caplog.clear()
    pending_files.sweep(pending)
    assert not caplog.records


def test_an_export_with_a_full_data_dir_leaves_no_empty_note(tmp_path: Path) -> None:
    from tests.core.test_faults_storage import _namespace_mounts

    unshare = _namespace_mounts()
    if unshare is None:
        pytest.skip("no mount namespaces here: cannot mount a tiny file system")
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    svc.store(svc.open_session("main", Actor.OPERATOR), {"type": "fact", "content": "tea"})
    svc.close()
    copy = tmp_path / "copy"
    shutil.copytree(data.root, copy)
    out = tmp_path / "out.jsonl"
    # On a 1 MiB tmpfs over the data dir, filled to the last byte: export (to another
    # disk), show what pending/ holds, then run another command.
    script = (
        "import json, os, sys\nfrom core.cli.main import main\n"
        f"main(['--data-dir', {str(data.root)!r}, 'export', {str(out)!r}])\n"
        f"print('pending:', json.dumps(os.listdir({str(data.pending_dir)!r})"
        f" if os.path.isdir({str(data.pending_dir)!r}) else []), flush=True)\n"
        f"main(['--data-dir', {str(data.root)!r}, 'list'])\n"
    )
    fill = (
        f"mount -t tmpfs -o size=1m tmpfs {data.root} && cp -a {copy}/. {data.root}/ && "
        f'(cat /dev/zero > {data.root}/filler 2>/dev/null; true) && exec "$0" "$@"'
    )
    wrap = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", fill]
    done = subprocess.run(
        [*wrap, sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.exists(), done.stderr
    assert json.loads(out.read_text().splitlines()[0])["entries"] == 1, done.stderr
    [listed] = [line for line in done.stdout.splitlines() if line.startswith("pending: ")]
    assert json.loads(listed.removeprefix("pending: ")) == []
    assert "unreadable note" not in done.stderr and "Traceback" not in done.stderr
