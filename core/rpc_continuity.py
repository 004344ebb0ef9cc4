"""Agent protocol methods for continuity: exchanges, threads and handoffs.

Each handler validates its params the way the core methods do (field and rule
in every -32602 error) and calls core.continuity or core.episodes; provenance
(group, session, thread) comes from the connection's session, never from params.
A ``thread`` param names a thread by id (``thr-...``) or by title.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core import continuity, episodes, handoff_text, handoffs, session_handoffs, threads
from core.errors import InvalidParams
from core.hybrid import parse_mode
from core.protocol import StringParam, check_string_params

if TYPE_CHECKING:
    from core.protocol import Connection, Dispatcher

#: Longest ``query`` accepted by ``exchange_search``, in characters.
MAX_QUERY_CHARS = 500
#: Longest ``thread`` reference: a title, with room for whitespace that cleaning strips.
MAX_REF_CHARS = threads.MAX_TITLE_CHARS + 50


def _ints(
    method: str, params: dict[str, Any], spec: dict[str, tuple[int, int]]
) -> tuple[dict[str, int], dict[str, Any]]:
    """Split off and check the integer params; the rest go to check_string_params."""
    values: dict[str, int] = {}
    for name, (low, high) in spec.items():
        if name not in params:
            continue
        value = params[name]
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidParams(f"{method}: {name} must be an integer", field=name, rule="type")
        if not low <= value <= high:
            raise InvalidParams(
                f"{method}: {name} must be between {low} and {high}", field=name, rule="range"
            )
        values[name] = value
    return values, {k: v for k, v in params.items() if k not in spec}


def _thread_id(conn: Connection, ref: str | None) -> str | None:
    """The id of the thread ``ref`` names, else the session's current thread."""
    if ref is not None:
        return threads.find_thread(conn.service, conn.caller.group, ref).id
    return threads.session_thread(conn.service, conn.caller)


def _exchange_log(conn: Connection, params: dict[str, Any]) -> Any:
    args = check_string_params(
        "exchange_log",
        params,
        (
            StringParam("speaker", required=True),
            # Longer text is TooLarge from the service, with the limit in its data.
            StringParam("text", required=True),
            StringParam("turn", max_length=episodes.MAX_TURN_CHARS),
            StringParam("name", max_length=episodes.MAX_NAME_CHARS),
            StringParam("at", max_length=64),
        ),
    )
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
    ints, rest = _ints("exchange_search", params, {"limit": (1, episodes.MAX_EXCHANGE_RESULTS)})
    args = check_string_params(
        "exchange_search",
        rest,
        (
            StringParam("query", max_length=MAX_QUERY_CHARS),
            StringParam("thread", max_length=MAX_REF_CHARS),
            StringParam("speaker"),
            StringParam("mode"),
        ),
    )
    speaker = episodes.parse_speaker(args["speaker"]) if "speaker" in args else None
    hits = episodes.search_exchanges(
        conn.service,
        conn.caller,
        args.get("query", ""),
        thread_id=_thread_id(conn, args.get("thread")),
        speaker=speaker,
        limit=ints.get("limit", episodes.DEFAULT_EXCHANGE_RESULTS),
        mode=parse_mode(args.get("mode")),
    )
    return {"results": [h.to_dict() for h in hits]}


def _thread_list(conn: Connection, params: dict[str, Any]) -> Any:
    ints, rest = _ints("thread_list", params, {"limit": (1, 500)})
    check_string_params("thread_list", rest, ())
    listed = threads.list_threads(conn.service, conn.caller.group, ints.get("limit", 100))
    return {
        "threads": [t.to_dict() for t in listed],
        "current": threads.session_thread(conn.service, conn.caller),
    }


def _thread_open(conn: Connection, params: dict[str, Any]) -> Any:
    args = check_string_params(
        "thread_open",
        params,
        (
            StringParam("title", max_length=MAX_REF_CHARS),
            StringParam("id", max_length=64),
        ),
    )
    if ("title" in args) == ("id" in args):
        raise InvalidParams(
            "thread_open: give exactly one of title (opens or creates) or id (opens)",
            field="title",
            rule="oneOf",
        )
    if "id" in args and not threads.THREAD_ID.fullmatch(args["id"]):
        raise InvalidParams(
            "thread_open: id must look like thr- and 12 hex digits", field="id", rule="pattern"
        )
    ref = args.get("id") or args["title"]
    entry = continuity.enter_thread(conn.service, conn.caller, ref)
    # Later calls on this connection (attachments, exchanges) work in the new thread.
    conn.session = entry.caller
    return entry.to_dict()


def _handoff_read(conn: Connection, params: dict[str, Any]) -> Any:
    ints, rest = _ints("handoff_read", params, {"version": (1, 1 << 31)})
    args = check_string_params(
        "handoff_read",
        rest,
        (StringParam("thread", max_length=MAX_REF_CHARS),),
    )
    thread_id = _thread_id(conn, args.get("thread"))
    if thread_id is None:
        raise InvalidParams(
            "handoff_read: name a thread, or open one first (hello thread or thread_open)",
            field="thread",
            rule="required",
        )
    service, caller = conn.service, conn.caller
    thread = threads.get_thread(service, caller.group, thread_id)
    handoff = handoffs.read_handoff(service, caller.group, thread_id, ints.get("version"))
    handoffs.audit_handoff_read(service, caller, thread_id, handoff)
    delivered = None
    if threads.session_thread(service, caller) == thread_id:
        delivered = session_handoffs.delivered_session_handoff(service, caller)
    texts = [h.markdown for h in (delivered, handoff) if h is not None]
    return {
        "thread": thread.to_dict(),
        "handoff": None if handoff is None else handoff.to_dict(),
        "session_handoff": None if delivered is None else delivered.to_dict(),
        "open_threads": handoff_text.extract_open_threads(*texts),
    }


def _handoff_write(conn: Connection, params: dict[str, Any]) -> Any:
    ints, rest = _ints("handoff_write", params, {"base_version": (0, 1 << 31)})
    # The size limit is in bytes and is checked by the service (TooLarge).
    args = check_string_params(
        "handoff_write",
        rest,
        (
            StringParam("thread", max_length=MAX_REF_CHARS),
            StringParam("markdown", required=True),
        ),
    )
    thread_id = _thread_id(conn, args.get("thread"))
    if thread_id is None:
        raise InvalidParams(
            "handoff_write: name a thread, or open one first (hello thread or thread_open)",
            field="thread",
            rule="required",
        )
    outcome = handoffs.write_handoff(
        conn.service,
        conn.caller,
        thread_id,
        args["markdown"],
        base_version=ints.get("base_version"),
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
