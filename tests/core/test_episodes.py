"""Exchanges (episodic memory): logging, search, expiry."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.continuity import context as continuity
from core.continuity import episodes, exchange_recall, threads
from core.continuity.episodes import MAX_EXCHANGE_CHARS, Speaker
from core.layers.compression import drop_lost
from core.layers.context import flash_section
from core.model.config import Config
from core.model.entries import Actor, iso, utc_now
from core.model.errors import InvalidParams, Refused, TooLarge
from core.semantic.hybrid import Mode, matched
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir


def in_thread(service: MemoryService, title: str) -> Caller:
    caller = service.open_session("main", Actor.AGENT, "test-agent")
    continuity.enter_thread(service, caller, title)
    return caller


def test_a_turn_is_filed_under_its_session_and_thread(service: MemoryService) -> None:
    me = in_thread(service, "Project X")
    logged = episodes.log_exchange(service, me, "user", "Let's use pnpm", turn=" t-1 ")
    e = logged.exchange
    assert (e.session_id, e.thread_title, e.speaker, e.turn) == (
        me.session_id,
        "Project X",
        Speaker.USER,
        "t-1",
    )
    assert logged.to_dict()["thread_id"] == e.thread_id == threads.session_thread(service, me)
    row = audit.recent(service.store_for("main"), limit=1)[0]
    assert row.action == "exchange_log" and row.size == len("Let's use pnpm")
    assert "pnpm" not in json.dumps(row.to_dict())
    # A session without a thread logs unfiled turns.
    loose = service.open_session("main", Actor.AGENT, "test-agent")
    assert episodes.log_exchange(service, loose, "tool", "ls output").exchange.thread_id is None


@pytest.mark.parametrize(
    ("speaker", "text", "turn", "error", "field"),
    [
        ("agent", "hi", None, InvalidParams, "speaker"),
        ("user", "   ", None, InvalidParams, "text"),
        ("user", "x" * (MAX_EXCHANGE_CHARS + 1), None, TooLarge, "text"),
        ("user", "hi", "two\nlines", InvalidParams, "turn"),
        ("user", "hi", "t" * 101, InvalidParams, "turn"),
        ("user", "bad \ud800 text", None, InvalidParams, "text"),
    ],
)
def test_bad_turns_are_refused_with_the_field(
    service: MemoryService,
    agent: Caller,
    speaker: str,
    text: str,
    turn: str | None,
    error: type[Exception],
    field: str,
) -> None:
    with pytest.raises(error) as err:
        episodes.log_exchange(service, agent, speaker, text, turn)
    assert getattr(err.value, "data", {}).get("field") == field
    assert service.store_for("main").execute("SELECT count(*) FROM exchanges").get == 0


@pytest.mark.parametrize(
    ("at", "says"),
    [
        ("0001-01-01T00:00:00Z", "is before 1900"),
        ("0001-01-01T00:00:00+05:00", "is before 1900"),  # UTC is in year 0: no crash
        ("0001-01-01", "is before 1900"),
        ("1899-12-31T23:59:00-01:00", "is before 1900"),  # 1900 in UTC, not as given
        ("2999-01-01", "is in the future"),
        ("9999-12-31T23:00:00-05:00", "out of range"),  # past year 9999 in UTC
        ("yesterday", "is not an ISO 8601 date or time"),
        ("2023-02-30", "30 February 2023 does not exist"),
        ("2023-13-01", "there is no month 13"),
        ("2023-05-08T25:00", "there is no hour 25"),
        ("2023-05-08T24:30", "there is no hour 24"),
        ("1700000000", "a number is not a date; give an ISO 8601 time such as"),
        (1700000000, "a number is not a date"),
    ],
)
def test_a_time_no_turn_was_said_at_is_refused(
    service: MemoryService, agent: Caller, at: Any, says: str
) -> None:
    with pytest.raises(InvalidParams, match=says) as err:
        episodes.log_exchange(service, agent, "user", "hi", at=at)
    assert err.value.field == "at"
    ok = episodes.log_exchange(service, agent, "user", "hi", at="1999-12-31T23:30:00-01:00")
    assert ok.exchange.said_at == "2000-01-01T00:30:00.000Z"
    lower = episodes.log_exchange(service, agent, "user", "hi", at="2023-05-08t13:56:00z")
    assert lower.exchange.said_at == "2023-05-08T13:56:00.000Z"


def test_a_date_alone_for_today_is_now_and_in_the_brief(
    service: MemoryService, local_zone: Callable[[str], None]
) -> None:
    local_zone("America/Los_Angeles")
    me = in_thread(service, "Today")
    dawn = datetime(2026, 11, 25, 12, 39, tzinfo=UTC)  # 04:39 in Los Angeles
    logged = episodes.log_exchange(
        service, me, "user", "The launch moves to Friday", now=dawn, at="2026-11-25"
    )
    # Noon that day would be 7 hours ahead of the clock: read as now instead.
    assert logged.exchange.said_at == logged.exchange.created_at == "2026-11-25T12:39:00.000Z"
    flash = flash_section(service.store_for("main"), logged.exchange.thread_id, dawn, 1000)
    assert flash is not None and "The launch moves to Friday" in flash[1]
    # Later that day, the same date alone is noon, as documented.
    late = datetime(2026, 11, 25, 23, 0, tzinfo=UTC)
    later = episodes.log_exchange(service, me, "user", "noon", now=late, at="2026-11-25")
    assert later.exchange.said_at == "2026-11-25T20:00:00.000Z"


def test_a_time_ahead_of_the_clock_is_logged_as_now_and_briefed(
    service: MemoryService, agent: Caller
) -> None:
    service.store(agent, {"type": "fact", "content": "The porch faces west"})
    ahead = iso(utc_now() + timedelta(hours=10))
    logged = episodes.log_exchange(service, agent, "user", "Lanterns for the porch", at=ahead)
    assert logged.exchange.said_at == logged.exchange.created_at
    assert "Lanterns for the porch" in service.brief(agent).markdown


@pytest.mark.parametrize("day", ["2026-11-20", "20261120", "2026-W47-5", "2026W475"])
def test_every_form_of_a_date_alone_is_noon_where_the_person_is(
    service: MemoryService, agent: Caller, local_zone: Callable[[str], None], day: str
) -> None:
    local_zone("Asia/Kolkata")
    logged = episodes.log_exchange(service, agent, "user", "hi", at=day)
    assert logged.exchange.said_at == "2026-11-20T06:30:00.000Z"


def test_the_earliest_year_is_the_year_as_given(
    service: MemoryService, agent: Caller, local_zone: Callable[[str], None]
) -> None:
    local_zone("Asia/Kolkata")
    first = episodes.log_exchange(service, agent, "user", "hi", at="1900-01-01T00:00:00+05:30")
    assert first.exchange.said_at == "1899-12-31T18:30:00.000Z"
    # The end of a day, T24:00, is the next day's midnight.
    end = episodes.log_exchange(service, agent, "user", "hi", at="2023-05-08T24:00Z")
    assert end.exchange.said_at == "2023-05-09T00:00:00.000Z"


def test_secrets_are_redacted_and_credentials_refused(
    service: MemoryService, agent: Caller
) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    logged = episodes.log_exchange(service, agent, "tool", f"token {token}\x1b[0m done\r\n")
    assert token not in logged.exchange.text and "[SECRET_REDACTED]" in logged.exchange.text
    assert "\x1b" not in logged.exchange.text and "\r" not in logged.exchange.text
    assert logged.to_dict()["redacted"] == 1
    with pytest.raises(Refused):
        episodes.log_exchange(service, agent, "user", "my password is hunter2")
    rows = audit.recent(service.store_for("main"), limit=10)
    assert {"secret_redacted", "refused"} <= {r.action for r in rows}
    assert all(token not in json.dumps(r.to_dict()) for r in rows)
    assert not episodes.find_exchanges(service.store_for("main"), "hunter2")


def test_a_turn_that_is_nothing_but_a_secret_keeps_its_place(
    service: MemoryService, agent: Caller
) -> None:
    # A memory that is only a secret is refused; a turn was said all the same,
    # and refusing it would break the agent's log mid-conversation.
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    before = episodes.log_exchange(service, agent, "user", "here is the token")
    logged = episodes.log_exchange(service, agent, "user", token)
    after = episodes.log_exchange(service, agent, "assistant", "thanks, I will not keep it")
    assert logged.exchange.text == "[SECRET_REDACTED]"
    assert logged.to_dict()["redacted"] == 1
    assert before.exchange.id < logged.exchange.id < after.exchange.id


def test_search_lifts_the_current_thread_without_burying_better_matches(
    service: MemoryService,
) -> None:
    other = in_thread(service, "Other")
    episodes.log_exchange(service, other, "user", "we might deploy the database on friday")
    episodes.log_exchange(service, other, "user", "lunch plans")
    third = in_thread(service, "Third")
    episodes.log_exchange(service, third, "user", "deploy deploy deploy the database")
    episodes.log_exchange(service, third, "user", "lunch plans")
    me = in_thread(service, "Project X")
    episodes.log_exchange(service, me, "assistant", "we might deploy the database on friday")
    episodes.log_exchange(service, me, "user", "lunch plans")

    hits = episodes.search_exchanges(service, me, "deploy database")
    # The same words in both threads: this thread's turn comes first ...
    mine = [h for h in hits if h.same_thread and "friday" in h.exchange.text]
    theirs = [h for h in hits if not h.same_thread and "friday" in h.exchange.text]
    assert hits.index(mine[0]) < hits.index(theirs[0])
    assert "thread" in mine[0].signals and mine[0].relevance_score > theirs[0].relevance_score
    # ... but a clearly better match from another thread is not buried under it.
    assert hits[0].exchange.text == "deploy deploy deploy the database"
    ranked = episodes.find_exchanges(service.store_for("main"), "deploy")
    assert ranked[0].exchange.thread_title == "Third" and ranked[0].relevance_score <= 1.0
    # Another thread can be favoured explicitly; speakers can be filtered.
    favoured = threads.find_thread(service, "main", "other").id
    hits = episodes.search_exchanges(service, me, "friday", thread_id=favoured)
    assert hits[0].exchange.thread_title == "Other"
    hits = episodes.search_exchanges(service, me, "deploy", speaker=Speaker.ASSISTANT)
    assert [h.exchange.speaker for h in hits] == [Speaker.ASSISTANT]
    # No words: the most recent turns, this thread's first.
    recent = episodes.search_exchanges(service, me, "  ", limit=3)
    assert [h.exchange.text for h in recent] == [
        "lunch plans",
        "we might deploy the database on friday",
        "lunch plans",
    ]
    rows = audit.recent(service.store_for("main"), limit=1, actions=["search"])
    assert rows[0].count == 3 and rows[0].detail == {"scope": "exchanges"}


def test_the_thread_lift_never_buries_a_match_under_a_turn_that_matches_nothing(
    service: MemoryService,
) -> None:
    """A turn of this thread found only beside a match (its "context") is not lifted
    above another thread's turn that the words and the meaning found."""
    kitchen = in_thread(service, "Kitchen")
    episodes.log_exchange(
        service, kitchen, "user", "We bought a new toaster for the kitchen last week"
    )
    episodes.log_exchange(service, kitchen, "assistant", "The kitchen counter is made of granite")
    garden = in_thread(service, "Garden")
    episodes.log_exchange(
        service,
        garden,
        "user",
        "The blue toaster warranty expires in March 2027, receipt is in the drawer",
    )
    episodes.log_exchange(service, garden, "user", "Plant tomatoes in April")
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    store = service.store_for("main")
    kitchen_id = threads.find_thread(service, "main", "Kitchen").id
    for thread_id in (None, kitchen_id):
        hits = episodes.find_exchanges(store, "toaster", thread_id=thread_id, limit=4)
        order = [h.exchange.text.split()[1] for h in hits]
        assert order[:3] == ["bought", "blue", "kitchen"], (thread_id, order)
    hits = episodes.find_exchanges(store, "toaster", thread_id=kitchen_id, limit=4)
    lifted = {h.exchange.text.split()[1]: h.signals for h in hits}
    assert "thread" in lifted["bought"] and "thread" not in lifted["kitchen"]
    assert "context" in lifted["kitchen"]


