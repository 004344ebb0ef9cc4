from __future__ import annotations

import pytest

from core.memory import bulk, curation
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
    bulk.restore_all(service, operator, deleted.entries, deleted.places)
    assert [service.get("main", i) for i in [*ids, old]] == before
    assert {r.id for r in service.search(operator, {"query": "fact"})} == set(ids)
    assert service.list_ids("main", EntryFilter(tags=("t",))) != []
    with pytest.raises(Conflict):
        bulk.restore_all(service, operator, deleted.entries, deleted.places)


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


def _deferred_at(service: MemoryService, entry_id: str) -> str | None:
    row = service.store_for("main").execute(
        "SELECT deferred_at FROM memory_entries WHERE id = ?", (entry_id,)
    )
    return str(row.get) if row else None


def test_an_accept_is_returned_to_review_as_it_was(
    service: MemoryService, operator: Caller
) -> None:
    a = _candidate(service, operator, "Deploys go out on Tuesdays")
    b = _candidate(service, operator, "Staging runs on port 8080")
    curation.review(service, operator, [b], Decision.DEFER)
    deferred = _deferred_at(service, b)
    assert deferred is not None
    _, accepted = curation.accept(service, operator, [a, b])
    assert "Deploys go out" in service.build_brief("main").markdown

    done = curation.return_to_review(service, operator, accepted)
    assert done.returned == (a, b) and done.left == ()
    assert [e.id for e in curation.candidates(service, "main")] == [a, b]
    for entry_id in (a, b):
        entry = service.get("main", entry_id)
        assert entry.status is Status.CANDIDATE and entry.review_reason == "low-trust source"
    assert _deferred_at(service, b) == deferred
    assert "Deploys go out" not in service.build_brief("main").markdown
    row = audit.recent(service.store_for("main"), limit=1)[0]
    assert (row.action, row.actor, row.entry_ids, row.count) == (
        "review_undo",
        "operator",
        [a, b],
        2,
    )
    # Awaiting review again, so it can be decided again.
    curation.review(service, operator, [a], Decision.ACCEPT)
    assert service.get("main", a).status is Status.ACTIVE


