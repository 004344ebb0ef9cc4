"""Where Ambry keeps its files. Paths resolve here and nowhere else.

The data directory comes from ``--data-dir``, else ``AMBRY_DATA_DIR``, else
``platformdirs.user_data_dir("Ambry")`` (:func:`locate_data_dir`). A relative
``AMBRY_DATA_DIR`` is refused: it would name another folder from every working
directory, and MCP clients start ``ambry mcp`` wherever they run. So is a relative
``AMBRY_SOCKET``, or ``AMBRY_LOG_DIR`` (:func:`path_from_env`). Whether a data
dir that does not exist may be created is the front end's rule (``core.cli.main``).
Group names are checked before any path is built from them, so a name can never
point outside ``memory/``.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import warnings
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import platformdirs

from core.model.errors import InvalidGroup, InvalidParams, StorageError
from core.model.file_errors import FileError, access_problem, explain
from core.storage import pending_files
from core.storage.crypto import pin_key_account
from core.storage.file_safety import tighten

log = logging.getLogger(__name__)

APP_NAME = "Ambry"
DATA_DIR_ENV = "AMBRY_DATA_DIR"
SOCKET_ENV = "AMBRY_SOCKET"
DEFAULT_GROUP = "main"
GROUP_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: Device names Windows reserves in every folder, whatever the extension or case.
RESERVED_NAMES = frozenset(
    ["CON", "PRN", "AUX", "NUL"] + [f"{port}{n}" for port in ("COM", "LPT") for n in range(10)]
)


def validate_group(name: object) -> str:
    """Return ``name`` if it is a usable group name, else raise :class:`InvalidGroup`."""
    if not isinstance(name, str) or GROUP_PATTERN.fullmatch(name) is None:
        shown = repr(name)[:80]
        raise InvalidGroup(
            f"invalid group name {shown}: use 1-64 letters, digits, '_' or '-'",
            field="group",
            rule="pattern ^[A-Za-z0-9_-]{1,64}$",
        )
    # Refused everywhere, so a data dir copied to Windows still opens there.
    if name.upper() in RESERVED_NAMES:
        raise InvalidGroup(
            f"invalid group name {name!r}: Windows reserves it for a device; choose another name",
            field="group",
            rule="not a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9)",
        )
    return name


class DataDirOrigin(StrEnum):
    """Where the data directory in use was named."""

    FLAG = "--data-dir"
    ENV = DATA_DIR_ENV
    DEFAULT = "default"


@dataclass(frozen=True)
class LocatedDataDir:
    path: Path
    origin: DataDirOrigin

    @property
    def named(self) -> bool:
        """Named by the person (flag or environment), not the platform's default."""
        return self.origin is not DataDirOrigin.DEFAULT

    def describe(self) -> str:
        """The path, and where it was named unless that is the default."""
        if self.origin is DataDirOrigin.ENV:
            return f"{self.path} (from {DATA_DIR_ENV})"
        return str(self.path)


def locate_data_dir(explicit: str | os.PathLike[str] | None = None) -> LocatedDataDir:
    """The data directory, absolute: explicit argument, then environment, then default.

    Raises:
        InvalidParams: ``AMBRY_DATA_DIR`` holds a relative path.
        StorageError: the path is not UTF-8 text (SQLite opens UTF-8 file names only).
    """
    located = _locate(explicit)
    try:
        str(located.path).encode("utf-8")
    except UnicodeEncodeError:
        raise StorageError(
            f"data dir {located.describe()!r} is not UTF-8 text, which SQLite cannot open; "
            "rename the folder or give another"
        ) from None
    return located


def _locate(explicit: str | os.PathLike[str] | None) -> LocatedDataDir:
    if explicit:
        return LocatedDataDir(Path(explicit).expanduser().absolute(), DataDirOrigin.FLAG)
    path = path_from_env(DATA_DIR_ENV, "folder")
    if path is not None:
        return LocatedDataDir(path, DataDirOrigin.ENV)
    default = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return LocatedDataDir(default, DataDirOrigin.DEFAULT)


def path_from_env(name: str, what: str) -> Path | None:
    """The absolute path the environment variable ``name`` holds (``~`` expanded), or
    None when it is unset or empty; ``what`` it names ("folder", "socket") is for the
    refusal.

    Raises:
        InvalidParams: the variable holds a relative path (``field`` names it, ``rule``
            is ``absolute``): a setting to fix, as a bad value in the settings file is,
            not a fault of the disk. It would name another ``what`` from every working
            directory, and MCP clients and the app start Ambry wherever they run, so it
            is refused rather than resolved.
    """
    env = os.environ.get(name)
    if not env:
        return None
    path = Path(env).expanduser()
    if not path.is_absolute():
        raise InvalidParams(
            f"{name}={env} is a relative path, so it would name another {what} "
            "in every working directory (MCP clients and the app start Ambry elsewhere); "
            f"set it to an absolute path, such as {Path(env).absolute()}",
            field=name,
            rule="absolute",
        )
    return path