def test_a_turn_of_another_thread_lends_no_context(service: MemoryService) -> None:
    # One session moves between threads: the turn logged next to a match, but in
    # another thread, is no part of its exchange.
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    site = continuity.enter_thread(service, agent, "Website")
    episodes.log_exchange(service, site.caller, "user", "Move the blog templates to the new grid")
    garden = continuity.enter_thread(service, agent, "Garden")
    assert garden.caller.session_id == site.caller.session_id
    episodes.log_exchange(service, garden.caller, "user", "My puppy dug up the tulip bed again")
    assert site.thread is not None
    site_id = site.thread.id
    hits = episodes.find_exchanges(service.store_for("main"), "puppy tulips", thread_id=site_id)
    assert [h.exchange.text for h in hits] == ["My puppy dug up the tulip bed again"]


def test_turns_said_years_apart_lend_no_context(service: MemoryService, agent: Caller) -> None:
    # History imported into one session: logged side by side, said three years apart.
    episodes.log_exchange(
        service, agent, "user", "The ledger database moved to Postgres", at="2021-03-01"
    )
    episodes.log_exchange(service, agent, "user", "Lunch was great today", at="2024-06-01")
    episodes.log_exchange(
        service, agent, "user", "Which database again?", at="2021-03-01T00:05:00Z"
    )
    hits = episodes.search_exchanges(service, agent, "ledger database", limit=5, mode=Mode.KEYWORD)
    lent = {h.exchange.text: h.signals for h in hits}
    assert "Lunch was great today" not in lent
    assert "keyword" in lent["Which database again?"]


