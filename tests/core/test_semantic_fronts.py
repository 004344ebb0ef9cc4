"""Semantic search through the front ends: the protocol, MCP's tool list, the CLI."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.agent.rpc_memory import MEMORY_TOOLS
from core.cli.main import main
from core.cli.semantic import CATCH_UP_LIMIT
from core.continuity import episodes, exchange_candidates, speaker_names
from core.continuity.exchange_recall import as_spoken
from core.model.entries import Actor
from core.model.errors import Forbidden, InvalidParams
from core.policy.manifest import load_manifest
from core.semantic import backfill, timeref
from core.semantic.embedding import shared_embedder
from core.semantic.hybrid import Mode, parse_mode
from core.service import Caller, MemoryService
from core.storage.paths import DataDir


def call(conn: Connection, method: str, params: Any) -> dict[str, Any]:
    frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = conn.handle_line(json.dumps(frame).encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    token = load_or_create_token(data_dir.token_file)
    connection = agent_dispatcher(service).connect()
    assert "result" in call(connection, "hello", {"token": token, "group": "main"})
    return connection


@contextlib.contextmanager
def time_zone(monkeypatch: pytest.MonkeyPatch, zone: str) -> Iterator[None]:
    """The process's local time zone set to ``zone`` for the block."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def _embed(service: MemoryService) -> None:
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)


def test_search_takes_a_mode_and_returns_scores_and_signals(
    service: MemoryService, conn: Connection
) -> None:
    for text in ("User's dog is named Luna", "User's sister lives in Lisbon"):
        assert "result" in call(conn, "memory_store", {"type": "fact", "content": text})
    _embed(service)
    reply = call(conn, "memory_search", {"query": "which pet do I own", "mode": "semantic"})
    first = reply["result"]["results"][0]
    assert first["content"] == "User's dog is named Luna"
    assert 0 < first["score"] <= 1 and "semantic" in first["signals"]
    bad = call(conn, "memory_search", {"query": "dog", "mode": "fuzzy"})
    assert bad["error"]["code"] == -32602


def test_every_result_of_a_semantic_search_says_it_was_found_by_meaning(
    service: MemoryService, conn: Connection
) -> None:
    # Too weak a match for auto mode to say it was found by meaning: there it only
    # fills a list nothing else matched; semantic mode asked for such matches.
    assert "result" in call(
        conn, "memory_store", {"type": "fact", "content": "The project uses pnpm, not npm"}
    )
    episodes.log_exchange(
        service, service.open_session("main", Actor.AGENT, "t"), "user", "We use pnpm, not npm"
    )
    _embed(service)
    asked = {"query": "which package manager"}
    guessed = call(conn, "memory_search", asked)["result"]["results"]
    assert [r["content"] for r in guessed] == ["The project uses pnpm, not npm"]
    assert not {"semantic", "keyword"} & set(guessed[0]["signals"])
    for method in ("memory_search", "exchange_search"):
        found = call(conn, method, {**asked, "mode": "semantic"})["result"]["results"]
        assert len(found) == 1 and "semantic" in found[0]["signals"], method


