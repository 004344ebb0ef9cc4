"""The brief shows one line per group of rewordings, with the real model and store."""

from __future__ import annotations

import time

from core.model.config import Config
from core.recall.brief import BriefLimit, LeftOutReason, MemoryBrief, prefetch_limit
from core.service import Caller, MemoryService

#: Each pair says one thing twice (measured at or above the near-duplicate cosine).
REWORDED = (
    (
        "User drinks green tea in the afternoon",
        "In the afternoon User has green tea instead of coffee",
    ),
    ("User now uses Neovim as main editor", "Neovim is User's editor of choice"),
    ("User prefers dark mode in the editor", "The user prefers dark mode in editors"),
)
#: Close in meaning, different facts: both lines stay.
DIFFERENT = (
    ("User's dog is named Luna", "User's cat is named Luna"),
    ("The team meeting is on Monday at 10", "The team meeting is on Tuesday at 10"),
    ("User prefers dark mode in the terminal", "User prefers light mode in the terminal"),
)


def _store(service: MemoryService, who: Caller, content: str, **extra: object) -> str:
    entry_id = service.store(who, {"type": "fact", "content": content, **extra}).entry.id
    # The brief lists newer first, by the millisecond: two stores in one would tie.
    time.sleep(0.002)
    return entry_id


def _embed(service: MemoryService) -> None:
    service.start_embedding()
    assert service.embedding is not None
    assert service.embedding.wait_idle(60)


def _lines(brief: MemoryBrief) -> list[str]:
    return [line for line in brief.markdown.splitlines() if line.startswith("- [")]


def test_a_rewording_leaves_its_slot_to_the_next_entry(
    service: MemoryService, operator: Caller
) -> None:
    config = Config(max_brief_entries=10)
    service.set_config(config)
    # The second of each pair is a preference: behavioral entries rank first.
    fillers = [
        _store(service, operator, f"Project {n} builds with make target t{n}") for n in range(20)
    ]
    kept, dropped = [], []
    for first, second in REWORDED:
        dropped.append(_store(service, operator, first))
        kept.append(_store(service, operator, second, type="preference"))
    apart = [_store(service, operator, text) for pair in DIFFERENT for text in pair]
    _embed(service)

    brief = service.build_brief("main", list_left_out=True)
    shown = [e.id for e in brief.entries]
    assert brief.brief_count == 10 and brief.truncated_by is BriefLimit.MAX_ENTRIES
    assert set(shown[:3]) == set(kept) and set(shown[3:9]) == set(apart)
    # The slots of the three rewordings go to the next entries down.
    assert not set(dropped) & set(shown)
    assert shown[9] in fillers
    assert brief.rewordings == 3
    reworded = {o.entry.id for o in brief.left_out if o.reason is LeftOutReason.REWORDING}
    assert reworded == set(dropped)
    assert len(_lines(brief)) == 10
    assert (
        brief.markdown.splitlines()[2]
        == f"10 of {brief.entry_count} memories, ~{brief.token_estimate} tokens"
    )


def test_an_entry_without_a_vector_is_never_merged(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    first, second = REWORDED[0]
    a = _store(service, operator, first)
    b = _store(service, operator, second)
    # Not embedded: nothing to compare, both are shown.
    assert {e.id for e in service.build_brief("main").entries} == {a, b}
    _embed(service)
    assert [e.id for e in service.build_brief("main").entries] == [b]
    # A private entry never has a vector: its rewording of a shown line stays.
    service.set_config(Config(include_private_in_brief=True))
    c = _store(service, operator, "User has green tea every afternoon", privacy="private")
    _embed(service)
    assert {e.id for e in service.build_brief("main").entries} == {b, c}


def test_rewordings_never_leave_the_brief_short(service: MemoryService, operator: Caller) -> None:
    config = Config(max_brief_entries=5)
    service.set_config(config)
    fillers = [
        _store(service, operator, f"Project {n} builds with make target t{n}") for n in range(8)
    ]
    # More rewordings of one line than the first fetch holds rows.
    base = "User drinks green tea in the afternoon"
    variants = [
        f"In the afternoon User has green tea{tail}"
        for tail in (
            "",
            " instead of coffee",
            " rather than coffee",
            " each day",
            " every day",
            " usually",
            " most days",
        )
    ]
    assert len(variants) + 1 > prefetch_limit(config)
    for text in variants:
        _store(service, operator, text)
    top = _store(service, operator, base)
    _embed(service)
    brief = service.build_brief("main")
    assert brief.brief_count == 5 and brief.truncated_by is BriefLimit.MAX_ENTRIES
    assert [e.id for e in brief.entries] == [top, *fillers[::-1][:4]]


def test_a_brief_full_of_new_lines_is_not_cut_by_rewordings_past_it(
    service: MemoryService, operator: Caller
) -> None:
    first, second = REWORDED[0]
    _store(service, operator, first, type="preference")
    _store(service, operator, second, type="preference")
    # Newest first: the instruction, the second wording, then (past the limit) the first.
    _store(service, operator, "Use pytest for all Python tests", type="instruction")
    _embed(service)
    unlimited = service.build_brief("main")
    assert unlimited.brief_count == 2 and unlimited.truncated_by is None
    # The limit holds every line there is: what is past it only says a line again.
    service.set_config(Config(max_brief_entries=2))
    brief = service.build_brief("main", list_left_out=True)
    assert brief.markdown == unlimited.markdown
    # Before, the limit was named as cutting it, and an agent told the brief was cut.
    assert brief.truncated_by is None
    assert [o.reason for o in brief.left_out] == [LeftOutReason.REWORDING]
    # One new line past the limit: then it did cut the brief.
    _store(service, operator, "The team deploys on Thursdays")
    _embed(service)
    assert service.build_brief("main").truncated_by is BriefLimit.MAX_ENTRIES