def test_without_a_query_the_newest_said_come_first(service: MemoryService, agent: Caller) -> None:
    # Imported history is logged after today's turn but was said long before it.
    episodes.log_exchange(service, agent, "user", "Today's plan: ship the beta")
    episodes.log_exchange(
        service, agent, "user", "Back then we used svn", at="2019-05-01T09:00:00Z"
    )
    episodes.log_exchange(service, agent, "user", "Moved to git", at="2021-02-01T09:00:00Z")
    hits = episodes.search_exchanges(service, agent, "", limit=5)
    assert [h.exchange.text for h in hits] == [
        "Today's plan: ship the beta",
        "Moved to git",
        "Back then we used svn",
    ]


def test_search_limit_bounds(service: MemoryService, agent: Caller) -> None:
    for bad in (0, 51):
        with pytest.raises(InvalidParams) as err:
            episodes.search_exchanges(service, agent, "x", limit=bad)
        assert err.value.field == "limit"
    for n in range(60):
        episodes.log_exchange(service, agent, "user", f"note number {n}")
    assert len(episodes.search_exchanges(service, agent, "note", limit=50)) == 50


@pytest.mark.parametrize("query", ["move", ""])
def test_a_search_reads_on_a_page_at_a_time(service: MemoryService, query: str) -> None:
    here = in_thread(service, "Moving house")
    office = in_thread(service, "Office")
    for n in range(25):
        caller = office if n % 3 == 0 else here
        speaker = "user" if n % 2 else "assistant"
        episodes.log_exchange(service, caller, speaker, f"The move, step {n}: box {n * 7}")

    def page(offset: int, limit: int = 10, **only: Speaker) -> episodes.ExchangePage:
        # By words: the ranking by meaning would move as the turns are embedded.
        return episodes.search_exchanges_page(
            service, here, query, limit=limit, offset=offset, mode=Mode.KEYWORD, **only
        )

    pages = [page(0)]
    while (more := pages[-1].next_offset) is not None:
        pages.append(page(more))
    assert [len(p.hits) for p in pages] == [10, 10, 5]
    assert [p.next_offset for p in pages] == [10, 20, None]
    # The pages are one ranking cut in three: nothing twice, nothing left out.
    read = [h for p in pages for h in p.hits]
    whole = episodes.search_exchanges(service, here, query, limit=25, mode=Mode.KEYWORD)
    assert [h.exchange.id for h in read] == [h.exchange.id for h in whole]
    assert len({h.exchange.id for h in read}) == 25
    # The session's thread is lifted across the pages, not only on the first.
    assert [h.same_thread for h in read] == [True] * 16 + [False] * 9
    past = page(25)
    assert (past.hits, past.next_offset) == ([], None)
    # A speaker filter applies before the page is cut: where the pages end too.
    users = [page(0, 4, speaker=Speaker.USER), page(4, 4, speaker=Speaker.USER)]
    users.append(page(8, 4, speaker=Speaker.USER))
    assert [p.next_offset for p in users] == [4, 8, None]
    said = [h.exchange for p in users for h in p.hits]
    assert len({e.id for e in said}) == 12 and {e.speaker for e in said} == {Speaker.USER}
    for bad in (-1, episodes.MAX_EXCHANGE_OFFSET + 1):
        with pytest.raises(InvalidParams) as err:
            page(bad)
        assert err.value.field == "offset"


