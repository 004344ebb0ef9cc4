from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest

from core.model.config import Config
from core.model.entries import Actor, EntryFilter, iso, utc_now
from core.model.errors import Conflict, InvalidParams, NotFound, RateLimited
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir


def _store(svc: MemoryService, who: Caller, content: str, **extra: object) -> str:
    return svc.store(who, {"type": "fact", "content": content, **extra}).entry.id


def test_store_derives_fields_and_provenance(service: MemoryService, agent: Caller) -> None:
    out = service.store(
        agent,
        {
            "type": "preference",
            "content": "  Prefers tea  ",
            "tags": ["drinks", " Drinks ", "morning"],
        },
    )
    e = out.entry
    assert out.created
    assert e.id.startswith("mem-") and len(e.id) == 40
    assert e.behavioral is True
    assert e.content == "Prefers tea"
    assert e.tags == ("drinks", "morning")
    assert e.provenance.session_id == agent.session_id
    assert e.provenance.group == "main"
    assert service.get("main", e.id) == e


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"type": "opinion", "content": "x"}, "type"),
        ({"type": "fact", "content": "x" * 2001}, "content"),
        ({"type": "fact", "content": "x", "tags": ["t"] * 11}, "tags"),
        ({"type": "fact", "content": "x", "tags": ["t" * 51]}, "tags.0"),
        ({"type": "fact"}, "content"),
        ({"type": "fact", "content": "x", "session_id": "forged"}, "session_id"),
        ({"type": "fact", "content": "   "}, "content"),
    ],
)
def test_bad_store_arguments_name_the_field(
    service: MemoryService, agent: Caller, args: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidParams) as info:
        service.store(agent, args)
    assert info.value.field == field
    assert service.store_for("main").total() == 0


def test_identical_content_is_not_duplicated(service: MemoryService, agent: Caller) -> None:
    first = service.store(agent, {"type": "fact", "content": "User's dog is named Luna"})
    again = service.store(agent, {"type": "fact", "content": "user's  DOG is named luna "})
    assert not again.created
    assert again.entry.id == first.entry.id
    assert again.entry.provenance.updated_at >= first.entry.provenance.updated_at
    # A different type is a different memory.
    other = service.store(agent, {"type": "context", "content": "User's dog is named Luna"})
    assert other.created
    assert service.store_for("main").total() == 2


def test_storing_the_same_text_again_adds_the_new_tags(
    service: MemoryService, agent: Caller
) -> None:
    from jsonschema import Draft202012Validator

    from core.policy.manifest import load_manifest

    first = service.store(
        agent, {"type": "fact", "content": "User lives in Lisbon", "tags": ["home"]}
    )
    again = service.store(
        agent, {"type": "fact", "content": "User lives in Lisbon", "tags": ["City", "HOME"]}
    )
    assert not again.created and again.entry.id == first.entry.id
    assert again.entry.tags == ("home", "City")
    result = again.to_dict()
    Draft202012Validator(load_manifest()["memory_store"].result_schema).validate(result)
    assert (result["tags_added"], result["tags_not_added"]) == (["City"], [])
    assert [r.id for r in service.search(agent, {"query": "city"})] == [first.entry.id]
    row = audit.recent(service.store_for("main"), actions=["update"])[0]
    assert (row.entry_ids, row.count, row.detail["field"]) == ([first.entry.id], 1, "tags")
    # No room past ten tags: the rest is said, not dropped without a word.
    tags = [f"t{i}" for i in range(9)]
    full = service.store(agent, {"type": "fact", "content": "User lives in Lisbon", "tags": tags})
    assert full.tags_added == tuple(tags[:8]) and full.tags_not_added == ("t8",)
    assert "a memory holds at most 10 tags" in (full.tags_note() or "")


def test_a_write_held_for_review_does_not_tag_an_active_memory(
    service: MemoryService, agent: Caller
) -> None:
    first = _store(service, agent, "User lives in Lisbon")
    held = service.store(
        agent,
        {
            "type": "fact",
            "content": "User lives in Lisbon",
            "tags": ["porto"],
            "source": {"type": "web_content"},
        },
    )
    assert held.entry.id == first and held.entry.tags == ()
    assert held.to_dict()["tags_not_added"] == ["porto"]


