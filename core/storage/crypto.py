"""Encryption at rest for private and secret entries (AES-256-GCM).

The 32-byte data key lives in the OS keyring (``keyring``), never in the
database or a config file. Each write uses a fresh 96-bit nonce and the entry id
as associated data, so a ciphertext moved onto another entry fails to decrypt.
Dedup keys of encrypted entries are keyed hashes (HMAC-SHA256), so the database
holds no plain hash of private text either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core.model.errors import StorageError

KEYRING_SERVICE = "Ambry"
PREFIX = "enc1:"
NONCE_BYTES = 12


class KeyUnavailable(StorageError):
    """No keyring backend can hold the data key; public entries keep working."""

    code = "key_unavailable"


class DecryptionFailed(StorageError):
    code = "decryption_failed"


def _account(data_root: Path) -> str:
    # One key per data directory, so two data dirs on one machine never share a key.
    digest = hashlib.sha256(str(data_root.resolve()).encode()).hexdigest()[:16]
    return f"data-key-{digest}"


def load_key(data_root: Path, *, create: bool) -> bytes | None:
    """The data key of ``data_root`` from the OS keyring; created on first use if asked.

    Raises:
        KeyUnavailable: no usable keyring backend, or the keyring refused.
    """
    import keyring
    import keyring.errors
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        raise KeyUnavailable(
            "private and secret entries need an OS keyring to hold Ambry's encryption key, "
            "and none is available. On Linux install and unlock a Secret Service provider "
            "(GNOME Keyring or KWallet); on macOS and Windows the system keychain is used. "
            "Public entries keep working."
        )
    account = _account(data_root)
    try:
        stored = keyring.get_password(KEYRING_SERVICE, account)
        if stored is None:
            if not create:
                return None
            stored = base64.b64encode(AESGCM.generate_key(bit_length=256)).decode()
            keyring.set_password(KEYRING_SERVICE, account, stored)
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
