"""Writes survive a killed process, and two processes can write at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from core.model.entries import Actor
from core.service import MemoryService
from core.storage.paths import DataDir

WRITER = textwrap.dedent(
    """
    import sys
    from core.model.entries import Actor
    from core.storage.paths import DataDir
    from core.service import MemoryService
    svc = MemoryService(DataDir(__import__("pathlib").Path(sys.argv[1])))
    who = svc.open_session("main", Actor.OPERATOR, sys.argv[2])
    for i in range(int(sys.argv[3])):
        out = svc.store(who, {"type": "fact", "content": f"{sys.argv[2]} fact {i}"})
        print(out.entry.id, flush=True)  # acknowledged only after the commit returned
    if sys.argv[4] == "hang":
        sys.stdout.write("done\\n"); sys.stdout.flush()
        import time; time.sleep(60)
    """
)


def _writer(data: Path, name: str, count: int, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(data), name, str(count), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    proc = _writer(tmp_path, "killed", 10_000, "run")
    acknowledged: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        acknowledged.append(line.strip())
        if len(acknowledged) == 40:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.communicate(timeout=30)
    svc = MemoryService(DataDir(tmp_path))
    try:
        store = svc.store_for("main")
        assert set(acknowledged) <= set(store.get_many(acknowledged))
        # The database is consistent after the crash.
        assert store.execute("PRAGMA integrity_check").get == "ok"
        assert (
            store.execute("INSERT INTO memory_fts(memory_fts, rank) VALUES ('integrity-check', 1)")
            is not None
        )
    finally:
        svc.close()


def test_two_processes_write_at_once_without_lock_errors(tmp_path: Path) -> None:
    count = 150
    procs = [_writer(tmp_path, f"writer{n}", count, "run") for n in range(2)]
    # Meanwhile this process writes too.
    svc = MemoryService(DataDir(tmp_path))
    me = svc.open_session("main", Actor.OPERATOR, "parent")
    for i in range(count):
        svc.store(me, {"type": "fact", "content": f"parent fact {i}"})
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "locked" not in err and len(out.split()) == count
    assert svc.store_for("main").total() == 3 * count
    svc.close()
