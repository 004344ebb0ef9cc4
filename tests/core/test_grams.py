"""The gram index: words inside Chinese, Japanese and Korean text are found in
memories and turns of any age, on a real store on disk."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import apsw

from core.continuity import threads
from core.continuity.episodes import find_exchanges, log_exchange
from core.continuity.imported_history import ScreenedTurn, insert_turns
from core.memory import trash
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryFilter, EntryType, iso, utc_now
from core.recall.search import list_ids
from core.semantic.hybrid import Mode
from core.service import Caller, MemoryService
from core.storage import schema
from core.storage.fts import GRAM_CANDIDATES, entry_grams, text_grams
from core.storage.migrations import grams
from core.storage.paths import DataDir

#: More rows than the gram index reads per piece, so the oldest is past that bound
#: and past the 10,000 newest the search read before the index.
FILLER = GRAM_CANDIDATES + 50
MANGO = "用户最喜欢的水果是芒果"
LOGGED = "2026-01-01T00:00:00.000Z"


def _keyword(service: MemoryService, caller: Caller, query: str) -> list[str]:
    asked = {"query": query, "mode": "keyword", "limit": 10}
    return [r.id for r in service.search(caller, asked)]


def test_the_grams_of_stored_text() -> None:
    assert text_grams("水果是芒果") == "水果 果是 是芒 芒果 果"
    assert text_grams("a 猫 b, 책을 읽다") == "猫 책을 을 읽다 다"
    assert text_grams("the 🦊 and ☕ and 🦊") == "🦊 ☕"
    assert text_grams("plain English, café") == ""
    # A run never spans the search text and a tag.
    assert entry_grams("芒果", ["水果"]) == "芒果 果 水果"
    assert entry_grams("", ["芒果"]) == "芒果 果"


def test_the_gram_index_keeps_each_pair_and_emoji_as_one_token() -> None:
    conn = apsw.Connection(":memory:")
    try:
        conn.execute(
            "CREATE VIRTUAL TABLE g USING fts5(grams, detail=none, tokenize='ascii');"
            "CREATE VIRTUAL TABLE u USING fts5(grams, tokenize='unicode61');"
            "CREATE VIRTUAL TABLE gv USING fts5vocab(g, 'row');"
            "CREATE VIRTUAL TABLE uv USING fts5vocab(u, 'row');"
        )
        grams = text_grams("用户喜欢芒果 🦊 ☕ ア・イ 책을")
        conn.execute("INSERT INTO g VALUES (?)", (grams,))
        conn.execute("INSERT INTO u VALUES (?)", (grams,))
        kept = {r[0] for r in conn.execute("SELECT term FROM gv")}
        assert kept == set(grams.split())
        assert {"芒果", "🦊", "☕", "ア・", "・イ", "책을"} <= kept
        # unicode61 would drop symbols such as ☕ and cut the pairs holding a middle dot.
        read = {r[0] for r in conn.execute("SELECT term FROM uv")}
        assert "☕" not in read and "ア・" not in read and "芒果" in read
    finally:
        conn.close()


def test_an_old_memory_is_found_by_a_word_inside_its_text(
    service: MemoryService, operator: Caller
) -> None:
    # Before the gram index, only the newest 10,000 memories were looked in.
    oldest = service.store(operator, {"type": "fact", "content": MANGO}).entry.id
    korean = service.store(operator, {"type": "fact", "content": "사용자는 책을 좋아한다"})
    jogging = "ユーザーは毎朝ジョギングをする"
    japanese = service.store(operator, {"type": "fact", "content": jogging})
    fillers = [
        StoreRequest(EntryType.FACT, f"Routine note number {n} about the weather")
        for n in range(FILLER)
    ]
    service.store_entries(operator, fillers)
    assert _keyword(service, operator, "芒果") == [oldest]
    assert _keyword(service, operator, "책") == [korean.entry.id]
    assert _keyword(service, operator, "ジョギング") == [japanese.entry.id]
    assert list_ids(service, "main", EntryFilter(), "芒果") == [oldest]


def test_an_old_turn_is_found_by_a_word_inside_its_text(
    service: MemoryService, operator: Caller
) -> None:
    agent = service.open_session("main", Actor.AGENT, "t")
    log_exchange(service, agent, "user", "我下个月要去北京出差，顺便买芒果")
    store = service.store_for("main")
    thread, _ = threads.open_thread(service, operator, title="Lunch")
    turns = [
        ScreenedTurn(f"t{n}", "user", f"Ordinary turn {n} about lunch", None, LOGGED, 0)
        for n in range(FILLER)
    ]
    with store.transaction():
        insert_turns(store, agent, thread.id, turns, LOGGED)
    [hit] = find_exchanges(store, "芒果", limit=5, mode=Mode.KEYWORD)
    assert hit.exchange.text == "我下个月要去北京出差，顺便买芒果"


def test_private_content_stays_out_of_the_gram_index_but_its_tags_do_not(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    args = {"type": "fact", "content": "我的血型是AB型", "tags": ["健康"], "privacy": "private"}
    private = service.store(operator, args).entry.id
    store = service.store_for("main")
    assert store.execute("SELECT search_grams FROM memory_entries").fetchall() == [("健康 康",)]
    assert _keyword(service, operator, "血型") == []
    assert _keyword(service, operator, "健康") == [private]


def test_a_store_from_before_the_gram_index_finds_its_old_rows(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    data.ensure()
    version = schema.MIGRATIONS.index(grams.GRAMS)
    old = apsw.Connection(str(data.group_db("main")))
    for step in schema.MIGRATIONS[:version]:
        with old:
            old.execute(step)
    old.execute(f"PRAGMA user_version = {version}")
    at = "2026-01-01T09:00:00.000Z"
    rows = [("mem-0", MANGO, []), ("mem-1", "A note about fruit", ["책을"]), ("mem-2", "Bees", [])]
    for entry_id, text, tags in rows:
        old.execute(
            "INSERT INTO memory_entries (id, type, content, search_text, content_key, tags, "
            "behavioral, session_id, group_name, created_at, updated_at, last_seen_at) "
            "VALUES (?, 'fact', ?, ?, ?, ?, 0, 's', 'main', ?, ?, ?)",
            (entry_id, text, text, entry_id, json.dumps(tags, ensure_ascii=False), at, at, at),
        )
    # Turns expire after episodic_ttl_days: this one was logged yesterday.
    said = iso(utc_now() - timedelta(days=1))
    old.execute(
        "INSERT INTO exchanges (session_id, speaker, text, created_at, said_at) "
        "VALUES ('s', 'user', '明天去北京出差', ?, ?)",
        (said, said),
    )
    old.close()
    service = MemoryService(data)
    try:
        operator = service.open_session("main", Actor.OPERATOR, "tests")
        assert _keyword(service, operator, "芒果") == ["mem-0"]
        assert _keyword(service, operator, "책") == ["mem-1"]
        store = service.store_for("main")
        [hit] = find_exchanges(store, "北京", limit=5, mode=Mode.KEYWORD)
        assert hit.exchange.text == "明天去北京出差"
        blank = store.execute("SELECT search_grams FROM memory_entries WHERE id = 'mem-2'").get
        assert blank == ""
    finally:
        service.close()


def test_edited_and_restored_memories_keep_their_grams_current(
    service: MemoryService, operator: Caller
) -> None:
    entry_id = service.store(operator, {"type": "fact", "content": MANGO}).entry.id
    store = service.store_for("main")
    with store.transaction():
        store.update_fields(entry_id, search_text="用户喜欢苹果", tags=json.dumps(["水果"]))
    assert _keyword(service, operator, "芒果") == []
    assert _keyword(service, operator, "苹果") == [entry_id]
    assert _keyword(service, operator, "水果") == [entry_id]
    store.rebuild_index()
    assert _keyword(service, operator, "苹果") == [entry_id]


def test_a_memory_restored_from_the_trash_is_found_again(
    service: MemoryService, operator: Caller, agent: Caller
) -> None:
    entry_id = service.store(operator, {"type": "fact", "content": MANGO}).entry.id
    service.delete(agent, entry_id)  # an agent's delete goes to the trash
    store = service.store_for("main")
    assert "search_grams" not in json.loads(store.execute("SELECT entry FROM trash").get)
    assert _keyword(service, operator, "芒果") == []
    trash.restore(service, operator, entry_id)
    assert _keyword(service, operator, "芒果") == [entry_id]


def test_forget_finds_a_word_inside_chinese_text(
    service: MemoryService, memory_keyring: object
) -> None:
    from core.continuity import context, handoffs, session_handoffs
    from core.memory import forgetting

    agent = service.open_session("main", Actor.AGENT, "agent")
    said = service.store(agent, {"type": "fact", "content": "用户最喜欢的水果是芒果"}).entry.id
    other = service.store(agent, {"type": "fact", "content": "用户最喜欢的水果是苹果"}).entry.id
    tagged = service.store(
        agent, {"type": "fact", "content": "a note", "tags": ["芒果"], "privacy": "private"}
    ).entry.id
    turn = log_exchange(service, agent, "user", "我昨天买了芒果和香蕉").exchange.id
    kept_turn = log_exchange(service, agent, "user", "我昨天买了香蕉").exchange.id
    entry = context.enter_thread(service, agent, "水果")
    handoffs.write_handoff(service, entry.caller, entry.thread.id, "- [ ] 再买芒果")
    ended = session_handoffs.end_session_with_handoff(service, entry.caller, "芒果的事")
    assert ended is not None
    plan = forgetting.plan_forget(service, "main", "芒果")
    assert {e.id for e in plan.entries} == {said, tagged}
    assert plan.exchange_ids == (turn,)
    assert len(plan.handoff_versions) == 1 and plan.session_handoff_ids == (ended.id,)
    # A word beside it must be there too, as for spaced words.
    assert forgetting.plan_forget(service, "main", "芒果 bananas").empty
    operator = service.open_session("main", Actor.OPERATOR, "tests")
    service.forget(operator, plan)
    assert service.entries("main", [said, other, tagged]).keys() == {other}
    assert [h.exchange.id for h in find_exchanges(service.store_for("main"), "香蕉")] == [kept_turn]
