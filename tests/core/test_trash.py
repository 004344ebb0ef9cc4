"""Agent deletes go to a trash the person can restore from and empty."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.cli.main import main
from core.memory import trash
from core.model.config import Config
from core.model.entries import Actor, EntryFilter, utc_now
from core.model.errors import Forbidden, NotFound
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir


def store(service: MemoryService, caller: Caller, content: str, **extra: Any) -> str:
    return str(service.store(caller, {"type": "fact", "content": content, **extra}).entry.id)


def visible(service: MemoryService, query: str) -> list[str]:
    return [r.id for r in service.search_entries("main", query, EntryFilter())]


def test_an_agents_delete_can_be_restored_whole(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    entry_id = store(service, operator, "The boiler service is due in March", tags=["home"])
    before = service.store_for("main").get(entry_id)
    service.delete(agent, entry_id)
    assert service.store_for("main").get(entry_id) is None
    assert visible(service, "boiler") == [] and "boiler" not in service.brief(agent).markdown
    items = trash.list_trash(service, "main")
    assert [(i.id, i.preview, i.tags, i.deleted_by) for i in items] == [
        (entry_id, "The boiler service is due in March", ("home",), "agent")
    ]
    assert items[0].expires_at > items[0].deleted_at
    trash.restore(service, operator, entry_id)
    after = service.store_for("main").get(entry_id)
    assert after == before
    assert visible(service, "boiler") == [entry_id]  # back in the search index
    assert trash.list_trash(service, "main") == []
    rows = audit.recent(service.store_for("main"), actions=["delete", "restore"])
    assert [(r.action, r.actor, r.detail.get("to")) for r in rows] == [
        ("restore", "operator", None),
        ("delete", "agent", "trash"),
    ]


def test_memory_delete_says_what_it_does_the_trash_for_the_configured_days(
    service: MemoryService, operator: Caller, data_dir: DataDir
) -> None:
    conn = agent_dispatcher(service).connect()
    hello = {"token": load_or_create_token(data_dir.token_file), "client": "unit"}
    assert "result" in _rpc(conn, "hello", hello)
    listed = {t["name"]: t for t in _rpc(conn, "tools/list", {})["result"]["tools"]}
    described = listed["memory_delete"]["description"]
    # What the agent is told is what happens: the trash, restorable, for trash_days.
    assert "for good, only" not in described and "Returns the deleted id" not in described
    assert "goes to the person's trash: they can restore it" in described
    assert f"for {Config().trash_days} days by default (their trash_days setting)" in described
    entry_id = store(service, operator, "The boiler service is due in March")
    assert _rpc(conn, "memory_delete", {"id": entry_id})["result"] == {
        "deleted": entry_id,
        "current_again": None,
    }
    [item] = trash.list_trash(service, "main")
    kept = datetime.fromisoformat(item.expires_at) - datetime.fromisoformat(item.deleted_at)
    assert (item.id, kept) == (entry_id, timedelta(days=Config().trash_days))


def _rpc(conn: Connection, method: str, params: dict[str, Any]) -> dict[str, Any]:
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    reply = conn.handle_line(line.encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


def test_the_persons_delete_is_final(service: MemoryService, operator: Caller) -> None:
    entry_id = store(service, operator, "Temporary note")
    service.delete(operator, entry_id)
    assert trash.list_trash(service, "main") == []


def test_sealed_entries_stay_sealed_in_the_trash(
    service: MemoryService, agent: Caller, operator: Caller, memory_keyring: object
) -> None:
    secret_id = store(service, operator, "Locker code is kept by Ana", privacy="secret")
    private_id = store(service, operator, "Sees the physio on Fridays", privacy="private")
    for entry_id in (secret_id, private_id):
        service.delete(agent, entry_id)
    rows = service.store_for("main").execute("SELECT entry FROM trash").fetchall()
    assert all("Ana" not in r[0] and "physio" not in r[0] for r in rows)
    previews = {i.id: i.preview for i in trash.list_trash(service, "main")}
    assert previews[private_id] == "Sees the physio on Fridays"
    assert "Ana" not in previews[secret_id]
    trash.restore(service, operator, secret_id)
    assert service.reveal(operator, secret_id).content == "Locker code is kept by Ana"


def test_only_the_person_restores_or_empties(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    entry_id = store(service, operator, "Keep this")
    service.delete(agent, entry_id)
    with pytest.raises(Forbidden):
        trash.restore(service, agent, entry_id)
    with pytest.raises(Forbidden):
        trash.empty(service, agent)
    with pytest.raises(NotFound, match="trash list"):
        trash.restore(service, operator, "mem-nothing")
    with pytest.raises(NotFound):
        trash.empty(service, operator, ["mem-nothing"])
    assert trash.empty(service, operator) == 1
    assert trash.list_trash(service, "main") == []


def test_the_trash_is_purged_after_the_configured_days(data_dir: DataDir) -> None:
    svc = MemoryService(data_dir, Config(trash_days=30))
    agent = svc.open_session("main", Actor.AGENT, "a")
    op = svc.open_session("main", Actor.OPERATOR, "p")
    old, recent = store(svc, op, "old fact"), store(svc, op, "recent fact")
    svc.delete(agent, old)
    svc.delete(agent, recent)
    store_ = svc.store_for("main")
    with store_.transaction():
        store_.execute(
            "UPDATE trash SET expires_at = ? WHERE id = ?",
            ((utc_now() - timedelta(seconds=1)).isoformat(), old),
        )
    svc.close()
    svc = MemoryService(data_dir, Config())
    try:
        assert [i.id for i in trash.list_trash(svc, "main")] == [recent]
        purge = audit.recent(svc.store_for("main"), actions=["purge"])[0]
        assert purge.entry_ids == [old] and purge.actor == "system"
    finally:
        svc.close()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_trash_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path / "data")
    svc = MemoryService(DataDir(Path(d)))
    op = svc.open_session("main", Actor.OPERATOR, "p")
    agent = svc.open_session("main", Actor.AGENT, "a")
    ids = [store(svc, op, f"Garden note {i}") for i in range(3)]
    for entry_id in ids:
        svc.delete(agent, entry_id)
    svc.close()
    code, out, _ = run(capsys, "trash", "--data-dir", d)
    assert code == 0 and all(i in out for i in ids) and "by the agent" in out
    code, out, _ = run(capsys, "trash", "list", "--json", "--data-dir", d)
    assert code == 0 and {i["id"] for i in json.loads(out)} == set(ids)
    code, out, _ = run(capsys, "trash", "restore", ids[0], "--data-dir", d)
    assert code == 0 and f"restored {ids[0]}" in out
    code, out, err = run(capsys, "trash", "restore", "--data-dir", d)
    assert code == 2 and "needs at least one entry id" in err
    code, out, _ = run(capsys, "trash", "empty", ids[1], "--yes", "--data-dir", d)
    assert code == 0 and "deleted 1 entry for good" in out
    code, out, err = run(capsys, "trash", "empty", "--data-dir", d)  # no terminal: refused
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, "trash", "empty", "--yes", "--json", "--data-dir", d)
    assert code == 0 and json.loads(out) == {"deleted": 1}
    code, out, _ = run(capsys, "search", "garden", "--json", "--data-dir", d)
    assert [r["id"] for r in json.loads(out)["results"]] == [ids[0]]
    code, out, err = run(capsys, "trash", "restore", ids[2], "--data-dir", d)
    assert code == 1 and err.startswith("error: no entry")


def test_clearing_memories_clears_the_trash_too(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    from core.memory.forgetting import Scope

    ids = [store(service, operator, f"Kept note {i}") for i in range(2)]
    service.delete(agent, ids[0])
    counts = service.clear(operator, Scope.SEMANTIC)
    assert counts == {"memory_entries": 1, "trash": 1}
    assert trash.list_trash(service, "main") == []


def test_a_restore_that_fails_says_why_and_leaves_the_entry_in_the_trash(
    service: MemoryService,
    agent: Caller,
    operator: Caller,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.memory import versions
    from core.model.errors import StorageError

    entry_id = store(service, operator, "The boiler service is due in March")
    service.delete(agent, entry_id)

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise StorageError("database or disk is full")

    monkeypatch.setattr(versions, "put_back", full_disk)
    monkeypatch.setattr(trash, "put_back", full_disk)
    # Before: no error, nothing restored and nothing left, then an IndexError.
    with pytest.raises(StorageError, match="disk is full"):
        trash.restore(service, operator, entry_id)
    assert [i.id for i in trash.list_trash(service, "main")] == [entry_id]
