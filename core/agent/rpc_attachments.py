"""Agent protocol methods for attachment receipts (docs/protocol.md, docs/attachments.md).

The link's session and thread come from the connection's session, never from
call arguments, like every other write's provenance.
"""

from __future__ import annotations

import os
from typing import Any

from core.agent.dispatch import Connection, Dispatcher
from core.agent.listings import attachment_list
from core.attachments import attach as attachments
from core.attachments.receipts import get_receipt
from core.model.errors import InvalidParams
from core.policy.manifest import validate_args


def _attachment_receipt(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("attachment_receipt", params)
    path = args["path"]
    # The server's working directory is not the agent's, so a relative path is ambiguous.
    if not os.path.isabs(path):
        raise InvalidParams(
            "attachment_receipt: path must be absolute", field="path", rule="absolute"
        )
    outcome = attachments.attach(
        conn.service,
        conn.caller,
        path,
        turn=args.get("turn"),
        observation=args.get("observation", ""),
    )
    return outcome.to_dict()


def _attachment_verify(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("attachment_verify", params)
    caller = conn.caller
    result = attachments.verify(conn.service, caller, args["id"])
    receipt = get_receipt(conn.service.store_for(caller.group), args["id"])
    return {**result.to_dict(), "state_line": receipt.state_line}


def _attachment_list(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("attachment_list", params)
    # An id or a title, as every other method's thread argument takes.
    _, result = attachment_list(
        conn.service,
        conn.caller.group,
        args.get("thread"),
        limit=args["limit"],
        offset=args["offset"],
    )
    return result


def register(dispatcher: Dispatcher) -> None:
    """Add ``attachment_receipt``, ``attachment_verify`` and ``attachment_list``."""
    dispatcher.register_method("attachment_receipt", _attachment_receipt)
    dispatcher.register_method("attachment_verify", _attachment_verify)
    dispatcher.register_method("attachment_list", _attachment_list)
