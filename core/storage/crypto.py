"""Encryption at rest for private and secret entries (AES-256-GCM).

The 32-byte data key lives in the OS keyring (``keyring``), never in the
database or a config file. Each write uses a fresh 96-bit nonce and the entry id
as associated data, so a ciphertext moved onto another entry fails to decrypt.
Dedup keys of encrypted entries are keyed hashes (HMAC-SHA256), so the database
holds no plain hash of private text either.

The key's keyring entry is named at random when a data dir is made, and the
name is kept in the data dir's ``key-name`` file, so a data dir that is moved,
renamed or copied still finds its key; a data dir an earlier version made keeps
the entry named after its path.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import re
import secrets
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core.model.config import atomic_write
from core.model.errors import StorageError
from core.storage.keyrings import keyring_verdict, no_keyring_message

KEYRING_SERVICE = "Ambry"
PREFIX = "enc1:"
NONCE_BYTES = 12
#: The file in a data dir naming its key's keyring entry (a name, never the key).
KEY_NAME_FILE = "key-name"
_ACCOUNT = re.compile(r"data-key-[0-9a-f]{16}")

log = logging.getLogger(__name__)


class KeyUnavailable(StorageError):
    """No keyring backend can hold the data key; public entries keep working."""

    code = "key_unavailable"


class KeyMissing(KeyUnavailable):
    """The keyring works but lacks the key that sealed this data dir's private entries."""


class DecryptionFailed(StorageError):
    code = "decryption_failed"


def path_account(data_root: Path) -> str:
    """The entry earlier versions named after the folder's path (a data dir they made).
    ``fsencode``: a path that is not UTF-8 still has bytes to hash."""
    digest = hashlib.sha256(os.fsencode(data_root.resolve())).hexdigest()[:16]
    return f"data-key-{digest}"


def _pinned_account(data_root: Path) -> str | None:
    try:
        name = (data_root / KEY_NAME_FILE).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if _ACCOUNT.fullmatch(name) else None


def key_account(data_root: Path) -> str:
    """The keyring entry holding the key of ``data_root``: the one its ``key-name``
    file names, else (a data dir an earlier version made) the one of its path."""
    return _pinned_account(data_root) or path_account(data_root)


def describe_key_entry(data_root: Path) -> str:
    """Which keyring entry the key of ``data_root`` is looked for in, for a message."""
    pinned = _pinned_account(data_root)
    if pinned is not None:
        return f"entry Ambry/{pinned}, named in the folder's {KEY_NAME_FILE} file"
    if (data_root / KEY_NAME_FILE).exists():
        return (
            f"its {KEY_NAME_FILE} file does not name an entry: it should hold data-key- and "
            "16 hex digits, the name of the entry in the keyring"
        )
    return (
        "an entry named after the folder's path when its key was made, which is not this "
        "path if the folder was moved since"
    )


def _write_pin(data_root: Path, account: str) -> None:
    target = data_root / KEY_NAME_FILE
    try:
        atomic_write(target, (account + "\n").encode("ascii"))
    except OSError as exc:
        # A read-only data dir keeps the path's entry, which is what it would read anyway.
        log.info("cannot write %s: %s", target, exc)


def _new_pin(data_root: Path) -> str | None:
    """Name a new key's entry at random in ``key-name``; None if the file cannot be
    written (the key then takes the path's name, which the folder finds in place)."""
    name = f"data-key-{secrets.token_hex(8)}"
    _write_pin(data_root, name)
    return name if _pinned_account(data_root) == name else None


def pin_key_account(data_root: Path, *, fresh: bool) -> None:
    """Name a ``fresh`` data dir's keyring entry in its ``key-name`` file, at random:
    the key then follows the folder wherever it is moved, and no other folder (one
    made later where this one was, say) ever finds it.

    A data dir an earlier version made keeps the entry named after its path; its
    ``key-name`` is written once that key is found or made (:func:`load_key`).
    """
    if fresh and _pinned_account(data_root) is None:
        _new_pin(data_root)