@pytest.mark.parametrize(
    "again",
    [
        "prefers dark mode in all editors.",
        "Prefers dark mode in all editors!",
        "Prefers dark mode in all editors\u2026",
        "\uff30refers dark mode in all editors",  # a full-width letter
        "Prefers dark\u200b mode in all edi\u00adtors",  # invisible characters
        "- Prefers dark mode in all editors",  # a list item's mark
        '"Prefers dark mode in all editors."',  # quotes around it
    ],
)
def test_punctuation_at_the_end_does_not_make_a_new_memory(
    service: MemoryService, agent: Caller, again: str
) -> None:
    first = service.store(
        agent, {"type": "preference", "content": "Prefers dark mode in all editors"}
    )
    assert service.store(agent, {"type": "preference", "content": again}).entry.id == first.entry.id
    curly = service.store(agent, {"type": "fact", "content": "User\u2019s dog is named Luna"})
    straight = service.store(agent, {"type": "fact", "content": "User's dog is named Luna."})
    assert not straight.created and straight.entry.id == curly.entry.id
    # Punctuation inside still counts: these say different things.
    assert service.store(
        agent, {"type": "fact", "content": "User's dog is named Luna, not Lu"}
    ).created
    assert service.store_for("main").total() == 3


@pytest.mark.parametrize(
    "again",
    [
        "1. User likes green tea",
        "12) User likes green tea",
        "+ User likes green tea",
        "\u2014 User likes green tea",  # an em dash
        "\u2013 User likes green tea",  # an en dash
        "**User likes green tea**",
        "**User likes green tea.**",
        "- **User likes green tea**",
        "3. `User likes green tea`",
    ],
)
def test_a_numbered_or_bold_list_item_is_the_memory_stored_before(
    service: MemoryService, agent: Caller, again: str
) -> None:
    first = _store(service, agent, "User likes green tea")
    stored = service.store(agent, {"type": "fact", "content": again})
    assert not stored.created and stored.entry.id == first
    # Marks inside the text, or a number that is part of it, still count.
    for other in ("User likes **green** tea", "1.5 cups of green tea", "2024. A good year"):
        assert service.store(agent, {"type": "fact", "content": other}).created


def test_an_entry_stored_before_numbers_and_bold_were_folded_is_still_found(
    service: MemoryService, agent: Caller
) -> None:
    # Its key kept the list number; stored again as it was, it is still that entry.
    first = _store(service, agent, "1. User likes green tea.")
    store = service.store_for("main")
    legacy = hashlib.sha256(b"1. user likes green tea").hexdigest()
    store.execute("UPDATE memory_entries SET content_key = ? WHERE id = ?", (legacy, first))
    again = service.store(agent, {"type": "fact", "content": "1. User likes green tea"})
    assert not again.created and again.entry.id == first


def test_an_entry_stored_under_the_older_key_is_still_found(
    service: MemoryService, agent: Caller
) -> None:
    # Before quotes and final punctuation were folded, the key was the text with
    # case and spacing folded only; such rows stay as they are, and still match.
    first = service.store(agent, {"type": "fact", "content": "Backups run at 2 a.m."})
    store = service.store_for("main")
    legacy = hashlib.sha256(b"backups run at 2 a.m.").hexdigest()
    store.execute(
        "UPDATE memory_entries SET content_key = ? WHERE id = ?", (legacy, first.entry.id)
    )
    again = service.store(agent, {"type": "fact", "content": "backups run at 2  A.M."})
    assert not again.created and again.entry.id == first.entry.id


def test_control_characters_do_not_reach_the_store(service: MemoryService, agent: Caller) -> None:
    # An escape sequence in a memory would reach the person's terminal through `ambry show`.
    stored = service.store(
        agent,
        {"type": "fact", "content": "ctrl\x00 \x1b[31mred\x07\tand\nlines", "tags": ["a\x1bb"]},
    )
    assert stored.entry.content == "ctrl [31mred\tand\nlines"
    assert stored.entry.tags == ("ab",)
    with pytest.raises(InvalidParams, match="must not be empty"):
        service.store(agent, {"type": "fact", "content": "\x00\x1b\x07"})