def test_a_search_of_turns_by_meaning_lets_the_worker_catch_up_first(
    service: MemoryService, conn: Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only semantic mode waits (auto finds a fresh turn by its words).
    settled: list[str] = []
    monkeypatch.setattr(service, "settle_vectors", settled.append)
    for mode, waits in (("auto", []), ("semantic", ["main"])):
        settled.clear()
        assert "result" in call(conn, "exchange_search", {"query": "Kyoto", "mode": mode})
        assert settled == waits, mode


def test_related_memories_as_a_tool(service: MemoryService, conn: Connection) -> None:
    ids = [
        call(conn, "memory_store", {"type": "fact", "content": text})["result"]["id"]
        for text in (
            "User's dog is named Luna",
            "Luna the dog needs a walk every evening",
            "The quarterly report is due in April",
        )
    ]
    _embed(service)
    assert "memory_related" in MEMORY_TOOLS
    tools = call(conn, "tools/list", {})["result"]["tools"]
    assert "memory_related" in {t["name"] for t in tools}
    related = call(conn, "memory_related", {"id": ids[0]})["result"]["results"]
    assert [r["id"] for r in related][:1] == [ids[1]]
    assert ids[0] not in [r["id"] for r in related]
    missing = call(conn, "memory_related", {"id": "mem-nope"})
    assert missing["error"]["code"] == -32002


def test_a_memory_the_model_cannot_read_has_no_related_ones(
    service: MemoryService, conn: Connection
) -> None:
    # Read as unknown tokens, every Chinese or Japanese text had nearly the same
    # vector: each was "related" to all the others.
    ids = [
        call(conn, "memory_store", {"type": "fact", "content": text})["result"]["id"]
        for text in ("用户最喜欢的水果是芒果", "ユーザーは毎朝ジョギングをする", "用户住在上海")
    ]
    _embed(service)
    assert call(conn, "memory_related", {"id": ids[0]})["result"]["results"] == []


def test_related_refuses_secret_entries(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    secret = service.store(
        operator,
        {"type": "fact", "content": "The spare key is in locker 1234", "privacy": "secret"},
    )
    with pytest.raises(Forbidden):
        service.related(operator, {"id": secret.entry.id})


def test_exchange_log_keeps_name_and_original_time(conn: Connection) -> None:
    logged = call(
        conn,
        "exchange_log",
        {
            "speaker": "user",
            "name": "Caroline",
            "text": "I went to a support group",
            "at": "2023-05-08T13:56:00Z",
        },
    )
    assert logged["result"]["at"] == "2023-05-08T13:56:00.000Z"
    hits = call(conn, "exchange_search", {"query": "What did Caroline do in May 2023?"})
    first = hits["result"]["results"][0]
    assert first["name"] == "Caroline" and first["at"].startswith("2023-05-08T13:56")
    assert {"speaker", "date"} <= set(first["signals"])
    for bad in ({"at": "last tuesday"}, {"name": "x" * 101}):
        reply = call(conn, "exchange_log", {"speaker": "user", "text": "hi", **bad})
        assert reply["error"]["code"] == -32602


def test_a_question_and_its_answer_belong_together(service: MemoryService, agent: Caller) -> None:
    episodes.log_exchange(service, agent, "user", "Where should we go for the team offsite?")
    episodes.log_exchange(service, agent, "assistant", "Porto, in the second week of June.")
    episodes.log_exchange(service, agent, "user", "Thanks, and the budget is fine.")
    hits = episodes.search_exchanges(service, agent, "offsite", limit=3)
    texts = [h.exchange.text for h in hits]
    assert texts[:2] == [
        "Where should we go for the team offsite?",
        "Porto, in the second week of June.",
    ]
    assert "context" in hits[1].signals
    with pytest.raises(InvalidParams):
        parse_mode("x")


def test_a_question_asking_when_lifts_the_turn_that_says_a_time(
    service: MemoryService, agent: Caller
) -> None:
    timed = "Maria adopted a puppy from the shelter two weeks ago."
    untimed = "Maria adopted the puppy from the shelter."  # closer in words
    for text in (timed, untimed):
        episodes.log_exchange(service, agent, "user", text)
    store = service.store_for("main")
    model = shared_embedder()
    assert model is not None
    backfill.reindex(store.conn, store.path, "main", model)

    def order(question: str) -> list[str]:
        return [h.exchange.text for h in episodes.search_exchanges(service, agent, question)]

    assert order("When did Maria adopt the puppy?") == [timed, untimed]
    hits = episodes.search_exchanges(service, agent, "When did Maria adopt the puppy?")
    assert "when" in hits[0].signals and "when" not in hits[1].signals
    assert order("What did Maria adopt from the shelter?") == [untimed, timed]


def test_a_vague_question_still_gets_its_nearest_turns(
    service: MemoryService, agent: Caller
) -> None:
    """No turn shares a word with the question or is close to it, yet the loosely
    related ones come back rather than an empty list."""
    said = [
        "I finally repainted the garden shed green last weekend.",
        "My sister is starting nursing school in the autumn.",
        "The quarterly report is due on Friday.",
        "Our flight to Lisbon leaves at seven in the morning.",
        "Grandma turned ninety and we threw her a party.",
        "The car needs new tyres before winter.",
    ]
    for text in said:
        episodes.log_exchange(service, agent, "user", text)
    store = service.store_for("main")
    model = shared_embedder()
    assert model is not None
    backfill.reindex(store.conn, store.path, "main", model)
    hits = episodes.search_exchanges(service, agent, "How is the family doing?", limit=5)
    texts = [h.exchange.text for h in hits]
    assert {said[1], said[4]} <= set(texts)
    # Weak matches: no signal claims them, nor the context of one another.
    assert not any({"keyword", "semantic", "context"} & set(h.signals) for h in hits)


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What happened in March 2023?", "2023-03-01", "2023-04-01"),
        ("on 8 May, 2023 what did she say", "2023-05-08", "2023-05-09"),
        ("anything from December 2022", "2022-12-01", "2023-01-01"),
        ("what did we plan in 2021", "2021-01-01", "2022-01-01"),
        ("notes from 2024-02-29", "2024-02-29", "2024-03-01"),
        ("what did I say last week", "2026-11-16", "2026-11-23"),
        ("yesterday's plan", "2026-11-23", "2026-11-24"),
        # Weekdays: the latest, today included unless "last" is said.
        ("what did we decide on Monday?", "2026-11-23", "2026-11-24"),
        ("notes from this past Sunday", "2026-11-22", "2026-11-23"),
        ("on Tuesday", "2026-11-24", "2026-11-25"),
        ("last Tuesday", "2026-11-17", "2026-11-18"),
        ("what did we decide Monday?", "2026-11-23", "2026-11-24"),
        # So long ago: days, calendar weeks (from Monday), months and years.
        ("what did I say 3 days ago", "2026-11-21", "2026-11-22"),
        ("what did we decide two weeks ago?", "2026-11-09", "2026-11-16"),
        ("a month ago", "2026-10-01", "2026-11-01"),
        ("five years ago", "2021-01-01", "2022-01-01"),
        ("a couple of days ago", "2026-11-21", "2026-11-24"),
        ("a few days ago", "2026-11-18", "2026-11-23"),
        ("the day before yesterday", "2026-11-22", "2026-11-23"),
        ("what did we cook last weekend", "2026-11-21", "2026-11-23"),
        ("what did I say last night", "2026-11-23", "2026-11-24"),
        ("this morning's list", "2026-11-24", "2026-11-25"),
    ],
)
def test_dates_in_a_question(question: str, start: str, end: str) -> None:
    now = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
    spans = timeref.time_spans(question, now)
    assert [(s.date().isoformat(), e.date().isoformat()) for s, e in spans] == [(start, end)]


