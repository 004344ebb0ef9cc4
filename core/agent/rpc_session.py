"""Agent protocol methods for the session: ``hello``, ``tools/list`` and ``session_end``."""

from __future__ import annotations

import logging
from typing import Any, Final

from core import __version__
from core.agent.auth import read_token, token_matches
from core.agent.dispatch import Connection, Dispatcher, StringParam, check_string_params
from core.continuity import context as continuity
from core.continuity import session_handoffs
from core.model.entries import Actor
from core.model.errors import AmbryError, Conflict, InvalidParams, Unauthorized
from core.policy.manifest import load_manifest, validate_args
from core.policy.ratelimit import agent_key
from core.storage.paths import DEFAULT_GROUP, validate_group

log = logging.getLogger(__name__)

#: Longest client name kept in the sessions table.
MAX_CLIENT_CHARS: Final = 200
#: Bumped when a change would break existing clients.
PROTOCOL_VERSION: Final = 1


def _hello(conn: Connection, params: dict[str, Any]) -> Any:
    args = check_string_params(
        "hello",
        params,
        (
            StringParam("token", required=True),
            StringParam("group"),
            StringParam("client", max_length=MAX_CLIENT_CHARS),
            StringParam("thread", max_length=250),
        ),
    )
    if "thread" in args and not args["thread"].strip():
        # As every thread param: not read as an empty title ("title must not be empty").
        raise InvalidParams(
            "hello: thread must not be empty: give a thread id (thr- and 12 hex digits) or "
            "its title, or leave it out",
            field="thread",
            rule="minLength",
        )
    if conn.session is not None:
        raise Conflict(
            f"this connection already has session {conn.session.session_id}; "
            "call session_end first or open another connection",
            session_id=conn.session.session_id,
        )
    token_file = conn.dispatcher.token_file
    if not token_matches(read_token(token_file), args["token"]):
        conn.failed_hellos += 1
        log.warning("agent hello refused: wrong token (%d on this connection)", conn.failed_hellos)
        raise Unauthorized(f"wrong token; use the one in {token_file}")
    group = validate_group(args.get("group", DEFAULT_GROUP))
    client = args.get("client", "")
    # The agent is its token and client: a new session shares the same rate windows.
    agent = agent_key(args["token"], client)
    session = conn.service.open_session(group, Actor.AGENT, client, agent_key=agent)
    try:
        entry = continuity.enter_thread(conn.service, session, args.get("thread"))
    except AmbryError:
        # A bad thread fails the hello as a whole: no half-open session is left.
        conn.service.end_session(session, graceful=False)
        raise
    conn.session = entry.caller
    return {
        "session_id": session.session_id,
        "group": session.group,
        "server_version": __version__,
        "protocol_version": PROTOCOL_VERSION,
        "thread": None if entry.thread is None else entry.thread.to_dict(),
        "session_handoff": (
            None if entry.session_handoff is None else entry.session_handoff.to_dict()
        ),
    }


def _tools_list(conn: Connection, params: dict[str, Any]) -> Any:
    check_string_params("tools/list", params, ())
    return {"tools": [tool.to_dict() for tool in load_manifest().values()]}


def _session_end(conn: Connection, params: dict[str, Any]) -> Any:
    # The handoff's size limit (64 KiB of UTF-8) is checked by session_handoffs: TooLarge.
    args = validate_args("session_end", params)
    caller = conn.caller
    stored = session_handoffs.end_session_with_handoff(conn.service, caller, args.get("handoff"))
    conn.session = None
    return {"session_id": caller.session_id, "ended": True, "handoff_stored": stored is not None}


def register(dispatcher: Dispatcher) -> None:
    dispatcher.register_method("hello", _hello, needs_session=False)
    dispatcher.register_method("tools/list", _tools_list)
    dispatcher.register_method("session_end", _session_end)
