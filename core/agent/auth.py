"""The agent token: a shared secret in ``<data dir>/agent.token``.

Whoever can read the token file can talk to the agent socket. The file holds
one URL-safe token (256 bits of randomness), is owner-only (0600) and is
written atomically, so a reader never sees half a token. The server reads the
file again on every ``hello``: regenerating the token shuts out new sessions
at once, without a restart, while sessions already open keep working.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
import stat
from pathlib import Path

from core.model.config import atomic_write
from core.model.errors import StorageError, Unauthorized

log = logging.getLogger(__name__)

#: Bytes of randomness in a token (``secrets.token_urlsafe`` encodes them as ~43 chars).
TOKEN_BYTES = 32


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def regenerate_token(path: Path) -> str:
    """Write a fresh token to ``path`` (0600) and return it; the old one stops working."""
    token = new_token()
    try:
        atomic_write(path, (token + "\n").encode("ascii"), mode=0o600)
    except OSError as exc:
        raise StorageError(f"cannot write the agent token {path}: {exc}") from exc
    return token


def read_token(path: Path) -> str:
    """The token stored at ``path``.

    Raises:
        Unauthorized: there is no token file yet (nothing has served agents here).
        StorageError: the file exists but cannot be read or is empty.
    """
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError as exc:
        raise Unauthorized(
            f"no agent token at {path}; start `ambry serve` or the Ambry app once, "
            "or run `ambry token` to create it"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read the agent token {path}: {exc}") from exc
    token = text.strip()
    if not token:
        raise StorageError(f"the agent token file {path} is empty; run `ambry token --regenerate`")
    _tighten(path)
    return token


def load_or_create_token(path: Path) -> str:
    """The token at ``path``, creating the file on first use."""
    if not path.exists():
        log.info("creating agent token %s", path)
        return regenerate_token(path)
    return read_token(path)


def token_matches(expected: str, given: object) -> bool:
    """Compare in constant time, so response timing leaks nothing about the token."""
    if not isinstance(given, str):
        return False
    # compare_digest refuses non-ASCII str; bytes compare any input safely.
    return hmac.compare_digest(
        expected.encode("utf-8"), given.encode("utf-8", errors="surrogatepass")
    )


def _tighten(path: Path) -> None:
    """Put back owner-only permissions if something loosened them."""
    if os.name != "posix":
        return
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            log.warning("agent token %s was readable by others (mode %o); fixing", path, mode)
            path.chmod(0o600)
    except OSError as exc:
        log.warning("cannot check permissions of %s: %s", path, exc)