def test_supersede_hides_the_old_entry(service: MemoryService, agent: Caller) -> None:
    old = _store(service, agent, "Lives in Paris")
    new = service.store(agent, {"type": "fact", "content": "Lives in Lyon", "supersedes": old})
    assert new.superseded == old
    assert service.get("main", old).superseded_by == new.entry.id
    found = [r.id for r in service.search(agent, {"query": "lives"})]
    assert found == [new.entry.id]
    with_old = [r.id for r in service.search(agent, {"query": "lives", "include_superseded": True})]
    assert set(with_old) == {old, new.entry.id}
    assert [e.id for e in service.history("main", new.entry.id)] == [old, new.entry.id]


def test_a_replaced_text_stored_again_names_what_replaced_it(
    service: MemoryService, agent: Caller
) -> None:
    tea = _store(service, agent, "User likes tea", type="preference")
    coffee = _store(service, agent, "User prefers coffee now", type="preference", supersedes=tea)
    again = service.store(agent, {"type": "preference", "content": "User likes tea."})
    # Stored (the agent may mean it), and told which current entry replaced it.
    assert again.created and again.superseded is None
    said = again.to_dict()
    assert said["replaced_earlier_by"] == coffee
    assert f"supersedes {coffee}" in said["note"]
    # Through the whole chain, to the entry that is current now.
    service.delete(agent, again.entry.id)
    water = _store(service, agent, "User drinks only water", type="preference", supersedes=coffee)
    assert (
        service.store(
            agent, {"type": "preference", "content": "1. user likes tea"}
        ).replaced_earlier_by
        == water
    )
    # Another type, a supersede of what replaced it, or a new text: nothing to name.
    assert (
        service.store(agent, {"type": "fact", "content": "User likes tea"}).replaced_earlier_by
        is None
    )
    back = service.store(
        agent, {"type": "preference", "content": "User likes tea!", "supersedes": water}
    )
    assert back.superseded == water and back.to_dict()["replaced_earlier_by"] is None
    assert "note" not in back.to_dict()
    assert (
        service.store(agent, {"type": "fact", "content": "New"}).to_dict()["replaced_earlier_by"]
        is None
    )


def test_an_agent_is_not_told_of_a_secret_entry_that_replaced_a_text(
    service: MemoryService, agent: Caller, operator: Caller, memory_keyring: object
) -> None:
    tea = _store(service, operator, "User likes tea")
    secret = _store(service, operator, "User's tea order", privacy="secret", supersedes=tea)
    stored = service.store(agent, {"type": "fact", "content": "User likes tea"})
    assert stored.created and stored.replaced_earlier_by is None
    # The person is told.
    service.delete(operator, stored.entry.id)
    told = service.store(operator, {"type": "fact", "content": "User likes tea"})
    assert told.replaced_earlier_by == secret


def test_supersede_conflicts_write_nothing(
    service: MemoryService, agent: Caller, data_dir: DataDir
) -> None:
    old = _store(service, agent, "v1")
    _store(service, agent, "v2", supersedes=old)
    total = service.store_for("main").total()
    with pytest.raises(Conflict, match="already superseded"):
        _store(service, agent, "v3", supersedes=old)
    with pytest.raises(Conflict, match="no such entry"):
        _store(service, agent, "v3", supersedes="mem-unknown")
    other_group = service.open_session("other", Actor.AGENT)
    foreign = _store(service, other_group, "elsewhere")
    with pytest.raises(Conflict, match="no such entry in group main"):
        _store(service, agent, "v3", supersedes=foreign)
    assert service.store_for("main").total() == total