@pytest.mark.parametrize(
    ("question", "latest", "earliest"),
    [
        ("What did I do in March?", ("2026-03-01", "2026-04-01"), "2017-03-01"),
        ("anything during December", ("2025-12-01", "2026-01-01"), "2016-12-01"),
        ("what happened on 11 December?", ("2025-12-11", "2025-12-12"), "2016-12-11"),
        ("the call on Nov 20th", ("2026-11-20", "2026-11-21"), "2017-11-20"),
        ("what did she say on the 3rd of May", ("2026-05-03", "2026-05-04"), "2017-05-03"),
    ],
)
def test_a_date_without_a_year_is_that_date_in_each_of_the_last_ten_years(
    question: str, latest: tuple[str, str], earliest: str
) -> None:
    # Asked on Tuesday 24 November 2026: the latest that has begun comes first.
    spans = timeref.time_spans(question, datetime(2026, 11, 24, 10, 0, tzinfo=UTC))
    assert len(spans) == timeref.YEARS_BACK
    assert (spans[0][0].date().isoformat(), spans[0][1].date().isoformat()) == latest
    assert spans[-1][0].date().isoformat() == earliest


def test_29_february_without_a_year_is_found_in_leap_years_only() -> None:
    spans = timeref.time_spans("on 29 February", datetime(2026, 11, 24, tzinfo=UTC))
    assert [s.year for s, _ in spans] == [2024, 2020]


def test_what_asks_and_says_when() -> None:
    assert all(
        timeref.asks_when(q)
        for q in (
            "When did she go?",
            "How long has Nate had turtles?",
            "What year was it?",
            "What time does the stand-up start?",
        )
    )
    assert not timeref.asks_when("Where did she go, and when?")
    said = (
        "I moved 3 years ago",
        "see you next week",
        "We met in May",
        "back in 2019",
        "stand-up starts at 9:30",
        "the train leaves at 6 pm",
        "lunch at noon",
    )
    assert all(timeref.says_when(t) for t in said)
    unsaid = ("I may go", "Have a great day!", "This is a great time", "the last one")
    assert not any(timeref.says_when(t) for t in unsaid)