def test_the_first_page_is_the_ranking_of_its_own_length(
    service: MemoryService, agent: Caller
) -> None:
    # The turn looked at past a page only says whether more follow: the candidates
    # are chosen for the page, so the first page ranks as a search did without paging.
    for n in range(30):
        episodes.log_exchange(service, agent, "user", f"Where does crate {n} of the move go?")
        episodes.log_exchange(service, agent, "assistant", f"Into room {n % 4}, by the stairs")
    store = service.store_for("main")
    for limit in (1, 3, 10, episodes.MAX_EXCHANGE_RESULTS):
        ranked = exchange_recall.rank(
            store, "move crate", limit=limit, mode=Mode.KEYWORD, config=Config(), now=utc_now()
        )
        first = episodes.find_exchanges_page(store, "move crate", limit=limit, mode=Mode.KEYWORD)
        assert [h.exchange.id for h in first.hits] == [r.seq for r in ranked]
        assert first.next_offset == limit


def test_a_month_named_in_winter_has_its_summer_offset(
    service: MemoryService, agent: Caller, local_zone: Callable[[str], None]
) -> None:
    local_zone("America/Los_Angeles")
    for at in ("2023-07-01T00:30:00-07:00", "2023-06-30T23:30:00-07:00"):
        episodes.log_exchange(service, agent, "user", f"Pelican sighting at {at}", at=at)
    store = service.store_for("main")
    winter = datetime(2026, 1, 15, 20, tzinfo=UTC)  # PST, -08:00; July is PDT, -07:00

    def dated(question: str) -> set[int]:
        ranked = exchange_recall.rank(
            store, question, limit=5, mode=Mode.KEYWORD, config=Config(), now=winter
        )
        return {r.seq for r in ranked if "date" in r.signals}

    july, june = dated("pelican sighting in July 2023"), dated("pelican sighting in June 2023")
    assert len(july) == len(june) == 1 and july != june
    assert dated("pelican sighting on 1 July 2023") == july


