"""Deleting on purpose: forget a topic, clear episodic or semantic memory, or all.

Every deletion is audited as counts and ids only. The CLI and the app show what
will go and ask for confirmation before calling these, through the service
(``MemoryService.forget`` and ``clear``), which passes in, from packages above
this one, ``with_turns``: what must go with deleted turns in the same
transaction (the layers' summaries that quote them, or a speaker name a forget
takes off), and ``drop_handoffs``: how
thread-handoff versions are deleted (core.continuity.handoffs keeps their
numbering).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import apsw

from core.memory import trash
from core.memory.curation import require_operator
from core.model.changes import Changes
from core.model.entries import EntryFilter, MemoryEntry, Status
from core.model.text import plural
from core.storage import audit, vocab
from core.storage.audit import Action
from core.storage.fts import match_expression, query_terms, unspaced_pieces, without_unspaced
from core.storage.scrub import Index, scrub

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


class Scope(StrEnum):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    ALL = "all"


@dataclass(frozen=True)
class ForgetPlan:
    """What ``forget`` would delete, shown to the person before anything goes."""

    topic: str
    entries: tuple[MemoryEntry, ...]
    exchange_ids: tuple[int, ...]
    #: Claims (core.claims) stating the topic or quoting one of the turns.
    claim_ids: tuple[str, ...] = ()
    #: Memories an agent deleted that wait in the trash (core.memory.trash).
    trash_ids: tuple[str, ...] = ()
    #: Versions of thread handoffs, as (thread id, version), newest first per thread.
    handoff_versions: tuple[tuple[str, int], ...] = ()
    #: Session handoffs (core.continuity.session_handoffs), by id.
    session_handoff_ids: tuple[int, ...] = ()
    #: Threads whose title holds the topic, as (id, title): retitled, not deleted
    #: (a thread holds turns and handoffs about other things too).
    thread_titles: tuple[tuple[str, str], ...] = ()
    #: Speaker names that hold the topic: taken off the turns that stay.
    speaker_names: tuple[str, ...] = ()
    #: Turns that stay whose label (the client's turn id) holds the topic: label taken off.
    turn_labels: tuple[int, ...] = ()
    #: Private and secret memories it does not take whose words it could not look at:
    #: their text is sealed and only their tags are indexed, so it matched those only.
    sealed_unsearched: int = 0

    @property
    def empty(self) -> bool:
        return self.size == 0

    @property
    def size(self) -> int:
        """How many things it deletes, of every kind."""
        return (
            len(self.entries)
            + len(self.exchange_ids)
            + len(self.claim_ids)
            + len(self.trash_ids)
            + len(self.handoff_versions)
            + len(self.session_handoff_ids)
            + len(self.thread_titles)
            + len(self.speaker_names)
            + len(self.turn_labels)
        )

    @property
    def handoff_refs(self) -> list[str]:
        """The handoff versions as claims cite them: ``thr-…@version``."""
        return [f"{thread}@{version}" for thread, version in self.handoff_versions]

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "entries": [e.to_dict() for e in self.entries],
            "exchanges": len(self.exchange_ids),
            "claims": len(self.claim_ids),
            "trash": len(self.trash_ids),
            "handoff_versions": len(self.handoff_versions),
            "session_handoffs": len(self.session_handoff_ids),
            "thread_titles": len(self.thread_titles),
            "speaker_names": len(self.speaker_names),
            "turn_labels": len(self.turn_labels),
            "sealed_unsearched": self.sealed_unsearched,
        }


def plan_counts(plan: ForgetPlan) -> str:
    """``3 memories and 4 turns``: what a forget takes, each kind it takes any of
    (claims, trashed memories and handoffs too), in the question and in what it says
    after; ``nothing`` for an empty plan."""
    counts = [
        (len(plan.entries), ("memory", "memories"), ""),
        (len(plan.exchange_ids), ("turn", None), ""),
        (len(plan.claim_ids), ("claim", None), ""),
        (len(plan.trash_ids), ("memory", "memories"), " in the trash"),
        (len(plan.handoff_versions), CLEARED_NAMES["thread_handoffs"], ""),
        (len(plan.session_handoff_ids), CLEARED_NAMES["session_handoffs"], ""),
        (len(plan.thread_titles), ("thread title", None), ""),
        (len(plan.speaker_names), ("speaker name", None), ""),
        (len(plan.turn_labels), ("turn label", None), ""),
    ]
    parts = [plural(n, *names) + where for n, names, where in counts if n]
    if len(parts) < 2:
        return parts[0] if parts else "nothing"
    return ", ".join(parts[:-1]) + " and " + parts[-1]


_EVERY_ENTRY = EntryFilter(statuses=(Status.ACTIVE, Status.CANDIDATE), include_superseded=True)


def plan_forget(service: Workspace, group: str, topic: str) -> ForgetPlan:
    """Entries (any status, superseded too), conversation turns and handoffs (every kept
    version of a thread's, and the sessions') that mention ``topic``, and the claims
    that state it or quote one of those turns or handoff versions.

    Every word of the topic must appear (a narrower match than search, because
    this deletes). Private entries match on their tags only. Chinese, Japanese or
    Korean text and emoji in the topic must appear as written, inside a longer run
    too ("芒果" in "用户最喜欢的水果是芒果"): the index keeps a run as one word.
    """
    pieces = unspaced_pieces(topic)
    terms = query_terms(without_unspaced(topic))
    store = service.store_for(group)
    if not terms and not pieces:
        return ForgetPlan(topic, (), ())
    match = " AND ".join(match_expression([t]) for t in terms) if terms else None
    ids = store.ids(_EVERY_ENTRY, match)
    if pieces:
        within = _holding(store, "memory_entries", "id", "search_text || char(10) || tags", pieces)
        ids = [i for i in ids if i in within]
    found = service.entries(group, ids)
    if match is None:
        exchanges = tuple(sorted(_holding(store, "exchanges", "seq", "text", pieces)))
    else:
        exchanges = tuple(
            int(r[0])
            for r in store.execute(
                "SELECT rowid FROM exchanges_fts WHERE exchanges_fts MATCH ?", (match,)
            )
        )
        if pieces:
            held = _holding(store, "exchanges", "seq", "text", pieces)
            exchanges = tuple(s for s in exchanges if s in held)
    token_holds = _holds(store, terms)

    def holds(text: str) -> bool:
        return token_holds(text) and all(p in text for p in pieces)

    # Turn labels are scanned (they have no index), sieved first by the ASCII starts
    # of the topic's words: SQL's lower() folds ASCII only.
    sieve = [t[:4] for t in terms if t.isascii()]
    labelled = store.execute(
        "SELECT seq, turn FROM exchanges WHERE turn IS NOT NULL AND "
        + " AND ".join(["instr(lower(turn), ?) > 0"] * len(sieve) or ["1"]),
        sieve,
    ).fetchall()
    gone = set(exchanges)
    plan = ForgetPlan(
        topic,
        tuple(found[i] for i in ids if i in found),
        exchanges,
        trash_ids=tuple(
            str(entry_id)
            for entry_id, raw in store.execute("SELECT id, entry FROM trash ORDER BY id")
            if holds(_trashed_words(raw))
        ),
        handoff_versions=tuple(
            (str(thread), int(version))
            for thread, version, text in store.execute(
                "SELECT thread_id, version, markdown FROM thread_handoffs "
                "ORDER BY thread_id, version DESC"
            )
            if holds(text)
        ),
        session_handoff_ids=tuple(
            int(handoff_id)
            for handoff_id, text in store.execute(
                "SELECT id, markdown FROM session_handoffs ORDER BY id"
            )
            if holds(text)
        ),
        thread_titles=tuple(
            (str(tid), str(title))
            for tid, title in store.execute("SELECT id, title FROM threads ORDER BY id")
            if holds(title)
        ),
        speaker_names=tuple(
            str(name)
            for (name,) in store.execute(
                "SELECT DISTINCT name FROM exchanges WHERE name IS NOT NULL ORDER BY name"
            )
            if holds(name)
        ),
        turn_labels=tuple(int(s) for s, label in labelled if s not in gone and holds(label)),
    )
    sealed = int(
        store.execute(
            "SELECT count(*) FROM memory_entries WHERE privacy != 'public' "
            "AND id NOT IN (SELECT value FROM json_each(?))",
            (json.dumps([e.id for e in plan.entries]),),
        ).get
    )
    return replace(plan, claim_ids=_claims(store, match, pieces, plan), sealed_unsearched=sealed)


def _holds(store: GroupStore, terms: list[str]) -> Callable[[str], bool]:
    """Whether a text with no index of its own (a trashed memory, a handoff) holds every
    one of ``terms``, matched as the search index would match it: by the same
    tokenizer, so case, accents and markdown aside, and stemmed ("allergies" finds
    "allergy"). A term the tokenizer keeps nothing of ("_") matches nothing, as in
    the index."""
    tokenize = vocab.tokenizer(store.conn)
    wanted = [set(vocab.terms(tokenize, term)) for term in terms]

    def holds(text: str) -> bool:
        held = set(vocab.terms(tokenize, text, apsw.FTS5_TOKENIZE_DOCUMENT))
        return all(w and w <= held for w in wanted)

    return holds


def _trashed_words(raw: str) -> str:
    """What the index held of a trashed memory: a private or secret one's tags only."""
    entry = json.loads(raw)
    return " ".join([str(entry.get("search_text") or ""), *json.loads(entry.get("tags") or "[]")])


