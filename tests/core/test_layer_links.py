"""Links leave with the entry or summary they join; dig shows every live one."""

from __future__ import annotations

import time
from datetime import timedelta

from core.continuity.episodes import expire_exchanges, log_exchange
from core.layers.compression import compress, drop_lost
from core.layers.links import MAX_NODES, dig, edges_from
from core.memory import forgetting, trash
from core.model.caller import Caller
from core.model.config import Config
from core.model.entries import Actor, utc_now
from core.service import MemoryService
from core.storage.store import GroupStore

WORDS = (
    "walnut harbour lantern copper meadow quarry violin saddle marble thistle beacon ferry "
    "orchard kettle boiler piano ladder invoice garden sail pepper cedar falcon glacier"
).split()


def fact(i: int) -> str:
    """A sentence of its own for each ``i`` (no two are duplicates of each other)."""
    a, b, c = WORDS[i % 24], WORDS[(i // 24) % 24], WORDS[(i * 7 + 3) % 24]
    return f"Note {i}: the {a} stands by the {b}, near {c} number {i * 13}"


def session_with(service: MemoryService, count: int) -> tuple[Caller, str, list[str]]:
    """One agent session that logs a turn and stores ``count`` entries; a pass draws
    its day. Returns the session, its day summary and the entries' ids."""
    agent = service.open_session("g", Actor.AGENT, "tests")
    log_exchange(service, agent, "user", "We decided to catalogue the whole garden shed.")
    ids = []
    for i in range(count):
        # Apart by a millisecond at least: entries stored at one instant share a turn.
        time.sleep(0.002)
        ids.append(service.store(agent, {"type": "fact", "content": fact(i)}).entry.id)
    store = service.store_for("g")
    compress(store, utc_now())
    day = str(
        store.execute(
            "SELECT id FROM layer_summaries WHERE level = 'day' AND session_id = ?",
            (agent.session_id,),
        ).get
    )
    return agent, day, ids


def naming(store: GroupStore, ids: list[str]) -> int:
    """How many links name one of ``ids`` at either end."""
    return int(
        store.execute(
            "SELECT count(*) FROM layer_links WHERE src IN (SELECT value FROM json_each(?)) "
            "OR dst IN (SELECT value FROM json_each(?))",
            (repr(ids).replace("'", '"'),) * 2,
        ).get
    )


def levels(found: dict[str, object]) -> list[object]:
    nodes = found["nodes"]
    assert isinstance(nodes, list)
    return [n.get("level") for n in nodes if n["kind"] == "summary"]


def test_dig_keeps_the_week_and_month_and_every_live_link(service: MemoryService) -> None:
    # 70 entries stored in one session: more links than a dig shows.
    operator = service.open_session("g", Actor.OPERATOR, "tests")
    _, day, ids = session_with(service, 70)
    store = service.store_for("g")
    full = dig(service, "g", day, 1)
    assert len(full["nodes"]) == MAX_NODES and full["truncated"]
    # The rollups come first: a summary's links never crowd them out.
    assert levels(full) == ["day", "week", "month"]
    assert [e["reason"] for e in full["edges"][:2]] == ["part_of", "part_of"]

    for entry_id in ids[:60]:
        service.delete(operator, entry_id)
    # The person's delete is final: its links go with it, at once.
    assert naming(store, ids[:60]) == 0
    found = dig(service, "g", day, 1)
    memories = {n["id"] for n in found["nodes"] if n["kind"] == "memory"}
    assert memories == set(ids[60:])
    assert levels(found) == ["day", "week", "month"] and not found["truncated"]


def test_links_to_deleted_entries_never_use_up_the_budget(service: MemoryService) -> None:
    """A store from an earlier Ambry, which kept the links of deleted entries."""
    _, day, ids = session_with(service, 5)
    store = service.store_for("g")
    dead = [f"mem-00000000-0000-4000-8000-{i:012d}" for i in range(100)]
    for dst in dead:
        store.execute(
            "INSERT INTO layer_links (src, dst, strength, reason, created_at) "
            "VALUES (?, ?, 'weak', 'stored_in_session', '2026-01-01T00:00:00.000Z')",
            (day, dst),
        )
    found = dig(service, "g", day, 1)
    assert {n["id"] for n in found["nodes"] if n["kind"] == "memory"} == set(ids)
    assert not found["truncated"]
    assert all(e.dst not in dead for e in edges_from(store, day))
    # The next pass sweeps them away; the live ones stay.
    compress(store, utc_now())
    assert naming(store, dead) == 0 and naming(store, ids) == 5


def test_a_trashed_entry_keeps_its_links_until_the_trash_is_emptied(
    service: MemoryService,
) -> None:
    agent, day, ids = session_with(service, 3)
    operator = service.open_session("g", Actor.OPERATOR, "tests")
    store = service.store_for("g")
    gone = ids[0]
    service.delete(agent, gone)  # an agent's delete goes to the trash
    assert naming(store, [gone]) == 1
    assert gone not in {n["id"] for n in dig(service, "g", day, 1)["nodes"]}
    trash.restore(service, operator, gone)
    assert gone in {n["id"] for n in dig(service, "g", day, 1)["nodes"]}
    service.delete(agent, gone)
    trash.empty(service, operator)
    assert naming(store, [gone]) == 0 and naming(store, ids[1:]) == 2


def test_a_summary_s_links_go_with_it(service: MemoryService) -> None:
    _, day, ids = session_with(service, 3)
    store = service.store_for("g")
    assert naming(store, [day]) == 3
    # The turns expire: their day summary goes, and its links with it, at once.
    later = utc_now() + timedelta(days=Config().episodic_ttl_days + 1)
    assert expire_exchanges(store, Config(), later, with_turns=drop_lost) == 1
    assert naming(store, [day]) == 0
    assert store.execute("SELECT count(*) FROM layer_links").get == 0
    assert all(store.get(i) is not None for i in ids)


def test_a_supersede_of_an_entry_deleted_since_makes_no_link(service: MemoryService) -> None:
    """The audit log still names a deleted entry: the next pass must not link it."""
    agent = service.open_session("g", Actor.AGENT, "tests")
    operator = service.open_session("g", Actor.OPERATOR, "tests")
    old = service.store(agent, {"type": "fact", "content": "The ferry leaves at nine"}).entry.id
    time.sleep(0.002)
    new = service.store(
        agent, {"type": "fact", "content": "The ferry leaves at ten", "supersedes": old}
    ).entry.id
    service.delete(operator, old)  # before any pass or dig made the link
    store = service.store_for("g")
    compress(store, utc_now())
    assert naming(store, [old]) == 0
    assert [n["id"] for n in dig(service, "g", new, 1)["nodes"]] == [new]


def test_forgetting_a_memory_in_the_trash_takes_its_links(service: MemoryService) -> None:
    agent, _day, ids = session_with(service, 3)
    operator = service.open_session("g", Actor.OPERATOR, "tests")
    store = service.store_for("g")
    service.delete(agent, ids[0])  # to the trash, links kept for a restore
    assert naming(store, [ids[0]]) == 1
    plan = forgetting.plan_forget(service, "g", "number 0")
    assert ids[0] in plan.trash_ids
    service.forget(operator, plan)
    # Before: the trash row went and its links stayed, naming nothing.
    assert naming(store, [ids[0]]) == 0 and naming(store, ids[1:]) == 2
