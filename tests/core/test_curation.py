from __future__ import annotations

import pytest

from core.memory import curation
from core.memory.curation import Decision
from core.model.entries import EntryFilter, Status
from core.model.errors import Conflict, Forbidden, NotFound
from core.service import Caller, MemoryService
from core.storage import audit


def _candidate(service: MemoryService, operator: Caller, text: str) -> str:
    entry_id = service.store(operator, {"type": "fact", "content": text}).entry.id
    service.store_for("main").update_fields(
        entry_id, status="candidate", review_reason="low-trust source"
    )
    return entry_id


def test_review_accept_reject_defer(service: MemoryService, operator: Caller) -> None:
    a = _candidate(service, operator, "Candidate A")
    b = _candidate(service, operator, "Candidate B")
    c = _candidate(service, operator, "Candidate C")
    assert "Candidate A" not in service.build_brief("main").markdown
    curation.review(service, operator, [c], Decision.DEFER)
    assert [e.id for e in curation.candidates(service, "main")] == [a, b, c]
    curation.review(service, operator, [a], Decision.ACCEPT)
    curation.review(service, operator, [b], Decision.REJECT)
    assert service.get("main", a).status is Status.ACTIVE
    assert "Candidate A" in service.build_brief("main").markdown
    with pytest.raises(NotFound):
        service.get("main", b)
    with pytest.raises(Conflict, match="not awaiting review"):
        curation.review(service, operator, [a], Decision.ACCEPT)
    actions = [r.action for r in audit.recent(service.store_for("main"), limit=3)]
    assert actions == ["review_reject", "review_accept", "review_defer"]


def test_candidates_stored_in_the_same_millisecond_keep_their_order(
    service: MemoryService, operator: Caller
) -> None:
    ids = [_candidate(service, operator, f"Seen at the same instant {i}") for i in range(4)]
    store = service.store_for("main")
    with store.transaction():
        store.execute("UPDATE memory_entries SET created_at = '2026-01-01T00:00:00.000Z'")
    assert [e.id for e in curation.candidates(service, "main")] == ids


def test_private_candidates_are_listed_readable(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    text = "Private note awaiting review"
    entry_id = service.store(
        operator, {"type": "fact", "content": text, "privacy": "private"}
    ).entry.id
    service.store_for("main").update_fields(entry_id, status="candidate")
    assert [e.content for e in curation.candidates(service, "main")] == [text]


def test_agents_cannot_curate(service: MemoryService, operator: Caller, agent: Caller) -> None:
    c = _candidate(service, operator, "Candidate")
    with pytest.raises(Forbidden):
        curation.review(service, agent, [c], Decision.ACCEPT)
    with pytest.raises(Forbidden):
        curation.delete_many(service, agent, [c])
    assert service.get("main", c).status is Status.CANDIDATE


def test_bulk_delete_then_undo_restores_everything(
    service: MemoryService, operator: Caller
) -> None:
    ids = [
        service.store(operator, {"type": "fact", "content": f"fact {i}", "tags": ["t"]}).entry.id
        for i in range(3)
    ]
    old = service.store(operator, {"type": "fact", "content": "old"}).entry.id
    service.store(operator, {"type": "fact", "content": "new", "supersedes": old})
    before = [service.get("main", i) for i in [*ids, old]]
    _, deleted = curation.delete_many(service, operator, [*ids, old])
    assert service.search(operator, {"query": "fact"}) == []
    curation.restore(service, operator, deleted)
    assert [service.get("main", i) for i in [*ids, old]] == before
    assert {r.id for r in service.search(operator, {"query": "fact"})} == set(ids)
    assert service.list_ids("main", EntryFilter(tags=("t",))) != []
    with pytest.raises(Conflict):
        curation.restore(service, operator, deleted)


def test_bulk_delete_of_unknown_id_deletes_nothing(
    service: MemoryService, operator: Caller
) -> None:
    a = service.store(operator, {"type": "fact", "content": "keep me"}).entry.id
    with pytest.raises(NotFound):
        curation.delete_many(service, operator, [a, "mem-missing"])
    assert service.get("main", a)


def test_candidates_among_many_ids_are_counted_in_one_query(
    service: MemoryService, operator: Caller
) -> None:
    active = [
        service.store(operator, {"type": "fact", "content": f"Note {i}"}).entry.id
        for i in range(1_200)
    ]
    waiting = [_candidate(service, operator, f"Maybe {i}") for i in range(3)]
    assert service.candidate_count("main", [*active, *waiting]) == 3
    assert service.candidate_count("main", [*active, waiting[0], "no-such-id"]) == 1
    assert service.candidate_count("main", []) == 0
    store = service.store_for("main")
    assert store.count_status(active[:10], Status.ACTIVE) == 10
