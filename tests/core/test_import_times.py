"""Times in an imported file, and times an older import stored as the file gave them."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from core.cli.main import main
from core.continuity.threads import open_thread
from core.model.entries import Actor
from core.model.errors import InvalidParams
from core.model.times import stored_time
from core.portability.export import export
from core.portability.importing import import_file
from core.service import Caller, MemoryService
from core.storage.paths import DataDir


def _exported(service: MemoryService, caller: Caller, tmp_path: Path) -> list[dict[str, Any]]:
    service.store(caller, {"type": "fact", "content": "Lives in Lyon"})
    thread, _ = open_thread(service, caller, title="Moving house")
    out = tmp_path / "export.jsonl"
    export(service, caller, out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(r.get("row", {}).get("id") == thread.id for r in records)
    return records


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


def _entry(records: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in records if r.get("kind") == "entry")


def test_a_time_without_an_offset_is_imported_as_utc_and_briefed(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    records = _exported(service, operator, tmp_path)
    entry = _entry(records)
    entry["provenance"]["created_at"] = "2024-05-01 09:30:00"
    entry["provenance"]["updated_at"] = "2024-05-01T09:30:00+05:30"
    # Seen lately (an entry last seen in 2024 would be stale, out of the brief).
    seen = (datetime.now(UTC) - timedelta(days=2)).replace(tzinfo=None, microsecond=0)
    entry["last_seen_at"] = seen.isoformat()
    thread = next(r for r in records if r.get("kind") == "thread")
    thread["row"]["updated_at"] = "2024-05-02 08:00"
    other = service.open_session("other", Actor.OPERATOR)
    import_file(service, other, _write(tmp_path / "naive.jsonl", records))

    stored = service.store_for("other").get(entry["id"])
    assert stored is not None
    # The store's own form: UTC, milliseconds, Z, as every write stores a time.
    assert stored.provenance.created_at == "2024-05-01T09:30:00.000Z"
    assert stored.provenance.updated_at == "2024-05-01T04:00:00.000Z"
    assert stored.last_seen_at == seen.isoformat() + ".000Z"
    (updated,) = service.store_for("other").execute(
        "SELECT updated_at FROM threads WHERE id = ?", (thread["row"]["id"],)
    )
    assert updated == ("2024-05-02T08:00:00.000Z",)
    # Before, the brief and search failed on it (naive and aware times compared).
    agent = service.open_session("other", Actor.AGENT)
    assert "Lives in Lyon" in service.brief(agent).markdown
    assert [e.content for e in service.search(agent, {"query": "Lyon"})] == ["Lives in Lyon"]


@pytest.mark.parametrize(
    ("place", "label"),
    [
        ("created_at", "provenance.created_at"),
        ("updated_at", "provenance.updated_at"),
        ("last_seen_at", "last_seen_at"),
        ("superseded_at", "superseded_at"),
    ],
)
def test_an_entry_time_that_is_no_time_refuses_the_file(
    service: MemoryService, operator: Caller, tmp_path: Path, place: str, label: str
) -> None:
    records = _exported(service, operator, tmp_path)
    entry = _entry(records)
    holder = entry["provenance"] if place in ("created_at", "updated_at") else entry
    holder[place] = "yesterday"
    other = service.open_session("other", Actor.OPERATOR)
    with pytest.raises(InvalidParams) as refused:
        import_file(service, other, _write(tmp_path / "bad.jsonl", records))
    line = records.index(entry) + 1
    assert refused.value.message == (
        f"bad.jsonl line {line} (id {entry['id']}): {label} is not a time; give an ISO 8601 "
        "time such as 2024-05-01T09:30:00Z; one without an offset is read as UTC"
    )
    assert refused.value.field == label
    assert service.store_for("other").total() == 0


@pytest.mark.parametrize("place", ["created_at", "last_seen_at"])
def test_an_entry_time_in_the_future_refuses_the_file(
    service: MemoryService, operator: Caller, tmp_path: Path, place: str
) -> None:
    records = _exported(service, operator, tmp_path)
    entry = _entry(records)
    holder = entry["provenance"] if place == "created_at" else entry
    label = f"provenance.{place}" if place == "created_at" else place
    holder[place] = "2999-01-01T00:00:00Z"
    other = service.open_session("other", Actor.OPERATOR)
    with pytest.raises(InvalidParams) as refused:
        import_file(service, other, _write(tmp_path / "future.jsonl", records))
    line = records.index(entry) + 1
    assert refused.value.message == (
        f"future.jsonl line {line} (id {entry['id']}): {label} is more than a day in the "
        "future; give when it happened"
    )
    assert refused.value.field == label
    assert service.store_for("other").total() == 0
    # Within a day ahead, as exchange_log allows: a clock running a little ahead.
    soon = datetime.now(UTC) + timedelta(hours=20)
    holder[place] = soon.isoformat()
    import_file(service, other, _write(tmp_path / "soon.jsonl", records))
    assert service.store_for("other").total() == 1


def test_a_row_time_that_is_no_time_refuses_the_file(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    records = _exported(service, operator, tmp_path)
    thread = next(r for r in records if r.get("kind") == "thread")
    thread["row"]["created_at"] = "soon"
    other = service.open_session("other", Actor.OPERATOR)
    with pytest.raises(InvalidParams, match=r"line \d+: row.created_at is not a time"):
        import_file(service, other, _write(tmp_path / "bad.jsonl", records))


def test_the_cli_refuses_a_file_with_no_time_and_makes_no_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "--create", "store", "Lives in Lyon"]) == 0
    out = tmp_path / "export.jsonl"
    assert main([*data, "export", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    _entry(records)["provenance"]["created_at"] = "yesterday"
    _write(out, records)
    capsys.readouterr()
    assert main([*data, "--group", "tz", "import", str(out)]) == 1
    assert "export.jsonl line 2 (id mem-" in capsys.readouterr().err
    assert DataDir(tmp_path / "data").groups() == ["main"]


def _spoil(service: MemoryService, entry_id: str, **times: str) -> None:
    """Store times as an older import did: as the file gave them."""
    store = service.store_for("main")
    with store.transaction():
        for column, value in times.items():
            store.execute(f"UPDATE memory_entries SET {column} = ? WHERE id = ?", (value, entry_id))


@pytest.mark.parametrize(
    "times",
    [
        {"created_at": "2024-05-01 09:30:00"},
        {"updated_at": "2024-05-01 09:30:00", "last_seen_at": "2024-05-01 09:30:00"},
        {"created_at": "yesterday"},
        {"last_seen_at": "soon"},
        {"updated_at": "not a date", "last_seen_at": "not a date"},
    ],
)
def test_a_stored_time_an_older_import_kept_never_fails_a_call(
    service: MemoryService,
    operator: Caller,
    times: dict[str, str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    kept = service.store(operator, {"type": "fact", "content": "Lives in Lyon"}).entry.id
    service.store(operator, {"type": "fact", "content": "Likes Lyon in spring"})
    _spoil(service, kept, **times)
    agent = service.open_session("main", Actor.AGENT)
    caplog.set_level(logging.INFO, logger="core.model.times")
    for _ in range(2):
        assert "- [fact] Lives in Lyon" in service.brief(agent).markdown
        found = {e.content for e in service.search(agent, {"query": "Lyon"})}
        assert found == {"Lives in Lyon", "Likes Lyon in spring"}
    service.refresh_decay("main")
    # An unreadable time is logged by its field's name, never its value, once a process.
    logged = [r.getMessage() for r in caplog.records if r.name == "core.model.times"]
    assert len(logged) == len(set(logged))
    assert not any("yesterday" in m or "soon" in m or "not a date" in m for m in logged)


def test_stored_time_reads_what_the_store_and_older_imports_hold() -> None:
    assert stored_time("2024-05-01T09:30:00.000Z", "created_at") == stored_time(
        "2024-05-01 09:30:00", "created_at"
    )
    assert stored_time("2024-05-01T09:30:00+05:30", "created_at") == stored_time(
        "2024-05-01T04:00:00Z", "created_at"
    )
    assert stored_time("yesterday", "created_at") is None
    assert stored_time("0001-01-01T00:00:00+05:00", "created_at") is None  # before year 1 in UTC
    assert stored_time(None, "created_at") is None