def test_turns_a_deeper_pool_brings_in_are_listed_once(service: MemoryService) -> None:
    office = in_thread(service, "Office")
    for n in range(110):  # more than the 100 best a shallow pool takes by words
        episodes.log_exchange(service, office, "user", f"move move {n}", at="2020-01-01")
    home = in_thread(service, "Home")
    for n in range(20):  # fewer words in common, but lifted: this thread's, and recent
        episodes.log_exchange(service, home, "user", f"move crate {n}")
    store = service.store_for("main")
    tid = threads.session_thread(service, home)
    read: list[int] = []
    offset: int | None = 0
    while offset is not None:
        page = episodes.find_exchanges_page(
            store, "move", thread_id=tid, limit=10, offset=offset, mode=Mode.KEYWORD
        )
        read += [h.exchange.id for h in page.hits]
        offset = page.next_offset
    assert len(read) == len(set(read)) == 130

    def alone(offset: int) -> set[int]:
        ranked = exchange_recall.rank(
            store,
            "move",
            limit=offset + 10,
            mode=Mode.KEYWORD,
            config=Config(),
            now=utc_now(),
            thread_id=tid,
        )
        return {r.seq for r in ranked[offset:]}

    # Were each page ranked from a pool sized for it alone, the crates would come in
    # on the fourth page ranked first, and push turns of the third onto it again.
    assert alone(30) & alone(20)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=200))
def test_any_query_is_safe(service: MemoryService, agent: Caller, query: str) -> None:
    episodes.find_exchanges(service.store_for("main"), query)


