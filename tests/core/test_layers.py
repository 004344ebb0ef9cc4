"""Layers: compression rules, summaries and their DAG, the pass, recall, links, the brief."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.layers import keywords
from core.layers.ages import Layer, layer_of
from core.layers.compression import compress, is_due, summary_id
from core.layers.context import layer_brief_sections
from core.layers.links import dig, references
from core.layers.recall import recall
from core.layers.rules import Kind, classify, kept
from core.layers.scheduler import LayerWorker
from core.layers.summaries import SourceTurn, draft_day
from core.model.caller import Caller
from core.model.config import Config
from core.model.entries import Actor, iso, utc_now
from core.model.errors import InvalidParams, NotFound
from core.model.text import estimate_tokens
from core.service import MemoryService
from core.storage.store import GroupStore

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=utc_now().tzinfo)


@pytest.fixture(autouse=True)
def _utc_days(local_zone: Callable[[str], None]) -> None:
    """Summaries are drawn on the machine's local days; the days named below are UTC's."""
    local_zone("UTC")


def log_session(
    service: MemoryService, days_ago: float, turns: list[tuple[str, str]], *, thread: str = ""
) -> Caller:
    agent = service.open_session("g", Actor.AGENT, "tests")
    if thread:
        from core.continuity.context import enter_thread

        agent = enter_thread(service, agent, thread).caller
    start = NOW - timedelta(days=days_ago)
    for i, (speaker, text) in enumerate(turns):
        at = iso(start + timedelta(minutes=i))
        log_exchange(service, agent, speaker, text, at=at)
    return agent


def summaries(store: GroupStore, level: str = "day") -> list[tuple[str, ...]]:
    return store.execute(
        "SELECT id, period, hook, points, quotes, keywords, turn_count FROM layer_summaries "
        "WHERE level = ? ORDER BY start_at",
        (level,),
    ).fetchall()


# -- rules ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sentence", "speaker", "kind"),
    [
        ("Please remember this: the boiler code is on the fridge.", "user", Kind.REMEMBER),
        ("No, actually it was the blue folder.", "user", Kind.CORRECTION),
        ("Always run the linter before you commit.", "user", Kind.INSTRUCTION),
        ("From now on answer in French please", "user", Kind.INSTRUCTION),
        ("Let's go with the cheaper flight on Friday.", "user", Kind.DECISION),
        ("I'll send the invoice to Dana tomorrow morning.", "assistant", Kind.DECISION),
        ("You should always back up first.", "assistant", Kind.STATEMENT),
        ("Hi Mel!", "user", Kind.GREETING),
        ("Thanks so much", "user", Kind.GREETING),
        ("Sounds good!", "user", Kind.FILLER),
        ("haha", "assistant", Kind.FILLER),
        ("The garden needs new tomato seedlings.", "user", Kind.STATEMENT),
        ("Did the garden get new seedlings?", "user", Kind.QUESTION),
        ("exit code 0, 14 files changed", "tool", Kind.TOOL),
    ],
)
def test_each_sentence_gets_its_kind(sentence: str, speaker: str, kind: Kind) -> None:
    if speaker == "tool":
        assert kept(sentence, speaker) == []
    else:
        assert classify(sentence, speaker) is kind


def test_tool_output_greetings_and_filler_are_dropped() -> None:
    turn = "Hey! Ok. Remember that the deploy key rotates monthly. Sounds good!"
    assert [s.kind for s in kept(turn, "user")] == [Kind.REMEMBER]
    assert kept("Traceback (most recent call last): ...", "tool") == []
    assert kept("compaction happened", "system") == []


def test_keywords_fold_plurals_and_drop_stopwords() -> None:
    counts, display = keywords.term_counts(
        ["The dogs and the dog, our stories!", "I really love it"]
    )
    assert counts == {"dog": 2, "story": 1}
    assert display["dog"] in ("dog", "dogs")


def test_tfidf_weights_rare_terms_over_common_ones() -> None:
    w = keywords.tfidf({"pottery": 1, "garden": 1}, {"garden": 9, "pottery": 1}, 10)
    assert w["pottery"] > w["garden"] > 0


def test_a_day_summary_keeps_what_matters() -> None:
    turns = [
        SourceTurn(1, "user", "Ana", "Hi! How are you?", "2026-03-01T10:00:00.000Z"),
        SourceTurn(2, "assistant", None, "Great, thanks.", "2026-03-01T10:01:00.000Z"),
        SourceTurn(
            3,
            "user",
            "Ana",
            "Please remember this: the pottery class moved to Thursday evenings.",
            "2026-03-01T10:02:00.000Z",
        ),
        SourceTurn(4, "tool", None, "pottery pottery pottery 200 OK", "2026-03-01T10:03:00.000Z"),
        SourceTurn(
            5, "user", "Ana", "No, I meant the studio on Elm Street.", "2026-03-01T10:04:00.000Z"
        ),
    ]
    draft = draft_day(turns, {}, 0)
    assert draft.hook.startswith("Ana: Please remember this")
    assert "Please remember this: the pottery class moved to Thursday evenings." in draft.quotes
    assert "No, I meant the studio on Elm Street." in draft.quotes
    assert not any("Hi!" in p or "200 OK" in p or "Great" in p for p in draft.points)
    assert "pottery" in draft.keywords and draft.turn_count == 5
    assert (draft.start_at, draft.end_at) == (turns[0].said_at, turns[-1].said_at)


# -- the pass ------------------------------------------------------------------


def test_pass_builds_days_weeks_and_months_and_is_idempotent(service: MemoryService) -> None:
    log_session(service, 40, [("user", "We decided to adopt the greyhound named Biscuit.")])
    log_session(service, 39, [("user", "Biscuit needs a vet appointment for vaccines.")])
    log_session(service, 10, [("user", "The kitchen renovation starts with new cabinets.")])
    store = service.store_for("g")
    first = compress(store, NOW)
    assert (first.days, first.turns, first.complete) == (3, 3, True)
    days = summaries(store)
    assert [d[1] for d in days] == ["2026-01-20", "2026-01-21", "2026-02-19"]
    weeks, months = summaries(store, "week"), summaries(store, "month")
    assert [w[1] for w in weeks] == ["2026-W04", "2026-W08"]
    assert [m[1] for m in months] == ["2026-01", "2026-02"]
    # The DAG: the January week holds both January days, the month holds the week.
    week = summary_id("week", None, None, "2026-W04")
    children = store.execute(
        "SELECT child_id FROM layer_children WHERE parent_id = ? ORDER BY 1", (week,)
    ).fetchall()
    assert sorted(c[0] for c in children) == sorted(d[0] for d in days[:2])
    assert weeks[0][6] == 2
    second = compress(store, NOW)
    assert (second.days, second.rollups, second.removed) == (0, 0, 0)


def test_new_turns_rebuild_only_their_day(service: MemoryService) -> None:
    agent = log_session(service, 20, [("user", "The piano tuner comes on Monday.")])
    log_session(service, 10, [("user", "The kitchen renovation starts with new cabinets.")])
    store = service.store_for("g")
    compress(store, NOW)
    before = {r[0]: r[1] for r in store.execute("SELECT id, built_at FROM layer_summaries")}
    log_exchange(
        service,
        agent,
        "user",
        "Remember to pay the piano tuner in cash.",
        at=iso(NOW - timedelta(days=20) + timedelta(hours=1)),
    )
    later = NOW + timedelta(minutes=5)
    result = compress(store, later)
    assert result.days == 1
    after = {r[0]: r[1] for r in store.execute("SELECT id, built_at FROM layer_summaries")}
    changed = {k for k in after if after[k] != before.get(k)}
    # The day, its week and its month; the other day and its rollups are untouched.
    assert len(changed) == 3
    day = next(d for d in summaries(store) if d[1] == "2026-02-09")
    assert day[6] == 2 and "Remember to pay the piano tuner in cash." in json.loads(day[4])


def test_a_stopped_pass_resumes_where_it_stopped(service: MemoryService) -> None:
    for d in (30, 20, 10):
        log_session(service, d, [("user", f"Day {d}: the orchard needs pruning and mulch.")])
    store = service.store_for("g")
    calls = iter([False, True])
    partial = compress(store, NOW, should_stop=lambda: next(calls, True))
    assert (partial.days, partial.complete) == (1, False)
    assert is_due(store, NOW, timedelta(hours=6))
    rest = compress(store, NOW)
    assert (rest.days, rest.complete) == (2, True)
    assert len(summaries(store)) == 3 and not is_due(store, NOW, timedelta(hours=6))


def test_a_rebuild_stopped_part_way_keeps_the_old_summaries(service: MemoryService) -> None:
    for d in (30, 20, 10):
        log_session(service, d, [("user", f"Day {d}: the orchard needs pruning and mulch.")])
    store = service.store_for("g")
    compress(store, NOW)
    before = {r[0]: r[1] for r in store.execute("SELECT id, hook FROM layer_summaries")}
    vocab = store.execute("SELECT term, docs FROM layer_vocab ORDER BY 1").fetchall()
    later = NOW + timedelta(minutes=5)
    calls = iter([False])

    def interrupt() -> bool:
        if next(calls, True):
            raise KeyboardInterrupt  # what Ctrl+C does part way
        return False

    with pytest.raises(KeyboardInterrupt):
        compress(store, later, rebuild=True, should_stop=interrupt)
    # Every summary is still there, whole, and still found; the pass is due at once.
    assert {r[0]: r[1] for r in store.execute("SELECT id, hook FROM layer_summaries")} == before
    assert store.execute("SELECT term, docs FROM layer_vocab ORDER BY 1").fetchall() == vocab
    assert recall(store, "orchard pruning", NOW + timedelta(minutes=6)).items
    assert is_due(store, later, timedelta(hours=6))
    assert "rebuild stopped part way" in timeline_text(store, later)
    # The next pass goes on with the rebuild: the two days not drawn yet and the rollups.
    rest = compress(store, later + timedelta(minutes=1))
    assert (rest.days, rest.complete) == (2, True)
    built = {r[0] for r in store.execute("SELECT built_at FROM layer_summaries")}
    assert built <= {iso(later), iso(later + timedelta(minutes=1))}
    assert store.execute("SELECT term, docs FROM layer_vocab ORDER BY 1").fetchall() == vocab
    assert not is_due(store, later, timedelta(hours=6))
    assert "stopped part way" not in timeline_text(store, later)
    assert compress(store, later + timedelta(minutes=2)).days == 0


def test_a_rebuild_redraws_every_summary(service: MemoryService) -> None:
    for d in (30, 20, 10):
        log_session(service, d, [("user", f"Day {d}: the orchard needs pruning and mulch.")])
    store = service.store_for("g")
    compress(store, NOW)
    count = store.execute("SELECT count(*) FROM layer_summaries").get
    result = compress(store, NOW, rebuild=True)
    assert (result.days, result.complete) == (3, True)
    assert result.rollups == count - 3
    assert store.execute("SELECT count(*) FROM layer_fts").get == count


def timeline_text(store: GroupStore, now: datetime) -> str:
    from core.cli.layers import _format_timeline
    from core.layers.timeline import timeline

    return _format_timeline(timeline(store, None, now), now)


def test_summaries_follow_expired_turns_out(service: MemoryService) -> None:
    log_session(service, 50, [("user", "The old bicycle needs a new chain.")])
    store = service.store_for("g")
    compress(store, NOW)
    assert len(summaries(store)) == 1
    store.execute("DELETE FROM exchanges")  # what the TTL policy does when they expire
    result = compress(store, NOW)
    assert result.removed == 3  # the day, its week, its month
    assert store.execute("SELECT count(*) FROM layer_summaries").get == 0
    assert store.execute("SELECT count(*) FROM layer_vocab").get == 0


def test_the_worker_compresses_in_the_background(service: MemoryService) -> None:
    log_session(service, 12, [("user", "The violin lessons start in April.")])
    worker = LayerWorker()
    try:
        store = service.store_for("g")
        worker.wake(store.path, "g")
        assert worker.wait_idle(20)
        assert len(summaries(store)) == 1
    finally:
        worker.close()


# -- layers, recall, links -------------------------------------------------------


def test_layer_boundaries() -> None:
    ages = {1: Layer.FLASH, 3: Layer.WARM, 8: Layer.RECENT_1, 15: Layer.RECENT_2}
    ages |= {22: Layer.RECENT_3, 30: Layer.RECENT_4, 36: Layer.ARCHIVE}
    for days, layer in ages.items():
        assert layer_of(NOW - timedelta(days=days), NOW) is layer


@pytest.fixture
def history(service: MemoryService) -> GroupStore:
    log_session(
        service, 60, [("user", "Please remember that my sister's pottery class is on Thursdays.")]
    )
    log_session(
        service,
        16,
        [
            ("user", "The pottery kiln at the studio broke last weekend."),
            ("assistant", "I'll look up kiln repair shops nearby."),
        ],
    )
    log_session(service, 4, [("user", "We are painting the nursery pale green.")])
    log_session(service, 0.2, [("user", "Is the pottery studio open again?")])
    store = service.store_for("g")
    compress(store, NOW)
    return store


def test_recall_walks_flash_warm_recent_archive_in_order(history: GroupStore) -> None:
    result = recall(history, "anything new about pottery?", NOW)
    layers = [i.layer.value for i in result.items]
    assert layers == ["flash", "recent-2", "archive"]
    recent, archive = result.items[1], result.items[2]
    assert recent.summary is not None and len(recent.summary["points"]) <= 2
    assert archive.summary is not None and archive.summary["points"] == []
    assert "pottery class is on Thursdays" in archive.turns[0]["text"]
    assert "pottery" in result.keywords and "what" not in result.keywords


def test_recall_shows_its_keywords_as_the_question_wrote_them(history: GroupStore) -> None:
    # Matched by their keys ("atla", "classe"), shown as asked.
    result = recall(history, "Is the Atlas pottery classes plan on?", NOW)
    assert "Atlas" in result.keywords and "atla" not in result.keywords
    assert "classes" in result.keywords and "pottery" in result.keywords
    assert any(i.layer.value == "archive" for i in result.items)


def test_recall_stops_at_the_budget(history: GroupStore) -> None:
    whole = recall(history, "pottery kiln sister class", NOW)
    small = recall(history, "pottery kiln sister class", NOW, budget=60)
    assert not whole.truncated and small.truncated
    assert small.tokens <= 60 < whole.tokens
    assert [i.layer for i in small.items] == [i.layer for i in whole.items][: len(small.items)]


def test_recall_keeps_the_whole_reply_within_the_budget(history: GroupStore) -> None:
    for budget in (50, 80, 120, 200, 400, 1500):
        result = recall(history, "pottery kiln sister class", NOW, budget=budget)
        sent = json.dumps(result.to_dict(), ensure_ascii=False)
        assert estimate_tokens(sent) <= result.tokens <= budget
        for item in result.items:
            assert estimate_tokens(json.dumps(item.to_dict(), ensure_ascii=False)) <= item.tokens()


def test_one_long_recent_turn_does_not_empty_recall(service: MemoryService) -> None:
    # Five recent turns in Chinese are about 2,000 tokens, more than the default budget.
    turns = [("user", "陶艺课在周四晚上。" * 44 + f" pottery {i}") for i in range(5)]
    log_session(service, 0.5, turns)
    log_session(
        service, 60, [("user", "Please remember that my sister's pottery class is on Thursdays.")]
    )
    store = service.store_for("g")
    compress(store, NOW)
    result = recall(store, "pottery", NOW)
    assert result.truncated
    assert [i.layer.value for i in result.items] == ["flash", "archive"]
    assert 1 <= len(result.items[0].turns) < 5
    assert "Thursdays" in result.items[1].summary["hook"]  # type: ignore[index]
    assert estimate_tokens(json.dumps(result.to_dict(), ensure_ascii=False)) <= 1500


def test_recall_refuses_bad_arguments(history: GroupStore) -> None:
    with pytest.raises(InvalidParams):
        recall(history, "  ", NOW)
    with pytest.raises(InvalidParams):
        recall(history, "pottery", NOW, budget=10)
    assert recall(history, "the and of", NOW).items == ()


def test_links_from_supersede_same_turn_and_references(service: MemoryService) -> None:
    agent = log_session(
        service, 1, [("user", "The wifi password changed; see [[sum-000000000000]].")]
    )
    first = service.store(agent, {"type": "fact", "content": "The router is in the hallway"})
    # The batch is another call, so a later moment: entries share a turn by sharing
    # their time, and on a fast machine the next call could fall in the same millisecond.
    time.sleep(0.002)
    batch = service.store_entries(
        agent,
        [
            service.parse_store_args({"type": "fact", "content": "The router is in the study"}),
            service.parse_store_args(
                {"type": "fact", "content": f"The modem sits next to it, see [[{first.entry.id}]]"}
            ),
        ],
    )
    service.store(
        agent,
        {"type": "fact", "content": "The router is in the attic", "supersedes": batch[0].entry.id},
    )
    store = service.store_for("g")
    compress(store, NOW)
    links = {
        (r[0], r[1]): (r[2], r[3])
        for r in store.execute("SELECT src, dst, strength, reason FROM layer_links")
    }
    a, b = batch[0].entry.id, batch[1].entry.id
    assert links[(a, b)] == links[(b, a)] == ("strong", "same_turn")
    assert links[(b, first.entry.id)] == ("weak", "mentions")
    assert (first.entry.id, b) not in links
    newest = store.execute(
        "SELECT id FROM memory_entries WHERE superseded_by IS NULL AND content LIKE '%attic%'"
    ).get
    assert links[(newest, a)] == ("strong", "supersedes")
    # A reference to a summary that does not exist is not a link.
    assert not any(dst == "sum-000000000000" for _, dst in links)

    found = dig(service, "g", newest, 3)
    ids = [n["id"] for n in found["nodes"]]
    assert ids[0] == newest and a in ids and b in ids and first.entry.id in ids
    assert len(ids) == len(set(ids))  # each node once, though the links form cycles
    assert {n["id"]: n["depth"] for n in found["nodes"]}[first.entry.id] == 3
    assert len(dig(service, "g", newest, 0)["nodes"]) == 1
    with pytest.raises(InvalidParams):
        dig(service, "g", newest, 4)
    with pytest.raises(NotFound):
        dig(service, "g", "mem-nope-nope", 1)


def test_dig_follows_a_supersede_made_a_moment_ago(service: MemoryService, agent: Caller) -> None:
    # No compression pass has run: the link is made when dig asks for it.
    old = service.store(agent, {"type": "fact", "content": "Lives in Paris"}).entry.id
    new = service.store(
        agent, {"type": "fact", "content": "Lives in Lyon", "supersedes": old}
    ).entry.id
    for start, other in ((old, new), (new, old)):
        found = dig(service, agent.group, start, 1)
        assert [n["id"] for n in found["nodes"]] == [start, other]
        assert {(e["from"], e["to"], e["reason"]) for e in found["edges"]} == {
            (start, other, "supersedes")
        }


def test_a_dig_before_the_first_pass_does_not_lose_the_session_links(
    service: MemoryService,
) -> None:
    """A dig links what was recorded so far; entries whose day summary does not
    exist yet are linked when the pass draws that day, not skipped for good."""
    agent = log_session(service, 0, [], thread="Boats")
    boat = service.store(agent, {"type": "fact", "content": "The boat is moored at pier 7"})
    again = service.store(agent, {"type": "fact", "content": "The boat is moored at pier 7"})
    assert again.entry.id == boat.entry.id  # reinforced, not a second entry
    log_exchange(service, agent, "user", "We moved the sailing boat to a new pier")
    # Another session reinforces it and stores an entry that is dug before any pass.
    other = enter_thread(service, service.open_session("g", Actor.AGENT, "tests"), "Tea").caller
    unrelated = service.store(other, {"type": "fact", "content": "The kettle is descaled"})
    service.store(other, {"type": "fact", "content": "The boat is moored at pier 7"})
    log_exchange(service, other, "user", "The kettle works again")
    dig(service, "g", unrelated.entry.id, 1)
    dig(service, "g", boat.entry.id, 1)
    store = service.store_for("g")
    compress(store, utc_now())

    def day_of(caller: Caller) -> str:
        return str(
            store.execute(
                "SELECT id FROM layer_summaries WHERE level = 'day' AND session_id = ?",
                (caller.session_id,),
            ).get
        )

    day = day_of(agent)
    found = dig(service, "g", day, 1)
    assert {(e["to"], e["strength"], e["reason"]) for e in found["edges"]} >= {
        (boat.entry.id, "weak", "stored_in_session")
    }
    assert {(e["to"], e["reason"]) for e in dig(service, "g", day_of(other), 1)["edges"]} >= {
        (boat.entry.id, "reinforced"),
        (unrelated.entry.id, "stored_in_session"),
    }
    # A rebuild draws every day again, and with it its links.
    store.execute("DELETE FROM layer_links")
    compress(store, utc_now(), rebuild=True)
    assert {
        "from": day,
        "to": boat.entry.id,
        "strength": "weak",
        "reason": "stored_in_session",
    } in dig(service, "g", day, 1)["edges"]


def test_references_parse_ids() -> None:
    assert references("see [[mem-1234abcd]] and [[ sum-00aa11bb22cc ]], [[other]]") == [
        "mem-1234abcd",
        "sum-00aa11bb22cc",
    ]


# -- the brief -------------------------------------------------------------------


def test_brief_gains_flash_and_warm_within_their_budgets(
    history: GroupStore, service: MemoryService
) -> None:
    sections = dict(layer_brief_sections(history, None, NOW, flash_budget=800, warm_budget=600))
    flash = sections["Flash: the last 48 hours"]
    warm = sections["Warm: the last week"]
    assert "Is the pottery studio open again?" in flash
    assert "nursery pale green" in warm and "kiln" not in warm
    many = [
        ("user", f"Turn {i}: the greenhouse heater needs a new thermostat soon.") for i in range(40)
    ]
    log_session(service, 0.1, many)
    tight = dict(layer_brief_sections(history, None, NOW, flash_budget=100, warm_budget=600))
    assert len(f"### Flash: the last 48 hours\n\n{tight['Flash: the last 48 hours']}") <= 400
    assert "Turn 39" in tight["Flash: the last 48 hours"]  # the newest are kept
    assert layer_brief_sections(history, None, NOW, flash_budget=0, warm_budget=0) == []


def test_flash_keeps_its_token_budget_in_any_script(
    history: GroupStore, service: MemoryService
) -> None:
    many = [("user", f"第{i}轮：温室的暖气需要一个新的恒温器，请尽快安排维修。") for i in range(15)]
    log_session(service, 0.1, many)
    tight = dict(layer_brief_sections(history, None, NOW, flash_budget=100, warm_budget=600))
    flash = f"### Flash: the last 48 hours\n\n{tight['Flash: the last 48 hours']}"
    assert estimate_tokens(flash) <= 100
    assert "第14轮" in flash  # the newest are kept


def test_recall_finds_words_inside_unspaced_text(service: MemoryService) -> None:
    # Before, "绿茶" had no keyword (two characters are no word to the rules) and
    # "東京に住んでいる" was one keyword, which no index holds inside a longer run.
    log_session(service, 20, [("user", "上个月在杭州买了龙井绿茶"), ("assistant", "龙井是好茶")])
    log_session(service, 0.2, [("user", "我喜欢喝绿茶"), ("user", "東京に住んでいる友達が来る")])
    log_session(service, 0.1, [("user", "The weather is mild today")])
    store = service.store_for("g")
    compress(store, NOW)
    result = recall(store, "绿茶", NOW)
    assert result.keywords == ("绿茶",)
    assert [i.layer.value for i in result.items] == ["flash", "recent-2"]
    assert [t["text"] for t in result.items[0].turns] == ["我喜欢喝绿茶"]
    assert [t["text"] for t in result.items[1].turns] == ["上个月在杭州买了龙井绿茶"]
    result = recall(store, "東京に住んでいる", NOW)
    assert "東京" in result.keywords and "東京に住んでいる" not in result.keywords
    assert [t["text"] for t in result.items[0].turns] == ["東京に住んでいる友達が来る"]
    # Words and pieces together: the English turn by its word, the Chinese by its pieces.
    mixed = recall(store, "weather 绿茶", NOW)
    assert {t["text"] for t in mixed.items[0].turns} == {
        "The weather is mild today",
        "我喜欢喝绿茶",
    }
    assert recall(store, "咖啡", NOW).items == ()


def test_recall_counts_tokens_in_any_script(service: MemoryService) -> None:
    agent = service.open_session("g", Actor.AGENT, "tests")
    for i in range(3):
        text = f"Теплица {i}: " + "отоплению в теплице нужен новый термостат. " * 8
        log_exchange(service, agent, "user", text)
    result = recall(service.store_for("g"), "теплица термостат", utc_now())
    assert result.items and result.tokens <= result.budget
    for item in result.items:
        # Cyrillic letters count half a token each, not a quarter.
        assert item.to_dict()["tokens"] >= sum(estimate_tokens(t["text"]) for t in item.turns)
        assert item.to_dict()["tokens"] > sum(len(t["text"]) for t in item.turns) / 3


def test_service_brief_puts_layers_after_memories_and_respects_limits(
    service: MemoryService,
) -> None:
    agent = service.open_session("g", Actor.AGENT, "tests")
    log_exchange(service, agent, "user", "Remember that the cat eats at six.")  # said now
    service.store(agent, {"type": "fact", "content": "The cat is called Miso"})
    markdown = service.brief(agent).markdown
    assert markdown.index("Miso") < markdown.index("### Flash")
    service.set_config(Config(brief_token_budget=60))
    small = service.brief(agent)
    assert small.token_estimate <= 60 and small.truncated_by is not None
    assert "Miso" in small.markdown and "cat eats at six" not in small.markdown


def test_turns_cited_by_claims_stay_out_of_flash_and_warm(
    history: GroupStore, service: MemoryService
) -> None:
    seqs = dict(history.execute("SELECT text, seq FROM exchanges").fetchall())
    hidden = frozenset(
        {seqs["Is the pottery studio open again?"], seqs["We are painting the nursery pale green."]}
    )
    sections = dict(
        layer_brief_sections(
            history, None, NOW, flash_budget=800, warm_budget=600, hidden_turns=hidden
        )
    )
    assert "Flash: the last 48 hours" not in sections  # its only turn is hidden
    assert "nursery" not in sections.get("Warm: the last week", "")


def test_a_batch_stored_together_is_not_one_turn(service: MemoryService) -> None:
    """Linking every pair of an import or bulk store would cost n²; a turn holds a few."""
    agent = log_session(service, 1, [("user", "Here is the list.")])
    batch = service.store_entries(
        agent,
        [
            service.parse_store_args({"type": "fact", "content": f"Shelf {i} holds the jars"})
            for i in range(20)
        ],
    )
    store = service.store_for("g")
    compress(store, NOW)
    ids = {o.entry.id for o in batch}
    same_turn = store.execute(
        "SELECT src, dst FROM layer_links WHERE reason = 'same_turn'"
    ).fetchall()
    assert not [r for r in same_turn if r[0] in ids or r[1] in ids]


def test_each_kept_sentence_knows_its_span_in_the_turn() -> None:
    turn = "  Hey!  The boiler code is 4417.\n\nWe decided to repaint the shed. ok"
    found = kept(turn, "user")
    assert [turn[s.span[0] : s.span[1]] for s in found] == [s.text for s in found]
    assert [s.text for s in found] == [
        "The boiler code is 4417.",
        "We decided to repaint the shed.",
    ]