def test_search_ranks_and_filters(service: MemoryService, agent: Caller) -> None:
    luna = _store(service, agent, "User's dog is named Luna", tags=["pets", "home"])
    _store(service, agent, "User has a dog walker on Tuesdays", tags=["pets"])
    _store(service, agent, "User's cat is named Miso", tags=["pets", "home"])
    results = service.search(agent, {"query": "dog Luna"})
    assert results[0].id == luna
    assert results[0].relevance_score > results[1].relevance_score
    assert all(0.0 <= r.relevance_score <= 1.0 for r in results)
    assert "keyword" in results[0].signals
    tagged = service.search(agent, {"query": "named", "tags": ["pets", "HOME"]})
    assert {r.content for r in tagged} == {"User's dog is named Luna", "User's cat is named Miso"}
    assert service.search(agent, {"query": "dog", "type": "preference"}) == []


def test_empty_query_lists_recent(service: MemoryService, agent: Caller) -> None:
    ids = [_store(service, agent, f"memory number {i}") for i in range(5)]
    recent = service.search(agent, {"limit": 3})
    assert [r.id for r in recent] == ids[::-1][:3]


def test_search_finds_tags(service: MemoryService, agent: Caller) -> None:
    e = _store(service, agent, "Something unrelated", tags=["kubernetes"])
    assert [r.id for r in service.search(agent, {"query": "kubernetes"})] == [e]


def test_delete_keeps_index_in_sync(service: MemoryService, agent: Caller) -> None:
    e = _store(service, agent, "Favourite colour is teal", tags=["colour"])
    service.delete(agent, e)
    assert service.search(agent, {"query": "teal"}) == []
    assert service.search(agent, {"query": "colour"}) == []
    store = service.store_for("main")
    assert store.execute("SELECT count(*) FROM memory_tags").get == 0
    with pytest.raises(NotFound):
        service.delete(agent, e)
    # Rebuilding the derived index gives the same answers.
    kept = _store(service, agent, "Favourite food is ramen")
    store.rebuild_index()
    assert [r.id for r in service.search(agent, {"query": "ramen"})] == [kept]


def test_deleting_the_replacement_makes_the_old_fact_current_again(
    service: MemoryService, agent: Caller
) -> None:
    old = _store(service, agent, "Works at Acme")
    new = _store(service, agent, "Works at Globex", supersedes=old)
    done = service.delete(agent, new)
    assert done.to_dict() == {"deleted": new, "current_again": old}
    assert [r.id for r in service.search(agent, {"query": "works"})] == [old]
    assert service.get("main", old).superseded_by is None


def test_superseded_entries_are_purged_at_open(data_dir: DataDir) -> None:
    svc = MemoryService(data_dir, Config(purge_superseded_days=90))
    op = svc.open_session("main", Actor.OPERATOR)
    old = _store(svc, op, "old fact")
    new = _store(svc, op, "new fact", supersedes=old)
    recent_old = _store(svc, op, "recent old")
    _store(svc, op, "recent new", supersedes=recent_old)
    long_ago = iso(utc_now() - timedelta(days=91))
    svc.store_for("main").execute(
        "UPDATE memory_entries SET superseded_at = ? WHERE id = ?", (long_ago, old)
    )
    svc.close()

    svc = MemoryService(data_dir, Config(purge_superseded_days=90))
    store = svc.store_for("main")
    assert store.get(old) is None
    assert store.get(new) is not None
    assert store.get(recent_old) is not None
    purges = audit.recent(store, actions=["purge"])
    assert purges[0].count == 1 and purges[0].entry_ids == [old]
    svc.close()


def test_agent_rate_limits(data_dir: DataDir) -> None:
    svc = MemoryService(data_dir, Config(rate_stores_per_hour=3, rate_deletes_per_hour=1))
    agent = svc.open_session("main", Actor.AGENT)
    ids = [_store(svc, agent, f"fact {i}") for i in range(3)]
    with pytest.raises(RateLimited, match="3 stores"):
        _store(svc, agent, "one too many")
    svc.delete(agent, ids[0])
    with pytest.raises(RateLimited, match="deletes"):
        svc.delete(agent, ids[1])
    store = svc.store_for("main")
    assert store.total() == 2
    assert audit.recent(store, actions=["rate_limited"])[0].detail["limit"] == "deletes"
    # The person is never limited.
    op = svc.open_session("main", Actor.OPERATOR)
    for i in range(5):
        _store(svc, op, f"operator fact {i}")
    svc.close()