def _holding(store: GroupStore, table: str, key: str, text: str, pieces: list[str]) -> set[Any]:
    """``key`` of the rows of ``table`` whose ``text`` holds every one of ``pieces``
    as written (a scan: a forget is rare, and must miss nothing)."""
    held = " AND ".join(["instr(" + text + ", ?) > 0"] * len(pieces))
    return {r[0] for r in store.execute(f"SELECT {key} FROM {table} WHERE {held}", pieces)}


def _claims(
    store: GroupStore, match: str | None, pieces: list[str], plan: ForgetPlan
) -> tuple[str, ...]:
    """The claims that state the topic, or quote a turn or handoff version ``plan`` takes."""
    stating = (
        "SELECT rowid FROM claims_fts WHERE claims_fts MATCH :match"
        if match is not None
        else "SELECT seq FROM claims"
    )
    if pieces:
        held = " AND ".join(f"instr(text, :p{n}) > 0" for n in range(len(pieces)))
        stating = f"SELECT seq FROM claims WHERE seq IN ({stating}) AND {held}"
    rows = store.execute(
        f"SELECT id FROM claims WHERE seq IN ({stating}) OR seq IN (SELECT claim_seq "
        "FROM claim_sources WHERE "
        "(kind = 'exchange' AND ref IN (SELECT CAST(value AS TEXT) FROM json_each(:turns))) "
        "OR (kind = 'handoff' AND ref IN (SELECT value FROM json_each(:handoffs)))) "
        "ORDER BY seq",
        {
            "match": match,
            "turns": json.dumps(plan.exchange_ids),
            "handoffs": json.dumps(plan.handoff_refs),
            **{f"p{n}": piece for n, piece in enumerate(pieces)},
        },
    )
    return tuple(str(r[0]) for r in rows)


