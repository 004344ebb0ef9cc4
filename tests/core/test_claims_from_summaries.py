"""Claims from day summaries: each point keeps its turn and span; a claim cites the turn."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import apsw
import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.claims import records
from core.claims.model import MAX_SOURCES, ClaimKind, ClaimStatus, Origin, SourceKind
from core.claims.statements import turn_statement
from core.cli.main import main
from core.continuity.episodes import log_exchange
from core.layers.compression import LAST_PASS_KEY, compress, is_due, summary_id
from core.layers.points import day_points
from core.layers.summaries import SourceTurn, draft_day
from core.memory.forgetting import Scope
from core.model.entries import Actor, iso, utc_now
from core.model.errors import Forbidden
from core.service import Caller, MemoryService
from core.storage import schema
from core.storage.paths import DataDir
from core.storage.store import GroupStore
from tests.core.claims_helpers import ok

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=utc_now().tzinfo)

DAY_ONE = [
    ("user", "Hi there!"),
    ("user", "For the record, the staging database runs Postgres 16 on port 5433."),
    ("assistant", "The deploy logs show two warnings about the cache."),
    ("user", "I prefer short answers without preambles. Can you check the deploy logs?"),
]
DAY_TWO = [
    ("user", "I prefer short answers without preambles."),
    ("user", "We decided to use Postgres for the billing service."),
    ("user", "Please send the invoice to Dana before Friday."),
]


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    token = load_or_create_token(data_dir.token_file)
    c = agent_dispatcher(service).connect()
    ok(c, "hello", {"token": token, "group": "main", "client": "claims-test"})
    return c


def _session(service: MemoryService, days_ago: int, turns: list[tuple[str, str]]) -> list[int]:
    """One agent session's turns, said ``days_ago`` before NOW; their exchange ids."""
    agent = service.open_session("main", Actor.AGENT, "tests")
    start = NOW - timedelta(days=days_ago)
    return [
        log_exchange(
            service, agent, speaker, text, at=iso(start + timedelta(minutes=i))
        ).exchange.id
        for i, (speaker, text) in enumerate(turns)
    ]


def _history(service: MemoryService) -> GroupStore:
    _session(service, 3, DAY_ONE)
    _session(service, 2, DAY_TWO)
    store = service.store_for("main")
    compress(store, NOW)
    return store


def _digest(store: GroupStore, *tables: str) -> str:
    rows = [sorted(map(repr, store.execute(f"SELECT * FROM {t}").fetchall())) for t in tables]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def _text(store: GroupStore, seq: int) -> str:
    return str(store.execute("SELECT text FROM exchanges WHERE seq = ?", (seq,)).get)


# -- each point remembers its turn and span -----------------------------------------------


def test_a_drafted_point_keeps_its_turn_and_the_span_of_its_sentence() -> None:
    turns = [
        SourceTurn(7, "user", "Alex", "Hi!  We decided to use Postgres.\nIt is fast.", "t1"),
        SourceTurn(9, "assistant", None, "Great. The backups run nightly at two.", "t2"),
    ]
    draft = draft_day(turns, {}, 1)
    assert len(draft.point_sources) == len(draft.points) == 2
    by_seq = {t.seq: t.text for t in turns}
    for point, source in zip(draft.points, draft.point_sources, strict=True):
        sentence = by_seq[source.seq][source.start : source.end]
        assert point.endswith(": " + sentence)
        assert source.sha256 == hashlib.sha256(by_seq[source.seq].encode()).hexdigest()
    assert draft.points[0] == "Alex: We decided to use Postgres."


