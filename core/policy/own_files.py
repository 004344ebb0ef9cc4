"""Ambry's own secrets and the files that hold them, kept out of what it stores.

An agent can ask for a receipt of any file it can name, so attaching must
refuse the files that would hand it what it should never see: the data
directory (databases, backups, the agent token, the config) and the files
where the platform keyring keeps Ambry's encryption key with everyone
else's secrets. The agent token's value is also cut out of any text that
quotes it (:func:`known_secrets`), wherever that text comes from.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

from core.model.errors import Forbidden
from core.storage.paths import APP_NAME

_KEYRING = "the platform keyring's files"

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


def _same_file_in(root: str, target: os.stat_result) -> str | None:
    """The path under ``root`` of a file that is ``target`` (a hard link to it), or None.

    Symbolic links under ``root`` are not followed (``os.walk``'s default): they
    are not the data the folder holds, and following them could walk the disk.
    """
    wanted = (target.st_dev, target.st_ino)
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == wanted:
                return path
    return None


def check_attachable(resolved: str, data_root: Path) -> None:
    """Refuse a file (its resolved path) that is Ambry's own or a keyring's.

    Hard links are caught too: a file with more than one name is looked for,
    by identity (device and inode), among every file in the protected places,
    so a second name for the encryption key's entry name, a backup or a
    database is refused wherever it is made.

    Raises:
        Forbidden: the file lives in a protected place, or is a hard link to a
            file that does.
    """
    data_dir = "Ambry's data directory"
    roots = {
        _real(data_root): data_dir,
        _real(Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))): data_dir,
        _real(Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))): (
            "Ambry's configuration folder"
        ),
    }
    for d in keyring_dirs():
        roots[_real(d)] = _KEYRING
    for root, what in roots.items():
        if _inside(resolved, root):
            raise _refused(f"{resolved} is in {what}", "Attach a copy without credentials instead")
    try:
        target = os.stat(resolved)
    except OSError:
        return  # inspecting the file reports why it cannot be read
    if target.st_nlink < 2:
        return  # a file with one name is a hard link to nothing else
    for root, what in roots.items():
        found = _same_file_in(root, target)
        if found is not None:
            whose = "a keyring file" if what == _KEYRING else "one of Ambry's own files"
            raise _refused(
                f"{resolved} is a link to {whose} ({os.path.relpath(found, root)} in {what})",
                "Attach the original document instead",
            )


def _refused(reason: str, hint: str) -> Forbidden:
    return Forbidden(
        f"{reason}; Ambry does not make receipts of its own files or of keyring files, "
        f"which hold secrets. {hint}",
        field="path",
    )
