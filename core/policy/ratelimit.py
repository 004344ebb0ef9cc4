"""Rate limits that bound an agent, not a session: rolling windows per agent.

An agent is its token and its client name (:func:`agent_key`), so reconnecting
or opening a new session buys nothing, and a long-lived client (an MCP process
that stays up for days) is limited per hour and per day rather than for its
whole life. Each counted action is a row in ``rate_events`` written in the
same transaction as the write it counts: a write that is refused or rolled
back costs nothing. A refusal says which limit was hit and when the next
action of that kind will be accepted.

Only agents are limited; the person's own actions never are. The limits are
settings (``rate_<action>_per_hour`` and ``rate_<action>_per_day``); each
group database keeps its own windows.
"""

from __future__ import annotations

import hashlib
import math
import time
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from core.model.config import Config
from core.model.entries import Actor
from core.model.errors import InvalidParams, RateLimited
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller


class RateAction(StrEnum):
    """What an agent's budget counts; the value names the settings and the error."""

    STORE = "stores"
    SUPERSEDE = "supersedes"
    DELETE = "deletes"
    EXCHANGE = "exchanges"
    HANDOFF = "handoffs"
    THREAD = "threads"


#: The rolling windows, shortest first: (name, length in seconds).
WINDOWS: Final = (("hour", 3600), ("day", 86_400))
#: Actions also counted per session in the sessions table (shown by the app).
_SESSION_COUNTERS: Final = frozenset({RateAction.STORE, RateAction.SUPERSEDE, RateAction.DELETE})
#: Longest client name that is part of an agent's key.
MAX_CLIENT_CHARS: Final = 200


def limit_field(action: RateAction, window: str) -> str:
    """The setting that holds the limit of ``action`` per ``window``."""
    return f"rate_{action.value}_per_{window}"


def rate_fields() -> list[str]:
    """Every rate-limit setting, in a stable order (settings view, tests, benches)."""
    return [limit_field(a, w) for a in RateAction for w, _ in WINDOWS]


def agent_key(token: str | None, client: str) -> str:
    """Who an agent is for its budget: a fingerprint of its token, and its client name.

    The fingerprint is not the token (it cannot be used to connect); a new token
    starts new windows, as the person issued it.
    """
    digest = "no-token"
    if token:
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{digest}:{client[:MAX_CLIENT_CHARS]}"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _wait_text(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def charge(
    store: GroupStore,
    caller: Caller,
    action: RateAction,
    config: Config,
    *,
    now: float | None = None,
) -> None:
    """Count one ``action`` of the calling agent, or refuse it with :class:`RateLimited`.

    Call inside the write's transaction, before anything is written.
    """
    if caller.actor is not Actor.AGENT:
        return
    row = store.execute(
        "SELECT agent_key FROM sessions WHERE id = ?", (caller.session_id,)
    ).fetchone()
    if row is None:
        raise InvalidParams(f"unknown session {caller.session_id}", field="session")
    agent = row[0] or f"session:{caller.session_id}"
    at = time.time() if now is None else now
    for window, seconds in WINDOWS:
        allowed = int(getattr(config, limit_field(action, window)))
        since = at - seconds
        used = store.execute(
            "SELECT count(*) FROM rate_events WHERE agent = ? AND action = ? AND at > ?",
            (agent, action.value, since),
        ).fetchone()[0]
        if used >= allowed:
            raise _refusal(store, agent, action, window, seconds, allowed, used, at)
    longest = WINDOWS[-1][1]
    store.execute(
        "DELETE FROM rate_events WHERE agent = ? AND action = ? AND at <= ?",
        (agent, action.value, at - longest),
    )
    store.execute(
        "INSERT INTO rate_events (agent, action, at) VALUES (?, ?, ?)", (agent, action.value, at)
    )
    if action in _SESSION_COUNTERS:
        column = action.value  # one of three fixed column names, never caller text
        store.execute(
            f"UPDATE sessions SET {column} = {column} + 1 WHERE id = ?", (caller.session_id,)
        )


def _refusal(
    store: GroupStore,
    agent: str,
    action: RateAction,
    window: str,
    seconds: int,
    allowed: int,
    used: int,
    at: float,
) -> RateLimited:
    if allowed <= 0:
        return RateLimited(
            f"rate limit: agents may make no {action.value} (the {limit_field(action, window)} "
            "setting is 0); ask the person to raise it in settings",
            limit=action.value,
            window=window,
            allowed=allowed,
        )
    # The next one fits once enough of the counted events have left the window.
    oldest = store.execute(
        "SELECT at FROM rate_events WHERE agent = ? AND action = ? AND at > ? "
        "ORDER BY at LIMIT 1 OFFSET ?",
        (agent, action.value, at - seconds, used - allowed),
    ).fetchone()[0]
    free_at = oldest + seconds
    wait = max(1, math.ceil(free_at - at))
    return RateLimited(
        f"rate limit: this agent has made {used} {action.value} in the past {window} "
        f"(limit {allowed}); the next will be accepted at {_iso(free_at)} (in "
        f"{_wait_text(wait)}), or the person can raise {limit_field(action, window)} in settings",
        limit=action.value,
        window=window,
        allowed=allowed,
        retry_after=wait,
        retry_at=_iso(free_at),
    )
