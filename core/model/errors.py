"""Typed errors shared by every front end.

Each error carries a stable ``code`` (used by the agent protocol and the CLI's
``--json`` output) and a message that says what to change. Environment problems
(disk full, locked, read-only, corrupt) are :class:`StorageError`; anything that
is not an ``AmbryError`` is a bug and is reported as one.
"""

from __future__ import annotations

from typing import Any


class AmbryError(Exception):
    """Base class for errors a caller can act on."""

    code = "error"
    #: JSON-RPC error code used by the agent protocol.
    rpc_code = -32000

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = {k: v for k, v in data.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.data}


class InvalidParams(AmbryError):
    """An argument failed validation; ``field`` and ``rule`` say which and why."""

    code = "invalid_params"
    rpc_code = -32602

    def __init__(self, message: str, *, field: str | None = None, rule: str | None = None) -> None:
        super().__init__(message, field=field, rule=rule)
        self.field = field
        self.rule = rule

    @classmethod
    def bounds(
        cls, field: str, value: object, low: int, high: int, *, unit: str = ""
    ) -> InvalidParams:
        """``field`` must be a whole number from ``low`` to ``high``: the rule names the
        bound ``value`` broke (``minimum``, ``maximum``), as a schema check would, or
        ``type`` when it is no whole number at all."""
        if isinstance(value, bool) or not isinstance(value, int):
            rule = "type"
        else:
            rule = "minimum" if value < low else "maximum"
        return cls(f"{field} must be between {low} and {high}{unit}", field=field, rule=rule)


class InvalidGroup(InvalidParams):
    """A group name that could escape the data directory or is otherwise unusable."""

    code = "invalid_group"


class Unauthorized(AmbryError):
    code = "unauthorized"
    rpc_code = -32001


class NotFound(AmbryError):
    code = "not_found"
    rpc_code = -32002


class RateLimited(AmbryError):
    code = "rate_limited"
    rpc_code = -32003


class TooLarge(AmbryError):
    code = "too_large"
    rpc_code = -32004


class Conflict(AmbryError):
    code = "conflict"
    rpc_code = -32005


class Refused(AmbryError):
    """The write policy refused the content (for example a credential statement)."""

    code = "refused"
    rpc_code = -32006


class Forbidden(AmbryError):
    """The caller may not do this (for example an agent approving a candidate)."""

    code = "forbidden"
    rpc_code = -32007


class StorageError(AmbryError):
    """The environment stops the store from working: disk, permissions, corruption."""

    code = "storage_error"
    rpc_code = -32010


class SchemaTooNew(StorageError):
    """The database was written by a newer Ambry; it is left untouched."""

    code = "schema_too_new"


class Timeout(AmbryError):
    code = "timeout"
    rpc_code = -32011


class MigrationFailed(StorageError):
    """A schema upgrade step failed; ``backup`` names the copy taken before it."""

    code = "migration_failed"
