"""Removing a tag from many memories, and taking a change of tags back exactly
(core.memory.bulk.remove_tag, core.memory.tag_undo)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from core.memory import bulk, curation, trash
from core.memory.batching import Batching
from core.memory.tag_undo import Since, undo_tags
from core.memory.writing import StoreRequest
from core.model.entries import EntryType, Privacy, Source, SourceType, Status, Trust
from core.model.errors import Forbidden, InvalidParams
from core.service import Caller, MemoryService
from core.storage import audit
from tests.core.test_tagging import current, kept, three


def every_row(service: MemoryService) -> dict[str, dict[str, Any]]:
    """Every memory row exactly as stored, by id."""
    cursor = service.store_for("main").execute("SELECT * FROM memory_entries ORDER BY id")
    names = [d[0] for d in cursor.getdescription()]
    found = (dict(zip(names, r, strict=True)) for r in cursor)
    return {str(row["id"]): row for row in found}


def test_an_undone_tag_leaves_every_row_exactly_as_it_was(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = list(three(service, operator, agent).values())
    pinned = service.store(operator, {"type": "fact", "content": "Pinned note"}).entry.id
    service.set_pinned(operator, pinned, True)
    ids.append(pinned)
    before = every_row(service)
    vectors = service.store_for("main").execute("SELECT count(*) FROM memory_vectors").get
    time.sleep(0.002)  # the tag's times differ from the stored ones
    done = bulk.add_tag(service, operator, ids, "checked").result
    assert len(done.done) == 4 and every_row(service) != before
    time.sleep(0.002)
    undone = undo_tags(service, operator, done.done).result
    assert [c.old for c in undone.undone] == ids and undone.left == ()
    # The versions from before are current again, with their ids and every column
    # as they were (times, provenance, status, source, confidence, staleness, pin),
    # and the tag versions are gone for good: not in the trash, nor in any history.
    assert every_row(service) == before
    assert trash.list_trash(service, "main") == []
    assert all(len(service.history("main", i)) == 1 for i in ids)
    assert service.store_for("main").execute("SELECT count(*) FROM memory_vectors").get == vectors
    assert curation.candidate_ids(service.store_for("main")) == [ids[0]]
    rows = audit.recent(service.store_for("main"), actions=["update"], limit=2)
    assert rows[0].detail == {"field": "tags", "undo": True} and rows[0].count == 4
    assert sorted(rows[0].entry_ids) == sorted(i for c in done.done for i in (c.old, c.new))


def test_an_undo_leaves_a_memory_changed_since_the_tag_and_says_why(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = [
        service.store(operator, {"type": "fact", "content": f"Note {i}", "tags": ["a"]}).entry.id
        for i in range(6)
    ]
    done = bulk.add_tag(service, operator, ids, "checked").result
    new = {c.old: c.new for c in done.done}
    # After the tag: one edited, one deleted by an agent, one tagged again, one pinned,
    # one re-observed by an agent (a reinforcement, kept by the undo), one untouched.
    edit = StoreRequest(EntryType.FACT, "Note 0, edited", ("a", "checked"), supersedes=new[ids[0]])
    edited = service.store_entries(operator, [edit])[0].entry.id
    service.delete(agent, new[ids[1]])
    again = bulk.add_tag(service, operator, [new[ids[2]]], "more").result.done[0].new
    service.set_pinned(operator, new[ids[3]], True)
    service.store_for("main").execute(
        "UPDATE memory_entries SET confidence = 0.4, effective_confidence = 0.4 WHERE id = ?",
        (new[ids[4]],),
    )
    service.store(agent, {"type": "fact", "content": "Note 4", "tags": ["a", "checked"]})
    reinforced = service.get("main", new[ids[4]]).confidence
    assert reinforced > 0.4
    undone = undo_tags(service, operator, done.done).result
    assert [c.old for c in undone.undone] == [ids[4], ids[5]]
    assert [(c.old, why) for c, why in undone.left] == [
        (ids[0], Since.REPLACED),
        (ids[1], Since.DELETED),
        (ids[2], Since.REPLACED),
        (ids[3], Since.CHANGED),
    ]
    # What changed since stays as it is.
    assert current(service, new[ids[0]]).id == edited
    assert current(service, new[ids[2]]).id == again
    assert service.get("main", new[ids[3]]).pinned
    # Undone: the old versions current again; the re-observation is kept.
    back = service.get("main", ids[4])
    assert back.superseded_by is None and back.tags == ("a",)
    assert back.confidence == pytest.approx(reinforced)
    row = audit.recent(service.store_for("main"), actions=["update"], limit=1)[0]
    assert row.count == 2 and row.detail["left"] == [new[i] for i in ids[:4]]


def test_remove_tag_keeps_all_else_and_leaves_memories_without_it_alone(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = list(three(service, operator, agent).values())
    for entry_id in ids:
        bulk.add_tag(service, operator, [entry_id], "Web")
    tagged = [current(service, i) for i in ids]
    plain = service.store(operator, {"type": "fact", "content": "No tags", "tags": ["x"]}).entry
    rows = every_row(service)
    done = bulk.remove_tag(service, operator, [*(e.id for e in tagged), plain.id], " web ")
    assert (done.done, done.total, done.result.unchanged) == (4, 4, 1)
    for entry in tagged:
        new = current(service, entry.id)
        assert new.tags == () and kept(new) == kept(entry)
    # The one without the tag: no new version, its row untouched.
    assert every_row(service)[plain.id] == rows[plain.id]
    assert len(service.history("main", plain.id)) == 1
    row = audit.recent(service.store_for("main"), actions=["update"], limit=1)[0]
    assert row.count == 3 and row.detail == {"field": "tags", "versions": True}
    # Undone: the tag is back, on the versions that had it.
    undone = undo_tags(service, operator, done.result.done).result
    assert [c.old for c in undone.undone] == [e.id for e in tagged]
    assert [service.get("main", e.id).tags for e in tagged] == [("Web",)] * 3


def test_removing_a_tag_none_has_writes_nothing(service: MemoryService, operator: Caller) -> None:
    entry = service.store(operator, {"type": "fact", "content": "Plain", "tags": ["a"]}).entry
    before = every_row(service)
    done = bulk.remove_tag(service, operator, [entry.id], "b")
    assert done.result.done == () and done.result.unchanged == 1
    assert every_row(service) == before
    assert audit.recent(service.store_for("main"), actions=["update"]) == []
    with pytest.raises(InvalidParams, match="the tag is empty"):
        bulk.remove_tag(service, operator, [entry.id], " \t")


@pytest.mark.usefixtures("memory_keyring")
def test_an_undo_in_batches_stops_between_them_and_is_one_audit_row(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = [
        service.store(operator, {"type": "fact", "content": f"N {i}"}).entry.id for i in range(5)
    ]
    private = service.store(
        operator, {"type": "fact", "content": "Private N", "privacy": Privacy.PRIVATE.value}
    ).entry.id
    before = every_row(service)
    done = bulk.add_tag(service, operator, [*ids, private], "b", Batching(2)).result
    stop = Batching(2, lambda *_: None, lambda: True)
    first = undo_tags(service, operator, done.done, stop)
    assert (first.done, first.total) == (2, 6)
    assert [service.get("main", i).superseded_by is None for i in ids] == [True, True] + [False] * 3
    rest = undo_tags(service, operator, done.done[first.done :], Batching(2))
    assert rest.done == 4 and len(rest.result.undone) == 4
    assert every_row(service) == before
    rows = audit.recent(service.store_for("main"), actions=["update"], limit=3)
    assert [r.detail.get("undo") for r in rows] == [True, True, None]
    assert rows[1].detail["stopped"] is True and rows[1].count == 2
    with pytest.raises(Forbidden):
        undo_tags(service, agent, done.done)


def test_an_undone_candidate_still_awaits_review(service: MemoryService, operator: Caller) -> None:
    candidate = service.store_entries(
        operator,
        [
            StoreRequest(
                EntryType.FACT, "A page says so", source=Source(SourceType.WEB_CONTENT, Trust.LOW)
            )
        ],
    )[0].entry.id
    done = bulk.add_tag(service, operator, [candidate], "web").result
    assert undo_tags(service, operator, done.done).result.undone
    assert service.get("main", candidate).status is Status.CANDIDATE
    assert curation.candidate_ids(service.store_for("main")) == [candidate]
