"""Ambry's Python client, importable wherever Ambry is installed: ``ambry.client``.

The client itself is :mod:`core.agent.client`. An installed wheel keeps ``core``
inside this package (``ambry/_app/``, see ``ambry/__init__.py``), so a script
cannot import it by that name; this module puts Ambry's packages on the path
(:func:`ambry.use_app_dir`) and gives the client and the errors it raises::

    from ambry.client import AmbryClient

    with AmbryClient() as ambry:
        ambry.hello(group="main", client="my-agent")
        ambry.store("preference", "Prefers metric units", tags=["units"])

Importing it loads neither Qt nor the MCP SDK.
"""

from __future__ import annotations

from ambry import use_app_dir

use_app_dir()

from core.agent.client import (  # noqa: E402
    DEFAULT_TIMEOUT,
    AmbryClient,
    RemoteError,
    ServerUnavailable,
)
from core.model.errors import (  # noqa: E402
    AmbryError,
    Conflict,
    Forbidden,
    InvalidParams,
    NotFound,
    RateLimited,
    Refused,
    StorageError,
    Timeout,
    TooLarge,
    Unauthorized,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "AmbryClient",
    "AmbryError",
    "Conflict",
    "Forbidden",
    "InvalidParams",
    "NotFound",
    "RateLimited",
    "Refused",
    "RemoteError",
    "ServerUnavailable",
    "StorageError",
    "Timeout",
    "TooLarge",
    "Unauthorized",
]
