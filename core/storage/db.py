"""Opening a group database: bootstrap, migrations, backups, error mapping.

Every connection goes through :func:`open_database`. An apsw connection belongs
to the thread that opened it; open one per thread. Writers use
:func:`write_transaction` (``BEGIN IMMEDIATE``) so two processes queue on the
busy timeout instead of failing on a lock upgrade.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import urllib.parse
import weakref
from collections.abc import Iterable, Iterator
from pathlib import Path

import apsw
import apsw.bestpractice

from core.model.errors import MigrationFailed, SchemaTooNew, StorageError
from core.model.file_errors import FULL, access_problem, file_error
from core.model.times import local_day
from core.storage import db_header
from core.storage.fts import text_grams
from core.storage.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION

log = logging.getLogger(__name__)

#: How long a writer waits for another process's transaction before giving up.
BUSY_TIMEOUT_MS = 15_000
#: A wait for another writer longer than this is logged (once per wait), so a
#: person sees why a command is slow instead of a terminal that hangs. Short
#: waits (bookkeeping that is skipped when it cannot wait) are not announced.
BUSY_NOTICE_S = 1.0
_ANNOUNCED_FROM_S = 5.0


class BusyWait:
    """SQLite's busy handler for one connection: wait for another writer, and say so.

    SQLite calls it each time a lock it needs is held elsewhere (``count`` is 0 at
    the first call of a wait). It sleeps a little longer each time, up to 50 ms,
    logs one warning once a long wait passes :data:`BUSY_NOTICE_S`, and gives up
    (SQLite then raises ``BusyError``) after ``timeout_ms``.
    """

    def __init__(self, path: Path, timeout_ms: int) -> None:
        self.path = path
        self.timeout_s = timeout_ms / 1000
        self._started = 0.0
        self._noticed = False

    def __call__(self, count: int) -> bool:
        now = time.monotonic()
        if count == 0:
            self._started, self._noticed = now, False
        waited = now - self._started
        if waited >= self.timeout_s:
            return False
        if not self._noticed and waited >= BUSY_NOTICE_S and self.timeout_s >= _ANNOUNCED_FROM_S:
            self._noticed = True
            log.warning(
                "%s is locked by another program; waiting up to %.0f s for it",
                self.path,
                self.timeout_s - waited,
            )
        time.sleep(min(0.05, 0.001 * 2 ** min(count, 6)))
        return True


#: The wait each connection was last given (None: :data:`BUSY_TIMEOUT_MS`), so a
#: shorter wait for a block can put back the one before it.
_waits: weakref.WeakKeyDictionary[apsw.Connection, int | None] = weakref.WeakKeyDictionary()
_waits_lock = threading.Lock()


def wait_for_writers(conn: apsw.Connection, path: Path, timeout_ms: int | None = None) -> None:
    """Make ``conn`` wait up to ``timeout_ms`` (default :data:`BUSY_TIMEOUT_MS`) for a lock."""
    with _waits_lock:
        _waits[conn] = timeout_ms
    conn.set_busy_handler(BusyWait(path, BUSY_TIMEOUT_MS if timeout_ms is None else timeout_ms))


@contextlib.contextmanager
def waiting_at_most(conn: apsw.Connection, path: Path, timeout_ms: int) -> Iterator[None]:
    """Inside the block ``conn`` waits at most ``timeout_ms`` for a lock, then as before.

    A shorter wait already in force is kept, so work nested in a short wait (the
    scrub inside start-up upkeep) never waits longer than the work around it.
    """
    with _waits_lock:
        before = _waits.get(conn)
    current = BUSY_TIMEOUT_MS if before is None else before
    wait_for_writers(conn, path, min(timeout_ms, current))
    try:
        yield
    finally:
        wait_for_writers(conn, path, before)


_ENVIRONMENT_ERRORS: tuple[type[BaseException], ...] = (
    apsw.BusyError,
    apsw.LockedError,
    apsw.FullError,
    apsw.ReadOnlyError,
    apsw.CantOpenError,
    apsw.NotADBError,
    apsw.CorruptError,
    apsw.IOError,
    apsw.PermissionsError,
    apsw.NoLFSError,
)


def storage_error(exc: BaseException, path: Path) -> StorageError:
    """Turn an environment failure into a message that says what to do.

    A refusal to write or open is told by its cause, as for every other file
    (:mod:`core.model.file_errors`): a disk mounted read-only, a file or folder of
    another user (``chown``), a mode that keeps its owner out (``chmod``).
    """
    match exc:
        case apsw.FullError():
            hint = str(FULL)
        case apsw.ReadOnlyError() | apsw.PermissionsError():
            found = access_problem(path, write=True)
            hint = (
                str(found)
                if found
                else "the file or its folder is read-only; check its permissions"
            )
        case apsw.BusyError() | apsw.LockedError():
            hint = (
                "another program held the database too long (often another Ambry "
                "command, such as an import); try again when it is done"
            )
        case apsw.CorruptError() if word_index_damage(str(exc)):
            hint = f"a word index of the group is damaged; {words_fix(path)}"
        case apsw.NotADBError() | apsw.CorruptError():
            hint = f"the file is damaged or is not an Ambry database; {damaged_fix(path)}"
        case apsw.CantOpenError():
            found = access_problem(path, write=True)
            hint = (
                str(found)
                if found
                else "the file cannot be opened; check that its folder exists and is writable"
            )
        case _:
            hint = "an I/O error occurred; check that the disk is not full and is working"
    return StorageError(f"{path}: {hint} ({type(exc).__name__}: {exc})")


#: Page cache per connection, in KiB, filled only as pages are read. SQLite's
#: default is 2 MB, while a 10,000-entry group is 13 MB: searches kept re-reading
#: pages from the OS. 16 MB made search 9 % faster at 10K entries and 12 % at
#: 100K; 32 MB gained 24 % at 100K but cost the app 50 MB more memory there.
PAGE_CACHE_KIB = 16 * 1024


@contextlib.contextmanager
def mapped_errors(path: Path) -> Iterator[None]:
    """Re-raise environment errors from SQLite as :class:`StorageError`."""
    try:
        yield
    except _ENVIRONMENT_ERRORS as exc:
        raise storage_error(exc, path) from exc


def _configure(conn: apsw.Connection, path: Path) -> None:
    wait_for_writers(conn, path)
    apsw.bestpractice.connection_wal(conn)
    apsw.bestpractice.connection_enable_foreign_keys(conn)
    apsw.bestpractice.connection_dqs(conn)
    apsw.bestpractice.connection_recursive_triggers(conn)
    # A write is acknowledged only once it is durable, power loss included.
    conn.execute("PRAGMA synchronous = FULL")
    # Deleted content (for example a redacted secret) is overwritten, not left in free pages.
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")


def _read_header(conn: apsw.Connection) -> tuple[int, int]:
    version = int(conn.execute("PRAGMA user_version").get)
    app_id = int(conn.execute("PRAGMA application_id").get)
    return version, app_id


def _has_tables(conn: apsw.Connection) -> bool:
    return bool(conn.execute("SELECT count(*) FROM sqlite_schema").get)


def backup_path(path: Path, version: int) -> Path:
    return path.with_name(f"{path.name}.bak-v{version}")


def backups_of(path: Path) -> list[Path]:
    """The copies upgrades left of the database at ``path``, oldest version first."""
    found = path.parent.glob(f"{path.name}.bak-v*")
    return sorted(found, key=lambda p: int(p.name.rsplit("-v", 1)[1] or 0))


#: What to do with a damaged group that has no copy (docs/storage.md, "A damaged database").
RECOVER_FIX = (
    "move it aside (the group then starts empty) and save what is still readable in it "
    "with SQLite's .recover, as docs/storage.md shows under 'A damaged database'"
)


def word_index_damage(said: str) -> bool:
    """Whether SQLite's complaint ``said`` is about a full-text index alone: the
    rows it is derived from are whole, and the index can be built again from them."""
    return "fts5" in said.lower()


def words_fix(path: Path) -> str:
    """What to do with a damaged full-text index of the group stored at ``path``."""
    return (
        "the memories and turns are whole: `ambry --group "
        f"{path.stem} reindex --words` builds the word indexes again from them"
    )


def damaged_fix(path: Path, copies: Iterable[Path] = ()) -> str:
    """What to do with the damaged database ``path``: put its newest copy in its place
    (one an upgrade left beside it, or one of ``copies``), else recover what is readable."""
    found = [c for c in (*backups_of(path), *copies) if c.is_file()]
    if not found:
        return RECOVER_FIX
    newest = max(found, key=lambda c: c.stat().st_mtime)
    return f"move it aside and put the newest copy of the group in its place: {newest}"


def backups_note(path: Path) -> str:
    """For a forget: what the upgrade copies of ``path`` still hold ("" when none)."""
    copies = backups_of(path)
    if not copies:
        return ""
    names = ", ".join(p.name for p in copies)
    return (
        f"the copies upgrades left ({names}, in {path.parent}) still hold what they held "
        "when they were made; delete them once this version has proved itself"
    )


def _backup(conn: apsw.Connection, path: Path, version: int) -> Path:
    """Copy the live database with SQLite's backup API before a migration step."""
    target = backup_path(path, version)
    dest = apsw.Connection(str(target))
    try:
        with dest.backup("main", conn, "main") as copy:
            while not copy.done:
                copy.step(-1)
    finally:
        dest.close()
    target.chmod(0o600)
    return target


