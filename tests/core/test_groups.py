"""Renaming and deleting groups: a backup first, names checked, the data kept."""

from __future__ import annotations

import pytest

from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType
from core.model.errors import Conflict, InvalidGroup, NotFound
from core.portability.groups import delete_group, rename_group
from core.service import MemoryService


def fill(service: MemoryService, group: str, text: str) -> str:
    caller = service.open_session(group, Actor.OPERATOR, "tests")
    return service.store_entries(caller, [StoreRequest(EntryType.FACT, text, ())])[0].entry.id


def test_rename_moves_the_data_and_keeps_a_backup(service: MemoryService) -> None:
    entry = fill(service, "work", "Standup at nine")
    move = rename_group(service, "work", "job")
    assert service.data_dir.groups() == ["job"]
    assert move.backup.is_file() and move.backup.parent.name == "backups"
    moved = service.get("job", entry)
    assert moved.content == "Standup at nine" and moved.provenance.group == "job"
    assert oct(move.backup.stat().st_mode & 0o777) == "0o600"


def test_rename_refuses_bad_taken_and_missing_names(service: MemoryService) -> None:
    fill(service, "work", "a")
    fill(service, "home", "b")
    with pytest.raises(InvalidGroup):
        rename_group(service, "work", "../evil")
    with pytest.raises(Conflict):
        rename_group(service, "work", "home")
    with pytest.raises(NotFound):
        rename_group(service, "nothing", "other")
    assert service.data_dir.groups() == ["home", "work"]


def test_delete_removes_the_files_after_a_backup(service: MemoryService) -> None:
    entry = fill(service, "old", "Gone soon")
    move = delete_group(service, "old")
    assert service.data_dir.groups() == []
    assert not list(service.data_dir.memory_dir.glob("old.sqlite*"))
    backup_service = MemoryService(service.data_dir)
    try:
        # The backup is a whole database: put back, it opens with the entry.
        move.backup.replace(service.data_dir.group_db("old"))
        assert backup_service.get("old", entry).content == "Gone soon"
    finally:
        backup_service.close()
