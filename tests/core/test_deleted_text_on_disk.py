"""Deleted text leaves the disk: after forget, review reject, delete and clear, no
byte of it remains in the database, its write-ahead log or its shared memory."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from core.claims import gate
from core.claims.model import SourceState
from core.claims.records import get_claim
from core.claims.verify import verify_claim
from core.continuity import episodes, handoffs, session_handoffs, threads
from core.continuity.context import enter_thread
from core.memory import curation, forgetting
from core.memory.curation import Decision
from core.memory.forgetting import Scope
from core.model.entries import Actor, EntryFilter, Status
from core.service import Caller, MemoryService

# Porter stemming leaves a word ending in digits alone, and a term is stored
# after the prefix it shares with the one before it: search for its tail.
WORD = "zorblaxquintet47"
TAIL = WORD[3:].encode()
#: Words inside Chinese text are kept as pairs of characters too (the gram index,
#: core.storage.fts.text_grams), each pair a term: the rare second character of a
#: pair is stored in full even after the prefix a term shares with the one before.
CJK = "暗号是鸑鷟"
CJK_TAIL = "鷟".encode()
_ANY = EntryFilter(statuses=(Status.ACTIVE, Status.CANDIDATE), include_superseded=True)


def _files(service: MemoryService, group: str = "main") -> list[Path]:
    db = service.data_dir.group_db(group)
    return [db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")]


def _on_disk(service: MemoryService) -> list[str]:
    return [
        p.name
        for p in _files(service)
        if p.exists() and (TAIL in p.read_bytes() or CJK_TAIL in p.read_bytes())
    ]


def _fill(service: MemoryService, operator: Caller, n: int = 40) -> None:
    # Separate transactions make separate index segments, as real use does.
    for i in range(n):
        service.store(operator, {"type": "fact", "content": f"Ordinary note {i} about the garden."})


def _forget(service: MemoryService, operator: Caller) -> None:
    service.forget(operator, forgetting.plan_forget(service, "main", WORD))


def _delete(service: MemoryService, operator: Caller) -> None:
    (entry_id,) = service.list_ids("main", _ANY, WORD)
    service.delete(operator, entry_id)


def _delete_many(service: MemoryService, operator: Caller) -> None:
    ids = service.list_ids("main", _ANY, WORD)
    curation.delete_many(service, operator, ids)


def _reject(service: MemoryService, operator: Caller) -> None:
    ids = curation.candidate_ids(service.store_for("main"))
    curation.review(service, operator, ids, Decision.REJECT)


def _clear(scope: Scope) -> Callable[[MemoryService, Caller], None]:
    def run(service: MemoryService, operator: Caller) -> None:
        service.clear(operator, scope)

    return run


@pytest.mark.parametrize(
    ("how", "where"),
    [
        (_forget, "entry"),
        (_forget, "exchange"),
        (_forget, "handoff"),
        (_forget, "session handoff"),
        (_delete, "entry"),
        (_delete_many, "entry"),
        (_reject, "candidate"),
        (_clear(Scope.SEMANTIC), "entry"),
        (_clear(Scope.EPISODIC), "exchange"),
        (_clear(Scope.ALL), "entry"),
        (_clear(Scope.ALL), "exchange"),
    ],
    ids=[
        "forget-entry",
        "forget-exchange",
        "forget-handoff",
        "forget-session-handoff",
        "delete",
        "delete-many",
        "reject",
        "clear-semantic",
        "clear-episodic",
        "clear-all-entry",
        "clear-all-exchange",
    ],
)
def test_deleted_text_leaves_every_file(
    service: MemoryService,
    operator: Caller,
    how: Callable[[MemoryService, Caller], None],
    where: str,
) -> None:
    _fill(service, operator)
    text = f"The shed code word is {WORD} for now. {CJK}"
    if where == "entry":
        service.store(operator, {"type": "fact", "content": text, "tags": [WORD]})
    elif where == "candidate":
        agent = service.open_session("main", Actor.AGENT, "bot")
        service.store(agent, {"type": "fact", "content": text, "source": {"type": "web_content"}})
    elif where == "handoff":
        # Current and earlier: every version that holds it goes.
        thread, _ = threads.open_thread(service, operator, title="Shed")
        handoffs.write_handoff(service, operator, thread.id, f"- {text}")
        handoffs.write_handoff(service, operator, thread.id, f"- {text}\n- Oil the hinges")
    elif where == "session handoff":
        agent = enter_thread(service, service.open_session("main", Actor.AGENT, "bot"), "Shed")
        session_handoffs.end_session_with_handoff(service, agent.caller, text)
    else:
        agent = service.open_session("main", Actor.AGENT, "bot")
        episodes.log_exchange(service, agent, "user", text)
    _fill(service, operator)
    store = service.store_for("main")
    store.execute("PRAGMA wal_checkpoint(PASSIVE)")  # the word is in the database file too
    assert _on_disk(service)

    how(service, operator)

    assert _on_disk(service) == []
    wal = _files(service)[1]
    assert not wal.exists() or wal.stat().st_size == 0
    if store.total():  # search still works on what is left
        assert service.list_ids("main", _ANY, "garden")


def _cite(service: MemoryService, operator: Caller, where: str) -> str:
    """A claim (its own words) citing a source that holds WORD; returns its id."""
    text = f"The shed code word is {WORD} for now. {CJK}"
    agent = service.open_session("main", Actor.AGENT, "bot")
    if where == "entry":
        stored = service.store(operator, {"type": "fact", "content": text})
        source: dict[str, object] = {"kind": "memory", "id": stored.entry.id}
    elif where == "handoff":
        thread, _ = threads.open_thread(service, operator, title="Shed")
        handoffs.write_handoff(service, operator, thread.id, f"- {text}")
        source = {"kind": "handoff", "thread": thread.id}
    else:
        logged = episodes.log_exchange(service, agent, "user", text)
        source = {"kind": "exchange", "id": logged.exchange.id}
    args = {"text": "The shed has a code word", "kind": "fact", "sources": [source]}
    return gate.propose(service, agent, args).claim.id


def _delete_thread(service: MemoryService, operator: Caller) -> None:
    (thread,) = service.store_for("main").execute("SELECT id FROM threads")
    threads.delete_thread(service, operator, str(thread[0]))


@pytest.mark.parametrize(
    ("how", "where"),
    [
        (_delete, "entry"),
        (_forget, "entry"),
        (_clear(Scope.SEMANTIC), "entry"),
        (_clear(Scope.EPISODIC), "exchange"),
        (_delete_thread, "handoff"),
    ],
    ids=["delete", "forget-entry", "clear-semantic", "clear-episodic", "delete-thread"],
)
def test_a_claim_keeps_no_quote_of_a_deleted_source(
    service: MemoryService,
    operator: Caller,
    how: Callable[[MemoryService, Caller], None],
    where: str,
) -> None:
    claim_id = _cite(service, operator, where)
    store = service.store_for("main")
    assert WORD in get_claim(store, claim_id).sources[0].quote
    store.execute("PRAGMA wal_checkpoint(PASSIVE)")
    assert _on_disk(service)

    how(service, operator)

    assert _on_disk(service) == []
    # The claim stays, with its handle and hash, and says its source is gone.
    [source] = get_claim(store, claim_id).sources
    assert source.quote == "" and source.source_sha256
    assert verify_claim(store, get_claim(store, claim_id)).state is SourceState.MISSING


@pytest.mark.parametrize("how", ["delete", "rename"])
def test_a_thread_title_deleted_or_renamed_leaves_the_planner_samples(
    service: MemoryService, operator: Caller, how: str
) -> None:
    store = service.store_for("main")
    thread, _ = threads.open_thread(service, operator, title=f"Divorce lawyer {WORD}")
    threads.open_thread(service, operator, title="Garden plans")
    store.execute("ANALYZE")  # what PRAGMA optimize does when a store closes
    store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert store.execute(
        "SELECT count(*) FROM sqlite_stat4 WHERE instr(CAST(sample AS BLOB), ?)", (TAIL,)
    ).get
    if how == "delete":
        threads.delete_thread(service, operator, thread.id)
    else:
        threads.rename_thread(service, operator, thread.id, "Health")
    assert _on_disk(service) == []