def test_undoing_an_accept_makes_the_entry_it_replaced_current_again(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    good = service.store(agent, {"type": "fact", "content": "Bank is Acme Credit Union"}).entry
    bad = service.store(
        agent,
        {
            "type": "fact",
            "content": "Bank is Evil Corp",
            "supersedes": good.id,
            "source": {"type": "web_content"},
        },
    ).entry
    _, accepted = curation.accept(service, operator, [bad.id])
    assert accepted[0].superseded == good.id
    assert service.get("main", good.id).superseded_by == bad.id
    assert "Acme" not in service.build_brief("main").markdown

    done = curation.return_to_review(service, operator, accepted)
    assert done.returned == (bad.id,) and done.left == ()
    old = service.get("main", good.id)
    assert old.superseded_by is None and old.superseded_at is None
    assert [r.id for r in service.search(agent, {"query": "bank"})] == [good.id]
    brief = service.build_brief("main").markdown
    assert "Acme" in brief and "Evil Corp" not in brief
    assert service.get("main", bad.id).status is Status.CANDIDATE
    # Its pending replacement came back too: accepting again replaces the old one again.
    curation.review(service, operator, [bad.id], Decision.ACCEPT)
    assert service.get("main", good.id).superseded_by == bad.id


def test_accepts_changed_since_are_left_alone_and_reported(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    edited = _candidate(service, operator, "Office is in Berlin")
    deleted = _candidate(service, operator, "Printer is on floor 2")
    kept = _candidate(service, operator, "Lunch is at noon")
    old = service.store(agent, {"type": "fact", "content": "Team size is 5"}).entry.id
    replacing = service.store(
        agent,
        {
            "type": "fact",
            "content": "Team size is 6",
            "supersedes": old,
            "source": {"type": "web_content"},
        },
    ).entry.id
    _, accepted = curation.accept(service, operator, [edited, deleted, kept, replacing])
    newer = service.store(
        operator, {"type": "fact", "content": "Office is in Munich", "supersedes": edited}
    ).entry.id
    # The entry that the accept replaced is deleted since, from its history.
    curation.delete_many(service, operator, [deleted, old])

    done = curation.return_to_review(service, operator, accepted)
    assert done.returned == (kept,)
    assert done.left == (edited, deleted, replacing)
    assert service.get("main", edited).superseded_by == newer
    assert service.get("main", edited).status is Status.ACTIVE
    assert service.get("main", replacing).status is Status.ACTIVE
    assert [e.id for e in curation.candidates(service, "main")] == [kept]
    store = service.store_for("main")
    last = audit.recent(store, limit=1)[0]
    assert (last.action, last.entry_ids) == ("review_undo", [kept])

    nothing = curation.return_to_review(service, operator, accepted)
    assert nothing.returned == () and len(nothing.left) == 4
    assert audit.recent(store, limit=1)[0].id == last.id  # nothing done, nothing recorded


def test_an_accept_whose_replaced_entry_was_replaced_again_is_left(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    old = service.store(agent, {"type": "fact", "content": "Team size is 5"}).entry.id
    replacing = service.store(
        agent,
        {
            "type": "fact",
            "content": "Team size is 6",
            "supersedes": old,
            "source": {"type": "web_content"},
        },
    ).entry.id
    _, accepted = curation.accept(service, operator, [replacing])
    # The accepted entry is current, but the old one no longer points at it.
    store = service.store_for("main")
    with store.transaction():
        store.mark_superseded(old, "mem-elsewhere", "2026-01-01T00:00:00.000Z")
    done = curation.return_to_review(service, operator, accepted)
    assert done.returned == () and done.left == (replacing,)
    assert service.get("main", replacing).status is Status.ACTIVE
    assert service.get("main", old).superseded_by == "mem-elsewhere"


def test_only_the_person_returns_accepts_to_review(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    c = _candidate(service, operator, "Candidate")
    _, accepted = curation.accept(service, operator, [c])
    with pytest.raises(Forbidden):
        curation.return_to_review(service, agent, accepted)
    assert service.get("main", c).status is Status.ACTIVE


def _phone(service: MemoryService, agent: Caller) -> tuple[str, str, str]:
    """A, a candidate B written to replace A, and C, which replaced A while B waited."""
    a = service.store(agent, {"type": "fact", "content": "User's phone is a Pixel 7"}).entry.id
    b = service.store(
        agent,
        {
            "type": "fact",
            "content": "User's phone is an iPhone 15",
            "supersedes": a,
            "source": {"type": "web_content"},
        },
    ).entry.id
    c = service.store(
        agent, {"type": "fact", "content": "User's phone is a Galaxy S24", "supersedes": a}
    ).entry.id
    return a, b, c


def test_an_accept_replaces_the_version_that_replaced_its_target_while_it_waited(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    a, b, c = _phone(service, agent)
    _, accepted = curation.accept(service, operator, [b])

    assert (accepted[0].pending_supersedes, accepted[0].superseded) == (a, c)
    assert accepted[0].replaced_since
    # One current version of the fact: B, after A and C.
    assert [e.id for e in service.history("main", b)] == [a, c, b]
    assert service.get("main", c).superseded_by == b
    brief = service.build_brief("main").markdown
    assert "iPhone 15" in brief and "Galaxy" not in brief and "Pixel" not in brief
    row = audit.recent(service.store_for("main"), limit=1)[0]
    assert (row.action, row.detail["pending_supersedes"], row.detail["superseded"]) == (
        "review_accept",
        a,
        c,
    )

    # Taken back: C is current again, and B waits to replace A, as it was written to.
    done = curation.return_to_review(service, operator, accepted)
    assert done.returned == (b,)
    assert service.get("main", c).superseded_by is None
    brief = service.build_brief("main").markdown
    assert "Galaxy" in brief and "iPhone" not in brief
    pending = service.store_for("main").execute(
        "SELECT pending_supersedes FROM memory_entries WHERE id = ?", (b,)
    )
    assert pending.fetchone()[0] == a


def test_two_candidates_for_one_fact_accepted_together_leave_one_current_version(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    a = service.store(agent, {"type": "fact", "content": "Team size is 5"}).entry.id
    web = {"type": "web_content"}
    b1 = service.store(
        agent, {"type": "fact", "content": "Team size is 6", "supersedes": a, "source": web}
    ).entry.id
    b2 = service.store(
        agent, {"type": "fact", "content": "Team size is 7", "supersedes": a, "source": web}
    ).entry.id
    _, accepted = curation.accept(service, operator, [b1, b2])
    assert [e.id for e in service.history("main", a)] == [a, b1, b2]
    assert [r.id for r in service.search(agent, {"query": "team size"})] == [b2]

    # Undone together, later accept first: A is current again, and both wait.
    done = curation.return_to_review(service, operator, accepted)
    assert done.returned == (b1, b2) and done.left == ()
    assert [r.id for r in service.search(agent, {"query": "team size"})] == [a]
    assert [e.id for e in curation.candidates(service, "main")] == [b1, b2]
