"""Whole-file writes outside the data dir that leave nothing behind if killed.

An export is written to a hidden temp file beside its target and renamed over
it, so the target is never half a file. A process killed in between (power
cut, SIGKILL, a crash) cannot remove that temp file itself, so before writing
it each write leaves a note in ``<data dir>/pending/``: one small file per temp
file, holding its path and the writer's process id. :func:`sweep` runs when a
data dir is opened and removes the temp files of writers that are gone.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import tempfile
import time
from pathlib import Path

from core.model.config import atomic_write, replace_durably

log = logging.getLogger(__name__)

#: Temp files carry this suffix, so a note can only ever delete one of ours.
TEMP_SUFFIX = ".ambry-tmp"
#: A note older than this is swept even if its process id is in use again.
STALE_AFTER_SECONDS = 24 * 3600


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":
        return True  # no cheap check: the note is swept once it is stale
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _note(pending: Path, tmp: Path) -> Path | None:
    """Record ``tmp`` under ``pending``; None (with a warning) if it cannot be.

    The note is written whole or not at all (a temp file renamed into place), and
    owner-only: a full disk must not leave an empty note behind.
    """
    note = pending / f"{secrets.token_hex(8)}.json"
    record = json.dumps({"path": str(tmp), "pid": os.getpid()}).encode("utf-8")
    try:
        pending.mkdir(mode=0o700, parents=True, exist_ok=True)
        atomic_write(note, record, mode=0o600)
    except OSError as exc:
        log.warning(
            "cannot note the temp file %s in %s (%s); if this write is interrupted, "
            "delete it by hand",
            tmp,
            pending,
            exc.strerror,
        )
        return None
    return note


def write_whole(pending: Path, path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` via a noted temp file, fsync, rename.

    Args:
        pending: the data dir's notes folder (:attr:`core.storage.paths.DataDir.pending_dir`).
        path: the target; its folder is created if needed.
        data: the whole content.
        mode: the file's permissions.

    Raises:
        OSError: the target cannot be written; no temp file is left.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    tmp = Path(name)
    note = _note(pending, tmp)
    try:
        replace_durably(fd, tmp, path, data, mode)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if note is not None:
            note.unlink(missing_ok=True)


def _drop_unreadable(note: Path, exc: Exception) -> None:
    """Remove a note that names no temp file it can be trusted with, saying so once.

    Notes are written whole since this version; an empty or cut one was left by an
    older one that ran out of disk space while writing it. Kept, it was warned of
    at every start, forever.
    """
    try:
        empty = note.stat().st_size == 0
        note.unlink()
    except OSError as failed:
        log.warning(
            "cannot remove the unreadable note %s (%s); delete it by hand", note, failed.strerror
        )
        return
    what = "an empty note" if empty else f"an unreadable note ({exc})"
    log.warning(
        "removed %s, %s, left by an export that could not finish writing it (a full disk?); "
        "if an export was interrupted then, delete its hidden .ambry-tmp file beside the "
        "export's target by hand",
        what,
        note,
    )


def sweep(pending: Path) -> list[Path]:
    """Remove the temp files of interrupted writes noted under ``pending``.

    Returns:
        The temp files removed.
    """
    try:
        notes = sorted(pending.glob("*.json"))
    except OSError:
        return []
    removed: list[Path] = []
    for note in notes:
        try:
            record = json.loads(note.read_text(encoding="utf-8"))
            tmp, pid = Path(record["path"]), int(record["pid"])
            age = time.time() - note.stat().st_mtime
        except (OSError, ValueError, KeyError, TypeError) as exc:
            _drop_unreadable(note, exc)
            continue
        if _alive(pid) and age < STALE_AFTER_SECONDS:
            continue
        try:
            if tmp.name.endswith(TEMP_SUFFIX) and tmp.exists():
                tmp.unlink()
                removed.append(tmp)
                log.warning("removed %s, left by an interrupted export", tmp)
            note.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cannot remove %s, left by an interrupted export: %s", tmp, exc.strerror)
    return removed