def _text_grams(*values: apsw.SQLiteValue) -> apsw.SQLiteValue:
    """:func:`~core.storage.fts.text_grams` as an SQL function (NULL has none)."""
    (text,) = values
    return text_grams(text) if isinstance(text, str) else ""


def _local_day(*values: apsw.SQLiteValue) -> apsw.SQLiteValue:
    """:func:`~core.model.times.local_day` as an SQL function: the machine's local
    calendar day of a stored time, read when called (not deterministic: the zone
    can change). NULL has none."""
    (text,) = values
    return local_day(text) if isinstance(text, str) else None


def migrate(conn: apsw.Connection, path: Path) -> None:
    """Run the forward-only migration ladder, one transaction per step, after one
    backup of the file as it was: a step that fails is rolled back, so the file is
    whole at the version before it, and a copy per step would only add full copies
    of the database (each holding whatever was deleted or forgotten since)."""
    version, _ = _read_header(conn)
    # A brand-new file has nothing to lose, so it is not backed up on the way up.
    existing = version > 0 or _has_tables(conn)
    # Steps that fill a derived column from the text call this (computed in Python).
    conn.create_scalar_function("text_grams", _text_grams, 1, deterministic=True)
    saved: Path | None = None
    for step in range(version, SCHEMA_VERSION):
        if existing and saved is None:
            try:
                saved = _backup(conn, path, step)
            except (apsw.Error, OSError) as exc:
                raise MigrationFailed(
                    f"{path}: cannot back up the database before upgrading it to schema "
                    f"v{step + 1} ({_one_line(exc)}); nothing was changed. "
                    "Free some disk space or make the folder writable, then try again",
                    backup=str(backup_path(path, step)),
                ) from exc
            log.info("backed up %s before migrating to v%d: %s", path.name, step + 1, saved)
        try:
            with conn:
                conn.execute(MIGRATIONS[step])
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {step + 1}")
        except apsw.Error as exc:
            log.info("migrating %s to schema v%d failed", path, step + 1, exc_info=True)
            kept = f"; the copy taken before the upgrade is {saved}" if saved else ""
            raise MigrationFailed(
                f"{path}: upgrading the database to schema v{step + 1} failed "
                f"({_one_line(exc)}); it was rolled back and is still at v{step}{kept}. "
                "Keep that copy and report this to the Ambry maintainers",
                backup=str(saved) if saved else None,
            ) from exc
        log.info("migrated %s to schema v%d", path.name, step + 1)
    if saved is not None:
        # The steps may have filled new tables and indexes: give the planner their
        # statistics now rather than at the first close, which a long-running server
        # may not reach for weeks (a write into an upgraded 100K store took about
        # 19 ms without them, 0.7 ms with them).
        try:
            conn.execute("PRAGMA optimize=0x10002")
        except apsw.Error as exc:
            log.info("PRAGMA optimize after the upgrade of %s skipped: %s", path.name, exc)


