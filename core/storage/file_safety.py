"""Owner-only modes, and files Ambry must never clobber.

Data directories made by an older Ambry, by hand or by a restore tool may be
readable by other users; they are tightened when Ambry opens them. Only the
group and other bits are removed, so a folder the person made read-only on
purpose stays read-only. The socket path is another person's file when it is not
a socket, or when it is a socket some other program is listening on: Ambry
refuses to start rather than delete it. A file Ambry writes for the person (an
export) goes only where a regular file is or can be: a device, a pipe or a folder
there is refused, never replaced, and a symbolic link is written through.
"""

from __future__ import annotations

import logging
import os
import socket
import stat
import threading
from pathlib import Path

from core.model.errors import InvalidParams, StorageError

log = logging.getLogger(__name__)

#: Permission bits of anyone but the owner.
OTHERS = 0o077


def tighten(path: Path) -> bool:
    """Remove group and other permissions from ``path``; True if it changed.

    A folder or file that cannot be changed (a read-only file system, another
    owner) is left as it is with a warning: it still works, only less privately.
    """
    if os.name != "posix":
        return False
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if not mode & OTHERS:
            return False
        path.chmod(mode & ~OTHERS)
    except FileNotFoundError:
        return False
    except OSError as exc:
        log.warning("cannot make %s private (%s); other users may read it", path, exc.strerror)
        return False
    log.info("tightened %s from %04o to %04o", path, mode, mode & ~OTHERS)
    return True


#: Files already said to stay readable by others in this process.
_said_loose: set[Path] = set()
_said_lock = threading.Lock()


def make_private(path: Path, *, read_only: bool) -> None:
    """Give the file at ``path`` mode 0600 (a file that has it already is left alone).

    On a disk that cannot be written, a file others may read stays so, with one
    warning per file and process; one that is already owner-only needs nothing.

    Raises:
        StorageError: the file cannot be changed although it is writable.
    """
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = None
    if mode == 0o600:
        return
    try:
        path.chmod(0o600)
    except OSError as exc:
        if not read_only:
            raise StorageError(f"{path}: cannot make the file private ({exc.strerror})") from exc
        if mode is None or not mode & OTHERS:
            return
        with _said_lock:
            if path in _said_loose:
                return
            _said_loose.add(path)
        log.warning(
            "%s stays readable by others (mode %04o): it cannot be made private on a "
            "disk that cannot be written (%s)",
            path,
            mode,
            exc.strerror,
        )


#: sun_path is 104 bytes on macOS and 108 on Linux, including the final NUL.
MAX_SOCKET_PATH_BYTES = 103


def socket_path_too_long(path: Path, named_by: str | None) -> str | None:
    """Why no socket can be made at ``path`` (a path longer than the system allows),
    or None. ``named_by`` is the option or variable that gave the path (``--socket``,
    ``AMBRY_SOCKET``), None for the runtime folder's: the message says which to change.
    """
    size = len(os.fsencode(path))
    if size <= MAX_SOCKET_PATH_BYTES:
        return None
    if named_by == "--socket":
        change = "give --socket a shorter path"
    elif named_by:
        change = f"set {named_by} to a shorter path"
    else:
        change = "set XDG_RUNTIME_DIR to a shorter folder, or AMBRY_SOCKET to a shorter path"
    return (
        f"socket path {path} is {size} bytes, longer than the {MAX_SOCKET_PATH_BYTES} a "
        f"socket's path may have; {change}"
    )


def is_socket(path: Path) -> bool:
    """True if ``path`` is a socket (never follows a link)."""
    try:
        return stat.S_ISSOCK(path.lstat().st_mode)
    except OSError:
        return False


def refuse_non_socket(path: Path) -> None:
    """Refuse to serve on ``path`` when something other than a socket is there.

    A socket left by a crash may be replaced; a regular file, a folder or a link
    there belongs to someone else and is never deleted.

    Raises:
        StorageError: ``path`` exists and is not a socket.
    """
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(f"cannot check the agent socket path {path}: {exc.strerror}") from exc
    if stat.S_ISSOCK(mode):
        return
    kind = (
        "a folder"
        if stat.S_ISDIR(mode)
        else "a symbolic link"
        if stat.S_ISLNK(mode)
        else "a regular file"
        if stat.S_ISREG(mode)
        else "not a socket"
    )
    raise StorageError(
        f"the agent socket path {path} is {kind}, not a socket; Ambry will not delete it. "
        "Move it away, or set AMBRY_SOCKET to another path"
    )


