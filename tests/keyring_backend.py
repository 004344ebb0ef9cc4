"""A real, in-process keyring backend for tests (machines here have no OS keyring)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from keyring.backend import KeyringBackend


class MemoryKeyring(KeyringBackend):
    """Keeps passwords in a dict for the life of the test process."""

    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.passwords: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.passwords.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.passwords[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.passwords.pop((service, username), None)


class PlainFileKeyring(KeyringBackend):
    """Keeps passwords base64-encoded in a file, as keyrings.alt's PlaintextKeyring
    does; like it, ranked below 1, the keyring library's "not recommended"."""

    priority = 0.5

    def __init__(self, path: Path) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.path = path

    def _load(self) -> dict[str, str]:
        return json.loads(self.path.read_text()) if self.path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        found = self._load().get(f"{service}/{username}")
        return None if found is None else base64.b64decode(found).decode()

    def set_password(self, service: str, username: str, password: str) -> None:
        stored = self._load()
        stored[f"{service}/{username}"] = base64.b64encode(password.encode()).decode()
        self.path.write_text(json.dumps(stored))

    def delete_password(self, service: str, username: str) -> None:
        stored = self._load()
        stored.pop(f"{service}/{username}", None)
        self.path.write_text(json.dumps(stored))