def forget(
    service: Workspace,
    caller: Caller,
    plan: ForgetPlan,
    *,
    with_turns: Callable[[GroupStore, Sequence[int]], object],
    drop_handoffs: Callable[[GroupStore, Sequence[tuple[str, int]]], object],
) -> Changes:
    """Delete what ``plan`` lists (its handoff versions by ``drop_handoffs``), and
    ``with_turns`` what came from its turns (given the turns that stay but lose their
    speaker's name: a summary quotes it), in one transaction; then scrub every index
    and the write-ahead log of their text."""
    require_operator(caller, "forgetting")
    store = service.store_for(caller.group)
    with store.transaction():
        # Each memory's versions are relinked around it (core.storage.chains): one
        # that does not hold the topic is current again if every later one goes.
        places = [store.delete(entry.id) for entry in plan.entries]
        gone = {e.id for e in plan.entries}
        again = [
            p.current_again
            for p in places
            if p is not None and p.current_again is not None and p.current_again not in gone
        ]
        for seq in plan.exchange_ids:
            store.execute("DELETE FROM exchanges WHERE seq = ?", (seq,))
        for trashed in plan.trash_ids:
            store.execute("DELETE FROM trash WHERE id = ?", (trashed,))
        # A memory in the trash kept its links for a restore: they go with it now.
        trash.drop_trashed_links(store, plan.trash_ids)
        drop_handoffs(store, plan.handoff_versions)
        for handoff_id in plan.session_handoff_ids:
            store.execute("DELETE FROM session_handoffs WHERE id = ?", (handoff_id,))
        for thread_id, _ in plan.thread_titles:
            store.execute(
                "UPDATE threads SET title = ? WHERE id = ?", (f"Untitled {thread_id}", thread_id)
            )
        names = json.dumps(plan.speaker_names)
        renamed = [
            int(r[0])
            for r in store.execute(
                "SELECT seq FROM exchanges WHERE name IN (SELECT value FROM json_each(?))",
                (names,),
            )
        ]
        store.execute(
            "UPDATE exchanges SET name = NULL WHERE name IN (SELECT value FROM json_each(?))",
            (names,),
        )
        for seq in plan.turn_labels:
            store.execute("UPDATE exchanges SET turn = NULL WHERE seq = ?", (seq,))
        for claim_id in plan.claim_ids:
            # A decision records the text the person confirmed.
            store.execute("DELETE FROM claim_decisions WHERE claim_id = ?", (claim_id,))
            store.execute("DELETE FROM claims WHERE id = ?", (claim_id,))
        with_turns(store, renamed)
        audit.record(
            store,
            Action.FORGET,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[e.id for e in plan.entries],
            count=len(plan.entries),
            current_again=again or None,
            exchanges=len(plan.exchange_ids),
            claims=len(plan.claim_ids),
            trash=len(plan.trash_ids),
            trash_ids=list(plan.trash_ids),
            handoff_versions=len(plan.handoff_versions),
            handoff_refs=plan.handoff_refs,
            session_handoffs=len(plan.session_handoff_ids),
            session_handoff_ids=list(plan.session_handoff_ids),
            thread_titles=len(plan.thread_titles),
            thread_ids=[tid for tid, _ in plan.thread_titles],
            speaker_names=len(plan.speaker_names),
            turn_labels=len(plan.turn_labels),
        )
    scrub(store)
    return service.emit(
        Changes(
            group=store.group,
            entries=True,
            review=True,
            audit=True,
            threads=True,
            claims=bool(plan.claim_ids),
        )
    )


