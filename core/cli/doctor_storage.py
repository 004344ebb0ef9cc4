"""``ambry doctor``'s checks of the data dir: its folders, the settings file, the
free space on its disk, and each group's database (schema, pages, a held write lock).

Each check is one :class:`Finding`. Nothing here writes to the data dir or creates
a file in it: databases are opened read-only (:func:`core.storage.db.open_database`
with ``read_only``), and why a folder or file cannot be used is told by the same
diagnosis every command gives (:mod:`core.model.file_errors`).
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import apsw

from core.model.config import load_config
from core.model.errors import AmbryError, SchemaTooNew
from core.model.file_errors import FileError, access_problem
from core.storage import db_header
from core.storage.db import (
    BUSY_TIMEOUT_MS,
    damaged_fix,
    open_database,
    word_index_damage,
    words_fix,
)
from core.storage.paths import DATA_DIR_ENV, DataDir, DataDirOrigin, LocatedDataDir, creatable
from core.storage.schema import SCHEMA_VERSION

#: Free space below which nothing new can be stored (a SQLite page and its log frame
#: need room), and below which the disk is called nearly full.
FULL_BELOW = 1024 * 1024
LOW_BELOW = 100 * 1024 * 1024
#: How long a held write lock is watched before it is reported: Ambry's own writes
#: (the app's, a server's) hold it for milliseconds.
LOCK_WATCH_S = 1.0


class Status(StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Finding:
    check: str
    status: Status
    detail: str
    fix: str = ""


def check_data_dir(data_dir: DataDir, located: LocatedDataDir) -> Finding:
    root = data_dir.root
    if not root.exists():
        if located.origin is DataDirOrigin.FLAG:
            return Finding(
                "data dir",
                Status.FAIL,
                f"{root} does not exist",
                "check the --data-dir path, or add --create to start a new store there",
            )
        if located.origin is DataDirOrigin.ENV:
            return Finding(
                "data dir",
                Status.FAIL,
                f"{located.describe()} does not exist",
                f"check {DATA_DIR_ENV}, or run `ambry --create list` to start a new store there",
            )
        why = creatable(root)
        if why is not None:
            return Finding(
                "data dir",
                Status.FAIL,
                f"{root} cannot be created: {why}",
                f"pass --data-dir DIR or set {DATA_DIR_ENV} to a directory you can write to",
            )
        return Finding("data dir", Status.OK, f"{root} (created on first use)")
    if not root.is_dir():
        return Finding("data dir", Status.FAIL, f"{root} is not a directory", "give a directory")
    mode = stat.S_IMODE(root.stat().st_mode)
    for folder in (root, data_dir.memory_dir):
        if folder.is_dir() and not readable(folder):
            # Without this, the groups in it looked like none at all ("no groups yet").
            found = access_problem(folder, write=False)
            return Finding(
                "data dir",
                Status.FAIL,
                f"{folder} cannot be read by you, so neither can the memories in it"
                + (f": {found.cause}" if found else ""),
                found.fix if found else f"look at it with ls -ld '{folder}'",
            )
    cannot_write = access_problem(root, write=True)
    if cannot_write is not None:
        return Finding(
            "data dir",
            Status.FAIL,
            f"{root} cannot be written, so nothing new can be stored: {cannot_write.cause}",
            cannot_write.fix,
        )
    if mode & 0o077:
        return Finding(
            "data dir",
            Status.WARN,
            f"{root} is readable by others (mode {mode:04o})",
            f"chmod 700 '{root}'",
        )
    return Finding("data dir", Status.OK, f"{root} (mode {mode:04o})")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def check_free_space(
    folder: Path, *, full_below: int = FULL_BELOW, low_below: int = LOW_BELOW
) -> Finding | None:
    """The free space on the disk holding ``folder`` (None where it cannot be known)."""
    if not hasattr(os, "statvfs"):
        return None
    try:
        found = os.statvfs(folder)
    except OSError:
        return None  # the data dir check says why
    free = found.f_bavail * found.f_frsize
    detail = f"{_size(free)} free on the disk holding {folder}"
    if free < full_below:
        return Finding(
            "disk",
            Status.FAIL,
            f"{detail}: the disk is full, so nothing new can be stored (search and "
            "export still work)",
            "free some space on it",
        )
    if free < low_below:
        return Finding(
            "disk",
            Status.WARN,
            f"{detail}: the disk is nearly full",
            f"free some space on it: below {_size(full_below)} nothing new can be stored",
        )
    return Finding("disk", Status.OK, detail)


def check_config(data_dir: DataDir) -> Finding:
    """Whether ``config.json`` holds settings every command can use."""
    path = data_dir.config_file
    try:
        load_config(path)
    except FileError as exc:
        return Finding("config", Status.FAIL, exc.message, exc.fix)
    except AmbryError as exc:
        # Every other command stops at this file, so it comes first in the report.
        return Finding(
            "config",
            Status.FAIL,
            exc.message,
            f"edit {path}, or delete it to go back to the defaults; until then the app, "
            "`ambry serve`, `ambry mcp` and every command that opens the store stop with "
            "this error",
        )
    if not path.exists():
        return Finding("config", Status.OK, f"{path}: none yet, the defaults apply")
    return Finding("config", Status.OK, str(path))


def readable(folder: Path) -> bool:
    """Whether the files in ``folder`` can be listed and opened."""
    return os.access(folder, os.R_OK | os.X_OK)


def _backups(data_dir: DataDir, group: str) -> list[Path]:
    """The copies a rename or delete of the group left in ``<data dir>/backups``."""
    return list(data_dir.root.glob(f"backups/{group}-*.sqlite"))


def _damage(conn: apsw.Connection) -> str:
    """SQLite's first complaint about the file's pages, or "" when it finds none.

    The header and schema can be fine while a table's pages are not: then the
    database opens, and the first search or write that reaches them fails.
    """
    try:
        first = str(conn.execute("PRAGMA quick_check(1)").get)
    except apsw.Error as exc:
        return f"{type(exc).__name__}: {exc}"
    return "" if first == "ok" else " ".join(first.replace("*** in database main ***", "").split())


def _open_failed(data_dir: DataDir, group: str, exc: AmbryError) -> Finding:
    path = data_dir.group_db(group)
    if isinstance(exc, FileError):
        fix = exc.fix
    elif isinstance(exc, SchemaTooNew):
        fix = ""  # not damaged: an older copy would drop what the newer Ambry wrote
    elif isinstance(exc.__cause__, apsw.NotADBError | apsw.CorruptError):
        fix = damaged_fix(path, _backups(data_dir, group))
    else:
        fix = ""
    return Finding(f"group {group}", Status.FAIL, exc.message, fix)


def _lock_holder(path: Path) -> bool:
    """Whether another program holds the group's write lock for longer than a write."""
    deadline = time.monotonic() + LOCK_WATCH_S
    while db_header.write_lock_held(path):
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)
    return False


