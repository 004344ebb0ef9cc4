"""Ambry's own secrets and the files that hold them, kept out of what it stores.

An agent can ask for a receipt of any file it can name, so attaching must
refuse the files that would hand it what it should never see: the data
directory (databases, backups, the agent token, the config) and the files
where the platform keyring keeps Ambry's encryption key with everyone
else's secrets. The agent token's value is also cut out of any text that
quotes it (:func:`known_secrets`), wherever that text comes from.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import platformdirs

from core.model.errors import Forbidden
from core.storage.paths import APP_NAME

_token_cache: dict[Path, tuple[tuple[int, int], tuple[str, ...]]] = {}


def known_secrets(data_root: Path) -> tuple[str, ...]:
    """Exact values no field may store: today the agent token of ``data_root``.

    The file is read again only when it changes (``ambry token --regenerate``).
    """
    path = data_root / "agent.token"
    try:
        st = path.stat()
    except OSError:
        return ()
    stamp = (st.st_mtime_ns, st.st_size)
    cached = _token_cache.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        token = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return ()
    values = (token,) if token else ()
    _token_cache[path] = (stamp, values)
    return values


def keyring_dirs() -> list[Path]:
    """Where the platform keyrings keep their files, on this platform."""
    home = Path.home()
    dirs: list[Path] = []
    if sys.platform == "darwin":
        dirs += [home / "Library" / "Keychains", Path("/Library/Keychains")]
    elif os.name == "nt":
        for var in ("APPDATA", "LOCALAPPDATA"):
            base = os.environ.get(var)
            if base:
                ms = Path(base) / "Microsoft"
                dirs += [ms / "Credentials", ms / "Protect", ms / "Vault"]
    else:
        data = Path(os.environ.get("XDG_DATA_HOME") or home / ".local" / "share")
        dirs += [
            data / "keyrings",  # GNOME Keyring (Secret Service)
            data / "kwalletd",  # KWallet 5 and 6
            home / ".kde" / "share" / "apps" / "kwallet",
            home / ".kde4" / "share" / "apps" / "kwallet",
        ]
    # keyrings.alt and keyrings.cryptfile keep a file in the keyring package's data dir.
    dirs.append(Path(platformdirs.user_data_dir("python_keyring", appauthor=False)))
    return dirs


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _own_files(data_root: Path) -> list[Path]:
    files = [data_root / "agent.token", data_root / "config.json"]
    memory = data_root / "memory"
    with contextlib.suppress(OSError):
        files += [p for p in memory.iterdir() if p.is_file()]
    return files


def check_attachable(resolved: str, data_root: Path) -> None:
    """Refuse a file (its resolved path) that is Ambry's own or a keyring's.

    Hard links are caught too: a file that is the same inode as one of Ambry's
    own files is refused wherever it is linked.

    Raises:
        Forbidden: the file lives in a protected place.
    """
    roots = {
        _real(data_root): "Ambry's data directory (memories, backups, the agent token)",
        _real(Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))): (
            "Ambry's data directory (memories, backups, the agent token)"
        ),
        _real(Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))): (
            "Ambry's configuration"
        ),
    }
    for d in keyring_dirs():
        roots[_real(d)] = "the platform keyring's files"
    for root, what in roots.items():
        if _inside(resolved, root):
            raise _refused(resolved, what)
    try:
        target = os.stat(resolved)
    except OSError:
        return  # inspecting the file reports why it cannot be read
    for own in _own_files(data_root):
        try:
            st = own.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
            raise _refused(resolved, "a link to one of Ambry's own files")


def _refused(path: str, what: str) -> Forbidden:
    return Forbidden(
        f"{path} is in {what}; Ambry does not make receipts of its own files or of "
        "keyring files, which hold secrets. Attach a copy without credentials instead",
        field="path",
    )
