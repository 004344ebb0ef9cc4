from __future__ import annotations

import hashlib
import json
import threading
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from core.model.entries import Actor, iso, utc_now
from core.model.errors import MigrationFailed, SchemaTooNew, StorageError
from core.service import MemoryService
from core.storage import db, schema
from core.storage.paths import DataDir


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_empty_file_is_migrated_to_current_schema(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    conn = db.open_database(path)
    try:
        assert conn.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
        assert conn.execute("PRAGMA application_id").get == schema.APPLICATION_ID
        assert conn.execute("PRAGMA journal_mode").get == "wal"
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
        assert {"memory_entries", "memory_fts", "sessions", "audit_log"} <= tables
    finally:
        conn.close()
    # A brand-new database has nothing to back up.
    assert not list(tmp_path.glob("*.bak-*"))


def test_newer_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
    conn.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    conn.close()
    before = _digest(path)
    with pytest.raises(SchemaTooNew, match="newer Ambry"):
        db.open_database(path)
    assert _digest(path) == before
    assert not Path(str(path) + "-wal").exists()


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA application_id = 1234; CREATE TABLE t(x);")
    conn.close()
    with pytest.raises(StorageError, match="another program"):
        db.open_database(path)


def test_garbage_file_gives_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageError, match="damaged or is not an Ambry database"):
        db.open_database(path)


def test_an_upgrade_of_several_steps_leaves_one_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "g.sqlite"
    db.open_database(path).close()
    steps = ("CREATE TABLE probe_a (x INTEGER);", "CREATE TABLE probe_b (x INTEGER);")
    monkeypatch.setattr(db, "MIGRATIONS", (*schema.MIGRATIONS, *steps))
    monkeypatch.setattr(db, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 2)
    db.open_database(path).close()
    # The copy of the file as it was; none of it halfway, which would only double it.
    assert sorted(p.name for p in tmp_path.glob("*.bak-v*")) == [
        db.backup_path(path, schema.SCHEMA_VERSION).name
    ]


def _analysed(conn: apsw.Connection, table: str) -> bool:
    if not conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").get:
        return False
    return bool(conn.execute("SELECT 1 FROM sqlite_stat1 WHERE tbl = ?", (table,)).get)


