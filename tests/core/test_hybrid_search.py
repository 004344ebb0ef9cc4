"""Semantic and hybrid memory search with the real model, vectors and background worker."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import apsw
import pytest

from core.model.config import Config
from core.model.entries import Actor, EntryFilter, iso, utc_now
from core.model.errors import InvalidParams
from core.recall import memory_recall, search
from core.semantic import backfill, embedding, hybrid, vectors
from core.semantic.embedding import shared_embedder
from core.semantic.hybrid import Mode, names_in, names_written, without_names
from core.service import Caller, MemoryService
from core.storage import schema
from core.storage.paths import DataDir


def _store(svc: MemoryService, who: Caller, content: str, **extra: object) -> str:
    return svc.store(who, {"type": "fact", "content": content, **extra}).entry.id


FACTS = (
    "User's dog is named Luna",
    "The user prefers dark roast coffee in the morning",
    "The project deadline moved to the first week of March",
    "User is allergic to peanuts",
    "The user's sister lives in Lisbon",
)


@pytest.fixture
def embedded(service: MemoryService, agent: Caller) -> dict[str, str]:
    ids = {fact: _store(service, agent, fact) for fact in FACTS}
    service.start_embedding()
    assert service.embedding is not None
    assert service.embedding.wait_idle(60)
    return ids


def test_a_paraphrase_finds_the_fact_without_shared_words(
    service: MemoryService, agent: Caller, embedded: dict[str, str]
) -> None:
    results = service.search(agent, {"query": "Which food could give me a bad reaction?"})
    assert results[0].id == embedded["User is allergic to peanuts"]
    assert "semantic" in results[0].signals
    assert 0.0 < results[0].relevance_score <= 1.0
    assert results[0].to_dict()["score"] == results[0].relevance_score


def test_first_person_words_reach_facts_about_the_user(
    service: MemoryService, agent: Caller, embedded: dict[str, str]
) -> None:
    for mode in ("auto", "keyword"):
        results = service.search(agent, {"query": "what is my dog called?", "mode": mode})
        assert results[0].id == embedded["User's dog is named Luna"], mode


def test_a_first_person_word_ranks_but_does_not_find(
    service: MemoryService, agent: Caller, embedded: dict[str, str]
) -> None:
    # "my" adds "user" to the words searched; every fact here says "user", so before,
    # "my boss" listed them all, as keyword matches at near-full scores.
    assert service.search(agent, {"query": "my boss", "mode": "keyword"}) == []
    # Nor by meaning: nothing here is about a boss.
    assert service.search(agent, {"query": "my boss"}) == []
    allergic = service.search(agent, {"query": "what am I allergic to?", "mode": "keyword"})
    assert [r.id for r in allergic] == [embedded["User is allergic to peanuts"]]
    # Nothing asked but the person: the implied word is the question.
    about = service.search(agent, {"query": "about me", "mode": "keyword"})
    assert len(about) == sum("user" in fact.lower() for fact in FACTS) == 4


def test_a_plain_question_that_nothing_matches_well_gets_the_nearest_as_guesses(
    service: MemoryService, agent: Caller, embedded: dict[str, str]
) -> None:
    running = _store(service, agent, "User goes running three times a week")
    assert service.embedding is not None and service.embedding.wait_idle(60)
    # No shared word, and a similarity (about 0.29) under what says "semantic":
    # before, auto mode answered this with an empty list.
    guesses = service.search(agent, {"query": "How often do I exercise?"})
    assert guesses[0].id == running
    assert len(guesses) <= memory_recall.FILL_MOST
    for guess in guesses:
        assert not {"keyword", "semantic"} & set(guess.signals)
        assert guess.relevance_score < guesses[0].relevance_score or guess is guesses[0]
    # A match by words comes before any guess.
    mixed = service.search(agent, {"query": "How often do I exercise my dog?"})
    assert mixed[0].id == embedded["User's dog is named Luna"]
    assert "keyword" in mixed[0].signals
    assert running in [r.id for r in mixed]


def test_a_search_by_meaning_right_after_a_store_sees_it(
    service: MemoryService, agent: Caller
) -> None:
    # The worker embeds after the write is acknowledged; a search by meaning alone
    # (or for neighbours) waits for a backlog this small instead of missing the row.
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    cat = _store(service, agent, "The person's cat is called Mochi")
    found = service.search(agent, {"query": "feline pet", "mode": "semantic"})
    assert [r.id for r in found][:1] == [cat]
    dog = _store(service, agent, "The person's dog is called Luna")
    assert [r.id for r in service.related(agent, {"id": dog})][:1] == [cat]


def test_keyword_mode_keeps_to_shared_words(
    service: MemoryService, agent: Caller, embedded: dict[str, str]
) -> None:
    assert service.search(agent, {"query": "espresso beans", "mode": "keyword"}) == []
    semantic = service.search(agent, {"query": "espresso beans", "mode": "semantic"})
    assert semantic[0].id == embedded["The user prefers dark roast coffee in the morning"]
    assert semantic[0].signals == ("semantic", "recent")


def test_an_unknown_mode_is_refused(service: MemoryService, agent: Caller) -> None:
    with pytest.raises(InvalidParams) as info:
        service.search(agent, {"query": "dog", "mode": "fuzzy"})
    assert info.value.field == "mode"


def test_private_and_secret_entries_get_no_vector(
    service: MemoryService, agent: Caller, memory_keyring: object
) -> None:
    _store(service, agent, "User's bank is Northwind", privacy="private")
    _store(service, agent, "The spare key is in locker 4321", privacy="secret")
    public = _store(service, agent, "User likes hiking")
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    store = service.store_for("main")
    keys = [r[0] for r in store.execute("SELECT entry_seq FROM memory_vectors")]
    assert keys == [store.execute("SELECT seq FROM memory_entries WHERE id = ?", (public,)).get]


def test_edits_and_deletes_follow_into_the_vectors(
    service: MemoryService, agent: Caller, operator: Caller, embedded: dict[str, str]
) -> None:
    store = service.store_for("main")
    service.search(agent, {"query": "pets"})  # loads the cached vectors
    service.delete(operator, embedded["User's dog is named Luna"])
    assert store.execute("SELECT count(*) FROM memory_vectors").get == len(FACTS) - 1
    results = service.search(agent, {"query": "what pet do I have", "mode": "semantic"})
    assert embedded["User's dog is named Luna"] not in [r.id for r in results]


def test_backfill_resumes_after_a_stop(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backfill, "ROWS_PER_STEP", 64)  # three steps for 150 rows
    for i in range(150):
        _store(service, operator, f"Fact number {i} about the garden shed and its tools")
    store = service.store_for("main")
    model = shared_embedder()
    assert model is not None
    seen: list[backfill.Progress] = []
    first = backfill.reindex(
        store.conn,
        store.path,
        "main",
        model,
        on_progress=seen.append,
        should_stop=lambda: len(seen) > 1,
    )
    assert 0 < first.done < first.total == 150
    second = backfill.reindex(store.conn, store.path, "main", model, on_progress=seen.append)
    assert second.complete and second.done == 150
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert vectors.pending_count(store.conn, vectors.MEMORIES, model.model_id) == 0


def test_a_stopped_backfill_gives_up_its_step_between_model_batches(
    service: MemoryService, operator: Caller
) -> None:
    for i in range(40):
        _store(service, operator, f"Fact number {i} about the garden shed and its tools")
    store = service.store_for("main")
    model = shared_embedder()
    assert model is not None
    asked: list[bool] = []

    def stop_at_the_second_batch() -> bool:
        asked.append(True)
        return len(asked) > 2  # the step's check, the first batch, then stop

    stopped = backfill.reindex(
        store.conn, store.path, "main", model, should_stop=stop_at_the_second_batch
    )
    # The step was given up between model batches, not finished: nothing written
    # (the fourth question is the turns' loop, which stops at once).
    assert (stopped.done, len(asked)) == (0, 4)
    assert backfill.reindex(store.conn, store.path, "main", model).done == 40


def test_a_model_chosen_during_a_backfill_takes_over_at_the_next_batch(
    service: MemoryService, operator: Caller, model_copy: Path
) -> None:
    for i in range(200):
        _store(service, operator, f"Fact number {i} about the garden shed and its tools")
    folder = model_copy
    worker = backfill.EmbeddingWorker()
    done: list[int] = []

    def progressed(progress: backfill.Progress) -> None:
        done.append(progress.done)
        if len(done) == 1:  # the installed model's run has just begun
            worker.use_model(str(folder))

    worker.on_progress = progressed
    try:
        worker.wake(service.data_dir.group_db("main"), "main")
        assert worker.wait_idle(60)
    finally:
        worker.close()
    # The first run stopped before its first batch; the new model's began from 0.
    assert done[:2] == [0, 0] and done[-1] == 200
    store = service.store_for("main")
    custom = embedding.directory_files(folder).model_id
    assert {r[0] for r in store.execute("SELECT DISTINCT model FROM memory_vectors")} == {custom}


def test_a_database_from_before_vectors_is_upgraded_and_backfilled(tmp_path: Path) -> None:
    data = DataDir(tmp_path)
    data.ensure()
    path = data.group_db("main")
    old = apsw.Connection(str(path))
    for step in schema.MIGRATIONS[:4]:
        with old:
            old.execute(step)
    old.execute("PRAGMA user_version = 4")
    old.execute(
        "INSERT INTO memory_entries (id, type, content, search_text, content_key, behavioral, "
        "session_id, group_name, created_at, updated_at, last_seen_at) VALUES ('mem-1', 'fact', "
        "'User keeps bees in the garden', 'User keeps bees in the garden', 'k', 0, 's', 'main', "
        "'2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z')"
    )
    logged = iso(utc_now())
    old.execute(
        "INSERT INTO exchanges (session_id, speaker, text, created_at) "
        "VALUES ('s', 'user', 'The hive needs a new frame', ?)",
        (logged,),
    )
    old.close()
    service = MemoryService(data)
    try:
        store = service.store_for("main")
        assert store.execute("PRAGMA user_version").get == schema.SCHEMA_VERSION
        said = store.execute("SELECT said_at FROM exchanges").get
        assert said == logged
        service.start_embedding()
        assert service.embedding is not None and service.embedding.wait_idle(60)
        assert store.execute("SELECT count(*) FROM memory_vectors").get == 1
        assert store.execute("SELECT count(*) FROM exchange_vectors").get == 1
        hits = service.search_entries(
            "main", "who looks after the beehives", EntryFilter(), 5, mode=Mode.SEMANTIC
        )
        assert [h.id for h in hits] == ["mem-1"]
    finally:
        service.close()


@pytest.mark.parametrize(
    ("query", "topic"),
    [
        (
            "How should Felix's meeting summaries be formatted?",
            "How should meeting summaries be formatted?",
        ),
        ("what does Sana C. drink in the morning", "what does drink in the morning"),
        # Keywords, not a question: their capitalised words are what is looked for.
        ("Arjun Volvo drive", None),
        # Nothing named, or nothing asked beside the name.
        ("What is my dog called?", None),
        ("Who is Lucas?", None),
    ],
)
def test_what_a_question_asks_beside_the_names_it_holds(query: str, topic: str | None) -> None:
    assert without_names(query) == topic


def test_the_worker_waits_out_another_writer_instead_of_giving_up(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from core.storage import db

    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 100)
    monkeypatch.setattr(backfill, "BUSY_RETRY_SECONDS", 0.2)
    for i in range(5):
        _store(service, operator, f"The spare key {i} hangs by the door")
    path = service.data_dir.group_db("main")
    holder = apsw.Connection(str(path))
    holder.execute("BEGIN IMMEDIATE")  # a long import, say, holds the write lock
    release = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    release.start()
    worker = backfill.EmbeddingWorker()
    try:
        worker.wake(path, "main")
        assert worker.wait_idle(30)
    finally:
        worker.close()
        release.join()
        holder.close()
    model = shared_embedder()
    assert model is not None
    conn = service.store_for("main").conn
    assert vectors.pending_count(conn, vectors.MEMORIES, model.model_id) == 0
    assert conn.execute("SELECT count(*) FROM memory_vectors").get == 5


@pytest.mark.parametrize(
    ("question", "matches", "misses"),
    [
        ("Which month was Rosa born in?", ["Rosa's birthday", "Rosa Garcia"], ["Rosa M.'s cat"]),
        ("What tool does Rosa G. use?", ["Rosa G. edits text"], ["Rosa M. edits", "Rosa edits"]),
        ("Where does Anne-Marie live?", ["Anne-Marie lives"], ["Anne lives"]),
        ("What is my dog called?", [], ["User's dog is named Luna"]),
        # Accents aside, as typed on a keyboard without them, or with them.
        ("What does Jose drive?", ["José drives a van", "Jose drives"], ["José M. drives"]),
        ("Where does Zoë work?", ["Zoe works in Lyon", "Zoë's office"], ["Zoey works"]),
    ],
)
def test_names_in_a_question_match_only_as_written(
    question: str, matches: list[str], misses: list[str]
) -> None:
    patterns = names_in(question)
    for text in matches:
        assert names_written(patterns, text), text
    for text in misses:
        assert not names_written(patterns, text), text


def test_a_question_prefers_the_person_it_names_over_namesakes(
    service: MemoryService, agent: Caller
) -> None:
    ids = {
        text: _store(service, agent, text)
        for text in (
            "Aisha M. drinks chai lattes every morning",
            "Aisha T. drinks sparkling water every morning",
            "Aisha drinks oat-milk flat whites every morning",
            "Aisha F. drinks dark roast coffee every morning",
        )
    }
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    # Without the names weighed, "Aisha M." came first: the closest in meaning.
    first = service.search(agent, {"query": "What is Aisha's usual morning beverage?"})[0]
    assert first.id == ids["Aisha drinks oat-milk flat whites every morning"]
    assert "name" in first.signals
    first = service.search(agent, {"query": "What does Aisha T. have each morning?"})[0]
    assert first.id == ids["Aisha T. drinks sparkling water every morning"]
    # Keywords are words, not a question about someone: no name weighting.
    assert all("name" not in r.signals for r in service.search(agent, {"query": "Aisha morning"}))


def test_equal_matches_come_back_newest_first(service: MemoryService, agent: Caller) -> None:
    places = ("pier", "barn", "ridge", "marsh", "quarry", "orchard")
    ids = [_store(service, agent, f"Kestrel seen over the {place}") for place in places]
    results = service.search(agent, {"query": "kestrel", "mode": "keyword"})
    assert [r.id for r in results] == ids[::-1]
    # Writes within one millisecond share a timestamp: the one stored last still wins.
    store = service.store_for("main")
    with store.conn:
        store.execute("UPDATE memory_entries SET last_seen_at = '2026-01-05T09:00:00.000Z'")
    results = service.search(agent, {"query": "kestrel", "mode": "keyword"})
    assert [r.id for r in results] == ids[::-1]


def test_two_services_on_one_group_share_one_copy_of_its_vectors(
    service: MemoryService, agent: Caller, embedded: dict[str, str], data_dir: DataDir
) -> None:
    # The desktop's query thread and the agent server each hold a service on the
    # same data dir; the group's vectors are loaded once for both.
    embedder = shared_embedder(service.config.embedding_model_dir)
    assert embedder is not None
    ours = hybrid.vector_index(service.store_for("main"), vectors.MEMORIES, embedder)
    found: dict[str, object] = {}

    def other_thread() -> None:
        other = MemoryService(data_dir, Config())
        try:
            store = other.store_for("main")
            found["index"] = hybrid.vector_index(store, vectors.MEMORIES, embedder)
            who = other.open_session("main", Actor.AGENT, "second-agent")
            found["first"] = other.search(
                who, {"query": "Which food could give me a bad reaction?"}
            )[0].id
        finally:
            other.close()

    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join(60)
    assert found["index"] is ours
    assert found["first"] == embedded["User is allergic to peanuts"]
    # A memory stored through one service is found by meaning through the other.
    added = _store(service, agent, "The user keeps bees on the roof")
    assert service.embedding is not None and service.embedding.wait_idle(60)
    worker = threading.Thread(target=other_thread)
    found.clear()
    worker.start()
    worker.join(60)
    assert found["index"] is ours
    assert len(ours) == len(FACTS) + 1
    assert service.search(agent, {"query": "honey insects on my house"})[0].id == added


def test_a_new_model_folder_is_used_at_once_and_every_row_embedded_with_it(
    service: MemoryService, agent: Caller, embedded: dict[str, str], model_copy: Path
) -> None:
    folder = model_copy
    custom_id = embedding.directory_files(folder).model_id
    store = service.store_for("main")
    question = {"query": "Which food could give me a bad reaction?"}
    assert embedding.loaded_model_id("") == embedding.DEFAULT_MODEL_ID

    def models() -> set[str]:
        return {str(r[0]) for r in store.execute("SELECT DISTINCT model FROM memory_vectors")}

    for model_dir, model_id in ((str(folder), custom_id), ("", embedding.DEFAULT_MODEL_ID)):
        service.set_config(service.config.with_changes(embedding_model_dir=model_dir))
        assert service.embedding is not None and service.embedding.wait_idle(60)
        assert models() == {model_id}  # each row's vector replaced, none left behind
        assert service.embedding.progress["main"].complete
        first = service.search(agent, question)[0]
        assert first.id == embedded["User is allergic to peanuts"]
        assert "semantic" in first.signals
        # The model it replaced is no longer held.
        other = "" if model_dir else str(folder)
        assert embedding.loaded_model_id(other) is None


@pytest.mark.parametrize("query", ["tea", ""])
def test_a_search_reads_on_a_page_at_a_time(
    service: MemoryService, operator: Caller, query: str
) -> None:
    leaves = ("green", "black", "oolong", "white", "smoked")
    stored = {
        _store(service, operator, f"Tea tin {i} holds {leaves[i % 5]} leaves from shop {i * 7}")
        for i in range(25)
    }
    pages, offset = [], 0
    while True:
        page = service.search_page(operator, {"query": query, "limit": 10, "offset": offset})
        pages.append(page)
        if page.next_offset is None:
            break
        offset = page.next_offset
    assert [len(p.results) for p in pages] == [10, 10, 5]
    assert [p.next_offset for p in pages] == [10, 20, None]
    # The pages are one ranking cut in three: nothing twice, nothing left out.
    read = [r.id for p in pages for r in p.results]
    whole = service.search(operator, {"query": query, "limit": 25})
    assert read == [r.id for r in whole]
    assert set(read) == stored
    past = service.search_page(operator, {"query": query, "limit": 10, "offset": 25})
    assert (past.results, past.next_offset) == ([], None)
    with pytest.raises(InvalidParams, match="offset"):
        service.search_page(operator, {"query": query, "offset": -1})


def test_reading_on_neither_repeats_nor_skips_a_memory(
    service: MemoryService, operator: Caller
) -> None:
    # Many memories near each question by words and by meaning: a page ranked
    # from a pool sized for its own depth listed some of an earlier page's again.
    rng = random.Random(1)
    places = ("garden", "kitchen", "garage", "office", "bike", "car", "boat", "cabin")
    doings = ("needs", "got", "wants", "lost", "found", "fixed", "painted", "sold")
    things = ("paint", "tools", "lights", "plants", "shelves", "tires", "windows", "locks")
    facts = {
        f"The {rng.choice(places)} {rng.choice(doings)} new {rng.choice(things)} "
        f"and {rng.choice(things)} from shop {n}"
        for n in range(300)
    }
    for fact in facts:
        _store(service, operator, fact)
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(120)
    for query in ("bike lights", "new tools for the car"):
        read: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = service.search_page(operator, {"query": query, "limit": 30, "offset": offset})
            read += [r.id for r in page.results]
            offset = page.next_offset
        assert len(read) == len(set(read)) > 60
        first = service.search(operator, {"query": query, "limit": 30})
        assert read[:30] == [r.id for r in first]


@pytest.mark.parametrize("query", ["tea", ""])
def test_the_deepest_page_says_more_match_instead_of_an_offset_it_would_refuse(
    service: MemoryService, operator: Caller, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(5):
        _store(service, operator, f"Tea tin {i} holds leaves from shop {i * 7}")
    monkeypatch.setattr(search, "MAX_SEARCH_OFFSET", 2)
    first = service.search_page(operator, {"query": query, "limit": 2})
    assert first.next_offset == 2 and not first.truncated
    deepest = service.search_page(operator, {"query": query, "limit": 2, "offset": 2})
    # Offset 4 would be refused: not offered, and the page says more match.
    assert (len(deepest.results), deepest.next_offset, deepest.truncated) == (2, None, True)
    last = service.search_page(operator, {"query": query, "limit": 3, "offset": 2})
    assert (last.next_offset, last.truncated) == (None, False)


def test_the_users_own_name_is_read_as_the_user_not_lifted_as_a_name(
    service: MemoryService, agent: Caller
) -> None:
    ids = {
        text: _store(service, agent, text)
        for text in (
            "User's name is Sam Whitaker; goes by Sam",
            "Sam prefers dark mode.",
            "User's son is Leo, born 2021",
            "User's daughter is Mia, born 2018",
            "User is allergic to penicillin",
        )
    }
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    # Sam is the person the store is about: before, the two memories that write
    # "Sam" took the name's lift and came first, the children below them.
    results = service.search(agent, {"query": "How many kids does Sam have?"})
    assert all("name" not in r.signals for r in results)
    top = {r.id for r in results[:2]}
    assert top == {ids["User's son is Leo, born 2021"], ids["User's daughter is Mia, born 2018"]}
    first = service.search(agent, {"query": "What is Sam allergic to?"})[0]
    assert first.id == ids["User is allergic to penicillin"]
    # Written with the name, a memory is still found by it.
    found = service.search(agent, {"query": "Sam dark mode", "mode": "keyword"})
    assert found[0].id == ids["Sam prefers dark mode."]


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Is there a standup on Friday?", []),
        ("What happens on Fridays in December?", []),
        ("Which CI system do we use for deploys?", []),
        ("Does the AWS bill reach Priya?", ["Priya"]),
        ("What is Aisha M.'s usual morning beverage?", ["Aisha M"]),
        ("Where does Mia go on Monday mornings?", ["Mia"]),
        ("Did Lena Friday call?", ["Lena"]),
    ],
)
def test_days_months_and_abbreviations_are_no_names(question: str, names: list[str]) -> None:
    assert [n.name for n in hybrid.question_names(question)] == names


def test_a_day_or_an_abbreviation_in_a_question_lifts_nothing(
    service: MemoryService, agent: Caller
) -> None:
    for text in (
        "Sprint retro is every other Friday at 15:00",
        "There is no standup on Fridays; async updates in the channel instead",
        "Standup is at 10 am on weekdays",
        "CI runs take about 12 minutes",
        "CI is down to 8 minutes since the flaky test was fixed",
        "Deployments moved from Jenkins to GitHub Actions",
        "The harbour in Leipzig opens again in spring",
    ):
        _store(service, agent, text)
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    for query in ("Is there a standup on Friday?", "Which CI system do we use for deploys?"):
        assert all("name" not in r.signals for r in service.search(agent, {"query": query}))
    # A word that opens the question is a name only where the store writes it as one.
    results = service.search(agent, {"query": "Deployments this week?"})
    assert all("name" not in r.signals for r in results)
    results = service.search(agent, {"query": "Leipzig harbour?"})
    assert "name" in results[0].signals


def test_a_memory_saying_the_opposite_of_the_question_ranks_below_one_that_answers(
    service: MemoryService, agent: Caller
) -> None:
    ids = {
        text: _store(service, agent, text)
        for text in (
            "Mia does not like jazz",
            "Mia likes spaghetti carbonara best",
            "User does not like horror movies",
            "User likes horror movies and nature documentaries",
        )
    }
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    # Before, "does not like" came first: it shares the words and the meaning.
    first = service.search(agent, {"query": "What does Mia like?"})[0]
    assert first.id == ids["Mia likes spaghetti carbonara best"]
    first = service.search(agent, {"query": "which movies do I enjoy?"})[0]
    assert first.id == ids["User likes horror movies and nature documentaries"]
    # And the other way round for a question asking what is not liked.
    first = service.search(agent, {"query": "Which movies does the user dislike?"})[0]
    assert first.id == ids["User does not like horror movies"]


@pytest.mark.parametrize(
    ("question", "text", "opposite"),
    [
        ("What does Mia like?", "Mia doesn't really like jazz", True),
        ("What does Mia like?", "Mia hates jazz", True),
        ("What does the dog eat?", "Biscuit never eats grapes", True),
        ("What does the dog eat?", "Biscuit eats lamb kibble", False),
        ("What does Mia like?", "Mia likes drawing horses, not painting", False),
        ("What does Mia not like?", "Mia likes drawing horses", True),
        ("What does Mia dislike?", "Mia does not like jazz", False),
    ],
)
def test_what_says_the_opposite_of_a_question(question: str, text: str, opposite: bool) -> None:
    assert memory_recall.Polarity.of(question).opposite(text) is opposite


def test_a_memory_sharing_only_a_common_verb_ranks_below_the_answer(
    service: MemoryService, agent: Caller
) -> None:
    ids = {
        text: _store(service, agent, text)
        for text in (
            "Biscuit switched to Josera Lamb & Rice, 1.5 cups twice a day after the vet"
            " said he is overweight",
            "Miso only eats wet food, Animonda Carny",
            "Leo refuses to eat broccoli but likes carrots and peas",
            "User eats oatmeal with berries for breakfast",
            "Mia does not eat anything spicy",
            "User is trying to eat less red meat, max twice a week",
            "User has a beagle named Biscuit, 5 years old",
            "User now uses Neovim as main editor",
            "User uses Claude in the terminal for coding help",
            "User does not use Emacs",
        )
    }
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    # Before, the memories that only say "eat" came first: full keyword credit for the verb.
    results = service.search(agent, {"query": "What does the dog eat?"})
    assert results[0].id == ids[next(t for t in ids if t.startswith("Biscuit switched"))]
    assert "keyword" not in results[0].signals
    # A memory the verb alone matched does not claim its words found it.
    eats = {ids[t] for t in ids if " eat" in t and not t.startswith("Biscuit")}
    assert all("keyword" not in r.signals for r in results if r.id in eats)
    # A misspelt noun matches nothing: then the verb is all there is to go on.
    results = service.search(agent, {"query": "which edtior does he use"})
    using = {ids[t] for t in ids if " use" in t}
    assert {r.id for r in results[:3]} == using