def test_listing_for_the_browser(service: MemoryService, operator: Caller) -> None:
    ids = [_store(service, operator, f"entry about topic {i}") for i in range(30)]
    listed = service.list_ids("main", EntryFilter())
    assert listed == ids[::-1]
    assert service.list_ids("main", EntryFilter(), "topi") != []  # prefix while typing
    got = service.store_for("main").get_many(listed[:5])
    assert set(got) == set(listed[:5])


def test_large_match_sets_are_ranked_whole_without_dropping_filtered_hits(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.storage import planner as store_module

    monkeypatch.setattr(store_module, "EXACT_RANK_LIMIT", 5)
    monkeypatch.setattr(store_module, "COMMON_FRACTION", 0.5)
    oldest = service.store(
        operator, {"type": "instruction", "content": "Always run the linters before a commit"}
    ).entry.id
    for i in range(60):
        _store(service, operator, f"Ran the linters on project {i}")
    store = service.store_for("main")
    kept, exact = store.plan(["linters"])
    assert kept == ["linters"] and not exact
    results = service.search(operator, {"query": "linters", "limit": 10})
    assert len(results) == 10
    # Only one entry passes the type filter, and it is the oldest match: still found.
    only = service.search(operator, {"query": "linters", "type": "instruction"})
    assert [r.id for r in only] == [oldest]


def test_very_common_terms_give_way_to_rarer_ones(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.storage import planner as store_module

    monkeypatch.setattr(store_module, "EXACT_RANK_LIMIT", 20)
    for i in range(30):
        _store(service, operator, f"User mentioned topic number {i}")
    rare = _store(service, operator, "User adopted a greyhound")
    assert service.store_for("main").plan(["user", "greyhound"]) == (["greyhound"], True)
    assert service.search(operator, {"query": "user greyhound"})[0].id == rare


def test_small_stores_rank_every_match(service: MemoryService, operator: Caller) -> None:
    dog = _store(service, operator, "The dog sleeps all day")
    for i in range(4):
        _store(service, operator, f"filler {i}")
    # "dog" is in 20% of entries, "luna" in none: nothing may be dropped.
    assert service.store_for("main").plan(["dog", "luna"]) == (["dog", "luna"], True)
    assert [r.id for r in service.search(operator, {"query": "dog luna"})] == [dog]


def test_the_current_count_follows_every_kind_of_change(
    service: MemoryService, operator: Caller
) -> None:
    from core.memory import curation
    from core.memory.curation import Decision

    store = service.store_for("main")

    def expected() -> int:
        return int(
            store.execute(
                "SELECT count(*) FROM memory_entries WHERE superseded_by IS NULL "
                "AND status = 'active'"
            ).get
        )

    a = _store(service, operator, "one")
    _store(service, operator, "two", supersedes=a)
    c = _store(service, operator, "three")
    store.update_fields(c, status="candidate")
    curation.review(service, operator, [c], Decision.ACCEPT)
    service.delete(operator, c)
    _store(service, operator, "one")  # a duplicate of nothing current: a new entry
    assert store.current_count() == expected() == 2


def test_browsing_a_common_word_lists_every_match_newest_first(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.storage import planner as store_module

    monkeypatch.setattr(store_module, "EXACT_RANK_LIMIT", 5)
    ids = [_store(service, operator, f"Standup notes for day {i}") for i in range(12)]
    listed = service.list_ids("main", EntryFilter(), "standu")
    assert listed == ids[::-1]  # all of them, none dropped
    assert service.list_ids("main", EntryFilter(), "day 7") != []
    assert service.list_ids("main", EntryFilter(), "s") == []  # too short to narrow


def test_an_agent_s_tag_holding_a_comma_is_refused_by_its_place(
    service: MemoryService, agent: Caller
) -> None:
    with pytest.raises(InvalidParams) as refused:
        service.store(agent, {"type": "fact", "content": "Bins on Monday", "tags": ["a", "b,c"]})
    assert refused.value.data == {"field": "tags.1", "rule": "pattern"}
    assert "must not hold a comma" in refused.value.message
    assert service.store_for("main").total() == 0
