"""Agent protocol methods for attachment receipts (docs/protocol.md, docs/attachments.md).

The link's session and thread come from the connection's session, never from
call arguments, like every other write's provenance.
"""

from __future__ import annotations

import os
from typing import Any, Final

from core.agent.dispatch import Connection, Dispatcher, StringParam, check_string_params
from core.attachments import attach as attachments
from core.attachments.receipts import get_receipt, list_receipts
from core.model.errors import InvalidParams

#: Longest observation accepted; what is kept is a shorter one-line excerpt.
MAX_OBSERVATION_INPUT: Final = 4 * attachments.MAX_OBSERVATION_CHARS
DEFAULT_LIST_LIMIT: Final = 20
MAX_LIST_LIMIT: Final = 100


def _attachment_receipt(conn: Connection, params: dict[str, Any]) -> Any:
    args = check_string_params(
        "attachment_receipt",
        params,
        (
            StringParam("path", required=True, max_length=attachments.MAX_PATH_CHARS),
            StringParam("turn", max_length=attachments.MAX_TURN_CHARS),
            StringParam("observation", max_length=MAX_OBSERVATION_INPUT),
        ),
    )
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
    args = check_string_params(
        "attachment_verify", params, (StringParam("id", required=True, max_length=64),)
    )
    caller = conn.caller
    result = attachments.verify(conn.service, caller, args["id"])
    receipt = get_receipt(conn.service.store_for(caller.group), args["id"])
    return {**result.to_dict(), "state_line": receipt.state_line}


def _attachment_list(conn: Connection, params: dict[str, Any]) -> Any:
    rest = dict(params)
    limit = rest.pop("limit", DEFAULT_LIST_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidParams(
            "attachment_list: limit must be of type integer", field="limit", rule="type"
        )
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidParams(
            f"attachment_list: limit must be between 1 and {MAX_LIST_LIMIT}",
            field="limit",
            rule="range",
        )
    args = check_string_params("attachment_list", rest, (StringParam("thread", max_length=200),))
    store = conn.service.store_for(conn.caller.group)
    receipts = list_receipts(store, args.get("thread"), limit)
    return {"receipts": [r.to_dict() for r in receipts]}


def register(dispatcher: Dispatcher) -> None:
    """Add ``attachment_receipt``, ``attachment_verify`` and ``attachment_list``."""
    dispatcher.register_method("attachment_receipt", _attachment_receipt)
    dispatcher.register_method("attachment_verify", _attachment_verify)
    dispatcher.register_method("attachment_list", _attachment_list)
