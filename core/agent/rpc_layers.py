"""Agent protocol methods for layered recall: ``recall`` and ``dig`` (docs/layers.md).

Both read only; params are validated against their manifest schemas by
core.layers.tools, which the CLI shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.layers.tools import dig_tool, recall_tool

if TYPE_CHECKING:
    from core.agent.dispatch import Connection, Dispatcher


def _recall(conn: Connection, params: dict[str, Any]) -> Any:
    return recall_tool(conn.service, conn.caller, params).to_dict()


def _dig(conn: Connection, params: dict[str, Any]) -> Any:
    return dig_tool(conn.service, conn.caller, params)


def register(dispatcher: Dispatcher) -> None:
    """Add the layer methods to ``dispatcher`` (both need a session)."""
    dispatcher.register_method("recall", _recall)
    dispatcher.register_method("dig", _dig)