def test_an_upgraded_store_has_planner_statistics_before_its_first_close(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "g.sqlite"
    conn = db.open_database(path)
    conn.execute("INSERT INTO meta(key, value) VALUES ('probe', '1')")
    conn.close()  # never analysed: an open-and-close of a new file runs no ANALYZE
    steps = ("CREATE TABLE probe_a (x INTEGER PRIMARY KEY, y TEXT);",)
    monkeypatch.setattr(db, "MIGRATIONS", (*schema.MIGRATIONS, *steps))
    monkeypatch.setattr(db, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    conn = db.open_database(path)
    try:
        assert _analysed(conn, "meta")
    finally:
        conn.close()


def test_a_store_held_open_gets_planner_statistics_as_it_grows(service: MemoryService) -> None:
    from core.memory.writing import StoreRequest
    from core.model.entries import EntryType

    op = service.open_session("main", Actor.OPERATOR)
    store = service.store_for("main")
    assert not _analysed(store.conn, "memory_entries")
    for start in range(0, 2400, 400):
        batch = [
            StoreRequest(EntryType.FACT, f"note {n} about the garden")
            for n in range(start, start + 400)
        ]
        service.store_entries(op, batch)
    # The server has not closed the store, and the planner has numbers to go by.
    assert _analysed(store.conn, "memory_entries")


def test_the_first_migration_step_is_preceded_by_a_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = DataDir(tmp_path / "data")
    svc = MemoryService(data)
    op = svc.open_session("main", Actor.OPERATOR)
    stored = svc.store(op, {"type": "fact", "content": "kept across upgrades"}).entry.id
    svc.close()

    extra = "CREATE TABLE upgrade_probe (x INTEGER);"
    monkeypatch.setattr(db, "MIGRATIONS", (*schema.MIGRATIONS, extra))
    monkeypatch.setattr(db, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    path = data.group_db("main")
    conn = db.open_database(path)
    try:
        assert conn.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION + 1
    finally:
        conn.close()

    backup = db.backup_path(path, schema.SCHEMA_VERSION)
    assert backup.exists()
    saved = apsw.Connection(str(backup))
    try:
        assert saved.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
        assert saved.execute("SELECT id FROM memory_entries").get == stored
    finally:
        saved.close()


def test_failed_migration_step_leaves_previous_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "g.sqlite"
    db.open_database(path).close()
    monkeypatch.setattr(db, "MIGRATIONS", (*schema.MIGRATIONS, "CREATE TABLE x(a); BROKEN SQL;"))
    monkeypatch.setattr(db, "SCHEMA_VERSION", schema.SCHEMA_VERSION + 1)
    with pytest.raises(MigrationFailed, match="still at v") as failed:
        db.open_database(path)
    backup = db.backup_path(path, schema.SCHEMA_VERSION)
    assert str(backup) in failed.value.message
    assert failed.value.data["backup"] == str(backup)
    assert isinstance(failed.value.__cause__, apsw.SQLError)
    conn = apsw.Connection(str(path))
    try:
        assert conn.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema")}
        assert "x" not in names
    finally:
        conn.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_opening_waits_for_a_lock_instead_of_failing_at_once(
    tmp_path: Path, read_only: bool
) -> None:
    # A store another tool switched to rollback-journal mode, briefly held by a writer:
    # the very first read of the header must wait for it like every later statement.
    path = tmp_path / "g.sqlite"
    db.open_database(path).close()
    holder = apsw.Connection(str(path))
    holder.execute("PRAGMA journal_mode = DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        conn = db.open_database(path, read_only=read_only)
    finally:
        release.join()
        holder.close()
    try:
        assert conn.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
    finally:
        conn.close()


#: The first 16 hex digits of each released step's sha256. A released step is never
#: edited (a store at that version would never run the edit); a new step adds a line.
RELEASED_STEPS = (
    "e4f4d16ea62d5375",
    "b8d159b80d33c9a5",
    "880fc9c627d39334",
    "015ce7d49c307606",
    "d82764c88ff89076",
    "1198b8cb0a2b4a83",
    "50e84d2cb00e6143",
    "487dc827fbf614ef",
    "b2b9e650e107c561",
    "6ee822ee7fa92037",
    "1b9268a955e4ab48",
    "6d1a4d417ac82f64",
)


def test_released_migration_steps_are_never_edited() -> None:
    found = tuple(hashlib.sha256(step.encode()).hexdigest()[:16] for step in schema.MIGRATIONS)
    assert found == RELEASED_STEPS


#: When each kind of row first had a table (schema step): memories from the start,
#: conversation turns, threads and their handoffs from step 3.
TURNS_SINCE = 3
#: From this step a turn also keeps when it was said (written with it since).
SAID_AT_SINCE = 7


@pytest.mark.parametrize("version", range(1, schema.SCHEMA_VERSION))
def test_a_store_of_every_older_schema_upgrades_without_losing_a_row(
    tmp_path: Path, version: int
) -> None:
    from core.continuity.episodes import find_exchanges
    from core.continuity.handoffs import current_handoff
    from core.model.entries import EntryFilter
    from core.semantic.hybrid import Mode

    data = DataDir(tmp_path / "data")
    data.ensure()
    old = apsw.Connection(str(data.group_db("main")))
    # The step that adds grams fills them with the function the store registers.
    old.create_scalar_function("text_grams", db._text_grams, 1, deterministic=True)
    for step in schema.MIGRATIONS[:version]:
        with old:
            old.execute(step)
    old.execute(f"PRAGMA user_version = {version}")
    at = "2025-03-01T09:00:00.000Z"
    for n, (text, tags) in enumerate(
        [("User keeps bees in the garden", ["garden", "bees"]), ("Standup is at nine", [])]
    ):
        old.execute(
            "INSERT INTO memory_entries (id, type, content, search_text, content_key, tags, "
            "behavioral, session_id, group_name, created_at, updated_at, last_seen_at) "
            "VALUES (?, 'fact', ?, ?, ?, ?, 0, 's', 'main', ?, ?, ?)",
            (f"mem-{n}", text, text, f"k{n}", json.dumps(tags), at, at, at),
        )
    # Turns expire after episodic_ttl_days: these were logged yesterday.
    said = iso(utc_now() - timedelta(days=1))
    if version >= TURNS_SINCE:
        old.execute("INSERT INTO threads VALUES ('thr-1', 'Hives', ?, ?)", (said, said))
        old.execute(
            "INSERT INTO thread_handoffs (thread_id, version, markdown, created_at) "
            "VALUES ('thr-1', 1, '# Hives\n- order a new frame', ?)",
            (said,),
        )
        old.execute(
            "INSERT INTO exchanges (session_id, thread_id, speaker, text, created_at) "
            "VALUES ('s', 'thr-1', 'user', 'The hive needs a new frame', ?)",
            (said,),
        )
        if version >= SAID_AT_SINCE:
            old.execute("UPDATE exchanges SET said_at = created_at")
    old.close()

    service = MemoryService(data)
    try:
        store = service.store_for("main")
        assert store.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
        bees = service.get("main", "mem-0")
        assert (bees.content, set(bees.tags)) == (
            "User keeps bees in the garden",
            {"garden", "bees"},
        )
        found = service.search_entries("main", "bees garden", EntryFilter(), 5, mode=Mode.KEYWORD)
        assert [r.id for r in found] == ["mem-0"]
        tagged = service.search_entries("main", "", EntryFilter(tags=("bees",)), 5)
        assert [r.id for r in tagged] == ["mem-0"]
        assert store.execute("SELECT count(*) FROM memory_entries").get == 2
        if version >= TURNS_SINCE:
            [hit] = find_exchanges(store, "hive frame", mode=Mode.KEYWORD)
            assert hit.exchange.text == "The hive needs a new frame"
            assert hit.exchange.said_at == said  # when it was said: from before turns kept it
            handoff = current_handoff(store, "thr-1")
            assert handoff is not None and "order a new frame" in handoff.markdown
    finally:
        service.close()
