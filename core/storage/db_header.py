"""Read a database's schema header without letting SQLite touch the files.

Opening a WAL database with SQLite is not a read-only act: it may rebuild the
``-shm`` index, and closing the last connection folds the ``-wal`` file into the
database and deletes it. A file written by a newer Ambry must be refused before
any of that happens, so :func:`peek` reads ``user_version`` and
``application_id`` straight from the bytes: from the newest committed copy of
page 1 in the write-ahead log if there is one, else from the database file.

The WAL format (sqlite.org/fileformat2.html, "WAL file format"): a 32-byte
header, then frames of a 24-byte header and one page. A frame belongs to the
log's current generation when its salts equal the header's; a transaction is
committed by a frame whose "database size" field is non-zero; every frame
carries a running checksum over the header and all frames before it.
"""

from __future__ import annotations

import errno
import io
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

_DB_MAGIC = b"SQLite format 3\x00"
_WAL_MAGICS = (0x377F0682, 0x377F0683)
_WAL_HEADER = 32
_FRAME_HEADER = 24
#: Offsets of the fields in the 100-byte database header.
_USER_VERSION_AT = 60
_APPLICATION_ID_AT = 68
_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class Header:
    """The two header fields Ambry decides on before opening a database."""

    user_version: int
    application_id: int
    #: True when the values came from a committed page in the ``-wal`` file.
    from_wal: bool = False


def _fields(page_start: bytes) -> tuple[int, int]:
    (version,) = struct.unpack_from(">I", page_start, _USER_VERSION_AT)
    (app_id,) = struct.unpack_from(">i", page_start, _APPLICATION_ID_AT)
    return int(version), int(app_id)


def wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def shm_path(path: Path) -> Path:
    return path.with_name(path.name + "-shm")


def _checksum(data: bytes, big_endian: bool, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{'>' if big_endian else '<'}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & _MASK
        s1 = (s1 + words[i + 1] + s0) & _MASK
    return s0, s1


def _committed_page_one(wal: BinaryIO, *, verify: bool) -> bytes | None:
    """The newest committed image of page 1 in the log ``wal``.

    Without ``verify`` only the salts are checked, and only frame headers and
    copies of page 1 are read; with it every checksum is, as SQLite's recovery
    does. Either way the log is read one frame at a time.
    """
    head = wal.read(_WAL_HEADER)
    if len(head) < _WAL_HEADER:
        return None
    magic, _fmt, page_size, _seq, salt1, salt2, c0, c1 = struct.unpack(">8I", head)
    if magic not in _WAL_MAGICS or page_size < 512 or page_size & (page_size - 1):
        return None
    big_endian = bool(magic & 1)
    if verify and _checksum(head[:24], big_endian, 0, 0) != (c0, c1):
        return None
    s0, s1 = c0, c1
    pending: bytes | None = None
    committed: bytes | None = None
    while len(frame := wal.read(_FRAME_HEADER)) == _FRAME_HEADER:
        page_no, db_size, f_salt1, f_salt2, f0, f1 = struct.unpack(">6I", frame)
        if (f_salt1, f_salt2) != (salt1, salt2):
            break
        if verify or page_no == 1:
            page = wal.read(page_size)
            if len(page) < page_size:
                break
        else:
            wal.seek(page_size, io.SEEK_CUR)
        if verify:
            s0, s1 = _checksum(frame[:8], big_endian, s0, s1)
            s0, s1 = _checksum(page, big_endian, s0, s1)
            if (s0, s1) != (f0, f1):
                break
        if page_no == 1:
            pending = page
        if db_size:
            # Everything up to a commit frame is durable; later frames are not yet.
            if pending is not None:
                committed = pending
            pending = None
    return committed


def peek(path: Path, *, verify: bool = False) -> Header | None:
    """The schema header of the database at ``path``, read without SQLite.

    ``verify`` checks the log's checksums too; use it before acting on a value
    that came from the log (``from_wal``), for example before refusing a file.

    Returns ``None`` when there is nothing to read (no file, an empty file) and
    when the file does not start like an SQLite database: SQLite's own open then
    gives the precise error.

    Raises:
        OSError: a file exists but cannot be read.
    """
    try:
        with path.open("rb") as fh:
            start = fh.read(100)
    except FileNotFoundError:
        return None
    header: Header | None = None
    if len(start) == 100 and start.startswith(_DB_MAGIC):
        header = Header(*_fields(start))
    try:
        with wal_path(path).open("rb") as wal:
            page = _committed_page_one(wal, verify=verify)
    except FileNotFoundError:
        return header
    if page is None or not page.startswith(_DB_MAGIC):
        return header
    return Header(*_fields(page), from_wal=True)


#: Where SQLite's unix VFS keeps the WAL locks in the ``-shm`` file (sqlite3.c:
#: UNIX_SHM_BASE, 120), the write lock being the first (WAL_WRITE_LOCK, 0).
_WAL_WRITE_LOCK_AT = 120


def write_lock_held(path: Path) -> bool:
    """Whether another process holds the write lock of the WAL database ``path`` now.

    Without a ``-shm`` file no process has the database open. With one, this
    asks for a shared lock on the writer's byte and lets go at once: refused means
    a writer (or a recovering reader) holds it. A writer that asks in that instant
    waits on its busy handler, as it would for any reader. POSIX only (False elsewhere).

    Call it while this process has no connection open on ``path``: closing the file
    here drops every POSIX lock the process holds on it, SQLite's too.
    """
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(shm_path(path), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, 1, _WAL_WRITE_LOCK_AT)
    except OSError as exc:
        return exc.errno in (errno.EACCES, errno.EAGAIN)
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN, 1, _WAL_WRITE_LOCK_AT)
        return False
    finally:
        os.close(fd)
