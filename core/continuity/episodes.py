"""Episodic memory: the turns of a conversation, searchable, expiring.

An agent logs each turn it wants remembered (``exchange_log``) into its session
and the session's thread. Turns are history, not facts: they never enter the
brief and are found by :func:`search_exchanges`, which ranks them by words and
meaning together and lifts the searcher's thread (:mod:`core.continuity.exchange_recall`).
Turns older than ``Config.episodic_ttl_days`` (counted from when they were
logged, not from their ``at``) are deleted when a group opens (seed 001, rule
2), and the deletion is audited as a count.

Speakers are a closed set:

* ``user``: what the person said;
* ``assistant``: what the agent answered;
* ``tool``: output of a tool the agent ran (external content: judge it as such);
* ``system``: notes from the agent's runtime (a compaction, a mode change).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from core.continuity import exchange_recall
from core.continuity.said_at import parse_at
from core.continuity.threads import session_thread
from core.memory.writing import check_rate, writing
from core.model.changes import Changes
from core.model.config import Config
from core.model.entries import Actor, iso, utc_now
from core.model.errors import InvalidParams, TooLarge
from core.model.paging import next_page, page_fields
from core.policy.field_screening import Statements, screen_field
from core.policy.own_files import known_secrets
from core.policy.screening import audit_redacted, screen, strip_controls
from core.semantic.hybrid import Mode
from core.storage import audit
from core.storage.audit import Action
from core.storage.fresh_ids import NEXT_EXCHANGE_SEQ
from core.storage.fts import searchable, text_grams
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

MAX_EXCHANGE_CHARS: Final = 20_000
MAX_TURN_CHARS: Final = 100
MAX_NAME_CHARS: Final = 100
MAX_EXCHANGE_RESULTS: Final = 50
#: How far a search can be paged (``offset``), as for memories: no pool ranked for a
#: page is deeper than 1,050 turns.
MAX_EXCHANGE_OFFSET: Final = 1000
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
    #: The speaker's display name, and when the turn was said (``created_at``: logged).
    name: str | None = None
    said_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "thread_id": self.thread_id,
            "thread_title": self.thread_title,
            "speaker": self.speaker.value,
            "name": self.name,
            "text": self.text,
            "turn": self.turn,
            "at": self.said_at or self.created_at,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class ExchangeHit:
    exchange: Exchange
    #: 0..1 relative to the best match of the same search (1.0 without a query).
    relevance_score: float
    #: In the thread the search favoured.
    same_thread: bool
    #: What found or lifted it (core.semantic.hybrid.Signal values).
    signals: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.exchange.to_dict(),
            "score": self.relevance_score,
            "relevance_score": self.relevance_score,
            "signals": list(self.signals),
            "same_thread": self.same_thread,
        }


@dataclass(frozen=True)
class ExchangePage:
    """One page of an exchange search, and where the next one starts (``None``: no more)."""

    hits: list[ExchangeHit]
    next_offset: int | None
    #: More turns match than paging reaches (past :data:`MAX_EXCHANGE_OFFSET`).
    truncated: bool = False

    def to_dict(self) -> dict[str, Any]:
        more = page_fields(self.next_offset, self.truncated)
        return {"results": [h.to_dict() for h in self.hits], **more}


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
            # When it was said, as stored (UTC): what exchange_search dates it by.
            "at": e.said_at or e.created_at,
            "redacted": len(self.redacted),
            "redacted_kinds": dict(sorted(Counter(self.redacted).items())),
        }


_COLUMNS = (
    "e.seq, e.session_id, e.thread_id, t.title, e.speaker, e.text, e.turn, e.created_at, "
    "e.name, e.said_at"
)


def _exchange(row: Sequence[Any]) -> Exchange:
    return Exchange(
        int(row[0]),
        row[1],
        row[2],
        row[3],
        Speaker(row[4]),
        row[5],
        row[6],
        row[7],
        row[8],
        row[9],
    )


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


def _check_name(name: object) -> str | None:
    if name is None:
        return None
    if not isinstance(name, str):
        raise InvalidParams("name must be a string", field="name", rule="type")
    name = " ".join(strip_controls(name).split())
    if len(name) > MAX_NAME_CHARS:
        raise InvalidParams(
            f"name must be at most {MAX_NAME_CHARS} characters", field="name", rule="maxLength"
        )
    return name or None


def log_exchange(
    service: Workspace,
    caller: Caller,
    speaker: str,
    text: str,
    turn: str | None = None,
    *,
    now: datetime | None = None,
    name: str | None = None,
    at: str | None = None,
) -> LoggedExchange:
    """Store one turn in the caller's session and current thread, redacted.

    Args:
        turn: the client's own id for the turn, grouping a question with its answer.
        now: the time to record (tests set it; callers leave it out).
        name: the speaker's display name (``speaker`` is the role).
        at: when the turn was said, ISO 8601 (default: now); imported history
            keeps its real dates. Expiry still counts from when it was logged.

    Raises:
        InvalidParams: an unknown speaker, empty text, a malformed turn id.
        TooLarge: text longer than :data:`MAX_EXCHANGE_CHARS`.
        Refused: the text states a credential (audited, not stored).
    """
    who = parse_speaker(speaker)
    store = service.store_for(caller.group)
    clean, in_text = screen(service, store, caller, _check_text(text), "text")
    redacted = list(in_text)
    known = known_secrets(service.data_dir.root)
    turn_id = _label(_check_turn(turn), "turn", known, redacted)
    display = _label(_check_name(name), "name", known, redacted)
    clock = now or utc_now()
    said = parse_at(at, clock)
    logged_at = iso(clock)
    # A time ahead of the clock (accepted up to a day, for a clock that runs ahead,
    # or today's date alone before noon) is read as now: nothing is said later than
    # it is logged, and a turn "in the future" would be left out of the brief.
    said_at = logged_at if said is None or said > clock else iso(said)
    with writing(service, store, caller):
        check_rate(store, caller, "exchanges", service.config)
        thread_id = session_thread(service, caller)
        seq = store.execute(
            "INSERT INTO exchanges (seq, session_id, thread_id, speaker, text, text_grams, "
            f"turn, created_at, name, said_at) VALUES ({NEXT_EXCHANGE_SEQ}, ?, ?, ?, ?, ?, ?, "
            "?, ?, ?) RETURNING seq",
            (
                caller.session_id,
                thread_id,
                who.value,
                clean,
                text_grams(clean),
                turn_id,
                logged_at,
                display,
                said_at,
            ),
        ).fetchall()[0][0]
        if thread_id is not None:
            store.execute("UPDATE threads SET updated_at = ? WHERE id = ?", (logged_at, thread_id))
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
    return LoggedExchange(_exchange(row), tuple(redacted))


def _label(text: str | None, field: str, known: Sequence[str], redacted: list[str]) -> str | None:
    """A turn id or speaker name with anything secret cut out (a label is never
    refused), what was cut added to ``redacted`` so the reply and audit count it."""
    if text is None:
        return None
    screened = screen_field(text, field, statements=Statements.REDACT, known=known)
    redacted.extend(screened.redacted)
    return screened.text


def find_exchanges(
    store: GroupStore,
    query: str,
    *,
    thread_id: str | None = None,
    speaker: Speaker | None = None,
    limit: int = DEFAULT_EXCHANGE_RESULTS,
    mode: Mode = Mode.AUTO,
    config: Config | None = None,
) -> list[ExchangeHit]:
    """Turns for ``query`` ranked by words and meaning (:mod:`core.continuity.exchange_recall`),
    ``thread_id``'s lifted; without a query, the most recent, ``thread_id``'s first; a
    query of punctuation or symbols alone (:func:`~core.storage.fts.searchable`), none.

    Every word is quoted (core.storage.fts), so FTS syntax in ``query`` is searched as
    words and can never raise.
    """
    return find_exchanges_page(
        store, query, thread_id=thread_id, speaker=speaker, limit=limit, mode=mode, config=config
    ).hits


def find_exchanges_page(
    store: GroupStore,
    query: str,
    *,
    thread_id: str | None = None,
    speaker: Speaker | None = None,
    limit: int = DEFAULT_EXCHANGE_RESULTS,
    offset: int = 0,
    mode: Mode = Mode.AUTO,
    config: Config | None = None,
) -> ExchangePage:
    """:func:`find_exchanges` from the ``offset``-th turn on, and where the next page starts.

    The pages of a search with one ``limit`` are cuts of one list
    (:func:`~core.continuity.exchange_recall.rank_page`), the first of them the
    ranking of the ``limit`` best alone; a listing (no query) is read ``offset``
    turns in.
    """
    if not 1 <= limit <= MAX_EXCHANGE_RESULTS:
        raise InvalidParams.bounds("limit", limit, 1, MAX_EXCHANGE_RESULTS)
    if not 0 <= offset <= MAX_EXCHANGE_OFFSET:
        raise InvalidParams.bounds("offset", offset, 0, MAX_EXCHANGE_OFFSET)
    same = "coalesce(e.thread_id = :thread, 0)"
    if query.strip() and not searchable(query):
        # Punctuation alone ("%", "?"): no word to match, and its meaning is noise.
        return ExchangePage([], None)
    if query.strip():
        ranked, more = exchange_recall.rank_page(
            store,
            query,
            limit=limit,
            offset=offset,
            deepest=MAX_EXCHANGE_OFFSET + limit,
            mode=mode,
            config=config or Config(),
            now=utc_now(),
            thread_id=thread_id,
            speaker=None if speaker is None else speaker.value,
        )
        rows = _rows_by_seq(store, [r.seq for r in ranked])
        hits = [
            ExchangeHit(
                _exchange(rows[r.seq]),
                r.score,
                rows[r.seq][2] == thread_id and thread_id is not None,
                r.signals,
            )
            for r in ranked
            if r.seq in rows
        ]
        return ExchangePage(hits, *next_page(offset, limit, more, MAX_EXCHANGE_OFFSET))
    where = "1" if speaker is None else "e.speaker = :speaker"
    params: dict[str, Any] = {
        "thread": thread_id,
        "speaker": None if speaker is None else speaker.value,
        "limit": limit + 1,
        "offset": offset,
    }
    sql = (
        f"SELECT {_COLUMNS}, {same} FROM exchanges e "
        f"LEFT JOIN threads t ON t.id = e.thread_id WHERE {where} "
        # Newest by when it was said: imported history keeps its own dates.
        f"ORDER BY {same} DESC, coalesce(e.said_at, e.created_at) DESC, e.seq DESC "
        "LIMIT :limit OFFSET :offset"
    )
    rows = store.execute(sql, params).fetchall()
    hits = [ExchangeHit(_exchange(r), 1.0, bool(r[10])) for r in rows[:limit]]
    return ExchangePage(hits, *next_page(offset, limit, len(rows) > limit, MAX_EXCHANGE_OFFSET))


def exchanges_by_id(service: Workspace, group: str, ids: Sequence[int]) -> list[Exchange]:
    """The turns of ``group`` with these ids, in the order given (gone ones left out)."""
    rows = _rows_by_seq(service.store_for(group), list(ids))
    return [_exchange(rows[i]) for i in ids if i in rows]


def _rows_by_seq(store: GroupStore, seqs: list[int]) -> dict[int, Any]:
    found: dict[int, Any] = {}
    if seqs:
        marks = ", ".join("?" * len(seqs))
        for r in store.execute(
            f"SELECT {_COLUMNS} FROM exchanges e LEFT JOIN threads t ON t.id = e.thread_id "
            f"WHERE e.seq IN ({marks})",
            seqs,
        ):
            found[int(r[0])] = r
    return found


def search_exchanges(
    service: Workspace,
    caller: Caller,
    query: str,
    *,
    thread_id: str | None = None,
    speaker: Speaker | None = None,
    limit: int = DEFAULT_EXCHANGE_RESULTS,
    mode: Mode = Mode.AUTO,
) -> list[ExchangeHit]:
    """``exchange_search``'s first page (:func:`search_exchanges_page`)."""
    return search_exchanges_page(
        service, caller, query, thread_id=thread_id, speaker=speaker, limit=limit, mode=mode
    ).hits