def _one_line(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def _check_header(path: Path, version: int, app_id: int) -> None:
    if app_id not in (0, APPLICATION_ID):
        raise StorageError(
            f"{path}: this SQLite file belongs to another program "
            f"(application_id {app_id:#x}); Ambry will not touch it"
        )
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"{path}: written by a newer Ambry (schema v{version}, this version "
            f"reads up to v{SCHEMA_VERSION}); upgrade Ambry to open it. "
            "The file was left untouched."
        )


def _refuse_before_opening(path: Path) -> None:
    """Refuse a newer or foreign file from its bytes, before SQLite can change them.

    SQLite folds a pending write-ahead log into the database when its last
    connection closes, so even a refused open would rewrite the files.
    """
    try:
        header = db_header.peek(path)
        if header is not None and header.from_wal:
            try:
                _check_header(path, header.user_version, header.application_id)
            except StorageError:
                # Act only on a log page whose checksums hold.
                header = db_header.peek(path, verify=True)
    except OSError as exc:
        raise file_error(exc, path, "read the database", write=False) from exc
    if header is not None:
        _check_header(path, header.user_version, header.application_id)


#: Errors that mean "this connection may not write here", not "the file is bad".
_CANNOT_WRITE = (
    apsw.ReadOnlyError,
    apsw.PermissionsError,
    apsw.CantOpenError,
    apsw.FullError,
    apsw.IOError,
)


