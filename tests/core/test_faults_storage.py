"""Storage faults end cleanly: newer files untouched, failed upgrades explained,
reads that keep working on a read-only data dir and on a full disk."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

from core.model.entries import Actor, iso, utc_now
from core.model.errors import SchemaTooNew, StorageError
from core.service import MemoryService
from core.storage import db, db_header, schema
from core.storage.paths import DataDir

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes and rlimits")


def _files(path: Path) -> dict[str, str]:
    """Digest of the database and its -wal and -shm files, by name."""
    found = {}
    for p in (path, db_header.wal_path(path), db_header.shm_path(path)):
        if p.exists():
            found[p.name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


def _left_with_pending_log(path: Path, version: int, rows: int = 3) -> None:
    """Write a database the way a process killed before its last checkpoint leaves it."""
    conn = apsw.Connection(str(path))
    conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    conn.execute("PRAGMA journal_mode = WAL").fetchall()
    conn.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    conn.execute("CREATE TABLE future (x)")
    for i in range(rows):
        conn.execute("INSERT INTO future VALUES (?)", (f"row {i}",))
    conn.execute(f"PRAGMA user_version = {version}")
    conn.close()


def test_newer_database_with_a_pending_log_is_left_byte_identical(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    data.ensure()
    path = data.group_db("main")
    _left_with_pending_log(path, schema.SCHEMA_VERSION + 1)
    before = _files(path)
    assert set(before) == {"main.sqlite", "main.sqlite-wal", "main.sqlite-shm"}

    with pytest.raises(SchemaTooNew, match="newer Ambry"):
        db.open_database(path)
    with pytest.raises(SchemaTooNew):
        db.open_database(path, read_only=True)
    svc = MemoryService(data)
    with pytest.raises(SchemaTooNew):
        svc.open_session("main", Actor.OPERATOR)
    svc.close()
    assert _files(path) == before


def test_a_current_database_with_a_pending_log_opens_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    db.open_database(path).close()
    conn = apsw.Connection(str(path))
    conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    conn.execute("CREATE TABLE crash_probe (x); INSERT INTO crash_probe VALUES ('kept');")
    conn.close()
    assert db_header.wal_path(path).stat().st_size > 0
    opened = db.open_database(path)
    try:
        assert opened.execute("SELECT x FROM crash_probe").get == "kept"
    finally:
        opened.close()


def test_a_torn_log_page_is_not_believed(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    _left_with_pending_log(path, 99, rows=0)
    wal = db_header.wal_path(path)
    assert db_header.peek(path, verify=True) == db_header.Header(99, schema.APPLICATION_ID, True)
    raw = bytearray(wal.read_bytes())
    raw[32 + 24 + 60 + 3] ^= 0xFF  # user_version inside the first frame's page 1
    wal.write_bytes(bytes(raw))
    header = db_header.peek(path, verify=True)
    assert header is None or not header.from_wal


def _cli(
    data: Path, *args: str, prelude: str = "", wrap: list[str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``ambry ARGS`` in a fresh process, with ``prelude`` run before it."""
    script = (
        f"import sys\n{prelude}\nfrom core.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    return subprocess.run(
        [*(wrap or []), sys.executable, "-c", script, "--data-dir", str(data), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_a_failed_migration_step_is_one_error_line_naming_the_backup(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    op = svc.open_session("main", Actor.OPERATOR)
    svc.store(op, {"type": "fact", "content": "the boiler was serviced in March"})
    svc.close()
    path = data.group_db("main")
    # A damaged file: it claims v3, but v4's table is already there, so step 4 fails.
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA user_version = 3")
    conn.close()

    done = _cli(data.root, "search", "boiler")
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ")
    backup = db.backup_path(path, 3)
    assert str(backup) in lines[0]
    assert "Traceback" not in done.stderr
    assert backup.exists()
    kept = apsw.Connection(str(backup), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert kept.execute("PRAGMA user_version").get == 3
        assert kept.execute("SELECT count(*) FROM memory_entries").get == 1
    finally:
        kept.close()


def _populated(tmp_path: Path) -> DataDir:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    op = svc.open_session("main", Actor.OPERATOR)
    svc.store(op, {"type": "fact", "content": "the lighthouse keeper drinks smoky tea"})
    svc.store(op, {"type": "preference", "content": "answers in metric units"})
    svc.close()
    return data


def _unchanged(path: Path, before: dict[str, str]) -> None:
    """The database file is as it was; SQLite may have left an empty log beside it."""
    assert _files(path)["main.sqlite"] == before["main.sqlite"]
    wal = db_header.wal_path(path)
    assert not wal.exists() or wal.stat().st_size == 0


def _reads_work(data: DataDir, out: Path, **run: object) -> str:
    """Search and export through the CLI; returns their stderr."""
    found = _cli(data.root, "--json", "search", "lighthouse", **run)  # type: ignore[arg-type]
    assert found.returncode == 0, found.stderr
    assert [r["content"] for r in json.loads(found.stdout)["results"]] == [
        "the lighthouse keeper drinks smoky tea"
    ]
    exported = _cli(data.root, "export", str(out), **run)  # type: ignore[arg-type]
    assert exported.returncode == 0, exported.stderr
    lines = out.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["entries"] == 2
    return found.stderr + exported.stderr


@posix_only
def test_search_and_export_work_on_a_full_disk(tmp_path: Path) -> None:
    data = _populated(tmp_path)
    path = data.group_db("main")
    before = _files(path)
    # No file may grow past 4 KiB: no SQLite page fits, a small export does.
    full = (
        "import resource, signal\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))"
    )
    stderr = _reads_work(data, tmp_path / "out.jsonl", prelude=full)
    assert "disk is not full" in stderr
    assert "search and export work" in stderr
    assert "Traceback" not in stderr
    _unchanged(path, before)
    refused = _cli(data.root, "store", "a new fact on a full disk", prelude=full)
    assert refused.returncode == 1
    assert refused.stderr.strip().splitlines()[-1].startswith("error: ")
    assert "Traceback" not in refused.stderr


def _read_only_runner(root: Path) -> tuple[list[str] | None, str]:
    """How to run a command that cannot write under ``root``, and a prelude for it."""
    if os.geteuid() != 0:
        for p in (root, root / "memory"):
            p.chmod(0o500)
        return None, ""
    # Root ignores modes: use a read-only bind mount in a private mount namespace.
    unshare = shutil.which("unshare")
    probe = (
        subprocess.run([unshare or "unshare", "--mount", "true"], capture_output=True, check=False)
        if unshare
        else None
    )
    if probe is None or probe.returncode != 0:
        pytest.skip("running as root without mount namespaces: cannot make a read-only dir")
    assert unshare is not None
    mount = f'mount --bind {root} {root} && mount -o remount,bind,ro {root} && exec "$0" "$@"'
    return [unshare, "--mount", "sh", "-c", mount], ""


@posix_only
def test_search_and_export_work_on_a_read_only_data_dir(tmp_path: Path) -> None:
    data = _populated(tmp_path)
    path = data.group_db("main")
    before = _files(path)
    wrap, prelude = _read_only_runner(data.root)
    try:
        stderr = _reads_work(data, tmp_path / "out.jsonl", wrap=wrap, prelude=prelude)
    finally:
        for p in (data.root, data.memory_dir):
            p.chmod(0o700)
    assert "read-only" in stderr
    assert "Traceback" not in stderr
    _unchanged(path, before)


def _namespace_mounts() -> str | None:
    """``unshare`` if this machine lets a process mount in a private namespace."""
    unshare = shutil.which("unshare")
    if unshare is None or os.name != "posix":
        return None
    probe = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "true"],
        capture_output=True,
        check=False,
    )
    return unshare if probe.returncode == 0 else None


def test_search_and_export_work_on_a_really_full_file_system(tmp_path: Path) -> None:
    unshare = _namespace_mounts()
    if unshare is None:
        pytest.skip("no mount namespaces here: cannot mount a tiny file system")
    data = _populated(tmp_path)
    path = data.group_db("main")
    before = _files(path)
    copy = tmp_path / "copy"
    shutil.copytree(data.root, copy)
    # A 1 MiB tmpfs over the data dir, holding a copy of it, then filled to the last byte.
    fill = (
        f"mount -t tmpfs -o size=1m tmpfs {data.root} && cp -a {copy}/. {data.root}/ && "
        f'(cat /dev/zero > {data.root}/filler 2>/dev/null; true) && exec "$0" "$@"'
    )
    wrap = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", fill]
    stderr = _reads_work(data, tmp_path / "out.jsonl", wrap=wrap)
    assert "disk is full" in stderr or "disk is not full" in stderr
    assert "search and export work" in stderr
    assert "Traceback" not in stderr
    _unchanged(path, before)


def _hold_write_lock(path: Path, seconds: float) -> tuple[apsw.Connection, threading.Timer]:
    """Another program's long write (an import, say): the lock is held for ``seconds``."""
    holder = apsw.Connection(str(path))
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(seconds, lambda: holder.execute("COMMIT"))
    release.start()
    return holder, release


def test_a_command_waiting_on_another_programs_lock_says_so_and_waits_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.cli.main import main
    from core.storage import best_effort, workspace

    data = tmp_path / "data"
    assert main(["--data-dir", str(data), "--create", "store", "User likes tea"]) == 0
    monkeypatch.setattr(db, "BUSY_NOTICE_S", 0.05)
    monkeypatch.setattr(db, "_ANNOUNCED_FROM_S", 1.0)
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 1500)
    monkeypatch.setattr(workspace, "UPKEEP_WAIT_MS", 100)
    waits: list[int] = []
    real_wait = db.waiting_at_most

    def recorded(conn: apsw.Connection, path: Path, timeout_ms: int) -> Any:
        waits.append(timeout_ms)
        return real_wait(conn, path, timeout_ms)

    monkeypatch.setattr(best_effort, "waiting_at_most", recorded)
    capsys.readouterr()
    holder, release = _hold_write_lock(DataDir(data).group_db("main"), 30.0)
    try:
        code = main(["--data-dir", str(data), "store", "User likes green tea"])
    finally:
        release.cancel()
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert code != 0
    # Upkeep gives up first and says why in one line; later bookkeeping does not wait again.
    assert "group main is locked by another program, so start-up upkeep" in err
    assert "cannot be written" not in err
    assert waits[0] == 100
    assert best_effort.AFTER_FAILURE_WAIT_MS in waits[1:]
    # The person's own write waits its full time and says it is waiting, once.
    assert err.count("is locked by another program; waiting up to") == 1
    assert (
        "another program held the database too long (often another Ambry command, such as "
        "an import); try again when it is done" in err
    )
    # Nothing half-written: the lock gone, the store takes the write.
    assert main(["--data-dir", str(data), "store", "User likes green tea"]) == 0
    assert main(["--data-dir", str(data), "--json", "list"]) == 0
    assert "green tea" in capsys.readouterr().out


def test_a_write_under_a_held_lock_waits_once_and_keeps_the_reads_audit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server's pending read-audit rows ride on the next write: under another
    program's long write (an import) that write waits its time once, not twice."""
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 600)
    data = DataDir(tmp_path / "data")
    service = MemoryService(data)
    try:
        store = service.store_for("main")
        store.defer_reads = True
        before = store.execute("SELECT count(*) FROM audit_log").get
        row = (iso(utc_now()), "search", "agent", None, "[]", 1, 0, "{}")
        store.audit_read(lambda: row)
        holder, release = _hold_write_lock(store.path, 30.0)
        try:
            started = time.monotonic()
            with pytest.raises(StorageError, match="such as an import"), store.transaction():
                store.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
            waited = time.monotonic() - started
        finally:
            release.cancel()
            holder.execute("ROLLBACK")
            holder.close()
        assert 0.55 <= waited < 1.0  # one wait of 0.6 s (it was two: 1.2 s)
        # The lock gone, the next write takes the read's audit row with it.
        with store.transaction():
            store.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
        assert store.execute("SELECT count(*) FROM audit_log").get == before + 1
    finally:
        service.close()