def search_exchanges_page(
    service: Workspace,
    caller: Caller,
    query: str,
    *,
    thread_id: str | None = None,
    speaker: Speaker | None = None,
    limit: int = DEFAULT_EXCHANGE_RESULTS,
    offset: int = 0,
    mode: Mode = Mode.AUTO,
) -> ExchangePage:
    """``exchange_search``: :func:`find_exchanges_page` favouring ``thread_id`` (default:
    the caller's current thread), audited as a count."""
    store = service.store_for(caller.group)
    favoured = thread_id if thread_id is not None else session_thread(service, caller)
    page = find_exchanges_page(
        store,
        query,
        thread_id=favoured,
        speaker=speaker,
        limit=limit,
        offset=offset,
        mode=mode,
        config=service.config,
    )
    with store.relaxed_transaction():
        audit.record(
            store,
            Action.SEARCH,
            caller.actor,
            session_id=caller.session_id,
            count=len(page.hits),
            scope="exchanges",
        )
    return page


def thread_exchanges(
    service: Workspace,
    group: str,
    thread_id: str | None,
    *,
    limit: int = 200,
    before: Exchange | None = None,
) -> list[Exchange]:
    """A thread's turns (None: turns filed under no thread), newest said first (as
    ``ambry exchanges`` lists them; imported history keeps its own times), a page
    at a time.

    Args:
        before: only turns said before this one (the last of the previous page).
    """
    scope = "e.thread_id IS NULL" if thread_id is None else "e.thread_id = :thread"
    after = (
        "" if before is None else "AND (coalesce(e.said_at, e.created_at), e.seq) < (:at, :seq) "
    )
    rows = service.store_for(group).execute(
        f"SELECT {_COLUMNS} FROM exchanges e LEFT JOIN threads t ON t.id = e.thread_id "
        f"WHERE {scope} {after}ORDER BY coalesce(e.said_at, e.created_at) DESC, e.seq DESC "
        "LIMIT :limit",
        {
            "thread": thread_id,
            "at": None if before is None else before.said_at or before.created_at,
            "seq": None if before is None else before.id,
            "limit": max(1, limit),
        },
    )
    return [_exchange(r) for r in rows]


def expire_exchanges(
    store: GroupStore,
    config: Config,
    now: datetime,
    *,
    with_turns: Callable[[GroupStore], object],
) -> int:
    """Delete turns older than ``config.episodic_ttl_days``; audit the count if any.

    ``with_turns`` deletes what came from the turns (the layers' summaries that
    quote them), in the same transaction. Cheap when nothing is due: one index
    probe, and no write transaction.
    """
    cutoff = iso(now - timedelta(days=config.episodic_ttl_days))
    if store.execute("SELECT 1 FROM exchanges WHERE created_at < ? LIMIT 1", (cutoff,)).fetchone():
        with store.transaction():
            store.execute("DELETE FROM exchanges WHERE created_at < ?", (cutoff,))
            count = int(store.conn.changes())
            with_turns(store)
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
