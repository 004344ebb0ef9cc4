"""Agent protocol methods for continuity: exchanges, threads and handoffs.

Each handler validates its params against its schema in the manifest (field and
rule in every -32602 error, as for the memory tools) and calls
core.continuity.context or core.continuity.episodes; provenance (group, session,
thread) comes from the connection's session, never from params. A ``thread``
param names a thread by id (``thr-...``) or by title.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.agent.listings import thread_list
from core.agent.search_results import ExchangeSearch
from core.continuity import context as continuity
from core.continuity import episodes, handoff_text, handoffs, session_handoffs, threads
from core.model.errors import InvalidParams
from core.policy.manifest import validate_args
from core.semantic.hybrid import parse_mode

if TYPE_CHECKING:
    from core.agent.dispatch import Connection, Dispatcher


def _thread_id(conn: Connection, ref: str | None) -> str | None:
    """The id of the thread ``ref`` names, else the session's current thread."""
    if ref is not None:
        return threads.find_thread(conn.service, conn.caller.group, ref).id
    return threads.session_thread(conn.service, conn.caller)


def _required_thread(conn: Connection, method: str, ref: str | None) -> str:
    thread_id = _thread_id(conn, ref)
    if thread_id is None:
        raise InvalidParams(
            f"{method}: name a thread, or open one first (hello thread or thread_open)",
            field="thread",
            rule="required",
        )
    return thread_id


def _exchange_log(conn: Connection, params: dict[str, Any]) -> Any:
    # Text over MAX_EXCHANGE_CHARS is TooLarge from the service, with the limit in its data.
    args = validate_args("exchange_log", params)
    logged = episodes.log_exchange(
        conn.service,
        conn.caller,
        args["speaker"],
        args["text"],
        args.get("turn"),
        name=args.get("name"),
        at=args.get("at"),
    )
    return logged.to_dict()


def _exchange_search(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("exchange_search", params)
    speaker = episodes.parse_speaker(args["speaker"]) if "speaker" in args else None
    mode = parse_mode(args.get("mode"))
    conn.service.look_for_vectors(conn.caller.group, mode)
    page = episodes.search_exchanges_page(
        conn.service,
        conn.caller,
        args.get("query", ""),
        thread_id=_thread_id(conn, args.get("thread")),
        speaker=speaker,
        limit=args["limit"],
        offset=int(args.get("offset") or 0),
        mode=mode,
    )
    return ExchangeSearch(page, conn.service.vectors_note(conn.caller.group, mode)).to_dict()


def _thread_list(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("thread_list", params)
    current = threads.session_thread(conn.service, conn.caller)
    _, result = thread_list(
        conn.service, conn.caller.group, current, limit=args["limit"], offset=args["offset"]
    )
    return result


def _thread_open(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("thread_open", params)
    if ("title" in args) == ("id" in args):
        raise InvalidParams(
            "thread_open: give exactly one of title (opens or creates) or id (opens)",
            field="title",
            rule="oneOf",
        )
    if "title" in args and threads.as_thread_id(args["title"]) is not None:
        # Not looked up as an id (not_found for a new title) nor created (a title
        # shaped like an id could never be found by its title).
        raise InvalidParams(
            "thread_open: "
            + threads.id_shaped_title("title", args["title"].strip())
            + "; to open the thread with that id, pass it as id",
            field="title",
            rule="pattern",
        )
    ref = args.get("title")
    if "id" in args:
        # In any case, as every thread param and hello's thread take it.
        ref = threads.as_thread_id(args["id"])
        if ref is None:
            raise InvalidParams(
                "thread_open: " + threads.not_a_thread_id("id", args["id"]),
                field="id",
                rule="pattern",
            )
    entry = continuity.enter_thread(conn.service, conn.caller, ref)
    # Later calls on this connection (attachments, exchanges) work in the new thread.
    conn.session = entry.caller
    return entry.to_dict()


#: Why a thread-less read holds no thread handoff, for the agent.
_NO_THREAD_NOTE = (
    "this session is in no thread: session_handoff is the note it received when it "
    "started; a thread's handoff needs thread, or thread_open first"
)


def _session_handoff_read(conn: Connection, args: dict[str, Any]) -> dict[str, Any]:
    """``handoff_read`` naming no thread in a session that is in none: the session
    handoff it took (sessions that never entered a thread share one scope), read again."""
    if "version" in args:
        raise InvalidParams(
            "handoff_read: version reads an earlier text of a thread's handoff; name a "
            "thread, or open one first (hello thread or thread_open)",
            field="thread",
            rule="required",
        )
    service, caller = conn.service, conn.caller
    delivered = session_handoffs.delivered_session_handoff(service, caller)
    if delivered is not None:
        delivered = session_handoffs.read_whole(service, caller, delivered)
    handoffs.audit_handoff_read(
        service, caller, None, None, session_handoff=None if delivered is None else delivered.id
    )
    return {
        "thread": None,
        "handoff": None,
        "session_handoff": None if delivered is None else delivered.to_dict(),
        "open_threads": handoff_text.extract_open_threads(
            *(() if delivered is None else (delivered.markdown,))
        ),
        "note": _NO_THREAD_NOTE,
    }


def _handoff_read(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("handoff_read", params)
    thread_id = _thread_id(conn, args.get("thread"))
    if thread_id is None:
        return _session_handoff_read(conn, args)
    service, caller = conn.service, conn.caller
    thread = threads.get_thread(service, caller.group, thread_id)
    handoff = handoffs.read_handoff(service, caller.group, thread_id, args.get("version"))
    handoffs.audit_handoff_read(service, caller, thread_id, handoff)
    delivered = None
    if threads.session_thread(service, caller) == thread_id:
        delivered = session_handoffs.delivered_session_handoff(service, caller)
        if delivered is not None:
            delivered = session_handoffs.read_whole(service, caller, delivered)
    texts = [h.markdown for h in (delivered, handoff) if h is not None]
    return {
        "thread": thread.to_dict(),
        "handoff": None if handoff is None else handoff.to_dict(),
        "session_handoff": None if delivered is None else delivered.to_dict(),
        "open_threads": handoff_text.extract_open_threads(*texts),
    }


def _handoff_write(conn: Connection, params: dict[str, Any]) -> Any:
    # The size limit is in bytes and is checked by the service (TooLarge).
    args = validate_args("handoff_write", params)
    thread_id = _required_thread(conn, "handoff_write", args.get("thread"))
    outcome = handoffs.write_handoff(
        conn.service,
        conn.caller,
        thread_id,
        args["markdown"],
        base_version=args.get("base_version"),
    )
    return outcome.to_dict()


def register(dispatcher: Dispatcher) -> None:
    """Add the continuity methods to ``dispatcher`` (all need a session)."""
    dispatcher.register_method("exchange_log", _exchange_log)
    dispatcher.register_method("exchange_search", _exchange_search)
    dispatcher.register_method("thread_list", _thread_list)
    dispatcher.register_method("thread_open", _thread_open)
    dispatcher.register_method("handoff_read", _handoff_read)
    dispatcher.register_method("handoff_write", _handoff_write)