def test_day_summaries_store_their_points_sources_and_rollups_none(
    service: MemoryService,
) -> None:
    store = _history(service)
    rows = store.execute(
        "SELECT level, points, point_sources FROM layer_summaries ORDER BY level, start_at"
    ).fetchall()
    levels = [r[0] for r in rows]
    assert levels.count("day") == 2 and "week" in levels
    for level, points, sources in rows:
        if level != "day":
            assert json.loads(sources) == []
            continue
        for point, src in zip(json.loads(points), json.loads(sources), strict=True):
            assert point.endswith(_text(store, src["seq"])[src["start"] : src["end"]])
    found = day_points(store)
    assert (found.summaries, found.unsourced, found.stale) == (2, 0, 0)
    assert {p.speaker for p in found.points} == {"user", "assistant"}
    assert all(p.turn_text == _text(store, p.exchange_seq) for p in found.points)


# -- the statement rule for a summary point ---------------------------------------------------


@dataclass(frozen=True)
class _Point:
    turn_text: str
    speaker: str
    exchange_seq: int
    start: int
    end: int


def _point(text: str, speaker: str = "user", start: int = 0) -> _Point:
    """A point drawn from the sentence at ``start`` to the end of ``text``."""
    return _Point(text, speaker, 1, start, len(text))


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("My name is Alex Moreau.", ("My name is Alex Moreau.", ClaimKind.IDENTITY)),
        ("I work at a bakery in Lyon.", ("I work at a bakery in Lyon.", ClaimKind.IDENTITY)),
        (
            "I prefer dark mode everywhere.",
            ("I prefer dark mode everywhere.", ClaimKind.PREFERENCE),
        ),
        ("We decided to use Postgres.", ("We decided to use Postgres.", ClaimKind.PROJECT)),
        (
            "The gateway listens on port 443.",
            ("The gateway listens on port 443.", ClaimKind.CONFIGURATION),
        ),
        (
            "The billing service is down again.",
            ("The billing service is down again.", ClaimKind.RUNTIME_STATE),
        ),
        ("The cat sleeps on the piano.", ("The cat sleeps on the piano.", ClaimKind.FACT)),
        (
            "I'd rather get plain text emails.",
            ("I'd rather get plain text emails.", ClaimKind.PREFERENCE),
        ),
        (
            "We use SQLite rather than Postgres.",
            ("We use SQLite rather than Postgres.", ClaimKind.PROJECT),
        ),
        # Lead-ins are left out of the span; "No" without a comma stays.
        (
            "Remember that the deploy key rotates monthly.",
            ("The deploy key rotates monthly.", ClaimKind.FACT),
        ),
        (
            "No, actually the staging port is 5433.",
            ("The staging port is 5433.", ClaimKind.CONFIGURATION),
        ),
        ("No one uses the old server.", ("No one uses the old server.", ClaimKind.FACT)),
        # Not statements: questions, tasks, instructions, requests, commitments, hedges.
        ("Is the staging port 5433?", None),
        ("Remember to renew the certificate.", None),
        ("Please keep answers short.", None),
        ("Always run the linter first.", None),
        ("Let's use the cheaper flight.", None),
        ("Can you book the train for Friday.", None),
        ("We'll migrate the billing tables tomorrow.", None),
        ("I'm going to rewrite the parser.", None),
        ("I need to call the landlord.", None),
        ("Maybe the cache is cold on Mondays.", None),
        ("I think the tests are flaky.", None),
        ("TODO fix the flaky tests.", None),
        ("Too short.", None),
    ],
)
def test_which_points_are_claims_and_of_what_kind(
    sentence: str, expected: tuple[str, ClaimKind] | None
) -> None:
    found = turn_statement(_point(sentence))
    assert (None if found is None else (found.text, found.kind)) == expected
    if found is not None:
        quote = sentence[found.span[0] : found.span[1]]
        assert " ".join(quote.split()).lower() == found.text.lower()


def test_only_the_persons_sentences_become_claims() -> None:
    text = "Intro. The backups run nightly at two."
    assert turn_statement(_point(text, "assistant", start=7)) is None
    found = turn_statement(_point(text, start=7))
    assert found is not None and found.span == (7, len(text))


# -- extraction from summaries ------------------------------------------------------------------