def _lookup(data_root: Path) -> tuple[str, str | None]:
    """The keyring entry of ``data_root``'s key and its value (None if no entry has it)."""
    import keyring

    account = key_account(data_root)
    return account, keyring.get_password(KEYRING_SERVICE, account)


def remember_key_name(data_root: Path) -> None:
    """Name in ``key-name`` the entry a data dir an earlier version made keeps its key
    in (its path's); call it once :func:`key_present` has seen the key there. Then the
    key follows the folder. Nothing changes where ``key-name`` is there already."""
    if _pinned_account(data_root) is None:
        _write_pin(data_root, path_account(data_root))


def key_present(data_root: Path) -> bool:
    """Whether the keyring holds the key of ``data_root``; changes nothing.

    Raises:
        KeyUnavailable: the keyring refused.
    """
    import keyring.errors

    try:
        return _lookup(data_root)[1] is not None
    except keyring.errors.KeyringError as exc:
        raise KeyUnavailable(f"the OS keyring refused access to Ambry's key: {exc}") from exc


def require_os_keyring() -> None:
    """Refuse to seal anything unless an OS keyring holds the key.

    Raises:
        KeyUnavailable: no keyring, or one that keeps keys in a plain file
            (:mod:`core.storage.keyrings`).
    """
    verdict = keyring_verdict()
    if verdict.problem is not None:
        raise KeyUnavailable(no_keyring_message(verdict))


def load_key(data_root: Path, *, create: bool) -> bytes | None:
    """The data key of ``data_root`` from the OS keyring; created on first use if asked.

    The entry is the one ``key-name`` names, else (a data dir an earlier version
    made) the one of the current path, which ``key-name`` then names from then on.
    A new key gets a random entry name, written to ``key-name`` first.

    Raises:
        KeyUnavailable: no OS keyring (none, or one that keeps keys in a plain
            file: see :mod:`core.storage.keyrings`), or the keyring refused.
    """
    import keyring
    import keyring.errors
    from keyring.backends import fail

    if create:
        require_os_keyring()
    elif isinstance(keyring.get_keyring(), fail.Keyring):
        raise KeyUnavailable(no_keyring_message(keyring_verdict()))
    # A key an earlier version put in a plain-file keyring is still read, so its
    # memories can be read and exported; nothing new is sealed with it.
    pinned = _pinned_account(data_root)
    try:
        account, stored = _lookup(data_root)
        if stored is None:
            if not create:
                return None
            if pinned is None:
                pinned = _new_pin(data_root)
                account = pinned or account
            stored = base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()
            keyring.set_password(KEYRING_SERVICE, account, stored)
        if pinned is None:
            _write_pin(data_root, account)
    except keyring.errors.KeyringError as exc:
        raise KeyUnavailable(f"the OS keyring refused access to Ambry's key: {exc}") from exc
    key = base64.b64decode(stored)
    if len(key) != 32:
        raise KeyUnavailable(f"the keyring entry {KEYRING_SERVICE}/{account} is not a 256-bit key")
    return key


def is_encrypted(text: str) -> bool:
    return text.startswith(PREFIX)


def encrypt(key: bytes, plaintext: str, associated: str) -> str:
    nonce = os.urandom(NONCE_BYTES)
    sealed = AESGCM(key).encrypt(nonce, plaintext.encode("utf-8"), associated.encode())
    return PREFIX + base64.b64encode(nonce + sealed).decode()


def decrypt(key: bytes, token: str, associated: str) -> str:
    if not is_encrypted(token):
        raise DecryptionFailed("not an encrypted value")
    raw = base64.b64decode(token[len(PREFIX) :])
    try:
        plain = AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], associated.encode())
    except InvalidTag as exc:
        raise DecryptionFailed(
            f"entry {associated} cannot be decrypted with this machine's key "
            "(the keyring entry was replaced, or the data was tampered with)"
        ) from exc
    return plain.decode("utf-8")


def keyed_hash(key: bytes, text: str) -> str:
    """Dedup key for encrypted content: equal texts match, nothing is learnt without the key."""
    return hmac.new(
        key, b"ambry-dedup\0" + text.encode("utf-8", "surrogatepass"), hashlib.sha256
    ).hexdigest()