def resolve_data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data directory's path: see :func:`locate_data_dir`."""
    return locate_data_dir(explicit).path


def creatable(path: Path) -> str | None:
    """Why ``path``, which does not exist, could not be created; None if it could."""
    parent = path
    while not parent.exists():
        if parent.parent == parent:
            return f"{parent} does not exist"
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is not a directory"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable by you"
    return None


class DataDir:
    """The layout of one data directory."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def memory_dir(self) -> Path:
        return self.root / "memory"

    def group_db(self, group: str) -> Path:
        """The database file of ``group``.

        Raises:
            InvalidGroup: the name is unusable, or another group's name differs from
                it only in letter case (one file on Windows and macOS, two elsewhere).
        """
        path = self.memory_dir / f"{validate_group(group)}.sqlite"
        folded = group.casefold()
        for other in self.groups():
            if other != group and other.casefold() == folded:
                raise InvalidGroup(
                    f"group {group!r} differs only in letter case from the existing group "
                    f"{other!r}, and some systems cannot tell them apart; use {other!r} "
                    "or choose another name",
                    field="group",
                    rule="unique ignoring case",
                )
        return path

    @property
    def pending_dir(self) -> Path:
        """Notes of whole-file writes in progress (see :mod:`core.storage.pending_files`)."""
        return self.root / "pending"

    @property
    def config_file(self) -> Path:
        return self.root / "config.json"

    @property
    def token_file(self) -> Path:
        return self.root / "agent.token"

    def groups(self) -> list[str]:
        """Names of the groups that have a database, sorted.

        Raises:
            StorageError: the ``memory`` folder cannot be listed (its mode, say):
                its groups are not there to see, which is not "no groups".
        """
        if not self.memory_dir.is_dir():
            return []
        try:
            with os.scandir(self.memory_dir) as found:
                names = [e.name[: -len(".sqlite")] for e in found if e.name.endswith(".sqlite")]
        except OSError as exc:
            why = access_problem(self.memory_dir, write=False) or explain(
                exc, self.memory_dir, write=False
            )
            raise FileError(
                f"cannot list the groups in {self.memory_dir}: {why}", fix=why.fix
            ) from exc
        return sorted(n for n in names if GROUP_PATTERN.fullmatch(n))

    def ensure(self) -> None:
        """Create the directories owner-only, tighten older ones, clear interrupted writes,
        and name the key's keyring entry in the folder so that it moves with it."""
        for path in (self.root, self.memory_dir):
            try:
                path.mkdir(parents=True, exist_ok=True, mode=0o700)
            except OSError as exc:
                where = f" ({exc.filename})" if exc.filename and exc.filename != str(path) else ""
                raise StorageError(
                    f"cannot create data dir {self.root}: {exc.strerror or exc}{where}; pass "
                    f"--data-dir DIR or set {DATA_DIR_ENV} to a directory you can write to"
                ) from exc
            tighten(path)
        pending_files.sweep(self.pending_dir)
        pin_key_account(self.root, fresh=not self.groups())
        # Earlier releases kept a 90 MB optimised copy of the embedding model here;
        # the model Ambry ships now loads as small without it.
        shutil.rmtree(self.root / "model-cache", ignore_errors=True)


def default_socket_path() -> Path:
    """The agent socket: ``AMBRY_SOCKET`` or ``<user runtime dir>/ambry/agent.sock``.

    Raises:
        InvalidParams: ``AMBRY_SOCKET`` holds a relative path (see :func:`path_from_env`):
            the app, ``ambry serve`` and an agent's client, each started in another
            folder, would not meet on one socket.
    """
    return path_from_env(SOCKET_ENV, "socket") or runtime_socket_path()


def socket_origin() -> str | None:
    """What names the agent socket when no option does: ``AMBRY_SOCKET`` if it is set,
    None for the runtime folder's."""
    return SOCKET_ENV if os.environ.get(SOCKET_ENV) else None


def runtime_socket_path() -> Path:
    """``<user runtime dir>/ambry/agent.sock``: the socket in a folder that is Ambry's own."""
    with warnings.catch_warnings(record=True) as said:
        # Without XDG_RUNTIME_DIR (an ssh login, a container) platformdirs picks a
        # folder under /tmp and warns on stderr, file path and all; the log has it.
        warnings.simplefilter("always")
        runtime = platformdirs.user_runtime_dir(APP_NAME.lower(), appauthor=False)
    for warning in said:
        log.info("agent socket folder: %s", warning.message)
    return Path(runtime) / "agent.sock"