@pytest.mark.parametrize(
    "question",
    [
        "no dates in here, 42 items",
        "you may want to march on",  # month names in lower case are words
        "I may 2 times a day",
        "What did we hear from Jan?",  # a person, not January
        "May I ask about the deploy?",
        "what is due at 10:30",
        "What did I say on Feb 30?",  # no such day
        "the Sunday roast recipe",  # a weekday that is not a time
        "notes on the Monday.com integration",
        "notes for 9999-12-31",  # past the calendar's end: before, the search failed
        "what is due on 31 December 9999",
        "plans for December 9999",
    ],
)
def test_words_that_only_look_like_dates_name_none(question: str) -> None:
    assert timeref.time_spans(question, datetime(2026, 11, 24, 10, 0, tzinfo=UTC)) == []


def test_days_are_the_askers_not_utcs() -> None:
    # 6 pm on Monday 23 November in California is 02:00 UTC on Tuesday.
    california = timezone(timedelta(hours=-8))
    now = datetime(2026, 11, 24, 2, 0, tzinfo=UTC).astimezone(california)
    assert timeref.time_spans("what did I say yesterday?", now) == [
        (datetime(2026, 11, 22, tzinfo=california), datetime(2026, 11, 23, tzinfo=california))
    ]
    assert timeref.time_spans("on 8 May 2023", now) == [
        (datetime(2023, 5, 8, tzinfo=california), datetime(2023, 5, 9, tzinfo=california))
    ]


