"""Version chains stay whole whatever is deleted, restored, forgotten or purged."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import apsw
import pytest

from core.cli.main import main
from core.memory import bulk, curation, forgetting, trash
from core.memory.acceptance import waiting_state
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryFilter, EntryType
from core.model.errors import Conflict
from core.portability.export import export
from core.portability.importing import import_file
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.chains import current_after_delete
from core.storage.paths import DataDir


def store(service: MemoryService, caller: Caller, content: str, **extra: Any) -> str:
    return str(service.store(caller, {"type": "fact", "content": content, **extra}).entry.id)


def current(service: MemoryService) -> list[str]:
    """The contents of the current memories, as list, search and brief show them."""
    ids = service.list_ids("main", EntryFilter())
    return sorted(service.get("main", i).content for i in ids)


def history(service: MemoryService, entry_id: str) -> list[str]:
    return [e.content for e in service.history("main", entry_id)]


def dangling(service: MemoryService) -> list[str]:
    return [
        r[0]
        for r in service.store_for("main").execute(
            "SELECT id FROM memory_entries WHERE superseded_by IS NOT NULL "
            "AND superseded_by NOT IN (SELECT id FROM memory_entries)"
        )
    ]


def test_deleting_the_current_version_makes_the_one_before_current_again(
    service: MemoryService, operator: Caller
) -> None:
    volvo = store(service, operator, "User drives a Volvo")
    tesla = store(service, operator, "User drives a Tesla", supersedes=volvo)
    done = service.delete(operator, tesla)
    assert done.current_again == volvo
    assert current(service) == ["User drives a Volvo"]
    assert [r.id for r in service.search(operator, {"query": "drives"})] == [volvo]
    assert "User drives a Volvo" in service.brief(operator).markdown
    assert history(service, volvo) == ["User drives a Volvo"] and dangling(service) == []
    # It can be replaced again, as any current memory.
    bmw = store(service, operator, "User drives a BMW", supersedes=volvo)
    assert history(service, bmw) == ["User drives a Volvo", "User drives a BMW"]
    row = audit.recent(service.store_for("main"), actions=["delete"])[0]
    assert row.detail["current_again"] == volvo


def test_deleting_a_middle_version_links_the_one_before_to_the_one_after(
    service: MemoryService, operator: Caller
) -> None:
    a = store(service, operator, "Office is in Paris")
    b = store(service, operator, "Office is in Lyon", supersedes=a)
    c = store(service, operator, "Office is in Nice", supersedes=b)
    assert service.delete(operator, b).current_again is None
    assert service.get("main", a).superseded_by == c
    assert history(service, c) == ["Office is in Paris", "Office is in Nice"]
    assert current(service) == ["Office is in Nice"]


def test_an_agents_delete_and_the_restore_keep_the_chain(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    volvo = store(service, operator, "User drives a Volvo")
    tesla = store(service, operator, "User drives a Tesla", supersedes=volvo)
    assert service.delete(agent, tesla).to_dict() == {"deleted": tesla, "current_again": volvo}
    assert current(service) == ["User drives a Volvo"]  # while the Tesla is in the trash
    restored = trash.restore(service, operator, tesla)
    assert (restored.replaced, restored.duplicate_of) == (volvo, None)
    assert restored.describe() == f"restored {tesla}; it is current again in place of {volvo}"
    assert current(service) == ["User drives a Tesla"]
    assert service.get("main", volvo).superseded_by == tesla
    assert history(service, volvo) == ["User drives a Volvo", "User drives a Tesla"]


def test_emptying_the_trash_leaves_the_earlier_version_current(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    volvo = store(service, operator, "User drives a Volvo")
    tesla = store(service, operator, "User drives a Tesla", supersedes=volvo)
    service.delete(agent, tesla)
    assert trash.empty(service, operator) == 1
    assert current(service) == ["User drives a Volvo"] and dangling(service) == []


def test_a_restored_middle_version_goes_back_between_its_neighbours(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    a = store(service, operator, "Office is in Paris")
    b = store(service, operator, "Office is in Lyon", supersedes=a)
    c = store(service, operator, "Office is in Nice", supersedes=b)
    service.delete(agent, b)
    trash.restore(service, operator, b)
    assert [e.id for e in service.history("main", c)] == [a, b, c]
    assert current(service) == ["Office is in Nice"]


def test_a_restore_after_the_fact_changed_is_not_a_second_current_version(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    volvo = store(service, operator, "User drives a Volvo")
    tesla = store(service, operator, "User drives a Tesla", supersedes=volvo)
    service.delete(agent, tesla)
    time.sleep(0.002)  # written since, in a later millisecond (a tie is taken for older)
    bmw = store(service, operator, "User drives a BMW", supersedes=volvo)
    restored = trash.restore(service, operator, tesla)
    assert restored.replaced is None
    # Back in its place by age: after the Volvo, before the BMW written since.
    assert [e.id for e in service.history("main", bmw)] == [volvo, tesla, bmw]
    assert current(service) == ["User drives a BMW"]


def test_trashed_versions_come_back_in_order_whichever_is_restored_first(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    a = store(service, operator, "Runs 5 km")
    b = store(service, operator, "Runs 10 km", supersedes=a)
    c = store(service, operator, "Runs a half marathon", supersedes=b)
    root = store(service, operator, "Started running in 2020")
    service.store_for("main").mark_superseded(root, a, "2020-01-01T00:00:00.000Z")
    for entry_id in (a, b, c):
        service.delete(agent, entry_id)
    assert current(service) == ["Started running in 2020"]
    for entry_id in (a, b, c):  # oldest first: each was deleted before the next
        trash.restore(service, operator, entry_id)
    assert [e.id for e in service.history("main", c)] == [root, a, b, c]


def test_versions_of_one_millisecond_come_back_in_order(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    a = store(service, operator, "Runs 5 km")
    b = store(service, operator, "Runs 10 km", supersedes=a)
    c = store(service, operator, "Runs a half marathon", supersedes=b)
    root = store(service, operator, "Started running in 2020")
    s = service.store_for("main")
    s.mark_superseded(root, a, "2020-01-01T00:00:00.000Z")
    # Three stores can fall in one millisecond: the clock does not order them.
    s.execute(
        "UPDATE memory_entries SET created_at = (SELECT created_at FROM memory_entries "
        "WHERE id = ?) WHERE id IN (?, ?)",
        (a, b, c),
    )
    for entry_id in (a, b, c):
        service.delete(agent, entry_id)
    for entry_id in (a, b, c):
        trash.restore(service, operator, entry_id)
    assert [e.id for e in service.history("main", c)] == [root, a, b, c]


def test_undoing_a_bulk_delete_of_a_whole_chain_puts_it_back_as_it_was(
    service: MemoryService, operator: Caller
) -> None:
    a = store(service, operator, "Office is in Paris")
    b = store(service, operator, "Office is in Lyon", supersedes=a)
    c = store(service, operator, "Office is in Nice", supersedes=b)
    before = [service.get("main", i) for i in (a, b, c)]
    _, deleted = curation.delete_many(service, operator, [a, b, c])
    assert current(service) == [] and dangling(service) == []
    done = bulk.restore_all(service, operator, deleted.entries, deleted.places)
    assert [r.entry_id for r in done] == [a, b, c]
    assert [e.id for e in service.history("main", a)] == [a, b, c]
    assert [service.get("main", i).superseded_by for i in (a, b, c)] == [
        e.superseded_by for e in before
    ]


def test_a_candidate_waiting_to_replace_the_deleted_version_replaces_the_current_one(
    service: MemoryService, operator: Caller
) -> None:
    volvo = store(service, operator, "User drives a Volvo")
    tesla = store(service, operator, "User drives a Tesla", supersedes=volvo)
    waiting = service.store(
        operator,
        {
            "type": "fact",
            "content": "User drives a Saab",
            "supersedes": tesla,
            "source": {"type": "web_content"},
        },
    ).entry.id
    service.delete(operator, tesla)
    curation.accept(service, operator, [waiting])
    assert history(service, waiting) == ["User drives a Volvo", "User drives a Saab"]
    assert current(service) == ["User drives a Saab"]


def test_forget_relinks_what_it_leaves_and_says_what_is_current_again(
    service: MemoryService, operator: Caller
) -> None:
    from core.continuity.forget_preview import preview

    volvo = store(service, operator, "User drives a Volvo")
    tesla = store(service, operator, "User drives a Tesla", supersedes=volvo)
    paris = store(service, operator, "Office is in Paris")
    lyon = store(service, operator, "Office is in Lyon near the Tesla plant", supersedes=paris)
    nice = store(service, operator, "Office is in Nice", supersedes=lyon)
    plan = forgetting.plan_forget(service, "main", "Tesla")
    assert {e.id for e in plan.entries} == {tesla, lyon}
    assert [e.id for e in preview(service, "main", plan).current_again] == [volvo]
    service.forget(operator, plan)
    assert dangling(service) == []
    assert current(service) == ["Office is in Nice", "User drives a Volvo"]
    assert [e.id for e in service.history("main", nice)] == [paris, nice]
    row = audit.recent(service.store_for("main"), actions=["forget"])[0]
    assert row.detail["current_again"] == [volvo]


def test_the_dry_run_of_a_delete_agrees_with_the_delete(
    service: MemoryService, operator: Caller
) -> None:
    a = store(service, operator, "Office is in Paris")
    b = store(service, operator, "Office is in Lyon", supersedes=a)
    c = store(service, operator, "Office is in Nice", supersedes=b)
    other = store(service, operator, "Likes tea")
    store_ = service.store_for("main")
    assert current_after_delete(store_, [c]) == (b,)
    assert current_after_delete(store_, [c, b]) == (a,)
    assert current_after_delete(store_, [b]) == ()
    assert current_after_delete(store_, [a, b, c, other]) == ()
    _, deleted = curation.delete_many(service, operator, [c, b])
    assert deleted.current_again == (a,)


def test_purging_old_versions_keeps_the_newer_ones_linked(data_dir: DataDir) -> None:
    from core.model.config import Config

    svc = MemoryService(data_dir, Config(purge_superseded_days=90))
    try:
        op = svc.open_session("main", Actor.OPERATOR)
        a = store(svc, op, "Office is in Paris")
        b = store(svc, op, "Office is in Lyon", supersedes=a)
        c = store(svc, op, "Office is in Nice", supersedes=b)
        s = svc.store_for("main")
        # b was replaced long ago, a recently (as an import can leave them).
        s.execute(
            "UPDATE memory_entries SET superseded_at = '2000-01-01T00:00:00.000Z' WHERE id = ?",
            (b,),
        )
        with s.transaction():
            assert s.purge_superseded("2001-01-01T00:00:00.000Z") == [b]
        assert [e.id for e in svc.history("main", c)] == [a, c]
        assert dangling(svc) == []
    finally:
        svc.close()


def test_an_export_after_a_delete_imports_with_one_current_version(
    service: MemoryService, operator: Caller, data_dir: DataDir, tmp_path: Path
) -> None:
    v1 = store(service, operator, "User drives a Volvo")
    v2 = store(service, operator, "User drives a Tesla", supersedes=v1)
    v3 = store(service, operator, "User drives a BMW", supersedes=v2)
    service.delete(operator, v2)
    path = tmp_path / "out.jsonl"
    export(service, operator, path)
    fresh = MemoryService(DataDir(tmp_path / "fresh"))
    try:
        report = import_file(fresh, fresh.open_session("main", Actor.OPERATOR), path)
        assert report.relinked == [] and report.entries == 2
        assert [e.id for e in fresh.history("main", v3)] == [v1, v3]
        assert fresh.list_ids("main", EntryFilter()) == [v3]
    finally:
        fresh.close()


def _break_as_an_earlier_ambry_did(service: MemoryService, entry_id: str) -> None:
    """Delete ``entry_id`` without relinking, as Ambry did before chains were kept whole."""
    with service.store_for("main").transaction():
        service.store_for("main").execute("DELETE FROM memory_entries WHERE id = ?", (entry_id,))


def test_chains_an_earlier_ambry_broke_are_mended_when_the_group_opens(
    data_dir: DataDir,
) -> None:
    svc = MemoryService(data_dir)
    op = svc.open_session("main", Actor.OPERATOR)
    volvo = store(svc, op, "User drives a Volvo")
    tesla = store(svc, op, "User drives a Tesla", supersedes=volvo)
    paris = store(svc, op, "Office is in Paris")
    lyon = store(svc, op, "Office is in Lyon", supersedes=paris)
    nice = store(svc, op, "Office is in Nice", supersedes=lyon)
    _break_as_an_earlier_ambry_did(svc, tesla)
    _break_as_an_earlier_ambry_did(svc, lyon)
    assert sorted(dangling(svc)) == sorted([volvo, paris])
    svc.close()

    svc = MemoryService(data_dir)
    try:
        assert dangling(svc) == []
        # The audit log named what replaced the missing middle version.
        assert [e.id for e in svc.history("main", nice)] == [paris, nice]
        assert current(svc) == ["Office is in Nice", "User drives a Volvo"]
        row = audit.recent(svc.store_for("main"), actions=["update"])[0]
        assert (row.actor, sorted(row.entry_ids)) == ("system", sorted([volvo, paris]))
    finally:
        svc.close()


def test_a_version_an_earlier_ambry_put_in_the_trash_comes_back_in_its_chain(
    data_dir: DataDir,
) -> None:
    svc = MemoryService(data_dir)
    op = svc.open_session("main", Actor.OPERATOR)
    agent = svc.open_session("main", Actor.AGENT)
    volvo = store(svc, op, "User drives a Volvo")
    tesla = store(svc, op, "User drives a Tesla", supersedes=volvo)
    svc.delete(agent, tesla)
    s = svc.store_for("main")
    with s.transaction():  # as an earlier Ambry left it: no relink, no place kept
        entry = json.loads(s.execute("SELECT entry FROM trash WHERE id = ?", (tesla,)).get)
        del entry["chain"]
        s.execute("UPDATE trash SET entry = ? WHERE id = ?", (json.dumps(entry), tesla))
        s.execute("UPDATE memory_entries SET superseded_by = ? WHERE id = ?", (tesla, volvo))
    svc.close()

    svc = MemoryService(data_dir)
    try:
        op = svc.open_session("main", Actor.OPERATOR)
        assert current(svc) == ["User drives a Volvo"]
        trash.restore(svc, op, tesla)
        assert [e.id for e in svc.history("main", tesla)] == [volvo, tesla]
        assert current(svc) == ["User drives a Tesla"]
    finally:
        svc.close()


def test_restoring_from_the_trash_what_was_stored_again_keeps_one_memory(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    gone = store(service, operator, "User is allergic to peanuts", tags=["health"])
    service.delete(agent, gone)
    again = store(service, operator, "User is allergic to peanuts", tags=["food"])
    restored = trash.restore(service, operator, gone)
    assert (restored.duplicate_of, restored.tags_added) == (again, ("health",))
    assert restored.describe() == (
        f"restored {gone} as an earlier version of {again}, which holds the same text and "
        "stays current (it took the tag 'health')"
    )
    assert current(service) == ["User is allergic to peanuts"]
    assert service.get("main", again).tags == ("food", "health")
    assert [e.id for e in service.history("main", again)] == [gone, again]
    row = audit.recent(service.store_for("main"), actions=["restore"])[0]
    # One row for a restore of many, as an undo writes it: the ids in a list.
    assert row.detail["duplicate_of"] == [again]


def test_undo_of_a_delete_never_makes_a_duplicate_current(
    service: MemoryService, operator: Caller
) -> None:
    gone = store(service, operator, "User is allergic to peanuts")
    _, deleted = curation.delete_many(service, operator, [gone])
    again = store(service, operator, "User is allergic to peanuts")
    [done] = bulk.restore_all(service, operator, deleted.entries, deleted.places)
    assert done.duplicate_of == again
    assert service.list_ids("main", EntryFilter()) == [again]


def test_a_restore_conflicts_when_the_entry_exists(
    service: MemoryService, operator: Caller
) -> None:
    a = store(service, operator, "Likes tea")
    _, deleted = curation.delete_many(service, operator, [a])
    bulk.restore_all(service, operator, deleted.entries, deleted.places)
    with pytest.raises(Conflict, match="already exists"):
        bulk.restore_all(service, operator, deleted.entries, deleted.places)


def test_the_cli_says_what_is_current_again_and_restores_in_place(
    data_dir: DataDir, capsys: Any
) -> None:
    d = str(data_dir.root)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", d, *argv])
        out, err = capsys.readouterr()
        return code, out, err

    _, x, _ = run("store", "User drives a Volvo")
    _, y, _ = run("store", "User drives a Tesla", "--supersedes", x.strip())
    x, y = x.strip(), y.strip()
    code, out, _ = run("delete", y)
    assert code == 0 and out == f"deleted {y}\n{x} is current again: User drives a Volvo\n"
    code, out, _ = run("history", x)
    assert "superseded" not in out
    code, out, _ = run("store", "User drives a BMW", "--supersedes", x)
    assert code == 0
    code, out, _ = run("delete", y, "--json")
    assert code == 1  # gone for good: a person's delete is final


def test_a_restore_behind_a_later_version_says_which_stays_current(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    a = store(service, operator, "Office is in Paris")
    b = store(service, operator, "Office is in Lyon", supersedes=a)
    c = store(service, operator, "Office is in Nice", supersedes=b)
    service.delete(agent, b)
    restored = trash.restore(service, operator, b)
    # Before: "restored mem-…" alone, though another version is the current one.
    assert restored.behind == c
    assert restored.describe() == (
        f"restored {b} as an earlier version; {c}, written after it, stays current"
    )
    assert restored.to_dict()["behind"] == c


def test_a_restore_keeps_its_place_when_the_next_version_has_the_same_time(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    a = store(service, operator, "Office is in Paris")
    b = store(service, operator, "Office is in Lyon", supersedes=a)
    c = store(service, operator, "Office is in Nice", supersedes=b)
    # Two writes in one millisecond: the clock cannot say which came first.
    service.store_for("main").execute(
        "UPDATE memory_entries SET created_at = (SELECT created_at FROM memory_entries "
        "WHERE id = ?) WHERE id = ?",
        (b, c),
    )
    service.delete(agent, b)
    restored = trash.restore(service, operator, b)
    # Before: b went after c, the version that replaced it, and became current.
    assert restored.behind == c
    assert [e.id for e in service.history("main", c)] == [a, b, c]


def test_a_bulk_delete_and_its_undo_read_the_table_a_few_times_not_once_a_memory(
    service: MemoryService, operator: Caller
) -> None:
    """Deleting 9,487 memories of a 100,000-memory store took 190 s: each current version
    deleted read the whole table twice (its earlier versions, the candidates waiting on
    it). Now the whole-table reads do not grow with the number deleted."""
    made = service.store_entries(
        operator, [StoreRequest(EntryType.FACT, f"fact {i}", ()) for i in range(600)]
    )
    ids = [o.entry.id for o in made]
    newer = service.store_entries(
        operator,
        [
            StoreRequest(EntryType.FACT, f"fact {i} again", (), supersedes=ids[i])
            for i in range(200)
        ],
    )
    pending = service.store(
        operator,
        {
            "type": "fact",
            "content": "fact 0 once more",
            "supersedes": newer[0].entry.id,
            "source": {"type": "web_content"},
        },
    ).entry
    doomed = [o.entry.id for o in newer] + ids[200:400]
    db = service.store_for("main").conn
    scanned: list[int] = []

    def count(event: dict[str, Any]) -> None:
        if "memory_entries" in event["sql"]:
            scanned.append(event["stmt_status"]["SQLITE_STMTSTATUS_FULLSCAN_STEP"])

    db.trace_v2(apsw.SQLITE_TRACE_PROFILE, count)
    try:
        _, deleted = curation.delete_many(service, operator, doomed)
        deleting = sum(scanned)
        scanned.clear()
        waited_on = waiting_state(service.store_for("main"), pending.id)[1]
        bulk.restore_all(service, operator, deleted.entries, deleted.places)
        restoring = sum(scanned)
    finally:
        db.trace_v2(0, None)
    rows = 600 + 200 + 1
    assert deleting < 3 * rows, deleting
    assert restoring < 3 * rows, restoring
    assert len(deleted.current_again) == 200
    # Exactly as before: the candidate waited on the earlier version, then on its own again.
    assert current(service) == sorted(
        [f"fact {i} again" for i in range(200)] + [f"fact {i}" for i in range(200, 600)]
    )
    assert dangling(service) == []
    assert waited_on == ids[0]
    assert waiting_state(service.store_for("main"), pending.id)[1] == newer[0].entry.id
