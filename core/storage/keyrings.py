"""Whether the keyring backend in use can hold Ambry's data key.

The ``keyring`` library picks the backend with the highest ``priority``; it calls
a backend of priority 1 or more "recommended" and anything below that "suitable
but not recommended". The ones below are file or null backends: keyrings.alt's
``PlaintextKeyring`` writes the key base64-encoded into a file beside the data
(``~/.local/share/python_keyring/keyring_pass.cfg``), and the null backend keeps
nothing. Ambry treats them as no keyring at all: the data key belongs in an OS
keyring (Secret Service, macOS Keychain, Windows Credential Locker), never in a
file on the same disk as the data it protects.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Any

#: Backends that keep keys as written, whatever priority a configuration gives them.
PLAIN_BACKENDS = frozenset({"keyrings.alt.file.PlaintextKeyring", "keyring.backends.null.Keyring"})


@dataclass(frozen=True)
class KeyringVerdict:
    """The backend in use (``module.Class``) and why it cannot hold the key (None if it can)."""

    name: str
    problem: str | None


def backend_name(backend: object) -> str:
    return f"{type(backend).__module__}.{type(backend).__name__}"


def os_keyring_fix() -> str:
    """What to do on this platform to give Ambry an OS keyring."""
    if sys.platform == "darwin":
        return "unlock the macOS Keychain (Keychain Access) for this account"
    if sys.platform == "win32":
        return "sign in to a Windows account whose Credential Locker is available"
    return (
        "install and unlock a Secret Service keyring (GNOME Keyring, or KWallet), "
        "e.g. sudo apt-get install gnome-keyring"
    )


def no_keyring_message(verdict: KeyringVerdict) -> str:
    """Why private and secret entries cannot be stored with ``verdict``'s backend."""
    return (
        "private and secret entries need an OS keyring to hold Ambry's encryption key, "
        f"and none is available: {verdict.problem}. On Linux install and unlock a Secret "
        "Service provider (GNOME Keyring or KWallet); on macOS the Keychain and on Windows "
        "the Credential Locker are used. A keyring that keeps keys in a plain file "
        "(keyrings.alt) is never used. Public entries keep working."
    )


def keyring_verdict() -> KeyringVerdict:
    """Whether the backend the ``keyring`` library uses now can hold the data key."""
    import keyring

    return _verdict(keyring.get_keyring())


@functools.lru_cache(maxsize=8)
def _verdict(backend: Any) -> KeyringVerdict:
    # Cached per backend object: a Secret Service backend's priority asks D-Bus.
    from keyring.backends import chainer, fail

    name = backend_name(backend)
    if isinstance(backend, fail.Keyring):
        return KeyringVerdict(name, "no keyring backend is installed or running")
    if isinstance(backend, chainer.ChainerBackend):
        # The chainer writes to the first of its backends, by priority.
        chained = list(backend.backends)
        if not chained:
            return KeyringVerdict(name, "no keyring backend is installed or running")
        backend = chained[0]
        name = backend_name(backend)
    if name in PLAIN_BACKENDS:
        return KeyringVerdict(name, f"{name} keeps keys unencrypted in a file")
    try:
        priority = float(backend.priority)
    except RuntimeError as exc:  # keyring's way of saying a backend cannot work here
        return KeyringVerdict(name, f"{name} cannot work here: {exc}")
    if priority < 1:
        return KeyringVerdict(
            name, f"{name} is not one; the keyring library ranks it below its recommended backends"
        )
    return KeyringVerdict(name, None)