@pytest.mark.parametrize("zone", ["Etc/GMT+12", "Etc/GMT-12"])
def test_exchange_search_reads_yesterday_in_the_machines_time_zone(
    service: MemoryService, agent: Caller, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    # In each zone, a turn said at 01:00 and one at 23:00 local time yesterday. In
    # one of the two zones, whatever the hour of the run, one of them is on another
    # UTC day: read in UTC, "yesterday" missed it.
    with time_zone(monkeypatch, zone):
        local_now = datetime.now().astimezone()
        yesterday = (local_now - timedelta(days=1)).replace(minute=0, second=0, microsecond=0)
        early, late = yesterday.replace(hour=1), yesterday.replace(hour=23)
        for when, text in ((early, "Packed the blue suitcase"), (late, "Booked the taxi")):
            episodes.log_exchange(service, agent, "user", text, at=when.isoformat())
        episodes.log_exchange(service, agent, "user", "Watered the plants")  # today
        hits = episodes.search_exchanges(service, agent, "What did I do yesterday?", limit=5)
        dated = {h.exchange.text for h in hits if "date" in h.signals}
        assert dated == {"Packed the blue suitcase", "Booked the taxi"}
        # A date without a year reaches earlier years too.
        before = (local_now - timedelta(days=3 * 365)).replace(hour=12)
        episodes.log_exchange(service, agent, "user", "Sold the old bike", at=before.isoformat())
        asked = f"What did I do on {before.day} {before:%B}?"
        hits = episodes.search_exchanges(service, agent, asked, limit=5)
        assert [h.exchange.text for h in hits if "date" in h.signals] == ["Sold the old bike"]


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Pacific/Auckland"])
def test_a_day_given_without_a_time_is_that_day_where_the_person_is(
    service: MemoryService, agent: Caller, monkeypatch: pytest.MonkeyPatch, zone: str
) -> None:
    # Stored as midnight UTC, 8 May was 7 May in California: "on 8 May" missed it.
    with time_zone(monkeypatch, zone):
        episodes.log_exchange(service, agent, "user", "Signed the lease", at="2023-05-08")
        episodes.log_exchange(service, agent, "user", "Paid the deposit", at="2023-05-07")
        hits = episodes.search_exchanges(service, agent, "What did I do on 8 May 2023?", limit=5)
        assert [h.exchange.text for h in hits if "date" in h.signals] == ["Signed the lease"]


@pytest.mark.parametrize(
    ("question", "named", "spoken"),
    [
        ("Where has Melanie camped?", {"melanie"}, "Where has I camped?"),
        ("What do Melanie's kids like?", {"melanie"}, "What do my kids like?"),
        ("Would Caroline keep it on her shelf?", {"caroline"}, "Would I keep it on my shelf?"),
        ("What did he tell Jon Smith’s team?", {"jon smith"}, "What did I tell my team?"),
        # Two speakers named: whose "her" is unclear, so pronouns stay.
        ("Did Caroline and Melanie see her?", {"caroline", "melanie"}, "Did I and I see her?"),
        # A name inside a longer word is not a name; no speaker named, nothing changes.
        ("Where is Melaniestown?", {"melanie"}, "Where is Melaniestown?"),
        ("Where has she camped?", set(), "Where has she camped?"),
        # A speaker logged with a full name, asked about by the first.
        ("What did Mary say?", {"mary jane"}, "What did I say?"),
    ],
)
def test_a_question_about_a_speaker_is_embedded_as_they_would_say_it(
    question: str, named: set[str], spoken: str
) -> None:
    assert as_spoken(question, named) == spoken


@pytest.mark.parametrize("mode", list(Mode))
def test_a_question_naming_only_a_speaker_lists_their_turns(
    service: MemoryService, mode: Mode
) -> None:
    # The name is metadata, not a word of the turns: before, "What did Sam say?"
    # had nothing to match and found nothing.
    agent = service.open_session("main", Actor.AGENT, "names")
    said = [
        ("Sam", "I went to Kyoto in March", "2023-03-15T10:00:00+00:00"),
        ("Ana", "The invoices go out on Fridays", "2023-03-16T10:00:00+00:00"),
        ("Sam Okafor", "Terraform state lives in the bucket now", "2023-04-02T10:00:00+00:00"),
        ("Élodie", "The kiln needs a new element", "2023-04-03T10:00:00+00:00"),
    ]
    for name, text, at in said:
        episodes.log_exchange(service, agent, "user", text, name=name, at=at)
    _embed(service)
    # Typed in lower case, as in a search box, a name is still a name; so is the
    # first name of one logged in full.
    for question in ("Sam", "What did Sam say?", "sam", "what did sam say"):
        hits = episodes.search_exchanges(service, agent, question, limit=5, mode=mode)
        assert [h.exchange.text for h in hits] == [
            "Terraform state lives in the bucket now",
            "I went to Kyoto in March",
        ], question
        assert all("speaker" in h.signals for h in hits)
    # A name whose capital is not ASCII, typed either way.
    for question in ("What did Élodie say?", "what did élodie say"):
        hits = episodes.search_exchanges(service, agent, question, limit=5, mode=mode)
        assert [h.exchange.text for h in hits][:1] == ["The kiln needs a new element"], question


def test_named_speakers_latest_turns_are_read_from_the_index(service: MemoryService) -> None:
    # Two speakers' turns interleaved in time: the candidates are the latest of
    # both together, and each speaker's are read in order from the name and time
    # index, not sorted after reading every turn they said.
    agent = service.open_session("main", Actor.AGENT, "names")
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(12):
        name = "Sam" if i % 3 else "Ana Lima"
        at = (start + timedelta(hours=i)).isoformat()
        episodes.log_exchange(service, agent, "user", f"turn {i}", turn=f"t{i}", name=name, at=at)
    store = service.store_for("main")

    def latest(names: set[str], want: int) -> set[str]:
        seqs = sorted(exchange_candidates._said_by(store, names, want, None))
        marks = ", ".join("?" * len(seqs))
        return {
            r[0] for r in store.execute(f"SELECT turn FROM exchanges WHERE seq IN ({marks})", seqs)
        }

    assert latest({"sam", "ana lima"}, 5) == {"t11", "t10", "t9", "t8", "t7"}
    assert latest({"ANA LIMA"}, 2) == {"t9", "t6"}
    plan = " ".join(
        str(row[3])
        for row in store.execute(
            "EXPLAIN QUERY PLAN SELECT seq, said_at FROM exchanges WHERE name = ? COLLATE NOCASE "
            "AND name IS NOT NULL ORDER BY said_at DESC LIMIT 100",
            ("sam",),
        )
    )
    assert "idx_exchanges_name_said" in plan and "TEMP B-TREE" not in plan


def test_a_first_name_names_each_speaker_logged_with_it(service: MemoryService) -> None:
    agent = service.open_session("main", Actor.AGENT, "names")
    for name in ("Sam Okafor", "sam lee", "Sam Lee", "Samantha", "Sam", "Ana"):
        for _ in range(3):
            episodes.log_exchange(service, agent, "user", "hello", name=name)
    store = service.store_for("main")
    named = speaker_names.speakers_named(store, "What did Sam say?")
    # One form of each name (case-blind), and not a longer first name.
    assert {n.casefold() for n in named} == {"sam", "sam okafor", "sam lee"}
    assert len(named) == 3
    assert speaker_names.speakers_named(store, "what did ana and sam okafor say") == {
        "Ana",
        "Sam Okafor",
    }


def test_a_name_asked_without_its_accents_names_the_speaker(service: MemoryService) -> None:
    agent = service.open_session("main", Actor.AGENT, "names")
    for name in ("José Ruiz", "Zoe", "Joseph", "Jonas", "Éric"):
        episodes.log_exchange(service, agent, "user", "the garden needs water", name=name)
    store = service.store_for("main")
    assert speaker_names.speakers_named(store, "What did Jose say?") == {"José Ruiz"}
    assert speaker_names.speakers_named(store, "What did Zoë say?") == {"Zoe"}
    assert speaker_names.speakers_named(store, "what did eric say") == {"Éric"}
    # Accents aside, not letters aside: "Jos" names no one.
    assert speaker_names.speakers_named(store, "What did Jos say?") == set()
    [first, *_] = episodes.find_exchanges(store, "What did Jose say about the garden?")
    assert first.exchange.name == "José Ruiz" and "speaker" in first.signals


def test_cli_reindex_related_and_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = ["--data-dir", str(tmp_path)]
    for text in ("User's dog is named Luna", "Luna loves the beach", "Invoices go out monthly"):
        assert main([*d, "store", "--type", "fact", text]) == 0
    first = capsys.readouterr().out.split()[0]
    assert main([*d, "reindex", "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["done"] == done["total"] == 3
    assert main([*d, "related", first, "--json"]) == 0
    # memory_related's result, as the tool returns it (before, a bare list).
    related = json.loads(capsys.readouterr().out)
    Draft202012Validator(load_manifest()["memory_related"].result_schema).validate(related)
    assert related["results"][0]["content"] == "Luna loves the beach"
    assert main([*d, "search", "espresso", "--mode", "keyword"]) == 0
    assert capsys.readouterr().out.strip() == "no matching memories"
    assert main([*d, "exchanges", "beach", "--mode", "semantic"]) == 0
    assert capsys.readouterr().out.strip() == "no matching exchanges"


def test_cli_shows_the_score_of_a_weak_match_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Weak matches that fill a short list carry no signal that found them; their
    # score still shows, and the line says they are a guess.
    service = MemoryService(DataDir(tmp_path))
    try:
        agent = service.open_session("main", Actor.AGENT, "cli-test")
        for text in ("My sister starts nursing school", "The car needs new tyres"):
            episodes.log_exchange(service, agent, "user", text)
        service.store(agent, {"type": "fact", "content": "User goes running three times a week"})
    finally:
        service.close()
    d = ["--data-dir", str(tmp_path)]
    assert main([*d, "exchanges", "How is the family doing?"]) == 0
    heads = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert len(heads) == 2 and all("  (0." in head for head in heads)
    assert any(": guess" in head for head in heads)
    assert main([*d, "reindex"]) == 0
    capsys.readouterr()
    assert main([*d, "search", "How often do I exercise?"]) == 0
    assert re.search(r"running three times a week  \(0\.\d\d: guess", capsys.readouterr().out)
    assert main([*d, "exchanges"]) == 0  # a listing: no scores
    heads = [line for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert len(heads) == 2 and not any(re.search(r"\(\d\.\d\d", head) for head in heads)


PUNCTUATION_ALONE = ["%", "?", "(", "\\", "_", "?!", "—"]


@pytest.mark.parametrize("mode", list(Mode))
def test_a_query_of_punctuation_alone_finds_nothing_in_any_mode(
    service: MemoryService, conn: Connection, mode: Mode
) -> None:
    # Before, exchange_search listed the newest turns for "%", each scored 1.0 as a
    # perfect match, and memory_search listed every claim beside its results.
    assert "result" in call(conn, "memory_store", {"type": "fact", "content": "User drinks tea"})
    for text in ("I repaired the bicycle chain", "What is 100% of it?"):
        assert "result" in call(conn, "exchange_log", {"speaker": "user", "text": text})
    seq = call(conn, "exchange_search", {"query": "bicycle"})["result"]["results"][0]["id"]
    claim = {"text": "The bicycle chain was repaired", "sources": [{"kind": "exchange", "id": seq}]}
    assert "result" in call(conn, "claim_propose", {**claim, "kind": "fact"})
    _embed(service)
    for query in PUNCTUATION_ALONE:
        for tool in ("exchange_search", "memory_search"):
            found = call(conn, tool, {"query": query, "mode": mode.value})["result"]
            assert found["results"] == [], (tool, query)
            assert found.get("claims", []) == [], (tool, query)
    # No query at all is still a listing, newest first.
    listed = call(conn, "exchange_search", {"query": "", "mode": mode.value})["result"]
    assert len(listed["results"]) == 2


def test_cli_searches_for_punctuation_alone_say_nothing_matched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    assert main([*d, "--create", "store", "--type", "fact", "User drinks tea"]) == 0
    service = MemoryService(DataDir(tmp_path))
    try:
        agent = service.open_session("main", Actor.AGENT, "cli-test")
        episodes.log_exchange(service, agent, "user", "I repaired the bicycle chain")
    finally:
        service.close()
    capsys.readouterr()
    for mode in ("keyword", "auto"):
        assert main([*d, "exchanges", "%", "--mode", mode]) == 0
        assert capsys.readouterr().out.strip() == "no matching exchanges"
        assert main([*d, "search", "?", "--mode", mode]) == 0
        assert capsys.readouterr().out.strip() == "no matching memories"


def test_full_width_letters_in_a_query_are_read_as_plain_letters(
    service: MemoryService, conn: Connection
) -> None:
    # Before, "ＣＡＦＥ" and "ＣＯＦＦＥＥ" found nothing in any tool.
    cafe = "Orders a café crème every morning"
    assert "result" in call(conn, "memory_store", {"type": "preference", "content": cafe})
    sign = "The sign says ＣＯＦＦＥＥ ＳＨＯＰ"
    assert "result" in call(conn, "memory_store", {"type": "fact", "content": sign})
    assert "result" in call(conn, "exchange_log", {"speaker": "user", "text": cafe})
    seq = call(conn, "exchange_search", {"query": "crème"})["result"]["results"][0]["id"]
    claim = {"text": "The person orders a café crème", "kind": "preference"}
    sources = [{"kind": "exchange", "id": seq}]
    assert "result" in call(conn, "claim_propose", {**claim, "sources": sources})
    _embed(service)

    def memories(query: str, mode: str) -> list[str]:
        found = call(conn, "memory_search", {"query": query, "mode": mode})["result"]
        return [r["content"] for r in found["results"]]

    assert memories("ＣＡＦＥ", "keyword") == [cafe]
    turns = call(conn, "exchange_search", {"query": "ＣＡＦＥ", "mode": "keyword"})["result"]
    assert [r["text"] for r in turns["results"]] == [cafe]
    claims = call(conn, "claim_search", {"query": "ＣＡＦＥ"})["result"]["claims"]
    assert [c["text"] for c in claims] == [claim["text"]]
    recalled = call(conn, "recall", {"text": "ＣＡＦＥ"})["result"]
    assert recalled["keywords"] == ["ＣＡＦＥ"]  # as the text wrote it, found as "cafe"
    assert [t["text"] for t in recalled["results"][0]["turns"]] == [cafe]
    # By meaning, as its plain letters: the model reads "coffee", not "ＣＯＦＦＥＥ".
    assert memories("ＣＯＦＦＥＥ", "semantic") == memories("coffee", "semantic") == [cafe]
    # Text stored in full-width letters is still found as it was written (and only so:
    # the index holds its words as written, so "coffee" does not find it).
    assert memories("ＣＯＦＦＥＥ", "keyword") == [sign]
    assert memories("ＣＯＦＦＥＥ", "auto") == [sign, cafe]


def test_cli_reindex_interrupted_says_what_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = ["--data-dir", str(tmp_path)]
    assert main([*d, "--create", "store", "--type", "fact", "User's dog is named Luna"]) == 0
    capsys.readouterr()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(backfill, "reindex", interrupted)
    assert main([*d, "reindex"]) == 130
    err = capsys.readouterr().err
    assert "vectors made so far are kept" in err and "ambry reindex" in err


def test_cli_related_shows_each_score_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for text in ("User's dog is named Luna", "Luna the dog loves the beach"):
        assert main([*d, "store", "--type", "fact", text]) == 0
    first = capsys.readouterr().out.split()[0]
    assert main([*d, "reindex"]) == 0
    capsys.readouterr()
    assert main([*d, "related", first]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("mem-") and line.count("(0.") == 1 and line.endswith(": semantic)")


def test_cli_results_say_their_score_and_what_found_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    assert main([*d, "store", "--type", "fact", "User's dog is named Luna"]) == 0
    assert main([*d, "reindex"]) == 0
    capsys.readouterr()
    assert main([*d, "search", "which animal lives with me"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("mem-") and "User's dog is named Luna  (0." in line
    assert line.endswith("semantic, recent)")
    assert main([*d, "search", "--json"]) == 0  # a listing: all match an empty query fully
    assert [r["score"] for r in json.loads(capsys.readouterr().out)["results"]] == [1.0]
    assert main([*d, "search"]) == 0  # a listing, not a ranking: no score
    assert capsys.readouterr().out.strip().endswith("User's dog is named Luna")
    service = MemoryService(DataDir(tmp_path))
    try:
        agent = service.open_session("main", Actor.AGENT, "cli-test")
        episodes.log_exchange(service, agent, "user", "Luna chewed the garden hose", name="Sam")
    finally:
        service.close()
    assert main([*d, "exchanges", "hose"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "[user: Sam]" in head and "keyword" in head and "(0." in head


def test_cli_json_searches_carry_every_key_their_tool_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, `--json search` left out pending_vectors and note (printed as text on
    # stderr only), and `--json exchanges` printed a bare list of turns, without
    # next_offset, truncated or the vectors still pending.
    service = MemoryService(DataDir(tmp_path))
    try:
        me = service.open_session("main", Actor.OPERATOR, "cli-test")
        for n in range(CATCH_UP_LIMIT + 1):  # more than a search embeds first
            service.store(me, {"type": "fact", "content": f"Shelf {n} holds the river maps"})
        for n in range(12):
            episodes.log_exchange(service, me, "user", f"Where are the river maps, take {n}?")
        service.end_session(me)
    finally:
        service.close()
    pending = CATCH_UP_LIMIT + 13
    manifest = load_manifest()
    d = ["--data-dir", str(tmp_path), "--json"]
    for command, tool in (("search", "memory_search"), ("exchanges", "exchange_search")):
        assert main([*d, command, "river", "maps"]) == 0
        out, err = capsys.readouterr()
        found = json.loads(out)
        Draft202012Validator(manifest[tool].result_schema).validate(found)
        assert err == "", command  # the JSON holds it all
        assert found["next_offset"] == (10 if command == "exchanges" else 20)
        assert found["pending_vectors"] == pending, command
        assert found["note"] == (
            f"{pending} memories and turns have no vector yet; run `ambry reindex` "
            "(until then they are found by their words)"
        )
        # Text: the same note, on stderr.
        assert main([*d[:2], command, "river", "maps"]) == 0
        out, err = capsys.readouterr()
        assert err == f"note: {found['note']}\n" and "(more follow: add --offset" in out
        # A keyword search asks nothing of meaning: no note, as from the tool.
        assert main([*d, command, "river", "--mode", "keyword"]) == 0
        assert "pending_vectors" not in json.loads(capsys.readouterr().out)
        # By meaning alone, the rows without a vector are not searched at all: the
        # note says so (before, that they were found by their words).
        assert main([*d, command, "river", "--mode", "semantic"]) == 0
        assert json.loads(capsys.readouterr().out)["note"] == (
            f"{pending} memories and turns have no vector yet and are not searched by "
            "meaning alone (--mode semantic); run `ambry reindex`, or search with --mode "
            "auto to find them by their words"
        )