def _open_for_reading(path: Path, cause: BaseException | None) -> apsw.Connection:
    """A read-only connection, even where SQLite cannot create its ``-shm`` file.

    Without the ``-wal`` and ``-shm`` files and the right to create them (a
    read-only folder, a full disk), SQLite can read a WAL database only as an
    immutable file. That is exact while no log is pending, and only then is it used.
    """
    if not path.exists():
        hint = storage_error(cause, path).message if cause else f"{path}: no such database"
        raise StorageError(hint)
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        wait_for_writers(conn, path)
        _read_header(conn)
        return conn
    except (apsw.CantOpenError, apsw.IOError, apsw.ReadOnlyError):
        conn.close()
        wal = db_header.wal_path(path)
        if wal.exists() and wal.stat().st_size > 0:
            raise
    return _immutable(path)


def _immutable(path: Path) -> apsw.Connection:
    uri = "file:" + urllib.parse.quote(str(path)) + "?immutable=1"
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def _open_untouched(path: Path) -> apsw.Connection:
    """A read-only connection that creates nothing beside the file.

    SQLite's read-only open of a WAL database makes its ``-wal`` and ``-shm`` files
    (and leaves them). Without a ``-wal`` no connection has the file open and no log
    is pending, so it is read as immutable; with one, SQLite reads the log through the
    files already there.
    """
    if not path.exists():
        raise StorageError(f"{path}: no such database")
    if not db_header.wal_path(path).exists():
        return _immutable(path)
    return _open_for_reading(path, None)


#: The databases already said to be open read-only in this process.
_said_read_only: set[Path] = set()
_said_lock = threading.Lock()


def _warn_read_only(path: Path, why: str) -> None:
    """One warning per file and process, with the reason when there is one (a full
    disk, a read-only mount): a server opens a group once per thread."""
    with _said_lock:
        if path in _said_read_only:
            return
        _said_read_only.add(path)
    log.warning(
        "%s; it is open read-only: search and export work, nothing new can be stored",
        why if why else f"{path} cannot be written",
    )


def open_database(path: Path, *, read_only: bool = False) -> apsw.Connection:
    """Open (creating if needed) and migrate the group database at ``path``.

    Where the file or its folder cannot be written (read-only, disk full) but
    the schema is current, the connection falls back to read-only, so search and
    export keep working; ``conn.readonly("main")`` tells the caller. ``read_only``
    opens it for reading only and creates nothing beside it (``ambry doctor``).

    Raises:
        SchemaTooNew: the file was written by a newer Ambry; it is not modified.
        MigrationFailed: an upgrade step failed; the message names the backup.
        StorageError: the file cannot be used (not a database, read-only, ...).
    """
    _refuse_before_opening(path)
    with mapped_errors(path):
        if read_only:
            conn = _open_untouched(path)
            try:
                _check_header(path, *_read_header(conn))
            except BaseException:
                conn.close()
                raise
            conn.create_scalar_function("local_day", _local_day, 1)
            return conn
        conn = apsw.Connection(
            str(path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        why = ""
        try:
            # Even the first read can meet a lock: another process opening the same
            # file recovers its log, or a rollback-journal writer holds it.
            wait_for_writers(conn, path)
            # Until the header is checked, closing must not fold the log into the file.
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            # Read the header before any pragma that writes to the file.
            version, app_id = _read_header(conn)
            _check_header(path, version, app_id)
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0)
            writable = not conn.readonly("main")
            if writable:
                _configure(conn, path)
        except _CANNOT_WRITE as exc:
            conn.close()
            why = storage_error(exc, path).message
            conn = _open_for_reading(path, exc)
            writable = False
        except BaseException:
            conn.close()
            raise
        if not writable:
            _warn_read_only(path, why)
        try:
            version, app_id = _read_header(conn)
            _check_header(path, version, app_id)
            if writable:
                migrate(conn, path)
            elif version < SCHEMA_VERSION:
                raise StorageError(
                    f"{path}: needs upgrading from schema v{version} to v{SCHEMA_VERSION}, "
                    "which needs write access; make the folder writable (or free disk "
                    "space) and start Ambry again"
                )
            else:
                wait_for_writers(conn, path)
        except BaseException:
            conn.close()
            raise
    conn.create_scalar_function("local_day", _local_day, 1)
    return conn


@contextlib.contextmanager
def write_transaction(conn: apsw.Connection, path: Path) -> Iterator[apsw.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; rolled back on any exception.

    The commit has returned (and, with ``synchronous=FULL``, is on disk) when the
    block exits normally; callers acknowledge a write only after that.
    """
    with mapped_errors(path):
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