def refuse_live_socket(path: Path) -> None:
    """Refuse to replace a socket at ``path`` that a program is listening on.

    The caller holds the lock every Ambry server takes on the path, so a
    listener there is not an Ambry: deleting its socket would cut that program
    off. A socket nobody listens on (left by a crash) may be replaced.

    Raises:
        StorageError: something answers a connection on ``path``.
    """
    if not is_socket(path) or not hasattr(socket, "AF_UNIX"):
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        try:
            probe.connect(str(path))
        except OSError:
            return  # refused or timed out: nobody serves it
    raise StorageError(
        f"another program, not an Ambry, is listening on the agent socket path {path}; "
        "Ambry will not take it over. Stop that program, or set AMBRY_SOCKET to another path"
    )


def check_socket_folder(folder: Path, *, own: bool) -> None:
    """Serve only from a folder no other user controls.

    Without ``XDG_RUNTIME_DIR`` (an ssh login, a container) the socket's folder
    is under ``/tmp``, where another user could have made it first and would
    then see every connection. A folder of another user is refused, unless it
    is a shared one with the sticky bit (``/tmp`` itself: nobody can replace
    another's file there). ``own`` says the folder is Ambry's (the runtime
    folder, or one it just made): only then are others' permissions taken off
    it; a folder the person named (``AMBRY_SOCKET`` in their home) is left as it is.

    Raises:
        StorageError: ``folder`` is not a folder, or belongs to another user.
    """
    if os.name != "posix":
        return
    try:
        found = folder.lstat()
    except OSError as exc:
        raise StorageError(
            f"cannot check the agent socket folder {folder}: {exc.strerror}"
        ) from exc
    if not stat.S_ISDIR(found.st_mode):
        raise StorageError(
            f"the agent socket folder {folder} is not a folder; set AMBRY_SOCKET to a path "
            "in a folder of your own"
        )
    if found.st_uid != os.geteuid() and not found.st_mode & stat.S_ISVTX:
        raise StorageError(
            f"the agent socket folder {folder} belongs to another user (uid {found.st_uid}), "
            "who could listen in on your agents; set XDG_RUNTIME_DIR, or AMBRY_SOCKET to a "
            "path in a folder of your own"
        )
    if own and found.st_uid == os.geteuid():
        tighten(folder)


def peer_uid(sock: socket.socket, path: Path) -> int | None:
    """The user id of the program at the other end of the connected Unix socket
    ``sock`` (from the kernel where it says, else the owner of the socket file
    ``path``); None where neither can be known."""
    if hasattr(socket, "SO_PEERCRED"):
        import struct

        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        return int(struct.unpack("3i", creds)[1])
    try:
        return path.stat().st_uid
    except OSError:
        return None


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, as a person names it."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def file_target(path: Path, *, field: str, example: str, instead: str) -> Path:
    """The regular file to write for ``path``, checked before anything is opened.

    A symbolic link is followed, so the file it points to is replaced and the link
    stays (as ``ambry setup`` writes a config kept in a dotfiles folder). Nothing is
    opened: opening a pipe for reading waits for a writer that never comes.

    Args:
        path: the path the person gave.
        field: the argument that named it, for the error.
        example: a file name to suggest in a folder given instead of a file.
        instead: what to give in place of a device or a pipe (``give `-` to write
            to standard output``), ending the refusal.

    Returns:
        The path to write: ``path``, or the file its link points to.

    Raises:
        InvalidParams: something other than a regular file is there (a device, a
            pipe, a folder), or the folder it would go in does not exist.
    """
    try:
        mode: int | None = path.stat().st_mode  # follows links, /proc's too
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # nothing there, or a link to nothing: the folder is checked below
    except OSError as exc:
        raise InvalidParams(f"cannot use {path}: {exc.strerror}", field=field) from exc
    if mode is not None and stat.S_ISDIR(mode):
        raise InvalidParams(
            f"{path} is a folder; give a file name in it, such as {path / example}",
            field=field,
        )
    if mode is not None and not stat.S_ISREG(mode):
        raise InvalidParams(
            f"{path} is {_kind(mode)}, not a regular file, and is never replaced; {instead}",
            field=field,
        )
    if path.is_symlink():
        try:
            path = path.resolve()
        except (OSError, RuntimeError) as exc:  # a loop of links
            raise InvalidParams(f"cannot follow the link {path}: {exc}", field=field) from exc
    folder = path.parent
    if not folder.is_dir():
        problem = "is not a folder" if folder.exists() else "does not exist"
        raise InvalidParams(
            f"the folder {folder} {problem}; create it first, or give a path in a folder "
            "that exists",
            field=field,
        )
    return path
