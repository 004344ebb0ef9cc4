"""Bulk writes in batches (core.memory.bulk): each batch its own transaction, one
audit row for the whole, a stop between batches, and an exact undo."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.memory import bulk, trash
from core.memory.batching import Batching
from core.model.entries import Actor
from core.model.errors import Conflict, InvalidParams, NotFound
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir


def store(service: MemoryService, caller: Caller, text: str, *tags: str) -> str:
    return service.store(caller, {"type": "fact", "content": text, "tags": list(tags)}).entry.id


def rows(service: MemoryService) -> dict[str, tuple[Any, ...]]:
    """Every memory row as stored, by id: all but its row number, which a restore renews,
    and the time it was last changed, which a relink of its chain moves (in one
    transaction as in batches)."""
    cursor = service.store_for("main").execute("SELECT * FROM memory_entries ORDER BY id")
    names = [d[0] for d in cursor.getdescription()]
    out = {}
    for row in cursor:
        values = dict(zip(names, row, strict=True))
        values.pop("seq")
        values.pop("updated_at")
        out[str(values["id"])] = tuple(values.items())
    return out


def test_a_stopped_delete_keeps_what_it_did_and_one_undo_puts_it_back_exactly(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = [store(service, operator, f"Batch note {i}", "notes") for i in range(7)]
    # A chain: an agent's newer version of the third, whose older one becomes current again.
    newer = service.store(
        agent, {"type": "fact", "content": "Batch note 2, revised", "supersedes": ids[2]}
    ).entry.id
    before = rows(service)
    seen: list[tuple[int, int]] = []
    asked = [newer, *ids]
    batching = Batching(2, lambda done, total: seen.append((done, total)), lambda: len(seen) >= 2)
    done = bulk.delete(service, operator, asked, batching)
    assert (done.done, done.total, done.stopped, done.error) == (4, 8, True, None)
    assert seen == [(2, 8), (4, 8)]
    assert done.result.ids == tuple(asked[:4])
    left = rows(service)
    # Each memory is either gone or exactly as it was: nothing half-deleted.
    assert set(left) == set(before) - set(asked[:4])
    assert done.result.current_again == ()  # ids[2], current again, went in the same batch
    row = audit.recent(service.store_for("main"), actions=["delete"])
    assert len(row) == 1 and row[0].entry_ids == asked[:4] and row[0].count == 4
    assert row[0].detail == {"stopped": True, "asked": 8}

    back = bulk.restore(
        service,
        operator,
        done.result.entries,
        done.result.places,
        batching=Batching(3, lambda *_: None),
    )
    assert (back.done, back.total, back.stopped) == (4, 4, False)
    assert rows(service) == before
    restores = audit.recent(service.store_for("main"), actions=["restore"])
    assert len(restores) == 1 and restores[0].entry_ids == asked[:4]
    assert restores[0].count == 4 and "stopped" not in restores[0].detail


def test_a_delete_passes_over_memories_an_agent_deleted_meanwhile(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = [store(service, operator, f"Shared note {i}") for i in range(5)]

    def agent_deletes(done: int, _total: int) -> None:
        if done == 2:
            service.delete(agent, ids[3])

    done = bulk.delete(service, operator, ids, Batching(2, agent_deletes))
    assert (done.done, done.stopped) == (5, False)
    assert done.result.ids == (ids[0], ids[1], ids[2], ids[4])
    assert service.store_for("main").get_many(ids) == {}
    row = audit.recent(service.store_for("main"), actions=["delete"], actor="operator")[0]
    assert row.count == 4 and "stopped" not in row.detail


def test_another_connection_writes_between_batches(
    service: MemoryService, operator: Caller, data_dir: DataDir
) -> None:
    ids = [store(service, operator, f"Lock note {i}") for i in range(6)]
    other = MemoryService(data_dir)
    try:
        agent = other.open_session("main", Actor.AGENT, "other-process")
        written: list[str] = []

        def agent_writes(done: int, total: int) -> None:
            if done < total:
                written.append(store(other, agent, f"Written between batches {done}"))

        bulk.delete(service, operator, ids, Batching(2, agent_writes))
    finally:
        other.close()
    assert len(written) == 2 and set(service.store_for("main").get_many(written)) == set(written)


def test_tagging_in_batches_is_one_audit_row_and_checks_the_tag_first(
    service: MemoryService, operator: Caller
) -> None:
    ids = [store(service, operator, f"Tag note {i}", "a") for i in range(5)]
    with pytest.raises(InvalidParams, match="at most 50 characters"):
        bulk.add_tag(service, operator, ids, "x" * 51, Batching(2))
    assert audit.recent(service.store_for("main"), actions=["update"]) == []
    stop_after = Batching(2, lambda *_: None, lambda: True)
    done = bulk.add_tag(service, operator, [*ids, ids[0]], "checked", stop_after)
    assert (done.done, done.total) == (2, 5)
    assert [service.get("main", i).is_superseded for i in ids] == [True, True, False, False, False]
    row = audit.recent(service.store_for("main"), actions=["update"])
    assert len(row) == 1 and row[0].count == 2 and row[0].detail["stopped"] is True
    again = bulk.add_tag(service, operator, ids, "checked", Batching(2))
    assert len(again.result.versions) == 3 and again.result.unchanged == 2


def test_a_trash_restore_brings_back_what_it_can_and_says_why_not_the_rest(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = [store(service, operator, f"Trashed note {i}") for i in range(3)]
    for entry_id in ids:
        service.delete(agent, entry_id)
    db = service.store_for("main")
    # A copy of the first left in the trash after it came back: its id is taken.
    kept = db.execute("SELECT * FROM trash WHERE id = ?", (ids[0],)).fetchone()
    trash.restore(service, operator, ids[0])
    with db.transaction():
        db.execute("INSERT INTO trash VALUES (?, ?, ?, ?, ?, ?)", kept)
    done = trash.restore_many(service, operator, [ids[0], ids[1], "mem-gone", ids[2]])
    assert done.ids == (ids[1], ids[2])
    assert [(x.entry_id, type(x.error)) for x in done.left] == [
        (ids[0], Conflict),
        ("mem-gone", NotFound),
    ]
    assert "exists already" in done.left[0].reason and "not in the trash" not in done.left[0].reason
    assert "no entry mem-gone in the trash" in done.left[1].reason
    row = audit.recent(db, actions=["restore"])[0]
    assert row.entry_ids == [ids[1], ids[2]] and row.count == 2
    assert row.detail["left"] == [ids[0], "mem-gone"]
    assert json.loads(json.dumps(done.left[0].to_dict()))["id"] == ids[0]
    with pytest.raises(NotFound):
        trash.restore(service, operator, "mem-gone")


def test_one_batch_is_the_one_transaction_path(service: MemoryService, operator: Caller) -> None:
    ids = [store(service, operator, f"Small note {i}") for i in range(3)]
    before = rows(service)
    done = bulk.delete(service, operator, ids)
    assert (done.done, done.stopped) == (3, False)
    row = audit.recent(service.store_for("main"), actions=["delete"])[0]
    assert row.detail == {} and row.count == 3
    bulk.restore_all(service, operator, done.result.entries, done.result.places)
    assert rows(service) == before