def test_reads_audit_not_written_under_a_held_lock_says_so_in_plain_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 200)
    service = MemoryService(DataDir(tmp_path / "data"))
    try:
        store = service.store_for("main")
        store.defer_reads = True
        store.audit_read(lambda: (iso(utc_now()), "search", "agent", None, "[]", 1, 0, "{}"))
        holder, release = _hold_write_lock(store.path, 30.0)
        try:
            assert store.flush_reads() == 0
        finally:
            release.cancel()
            holder.execute("ROLLBACK")
            holder.close()
    finally:
        service.close()
    assert (
        "group main is locked by another program, so the audit of reads is not recorded "
        "this time" in caplog.text
    )


def test_a_write_waits_out_a_lock_released_in_time(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    service = MemoryService(data)
    caller = service.open_session("main", Actor.OPERATOR)
    service.store(caller, {"type": "fact", "content": "User likes tea"})
    holder, release = _hold_write_lock(data.group_db("main"), 0.5)
    try:
        stored = service.store(caller, {"type": "fact", "content": "User likes green tea"})
    finally:
        release.join()
        holder.close()
    hits = service.search(caller, {"query": "green tea", "mode": "keyword"})
    assert [h.id for h in hits][:1] == [stored.entry.id]
    service.close()


def test_a_short_wait_holds_for_work_nested_in_it(tmp_path: Path) -> None:
    # Start-up upkeep waits 3 s for another program's lock; the scrub inside it used
    # to put back the full 15 s when it was done with its own 2 s.
    path = tmp_path / "x.sqlite"
    conn = apsw.Connection(str(path))
    db.wait_for_writers(conn, path)
    with db.waiting_at_most(conn, path, 100):
        with db.waiting_at_most(conn, path, 2000):
            assert db._waits[conn] == 100
        assert db._waits[conn] == 100
    assert db._waits[conn] is None  # the default again
    conn.close()