def test_search_survives_fts_syntax(service: MemoryService, agent: Caller) -> None:
    episodes.log_exchange(service, agent, "user", 'NOT "quoted" (parens) near: star*')
    for query in ['NOT "', "star*", "NEAR(", "col:umn", "AND OR", '"unbalanced']:
        episodes.find_exchanges(service.store_for("main"), query)
    assert episodes.find_exchanges(service.store_for("main"), "parens NOT")


def test_old_turns_expire_and_leave_the_index(data_dir: DataDir) -> None:
    config = Config(episodic_ttl_days=30)
    service = MemoryService(data_dir, config)
    try:
        me = in_thread(service, "Project X")
        now = utc_now()
        for days in (40, 31, 29, 1):
            episodes.log_exchange(
                service, me, "user", f"aurora {days} days ago", now=now - timedelta(days=days)
            )
        store = service.store_for("main")
        assert episodes.expire_exchanges(store, config, now, with_turns=drop_lost) == 2
        texts = [h.exchange.text for h in episodes.find_exchanges(store, "aurora")]
        assert sorted(texts) == ["aurora 1 days ago", "aurora 29 days ago"]
        row = audit.recent(store, limit=1, actions=["expire"])[0]
        assert (row.actor, row.count, row.detail["scope"]) == ("system", 2, "exchanges")
        # Nothing due: nothing written, nothing audited.
        assert episodes.expire_exchanges(store, config, now, with_turns=drop_lost) == 0
        assert len(audit.recent(store, actions=["expire"])) == 1
        # The limit is the setting's: a shorter TTL expires more.
        assert (
            episodes.expire_exchanges(
                store, config.with_changes(episodic_ttl_days=1), now, with_turns=drop_lost
            )
            == 1
        )
        assert store.execute("SELECT count(*) FROM exchanges").get == 1
    finally:
        service.close()


def test_a_thread_reads_back_page_by_page(service: MemoryService) -> None:
    me = in_thread(service, "Project X")
    for n in range(5):
        episodes.log_exchange(service, me, "user", f"line {n}")
    tid = threads.session_thread(service, me)
    first = episodes.thread_exchanges(service, "main", tid, limit=3)
    assert [e.text for e in first] == ["line 4", "line 3", "line 2"]
    rest = episodes.thread_exchanges(service, "main", tid, limit=3, before=first[-1])
    assert [e.text for e in rest] == ["line 1", "line 0"]
    assert episodes.thread_exchanges(service, "main", None) == []


def test_the_deepest_page_says_more_match_instead_of_an_offset_it_would_refuse(
    service: MemoryService, monkeypatch: pytest.MonkeyPatch
) -> None:
    me = in_thread(service, "Project X")
    for n in range(5):
        episodes.log_exchange(service, me, "user", f"line {n}")
    monkeypatch.setattr(episodes, "MAX_EXCHANGE_OFFSET", 2)
    for query in ("", "line"):
        first = episodes.search_exchanges_page(service, me, query, limit=2, mode=Mode.KEYWORD)
        assert first.next_offset == 2 and not first.truncated
        deepest = episodes.search_exchanges_page(
            service, me, query, limit=2, offset=2, mode=Mode.KEYWORD
        )
        # Offset 4 would be refused: not offered, and the result says more match.
        assert deepest.next_offset is None and deepest.truncated
        assert deepest.to_dict()["truncated"] is True and "next_offset" not in deepest.to_dict()
    last = episodes.search_exchanges_page(service, me, "", limit=3, offset=2)
    assert last.next_offset is None and not last.truncated
    assert "truncated" not in last.to_dict()


def test_reading_on_lists_no_guesses_once_enough_turns_match(service: MemoryService) -> None:
    # Weak matches fill a first page that little matched; a deeper pool ranked for
    # a later page is not "short" because it is deeper than what matched.
    me = in_thread(service, "Garden")
    for n in range(24):
        episodes.log_exchange(service, me, "user", f"The orchard rollout step {n} is planned")
    chatter = ("promo code", "train delay", "new kettle", "rainy weekend", "band practice")
    for n in range(40):
        episodes.log_exchange(service, me, "user", f"Talked about the {chatter[n % 5]} {n}")
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(120)
    for limit in (7, 10, 20):
        read: list[episodes.ExchangeHit] = []
        offset: int | None = 0
        while offset is not None:
            page = episodes.search_exchanges_page(
                service, me, "orchard rollout", limit=limit, offset=offset
            )
            read += page.hits
            offset = page.next_offset
        texts = [h.exchange.text for h in read]
        assert len(texts) == len(set(texts)), limit
        assert sum("orchard rollout" in t for t in texts) == 24, limit
        # Besides them, at most the turn said next to one (its context), no guess.
        assert all(matched(h.signals) for h in read), limit
        assert len(texts) <= 25, limit


