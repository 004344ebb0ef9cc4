"""Episodic memory: the turns of a conversation, searchable, expiring.

An agent logs each turn it wants remembered (``exchange_log``) into its session
and the session's thread. Turns are history, not facts: they never enter the
brief and are found by :func:`search_exchanges`, which ranks turns of the
searcher's thread first (seed 004 §2's thread boost, made strict) and the rest
by bm25. Turns older than ``Config.episodic_ttl_days`` are deleted when a group
opens (seed 001, rule 2), and the deletion is audited as a count.

Speakers are a closed set:

* ``user``: what the person said;
* ``assistant``: what the agent answered;
* ``tool``: output of a tool the agent ran (external content: judge it as such);
* ``system``: notes from the agent's runtime (a compaction, a mode change).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from core.continuity.threads import session_thread
from core.memory.writing import check_rate, writing
from core.model.changes import Changes
from core.model.config import Config
from core.model.entries import Actor, iso, utc_now
from core.model.errors import InvalidParams, TooLarge
from core.policy.field_screening import screen_label
from core.policy.own_files import known_secrets
from core.policy.screening import audit_redacted, screen, strip_controls
from core.storage import audit
from core.storage.audit import Action
from core.storage.fts import match_expression, query_terms
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

MAX_EXCHANGE_CHARS: Final = 20_000
MAX_TURN_CHARS: Final = 100
MAX_EXCHANGE_RESULTS: Final = 50
DEFAULT_EXCHANGE_RESULTS: Final = 10


class Speaker(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


@dataclass(frozen=True)
class Exchange:
    id: int
    session_id: str
    thread_id: str | None
    thread_title: str | None
    speaker: Speaker
    text: str
    turn: str | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "thread_title": self.thread_title,
            "speaker": self.speaker.value,
            "text": self.text,
            "turn": self.turn,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class ExchangeHit:
    exchange: Exchange
    #: 0..1 relative to the best match of the same search (1.0 without a query).
    relevance_score: float
    #: In the thread the search favoured.
    same_thread: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.exchange.to_dict(),
            "relevance_score": self.relevance_score,
            "same_thread": self.same_thread,
        }


@dataclass(frozen=True)
class LoggedExchange:
    exchange: Exchange
    #: Pattern names of the secrets replaced by ``[SECRET_REDACTED]``.
    redacted: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        e = self.exchange
        return {
            "id": e.id,
            "session_id": e.session_id,
            "thread_id": e.thread_id,
            "created_at": e.created_at,
            "redacted": len(self.redacted),
            "redacted_kinds": dict(sorted(Counter(self.redacted).items())),
        }


_COLUMNS = "e.seq, e.session_id, e.thread_id, t.title, e.speaker, e.text, e.turn, e.created_at"


def _exchange(row: Sequence[Any]) -> Exchange:
    return Exchange(int(row[0]), row[1], row[2], row[3], Speaker(row[4]), row[5], row[6], row[7])


def parse_speaker(value: object) -> Speaker:
    for speaker in Speaker:
        if value == speaker.value:
            return speaker
    raise InvalidParams(
        "speaker must be one of: " + ", ".join(s.value for s in Speaker),
        field="speaker",
        rule="enum",
    )


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidParams("text must be a string", field="text", rule="type")
    if len(text) > MAX_EXCHANGE_CHARS:
        raise TooLarge(
            f"text is {len(text)} characters; one exchange may be at most "
            f"{MAX_EXCHANGE_CHARS}. Log a long turn in parts",
            field="text",
            limit=MAX_EXCHANGE_CHARS,
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidParams(
            "text contains a lone surrogate (not valid Unicode text)", field="text", rule="unicode"
        ) from None
    # Terminal escapes in tool output would replay when a person lists the turns.
    text = strip_controls(text)
    if not text.strip():
        raise InvalidParams("text must not be empty", field="text", rule="minLength")
    return text


def _check_turn(turn: object) -> str | None:
    if turn is None:
        return None
    if not isinstance(turn, str):
        raise InvalidParams("turn must be a string", field="turn", rule="type")
    turn = turn.strip()
    if len(turn) > MAX_TURN_CHARS or any(not ch.isprintable() for ch in turn):
        raise InvalidParams(
            f"turn must be one printable line of at most {MAX_TURN_CHARS} characters",
            field="turn",
            rule="pattern",
        )
    return turn or None


def log_exchange(
    service: Workspace,
    caller: Caller,
    speaker: str,
    text: str,
    turn: str | None = None,
    *,
    now: datetime | None = None,
) -> LoggedExchange:
    """Store one turn in the caller's session and current thread, redacted.

    Args:
        turn: the client's own id for the turn, grouping a question with its answer.
        now: the time to record (tests set it; callers leave it out).

    Raises:
        InvalidParams: an unknown speaker, empty text, a malformed turn id.
        TooLarge: text longer than :data:`MAX_EXCHANGE_CHARS`.
        Refused: the text states a credential (audited, not stored).
    """
    who = parse_speaker(speaker)
    store = service.store_for(caller.group)
    clean, redacted = screen(service, store, caller, _check_text(text), "text")
    turn_id = _check_turn(turn)
    if turn_id is not None:
        turn_id = screen_label(turn_id, "turn", known=known_secrets(service.data_dir.root))
    at = iso(now or utc_now())
    with writing(service, store, caller):
        check_rate(store, caller, "exchanges", service.config)
        thread_id = session_thread(service, caller)
        seq = store.execute(
            "INSERT INTO exchanges (session_id, thread_id, speaker, text, turn, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING seq",
            (caller.session_id, thread_id, who.value, clean, turn_id, at),
        ).fetchall()[0][0]
        if thread_id is not None:
            store.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (at, thread_id))
        audit.record(
            store,
            Action.EXCHANGE_LOG,
            caller.actor,
            session_id=caller.session_id,
            size=len(clean),
            speaker=who.value,
            thread=thread_id,
        )
        audit_redacted(store, caller, redacted, exchange=seq)
        row = store.execute(
            f"SELECT {_COLUMNS} FROM exchanges e LEFT JOIN threads t ON t.id = e.thread_id "
            "WHERE e.seq = ?",
            (seq,),
        ).fetchone()
    service.emit(Changes(group=store.group, threads=True, audit=True))
    return LoggedExchange(_exchange(row), redacted)


def _scores(bm25: list[float]) -> list[float]:
    # bm25 (lower is better) has no fixed scale; report each as a fraction of the best.
    strengths = [max(0.0, -s) for s in bm25]
    best = max(strengths, default=0.0)
    return [1.0 if best <= 0.0 else round(s / best, 4) for s in strengths]


def find_exchanges(
    store: GroupStore,
    query: str,
    *,
    thread_id: str | None = None,
    speaker: Speaker | None = None,
    limit: int = DEFAULT_EXCHANGE_RESULTS,
) -> list[ExchangeHit]:
    """Turns matching any word of ``query`` (none: the most recent), ``thread_id``'s first.

    Every word is quoted (core.storage.fts), so FTS syntax in ``query`` is searched as
    words and can never raise.
    """
    if not 1 <= limit <= MAX_EXCHANGE_RESULTS:
        raise InvalidParams(
            f"limit must be between 1 and {MAX_EXCHANGE_RESULTS}", field="limit", rule="range"
        )
    same = "coalesce(e.thread_id = :thread, 0)"
    where = "1" if speaker is None else "e.speaker = :speaker"
    params: dict[str, Any] = {
        "thread": thread_id,
        "speaker": None if speaker is None else speaker.value,
        "limit": limit,
    }
    terms = query_terms(query)
    if terms:
        params["match"] = match_expression(terms)
        sql = (
            f"SELECT {_COLUMNS}, {same}, f.score FROM ("
            "  SELECT rowid, rank AS score FROM exchanges_fts WHERE exchanges_fts MATCH :match"
            ") AS f CROSS JOIN exchanges e ON e.seq = f.rowid "
            f"LEFT JOIN threads t ON t.id = e.thread_id WHERE {where} "
            f"ORDER BY {same} DESC, f.score, e.seq DESC LIMIT :limit"
        )
    else:
        sql = (
            f"SELECT {_COLUMNS}, {same}, 0.0 FROM exchanges e "
            f"LEFT JOIN threads t ON t.id = e.thread_id WHERE {where} "
            f"ORDER BY {same} DESC, e.created_at DESC, e.seq DESC LIMIT :limit"
        )
    rows = store.execute(sql, params).fetchall()
    scores = _scores([float(r[9]) for r in rows]) if terms else [1.0] * len(rows)
    return [
        ExchangeHit(_exchange(r), score, bool(r[8])) for r, score in zip(rows, scores, strict=True)
    ]


def search_exchanges(
    service: Workspace,
    caller: Caller,
    query: str,
    *,
    thread_id: str | None = None,
    speaker: Speaker | None = None,
    limit: int = DEFAULT_EXCHANGE_RESULTS,
) -> list[ExchangeHit]:
    """``exchange_search``: :func:`find_exchanges` favouring ``thread_id`` (default:
    the caller's current thread), audited as a count."""
    store = service.store_for(caller.group)
    favoured = thread_id if thread_id is not None else session_thread(service, caller)
    hits = find_exchanges(store, query, thread_id=favoured, speaker=speaker, limit=limit)
    with store.relaxed_transaction():
        audit.record(
            store,
            Action.SEARCH,
            caller.actor,
            session_id=caller.session_id,
            count=len(hits),
            scope="exchanges",
        )
    return hits


def thread_exchanges(
    service: Workspace,
    group: str,
    thread_id: str | None,
    *,
    limit: int = 200,
    before: int | None = None,
) -> list[Exchange]:
    """A thread's turns (None: turns filed under no thread), newest first, a page at a time.

    Args:
        before: only turns with an id below this (the last id of the previous page).
    """
    scope = "e.thread_id IS NULL" if thread_id is None else "e.thread_id = :thread"
    rows = service.store_for(group).execute(
        f"SELECT {_COLUMNS} FROM exchanges e LEFT JOIN threads t ON t.id = e.thread_id "
        f"WHERE {scope} AND e.seq < :before ORDER BY e.created_at DESC, e.seq DESC LIMIT :limit",
        {
            "thread": thread_id,
            "before": (1 << 62) if before is None else before,
            "limit": max(1, limit),
        },
    )
    return [_exchange(r) for r in rows]


def expire_exchanges(store: GroupStore, config: Config, now: datetime) -> int:
    """Delete turns older than ``config.episodic_ttl_days``; audit the count if any.

    Cheap when nothing is due: one index probe, and no write transaction.
    """
    cutoff = iso(now - timedelta(days=config.episodic_ttl_days))
    if store.execute("SELECT 1 FROM exchanges WHERE created_at < ? LIMIT 1", (cutoff,)).fetchone():
        with store.transaction():
            store.execute("DELETE FROM exchanges WHERE created_at < ?", (cutoff,))
            count = int(store.conn.changes())
            audit.record(
                store,
                Action.EXPIRE,
                Actor.SYSTEM,
                count=count,
                scope="exchanges",
                reason=f"older than {config.episodic_ttl_days} days",
            )
        return count
    return 0