def test_extraction_cites_the_turn_and_never_changes_summaries_or_turns(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    store = _history(service)
    tables = ("layer_summaries", "layer_sources", "layer_children", "exchanges", "layer_fts")
    before = _digest(store, *tables)
    first = service.extract_claims(operator)
    assert _digest(store, *tables) == before
    assert (first.handoffs, first.summaries, first.unsourced) == (0, 2, 0)
    assert first.from_summaries.to_dict() == {
        "read": 2,
        "statements": 4,
        "created": 3,
        "recurring": 1,
    }
    claims = {c.text: c for c in records.list_claims(store)}
    assert {t: c.kind for t, c in claims.items()} == {
        "The staging database runs Postgres 16 on port 5433.": ClaimKind.CONFIGURATION,
        "I prefer short answers without preambles.": ClaimKind.PREFERENCE,
        "We decided to use Postgres for the billing service.": ClaimKind.PROJECT,
    }
    assert all(
        c.status is ClaimStatus.CANDIDATE and c.origin is Origin.EXTRACTION for c in claims.values()
    )
    staging = claims["The staging database runs Postgres 16 on port 5433."]
    (source,) = staging.sources
    turn = _text(store, int(source.ref))
    assert source.kind is SourceKind.EXCHANGE and source.span is not None
    assert (
        source.quote
        == turn[source.span[0] : source.span[1]]
        == staging.text[0].lower() + staging.text[1:]
    )
    assert source.source_sha256 == hashlib.sha256(turn.encode()).hexdigest()
    assert turn.startswith("For the record, ")
    # The statement said on both days is one candidate with both turns as sources.
    prefer = claims["I prefer short answers without preambles."]
    assert len({s.ref for s in prefer.sources}) == 2
    for claim in claims.values():
        assert ok(conn, "claim_verify", {"id": claim.id})["state"] == "source_exact_match"
    # Again: nothing new, no duplicate, no new source.
    again = service.extract_claims(operator)
    assert (again.created, again.recurring, again.statements) == (0, 0, 4)
    assert len(records.list_claims(store)) == 3
    assert records.get_claim(store, prefer.id).sources == prefer.sources
    assert _digest(store, *tables) == before


def test_verification_follows_the_turn_when_it_changes_or_goes(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    store = _history(service)
    service.extract_claims(operator)
    claims = {c.text: c for c in records.list_claims(store)}
    staging = claims["The staging database runs Postgres 16 on port 5433."]
    seq = int(staging.sources[0].ref)
    store.execute(
        "UPDATE exchanges SET text = ? WHERE seq = ?",
        ("For the record, the staging database moved to MySQL 8.", seq),
    )
    report = ok(conn, "claim_verify", {"id": staging.id})
    assert report["state"] == "source_drifted"
    assert "changed since it was cited" in report["sources"][0]["evidence"]
    # The changed turn no longer matches its point: extraction leaves it out.
    assert day_points(store).stale == 1
    assert service.extract_claims(operator).from_summaries.statements == 3
    service.clear(operator, Scope.EPISODIC)
    for claim in claims.values():
        report = ok(conn, "claim_verify", {"id": claim.id})
        assert report["state"] == "source_missing"
        assert "deleted or expired" in report["sources"][0]["evidence"]


def test_handoffs_and_summaries_are_counted_apart_and_one_thread_at_a_time(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    ok(conn, "thread_open", {"title": "Billing"})
    ok(
        conn,
        "handoff_write",
        {
            "markdown": "## Decisions\n- We decided to use Postgres for the billing service.\n",
            "base_version": 0,
        },
    )
    thread = ok(conn, "thread_list", {})["threads"][0]["id"]
    ok(
        conn,
        "exchange_log",
        {"speaker": "user", "text": "The invoices go out on the first Monday."},
    )
    store = _history(service)  # two sessions under no thread
    both = service.extract_claims(operator)
    assert (both.handoffs, both.summaries) == (1, 3)
    assert both.from_handoffs.created == 1
    # The handoff's decision recurs in a turn: one candidate, two kinds of source.
    decided = next(c for c in records.list_claims(store) if c.text.startswith("We decided"))
    assert {s.kind for s in decided.sources} == {SourceKind.HANDOFF, SourceKind.EXCHANGE}
    only = service.extract_claims(operator, thread)
    assert (only.handoffs, only.summaries, only.from_summaries.statements) == (1, 1, 1)


def test_a_statement_keeps_at_most_eight_sources(service: MemoryService, operator: Caller) -> None:
    for day in range(MAX_SOURCES + 3):
        _session(service, 20 - day, [("user", "The office plants need water on Tuesdays.")])
    store = service.store_for("main")
    compress(store, NOW)
    result = service.extract_claims(operator)
    assert (result.created, result.recurring) == (1, MAX_SOURCES - 1)
    (claim,) = records.list_claims(store)
    assert len(claim.sources) == MAX_SOURCES


def test_extraction_refuses_an_agent(service: MemoryService, agent: Caller) -> None:
    store = _history(service)
    with pytest.raises(Forbidden, match="run by the person"):
        service.extract_claims(agent)
    assert records.list_claims(store) == []


def test_cli_extract_reports_each_source(
    service: MemoryService, data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    _history(service)
    service.close()
    assert main(["--data-dir", str(data_dir.root), "--json", "claims", "extract"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["from_summaries"]["created"] == 3 and result["from_handoffs"]["read"] == 0
    assert main(["--data-dir", str(data_dir.root), "claims", "extract"]) == 0
    text = capsys.readouterr().out
    assert "day summary (2 read): 4 statement(s), 0 new, 0 recurring" in text
    assert "Candidates come from" not in text


def test_cli_extract_with_nothing_found_says_where_candidates_come_from(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir.ensure()
    assert main(["--data-dir", str(data_dir.root), "claims", "extract"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("0 new candidate(s), 0 recurring, from 0 statement(s)")
    assert "`ambry handoff`" in text and "`ambry layers --compress`" in text


# -- summaries from before point sources ------------------------------------------------------


def test_a_schema_8_database_is_upgraded_and_its_days_drawn_again(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "old")
    data.ensure()
    old = apsw.Connection(str(data.group_db("main")))
    for step in schema.MIGRATIONS[:8]:
        with old:
            old.execute(step)
    old.execute("PRAGMA user_version = 8")
    said = iso(NOW - timedelta(days=3))
    sid = summary_id("day", None, "s1", said[:10])
    old.execute(
        "INSERT INTO exchanges (session_id, speaker, text, created_at, said_at) "
        "VALUES ('s1', 'user', 'We decided to use Postgres for the billing service.', ?, ?)",
        (iso(utc_now()), said),
    )
    old.execute(
        "INSERT INTO layer_summaries (id, level, session_id, period, start_at, end_at, hook, "
        "points, turn_count, source_key, built_at) VALUES (?, 'day', 's1', ?, ?, ?, "
        "'user: We decided to use Postgres for the billing service.', "
        "'[\"user: We decided to use Postgres for the billing service.\"]', 1, '1:1', ?)",
        (sid, said[:10], said, said, said),
    )
    old.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (LAST_PASS_KEY, iso(NOW)))
    old.close()
    service = MemoryService(data)
    try:
        store = service.store_for("main")
        assert store.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
        assert store.execute(
            "SELECT point_sources, source_key FROM layer_summaries WHERE id = ?", (sid,)
        ).fetchone() == ("[]", "")
        assert is_due(store, NOW, timedelta(hours=6))
        operator = service.open_session("main", Actor.OPERATOR, "tests")
        before = service.extract_claims(operator)
        assert (before.summaries, before.unsourced, before.created) == (1, 1, 0)
        compress(store, NOW)
        after = service.extract_claims(operator)
        assert (after.unsourced, after.from_summaries.created) == (0, 1)
        (claim,) = records.list_claims(store)
        assert claim.sources[0].kind is SourceKind.EXCHANGE and claim.sources[0].ref == "1"
    finally:
        service.close()