def _a_speaker_heard_rarely(service: MemoryService, agent: Caller) -> None:
    """8 turns by a tool, under 200 of the person's that match the same search better
    (more of its words, or said later that day): more than a search's candidates.
    Both are logged under the person's name."""
    for n in range(8):
        episodes.log_exchange(
            service,
            agent,
            "tool",
            f"Build {n} passed: 14 compiler warnings, linker flags unchanged, cache 2 GB, "
            "and one note about the kiln (放在窑炉里)",
            name="Ada",
            at="2023-05-08T09:00:00Z",
        )
    for n in range(200):
        text = f"Kiln firing {n}: the kiln (窑炉里) reached cone six"
        episodes.log_exchange(service, agent, "user", text, name="Ada", at="2023-05-08")


def _read_all(service: MemoryService, agent: Caller, query: str, mode: Mode) -> list[list[int]]:
    pages: list[list[int]] = []
    offset: int | None = 0
    while offset is not None:
        page = episodes.search_exchanges_page(
            service, agent, query, speaker=Speaker.TOOL, limit=3, offset=offset, mode=mode
        )
        assert {h.exchange.speaker for h in page.hits} <= {Speaker.TOOL}
        pages.append([h.exchange.id for h in page.hits])
        offset = page.next_offset
        assert len(pages) < 10
    return pages


# By its words, the pieces of a word inside Chinese text, the day or speaker it names.
@pytest.mark.parametrize(
    "query", ["kiln", "窑炉", "What happened on 8 May 2023?", "What did Ada say?"]
)
def test_a_speaker_filter_finds_a_rare_speakers_turns_under_better_matches(
    service: MemoryService, agent: Caller, query: str
) -> None:
    # The filter chose among the candidates of every speaker: the tool's turns,
    # matching less than the person's 200, were never among them, and the search
    # came back empty with no next page.
    _a_speaker_heard_rarely(service, agent)
    pages = _read_all(service, agent, query, Mode.KEYWORD)
    assert [len(p) for p in pages] == [3, 3, 2]
    read = [seq for p in pages for seq in p]
    assert len(set(read)) == 8
    # Without the filter, the person's turns fill the page: the tool's are buried.
    every = episodes.search_exchanges(service, agent, query, limit=10, mode=Mode.KEYWORD)
    assert {h.exchange.speaker for h in every} == {Speaker.USER}


def test_a_speaker_filter_finds_a_rare_speakers_turns_by_meaning(
    service: MemoryService, agent: Caller
) -> None:
    _a_speaker_heard_rarely(service, agent)
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(120)
    pages = _read_all(service, agent, "pottery fired in a kiln", Mode.SEMANTIC)
    assert [len(p) for p in pages] == [3, 3, 2]
    assert len({seq for p in pages for seq in p}) == 8


def test_a_thread_reads_back_newest_said_first_page_by_page(service: MemoryService) -> None:
    me = in_thread(service, "Order")
    for at in ("2026-11-24T10:00:00Z", "2026-11-22T10:00:00Z", "2026-11-25T10:00:00Z"):
        episodes.log_exchange(service, me, "user", f"said {at[:10]}", at=at)
        episodes.log_exchange(service, me, "assistant", f"also {at[:10]}", at=at)
    thread = threads.session_thread(service, me)
    pages: list[episodes.Exchange] = []
    while page := episodes.thread_exchanges(
        service, "main", thread, limit=4, before=pages[-1] if pages else None
    ):
        pages += page
    assert [e.text for e in pages] == [
        f"{who} 2026-11-{day}" for day in (25, 24, 22) for who in ("also", "said")
    ]
