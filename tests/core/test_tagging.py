"""A change of tags is a new version that keeps everything else: status, source,
trust, confidence, staleness and privacy (core.memory.tagging)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from core.cli.main import main
from core.memory import curation, tagging
from core.memory.writing import StoreRequest
from core.model.entries import (
    EntryType,
    MemoryEntry,
    Source,
    SourceType,
    Status,
    Trust,
    iso,
    utc_now,
)
from core.model.errors import InvalidParams
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir

KEPT = ("status", "review_reason", "source", "confidence", "privacy", "pinned", "stale")


def kept(entry: MemoryEntry) -> tuple[object, ...]:
    fields = tuple(getattr(entry, name) for name in KEPT)
    return (*fields, round(entry.effective_confidence or 0, 6), entry.last_seen_at)


def three(service: MemoryService, operator: Caller, agent: Caller) -> dict[str, str]:
    """A web candidate, a tool's memory and a stale one, by name."""
    low = Source(SourceType.WEB_CONTENT, Trust.LOW)
    web = StoreRequest(EntryType.FACT, "A page says the API moved", source=low)
    candidate = service.store_entries(operator, [web])[0].entry.id
    tool = service.store(
        agent,
        {"type": "fact", "content": "The build takes 4 minutes", "source": {"type": "tool_output"}},
    ).entry.id
    stale = service.store(agent, {"type": "fact", "content": "Uses a ThinkPad"}).entry.id
    when = iso(utc_now() - timedelta(days=400))
    service.store_for("main").execute(
        "UPDATE memory_entries SET last_seen_at = ?, created_at = ? WHERE id = ?",
        (when, when, stale),
    )
    service.refresh_decay("main", force=True)
    return {"candidate": candidate, "tool": tool, "stale": stale}


def current(service: MemoryService, old: str) -> MemoryEntry:
    chain = service.history("main", old)
    assert chain[-2].id == old and chain[-1].superseded_by is None
    return chain[-1]


def test_bulk_add_tag_keeps_status_source_confidence_and_staleness(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    ids = three(service, operator, agent)
    store = service.store_for("main")
    before = store.get_many(list(ids.values()))
    assert before[ids["candidate"]].status is Status.CANDIDATE
    assert before[ids["tool"]].source == Source(SourceType.TOOL_OUTPUT, Trust.MEDIUM)
    assert before[ids["stale"]].stale
    done = tagging.add_tag(service, operator, list(ids.values()), "checked")
    assert len(done.versions) == 3
    for old in ids.values():
        new = current(service, old)
        assert new.tags == ("checked",)
        assert kept(new) == kept(before[old])
    # Still out of the brief, still awaiting review, and the review accepts the new version.
    brief = service.brief(agent).markdown
    assert "ThinkPad" not in brief and "API moved" not in brief
    waiting = curation.candidate_ids(store)
    assert waiting == [current(service, ids["candidate"]).id]
    # One bulk action, one audit row naming every old and new version.
    rows = audit.recent(store, actions=["update", "store", "supersede"], limit=5)
    assert [(r.action, r.count, r.detail) for r in rows[:1]] == [
        ("update", 3, {"field": "tags", "versions": True})
    ]
    assert rows[0].entry_ids == [i for pair in done.versions for i in pair]
    assert [r.action for r in rows[1:]] != ["supersede"]  # no row per memory


def test_a_tag_edit_of_a_candidate_waiting_to_replace_a_memory_still_waits(
    service: MemoryService, operator: Caller
) -> None:
    first = service.store(operator, {"type": "fact", "content": "Office is on floor 2"}).entry.id
    web = StoreRequest(
        EntryType.FACT,
        "Office is on floor 3",
        supersedes=first,
        source=Source(SourceType.WEB_CONTENT, Trust.LOW),
    )
    candidate = service.store_entries(operator, [web])[0].entry.id
    done = tagging.add_tag(service, operator, [candidate], "office")
    new = done.versions[0][1]
    curation.accept(service, operator, [new])
    assert service.get("main", first).superseded_by == new
    assert service.get("main", new).status is Status.ACTIVE


def test_the_person_storing_the_same_text_in_place_is_a_tag_edit(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    """The editor's Save (and ``ambry store``) of a memory's own text with new tags."""
    ids = three(service, operator, agent)
    before = service.store_for("main").get_many(list(ids.values()))
    for old in ids.values():
        entry = before[old]
        request = StoreRequest(entry.type, entry.content, ("a", "b"), supersedes=old)
        outcome = service.store_entries(operator, [request])[0]
        assert outcome.created and outcome.superseded == old
        assert outcome.entry.tags == ("a", "b") and kept(outcome.entry) == kept(entry)
    # Removing a tag is the same.
    new = current(service, ids["tool"])
    outcome = service.store_entries(
        operator, [StoreRequest(new.type, new.content, ("a",), supersedes=new.id)]
    )[0]
    assert outcome.entry.tags == ("a",) and kept(outcome.entry) == kept(before[ids["tool"]])
    # A change of the text is the person's own new version, as before.
    edited = service.store_entries(
        operator,
        [StoreRequest(EntryType.FACT, "The build takes 3 minutes", supersedes=outcome.entry.id)],
    )[0].entry
    assert edited.source.type is SourceType.OPERATOR and edited.status is Status.ACTIVE


def test_cli_store_of_the_same_text_keeps_the_source_unless_one_is_named(
    service: MemoryService, operator: Caller, agent: Caller, data_dir: DataDir
) -> None:
    ids = three(service, operator, agent)
    tool = service.get("main", ids["tool"])
    args = ["--data-dir", str(data_dir.root), "store", tool.content, "--tags", "ci"]
    assert main([*args, "--supersedes", tool.id]) == 0
    new = current(service, tool.id)
    assert new.tags == ("ci",) and kept(new) == kept(tool)
    assert main([*args, "--supersedes", new.id, "--source", "operator"]) == 0
    assert current(service, new.id).source.type is SourceType.OPERATOR


def test_bulk_add_tag_refuses_what_it_cannot_add_and_says_why(
    service: MemoryService, operator: Caller
) -> None:
    full = service.store(
        operator, {"type": "fact", "content": "Ten tags", "tags": [f"t{i}" for i in range(10)]}
    ).entry.id
    with pytest.raises(InvalidParams, match="already holds 10 tags"):
        tagging.add_tag(service, operator, [full], "more")
    with pytest.raises(InvalidParams, match="looks like a secret"):
        tagging.add_tag(service, operator, [full], "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    assert service.history("main", full) == [service.get("main", full)]