def clear_counts(service: Workspace, group: str, scope: Scope) -> dict[str, int]:
    """How much ``clear(scope)`` would delete, per table."""
    store = service.store_for(group)
    return {
        table: int(store.execute(f"SELECT count(*) FROM {table}").get) for table in _TABLES[scope]
    }


#: What a person calls the rows of each table ``clear`` empties (singular, plural).
CLEARED_NAMES: dict[str, tuple[str, str]] = {
    "memory_entries": ("memory", "memories"),
    "trash": ("memory in the trash", "memories in the trash"),
    "exchanges": ("conversation turn", "conversation turns"),
    "session_handoffs": ("session handoff", "session handoffs"),
    "thread_handoffs": ("version of a thread handoff", "versions of thread handoffs"),
    "attachment_receipt_turns": (
        "record of a file attached to a turn",
        "records of files attached to turns",
    ),
    "attachment_receipts": ("attachment receipt", "attachment receipts"),
    "threads": ("thread", "threads"),
    "claim_decisions": ("decision on a claim", "decisions on claims"),
    "claims": ("claim", "claims"),
}


def cleared_text(counts: dict[str, int]) -> str:
    """``12 memories, 3 memories in the trash``: what ``clear`` counts (or deleted), in
    words; empty when there is nothing."""
    return ", ".join(plural(n, *CLEARED_NAMES[table]) for table, n in counts.items() if n)


_TABLES: dict[Scope, tuple[str, ...]] = {
    Scope.EPISODIC: ("exchanges", "session_handoffs"),
    # Clearing memories clears what agents deleted too: it is memory content.
    Scope.SEMANTIC: ("memory_entries", "trash"),
    Scope.ALL: (
        "memory_entries",
        "trash",
        "exchanges",
        "session_handoffs",
        "thread_handoffs",
        "attachment_receipt_turns",
        "attachment_receipts",
        "threads",
        # A claim's text and its decisions' confirmed text are memory too (its
        # sources go with it); the claims mode is a setting and stays.
        "claim_decisions",
        "claims",
    ),
}


_INDEXES: dict[Scope, tuple[Index, ...]] = {
    Scope.EPISODIC: (Index.EXCHANGES, Index.LAYERS),
    Scope.SEMANTIC: (Index.ENTRIES,),
    Scope.ALL: (Index.ENTRIES, Index.EXCHANGES, Index.LAYERS, Index.CLAIMS),
}


def clear(
    service: Workspace,
    caller: Caller,
    scope: Scope,
    *,
    with_turns: Callable[[GroupStore], object],
) -> dict[str, int]:
    """Delete a whole kind of memory (and ``with_turns`` what came from the turns);
    the audit log keeps the counts."""
    require_operator(caller, "clearing memory")
    store = service.store_for(caller.group)
    counts = clear_counts(service, caller.group, scope)
    with store.transaction():
        for table in _TABLES[scope]:
            store.execute(f"DELETE FROM {table}")
        with_turns(store)
        audit.record(
            store,
            Action.CLEAR,
            caller.actor,
            session_id=caller.session_id,
            count=sum(counts.values()),
            scope=scope.value,
            tables=counts,
        )
    scrub(store, _INDEXES[scope])
    service.emit(
        Changes(
            group=store.group,
            entries=True,
            review=True,
            audit=True,
            threads=True,
            attachments=True,
            claims=scope is Scope.ALL,
        )
    )
    return counts
