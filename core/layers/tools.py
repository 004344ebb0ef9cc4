"""``recall`` and ``dig`` as every front end calls them: validated, run, audited.

The socket and MCP (core.agent.rpc_layers) and the CLI (core.cli.layers) share
these, so the manifest's schema, the limits and the audit row are the same for
all. Both are reads: the audit row is a ``search`` with its scope and a count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.layers.links import dig
from core.layers.recall import DEFAULT_BUDGET, RecallResult, recall
from core.model.changes import Changes
from core.model.entries import utc_now
from core.policy.manifest import validate_args
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace


def _audit(service: Workspace, caller: Caller, scope: str, count: int) -> None:
    store = service.store_for(caller.group)
    with store.relaxed_transaction():
        audit.record(
            store,
            Action.SEARCH,
            caller.actor,
            session_id=caller.session_id,
            count=count,
            scope=scope,
        )
    service.emit(Changes(group=caller.group, audit=True))


def recall_tool(service: Workspace, caller: Caller, args: dict[str, Any]) -> RecallResult:
    """``recall {text, budget?}``: core.layers.recall for the caller's group."""
    args = validate_args("recall", args)
    store = service.store_for(caller.group)
    result = recall(store, args["text"], utc_now(), budget=int(args.get("budget", DEFAULT_BUDGET)))
    _audit(service, caller, "layers", len(result.items))
    return result


def dig_tool(service: Workspace, caller: Caller, args: dict[str, Any]) -> dict[str, Any]:
    """``dig {id, depth?}``: the links around a memory or summary, at most 3 hops."""
    args = validate_args("dig", args)
    found = dig(service, caller.group, args["id"], int(args.get("depth", 2)))
    _audit(service, caller, "links", len(found["nodes"]))
    return found
