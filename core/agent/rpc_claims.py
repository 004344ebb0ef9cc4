"""Agent protocol methods for claims (docs/claims.md, docs/protocol.md).

The agent's side only: propose (always a candidate), search (every result
labelled with its status) and verify (read-only). No method here, or anywhere
in the protocol, accepts, rejects, defers or retracts a claim or changes the
claims mode: those are the person's, in the app and the CLI.
"""

from __future__ import annotations

from typing import Any

from core.agent.dispatch import Connection, Dispatcher
from core.agent.listings import claim_search
from core.claims import gate, records
from core.claims.verify import verify_claim
from core.model.changes import Changes
from core.policy.manifest import validate_args
from core.storage import audit
from core.storage.audit import Action


def _claim_propose(conn: Connection, params: dict[str, Any]) -> Any:
    return gate.propose(conn.service, conn.caller, params).to_dict()


def _claim_search(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("claim_search", params)
    caller = conn.caller
    store = conn.service.store_for(caller.group)
    page, result = claim_search(
        conn.service,
        caller.group,
        query=args.get("query") or "",
        status=args.get("status"),
        kind=args.get("kind"),
        limit=args["limit"],
        offset=args["offset"],
    )
    audit.record(
        store,
        Action.SEARCH,
        caller.actor,
        session_id=caller.session_id,
        count=len(page.rows),
        read=True,
        what="claims",
    )
    conn.service.emit(Changes(group=store.group, audit=True))
    return result


def _claim_verify(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("claim_verify", params)
    store = conn.service.store_for(conn.caller.group)
    return verify_claim(store, records.get_claim(store, args["id"])).to_dict()


def register(dispatcher: Dispatcher) -> None:
    """Add ``claim_propose``, ``claim_search`` and ``claim_verify``."""
    dispatcher.register_method("claim_propose", _claim_propose)
    dispatcher.register_method("claim_search", _claim_search)
    dispatcher.register_method("claim_verify", _claim_verify)