def check_schemas(data_dir: DataDir) -> list[Finding]:
    groups = data_dir.groups()
    if not groups:
        return [Finding("schema", Status.OK, "no groups yet")]
    findings = []
    for group in groups:
        path = data_dir.group_db(group)
        name = f"group {group}"
        try:
            conn = open_database(path, read_only=True)
        except AmbryError as exc:
            findings.append(_open_failed(data_dir, group, exc))
            continue
        try:
            version = int(conn.execute("PRAGMA user_version").get)
            damage = _damage(conn)
        finally:
            conn.close()
        if damage and word_index_damage(damage):
            findings.append(
                Finding(
                    name,
                    Status.FAIL,
                    f"a word index of {path} is damaged ({damage}); searches by words and "
                    "writes in this group may fail",
                    words_fix(path),
                )
            )
        elif damage:
            findings.append(
                Finding(
                    name,
                    Status.FAIL,
                    f"{path} is damaged ({damage}); searches, exports and writes in this "
                    "group may fail",
                    damaged_fix(path, _backups(data_dir, group)),
                )
            )
        elif _lock_holder(path):
            findings.append(
                Finding(
                    name,
                    Status.WARN,
                    f"another program holds the database {path} for writing: every write "
                    f"waits up to {BUSY_TIMEOUT_MS // 1000} s for it, then fails",
                    "close the program that keeps it (another Ambry, sqlite3, a backup or "
                    f"sync tool; `lsof '{path}'` names it)",
                )
            )
        elif version < SCHEMA_VERSION:
            findings.append(
                Finding(
                    name,
                    Status.OK,
                    f"schema v{version}, upgraded to v{SCHEMA_VERSION} (after a backup) "
                    "when next opened",
                )
            )
        else:
            findings.append(
                Finding(name, Status.OK, f"schema v{version}, {path.stat().st_size} bytes")
            )
    return findings
