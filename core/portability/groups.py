"""Renaming and deleting a group, each after a backup of its database.

A group is one SQLite file. Both operations first copy it with SQLite's backup
API (a consistent copy even while other connections read it) to
``<data dir>/backups/<group>-<time>.sqlite``; a rename then writes the new file
from that same copy, so the two never differ. Only then are the old file and
its WAL files removed. The caller closes every connection of its own first
(``Workspace.close_store``; other threads the same way).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import apsw

from core.model.errors import Conflict, NotFound
from core.storage.paths import validate_group
from core.storage.workspace import Workspace

BACKUP_DIR = "backups"


@dataclass(frozen=True)
class GroupMove:
    """What a rename or delete did: the backup it made and the new name, if any."""

    old: str
    new: str | None
    backup: Path


def _copy(source: Path, target: Path) -> None:
    src = apsw.Connection(str(source), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        dest = apsw.Connection(str(target))
        try:
            with dest.backup("main", src, "main") as copy:
                while not copy.done:
                    copy.step(-1)
        finally:
            dest.close()
    finally:
        src.close()
    target.chmod(0o600)


def backup_group(ws: Workspace, group: str) -> Path:
    """A consistent copy of ``group``'s database under ``<data dir>/backups``."""
    group = validate_group(group)
    source = ws.data_dir.group_db(group)
    if not source.is_file():
        raise NotFound(f"no group {group} in {ws.data_dir.root}", field="group")
    folder = ws.data_dir.root / BACKUP_DIR
    folder.mkdir(mode=0o700, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"{group}-{stamp}.sqlite"
    _copy(source, target)
    return target


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            os.remove(part)


def rename_group(ws: Workspace, old: str, new: str) -> GroupMove:
    """Give ``old`` the name ``new`` (which must be free), keeping a backup of ``old``.

    Raises:
        InvalidGroup: either name is not a usable group name.
        NotFound: ``old`` has no database.
        Conflict: a group called ``new`` exists already.
    """
    old, new = validate_group(old), validate_group(new)
    target = ws.data_dir.group_db(new)
    if new.casefold() != old.casefold() and target.exists():
        raise Conflict(f"a group called {new} exists already; choose another name", field="group")
    ws.close_store(old)
    backup = backup_group(ws, old)
    staged = target.with_name(f".{new}.renaming")
    _copy(backup, staged)
    _remove(ws.data_dir.group_db(old))
    os.replace(staged, target)
    store = ws.store_for(new)
    with store.transaction():
        store.execute("UPDATE memory_entries SET group_name = ?", (new,))
    return GroupMove(old, new, backup)


def delete_group(ws: Workspace, group: str) -> GroupMove:
    """Remove ``group``'s database after a backup; returns where the backup is."""
    group = validate_group(group)
    ws.close_store(group)
    backup = backup_group(ws, group)
    _remove(ws.data_dir.group_db(group))
    return GroupMove(group, None, backup)
