"""Why a file or folder cannot be read or written, and what to do about it.

One diagnosis for every file Ambry keeps (the settings, the claims-mode backups,
the export notes, the log, the group databases) and every front end: a command
prints it as one ``error:`` line, ``ambry doctor`` as a failed check with its
``fix:`` line, a warning ends with it. The system's words say what failed, not
what to do: the same "Permission denied" needs ``chown`` for a folder another
user owns but ``chmod`` for one whose mode keeps its owner out, and neither helps
on a disk mounted read-only.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from core.model.errors import StorageError


@dataclass(frozen=True)
class Diagnosis:
    """What stops a file operation (``cause``) and what the person can do (``fix``)."""

    cause: str
    fix: str

    def __str__(self) -> str:
        return f"{self.cause}; {self.fix}"


FULL = Diagnosis("the disk is full", "free some space and try again")
QUOTA = Diagnosis("your disk quota is used up", "free some space and try again")


class FileError(StorageError):
    """A file or folder could not be read or written; ``fix`` is what to do.

    The code stays ``storage_error`` (the environment, not the request, is at fault).
    """

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def read_only(path: Path) -> Diagnosis:
    return Diagnosis(
        f"the disk holding {path} is mounted read-only",
        "remount it read-write, or use a folder on a writable disk",
    )


def mounted_read_only(path: Path) -> bool:
    """Whether the file system holding ``path`` (or its nearest existing folder) is
    mounted read-only."""
    if not hasattr(os, "statvfs"):
        return False
    try:
        return bool(os.statvfs(_nearest_existing(path)).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _nearest_existing(path: Path) -> Path:
    """``path``, or the nearest folder above it that can be looked at."""
    for candidate in (path, *path.parents):
        try:
            os.lstat(candidate)
        except OSError:
            continue
        return candidate
    return Path(path.anchor or ".")


def _may(path: Path, mode: int) -> bool:
    # The effective ids where the system can check them: root without the
    # capabilities that ignore file modes is stopped by them, as anyone else is.
    return os.access(path, mode, effective_ids=os.access in os.supports_effective_ids)


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _denied(path: Path, info: os.stat_result, doing: str) -> Diagnosis:
    """Why the person may not ``doing`` ``path``: its owner, else its mode."""
    folder = stat.S_ISDIR(info.st_mode)
    if info.st_uid != os.geteuid():
        recursive = " -R" if folder else ""
        return Diagnosis(
            f"{path} belongs to {_owner_name(info.st_uid)}, not to you, "
            f"and its mode ({stat.S_IMODE(info.st_mode):04o}) keeps you from {doing} it",
            f"sudo chown{recursive} $USER '{path}'",
        )
    return Diagnosis(
        f"{path} is yours, but its mode ({stat.S_IMODE(info.st_mode):04o}) keeps you "
        f"from {doing} it",
        f"chmod {'700' if folder else '600'} '{path}'",
    )


def access_problem(path: Path, *, write: bool) -> Diagnosis | None:
    """Why this process cannot read (``write``: change) ``path``, or None if nothing
    on its way explains it (then it is readable, or writable, or does not exist).

    Writing a file needs its folder too (Ambry replaces files by renaming a temp
    file over them, and SQLite makes its ``-wal`` beside the database); writing a
    file that does not exist yet needs the nearest folder above it that does.
    """
    if os.name != "posix":
        return None
    if write and mounted_read_only(path):
        return read_only(_nearest_existing(path))
    for folder in reversed(path.parents):
        try:
            info = os.stat(folder)
        except OSError:
            break
        if not stat.S_ISDIR(info.st_mode):
            return _not_a_folder(folder)
        if not _may(folder, os.X_OK):
            return _denied(folder, info, "opening")
    try:
        info = os.stat(path)
    except OSError:
        if not write:
            return None
        above = _nearest_existing(path.parent)
        if above.is_dir() and not _may(above, os.W_OK | os.X_OK):
            return _denied(above, os.stat(above), "writing to")
        return None
    is_folder = stat.S_ISDIR(info.st_mode)
    wanted = (os.W_OK if write else os.R_OK) | (os.X_OK if is_folder else 0)
    if not _may(path, wanted):
        return _denied(path, info, "writing to" if write else "reading")
    if write and not is_folder and not _may(path.parent, os.W_OK | os.X_OK):
        return _denied(path.parent, os.stat(path.parent), "writing to")
    return None


def _not_a_folder(path: Path) -> Diagnosis:
    return Diagnosis(
        f"{path} is a file, but must be a folder", "move the file away, or choose another folder"
    )


def explain(exc: OSError, path: Path, *, write: bool) -> Diagnosis:
    """What the failure ``exc`` of reading (``write``: writing) ``path`` means."""
    match exc.errno:
        case errno.ENOSPC:
            return FULL
        case errno.EDQUOT:
            return QUOTA
        case errno.EROFS:
            return read_only(_nearest_existing(path))
        case errno.EACCES | errno.EPERM:
            return access_problem(path, write=write) or Diagnosis(
                f"the system refuses access to {path} ({exc.strerror}), although its mode "
                "allows it (an access list, a security policy or an immutable flag)",
                f"look at it with ls -ld '{path}'",
            )
        case errno.EISDIR:
            return Diagnosis(
                f"{path} is a folder, but must be a file",
                f"move the folder away (mv '{path}' '{path}.folder')",
            )
        case errno.ENOTDIR | errno.EEXIST:
            for part in (path, *path.parents):
                if part.exists() and not part.is_dir():
                    return _not_a_folder(part)
        case errno.ENOENT:
            missing = path
            while not missing.parent.exists() and missing.parent != missing:
                missing = missing.parent
            return Diagnosis(f"{missing.parent} has no {missing.name}", "check the path")
        case errno.EIO:
            return Diagnosis(
                "the disk reported an input/output error",
                "check that the disk is connected and working, then try again",
            )
        case errno.ENAMETOOLONG:
            return Diagnosis(f"the path {path} is too long", "use a shorter one")
    return Diagnosis(exc.strerror or str(exc), f"check {path} and the folder holding it")


def file_error(exc: OSError, path: Path, doing: str, *, write: bool = True) -> FileError:
    """``exc`` (raised while ``doing`` ``path``) as a :class:`FileError` saying what to do.

    The diagnosis is made for the file the system named (the temp file beside
    ``path``, a folder on its way), when it named one; the message names ``path``.
    """
    where = Path(exc.filename) if isinstance(exc.filename, str) else path
    found = explain(exc, where, write=write)
    named = "" if str(path) in found.cause else f"{path}: "
    return FileError(f"{named}cannot {doing}: {found}", fix=found.fix)
