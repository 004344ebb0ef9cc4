"""Where ``ambry export`` and ``ambry handoff export`` write: regular files only.

Before, an export replaced whatever was at its path (a device became a regular
0600 file, a link a file of its own, leaving its target stale), made a missing
folder, waited forever on a pipe, and wrote a file named ``-``.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.main import main

posix_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def data(tmp_path: Path) -> list[str]:
    """A data dir with one memory and a thread with a handoff (``Plans``)."""
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    assert main([*d, "store", "Likes green tea"]) == 0
    source = tmp_path / "plan.md"
    source.write_text("# Plan\n")
    assert main([*d, "handoff", "write", "Plans", str(source), "--create"]) == 0
    return d


def _exports(data: list[str], path: Path) -> list[list[str]]:
    return [[*data, "export", str(path)], [*data, "handoff", "export", "Plans", str(path)]]


def apart(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """``ambry argv`` in a process of its own, with a time limit: before, an export
    to a pipe opened it to read it and waited for a writer forever (as
    ``ambry export /dev/stdout | cat`` did), so it is never run in the tests' own."""
    return subprocess.run(
        [sys.executable, "-m", "core.cli.main", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@posix_only
def test_a_pipe_is_refused_at_once_saying_what_to_give_instead(
    tmp_path: Path, data: list[str]
) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "to-pipe.jsonl"
    link.symlink_to(fifo)
    for path in (fifo, link):
        done = apart([*data, "export", str(path)])
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr == (
            f"error: {path} is a pipe (FIFO), not a regular file, and is never replaced; "
            "give a file name, or - to write the export to standard output\n"
        )
        done = apart([*data, "--json", "handoff", "export", "Plans", str(path)])
        refused = json.loads(done.stderr)["error"]
        assert (done.returncode, refused["code"], refused["field"]) == (
            1,
            "invalid_params",
            "path",
        )
        assert refused["message"].startswith(f"{path} is a pipe (FIFO), not a regular file")
        assert "`ambry handoff show thr-" in refused["message"]
        assert stat.S_ISFIFO(fifo.stat().st_mode) and link.is_symlink()


def test_a_folder_is_refused_with_a_file_name_to_give(
    tmp_path: Path, data: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    code, _, err = run(capsys, *data, "export", str(folder))
    assert code == 1
    assert err == (
        f"error: {folder} is a folder; give a file name in it, such as "
        f"{folder / 'ambry-export.jsonl'}\n"
    )
    code, _, err = run(capsys, *data, "handoff", "export", "Plans", str(folder))
    assert code == 1 and f"such as {folder / 'HANDOFF.md'}" in err
    assert folder.is_dir() and list(folder.iterdir()) == []


def test_a_missing_folder_is_refused_not_made(
    tmp_path: Path, data: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-folder"
    for argv in _exports(data, missing / "out.jsonl"):
        code, _, err = run(capsys, *argv)
        assert code == 1, argv
        assert err == (
            f"error: the folder {missing} does not exist; create it first, or give a path "
            "in a folder that exists\n"
        )
        assert not missing.exists()
    afile = tmp_path / "a-file"
    afile.write_text("")
    code, _, err = run(capsys, *data, "export", str(afile / "out.jsonl"))
    assert code == 1 and f"the folder {afile} is not a folder" in err


def test_a_link_is_written_through_and_stays_a_link(
    tmp_path: Path, data: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    target = kept / "memories.jsonl"
    assert main([*data, "export", str(target)]) == 0
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    assert main([*data, "store", "Walks to work"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, *data, "export", str(link))
    assert code == 0 and link.is_symlink() and link.resolve() == target
    assert "Walks to work" in target.read_text()
    assert out == f"exported 2 entries, 1 thread, 1 thread_handoff to {link}\n"
    # A link to nothing yet makes the file it names, as writing to it would.
    dangling = tmp_path / "next.jsonl"
    dangling.symlink_to(kept / "next.jsonl")
    assert main([*data, "export", str(dangling)]) == 0
    assert dangling.is_symlink() and "Walks to work" in (kept / "next.jsonl").read_text()
    # The file a link names is guarded as any file: not an export, not replaced.
    notes = kept / "notes.md"
    notes.write_text("# mine\n")
    to_notes = tmp_path / "notes.jsonl"
    to_notes.symlink_to(notes)
    assert main([*data, "export", str(to_notes)]) == 1
    assert notes.read_text() == "# mine\n"
    # A handoff export through a link also keeps the link.
    handoff = tmp_path / "HANDOFF.md"
    handoff.symlink_to(kept / "handoff.md")
    assert main([*data, "handoff", "export", "Plans", str(handoff)]) == 0
    assert handoff.is_symlink() and (kept / "handoff.md").read_text() == "# Plan\n"


def test_dash_writes_the_export_to_standard_output(
    tmp_path: Path,
    data: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # where a file named "-" would have been written
    code, out, err = run(capsys, *data, "export", "-")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["format"] == "ambry-export" and lines[0]["entries"] == 1
    assert any(r.get("content") == "Likes green tea" for r in lines[1:])
    assert err == "note: exported 1 entry, 1 thread, 1 thread_handoff to standard output\n"
    assert not (tmp_path / "-").exists()
    # What it wrote imports as a file export does.
    saved = tmp_path / "saved.jsonl"
    saved.write_text(out)
    copy = ["--data-dir", str(tmp_path / "data"), "--group", "copy"]
    assert run(capsys, *copy, "import", str(saved))[:2] == (
        0,
        "imported 1 entry and 2 other records; 0 duplicates skipped\n",
    )
    # --json would print a summary where the export goes: refused, saying so.
    code, out, err = run(capsys, *data, "--json", "export", "-")
    assert (code, out) == (1, "")
    assert json.loads(err)["error"]["message"].startswith(
        "export - writes the export itself to standard output"
    )
    code, _, err = run(capsys, *data, "export", "--format", "markdown", "-")
    assert code == 1 and "give a folder" in err
    # A handoff has `handoff show` for standard output; `-` is not made a file.
    code, _, err = run(capsys, *data, "handoff", "export", "Plans", "-")
    assert code == 1 and "prints the handoff to standard output" in err
    assert not (tmp_path / "-").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_standard_output_that_fails_is_one_error_line(data: list[str]) -> None:
    # A full disk under `ambry export - > backup.jsonl`: /dev/full refuses every write.
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "core.cli.main", *data, "export", "-"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    # Before: "bug in ambry export" and a traceback of OSError: [Errno 28].
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("error: cannot write the export to standard output")
    assert "the disk is full" in done.stderr
    # Standard output closed: before, AttributeError: 'NoneType' object has no 'flush'.
    closed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.stdout.close(); sys.stdout = None; "
            "from core.cli.main import main; sys.exit(main(sys.argv[1:]))",
            *data,
            "export",
            "-",
        ],
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        check=False,
    )
    assert closed.returncode == 1 and "Traceback" not in closed.stderr
    assert "standard output, which is closed; give a file name" in closed.stderr


def test_import_says_it_reads_a_file_not_standard_input(
    data: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["import", "-"], ["import", "--from", "claude", "-"]):
        code, _, err = run(capsys, *data, *argv)
        # Before: "cannot read -: No such file or directory".
        assert code == 1 and "import reads a file, not standard input" in err
