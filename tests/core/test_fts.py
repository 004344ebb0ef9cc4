from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.continuity.episodes import find_exchanges, log_exchange
from core.memory.forgetting import plan_forget
from core.model.entries import Actor, EntryFilter
from core.recall.search import list_ids
from core.semantic.hybrid import Mode
from core.service import Caller, MemoryService
from core.storage.fts import MAX_GRAMS, build_match, searchable, unspaced_grams, words

HOSTILE = [
    "NOT",
    "AND OR NOT",
    '"',
    '""',
    '"unterminated',
    "*",
    "dog*",
    ":",
    "content:dog",
    "tags : x",
    "(",
    ")",
    "(dog OR",
    "NEAR(a b, 3)",
    "NEAR/2",
    "^dog",
    "-dog",
    "+",
    "{x y}",
    "🐶🐱",
    "dog 🐶",
    "!" * 500,
    "'; DROP TABLE memory_entries; --",
    "\x00",
    "a\u2028b",
    "%_%",
    "\\",
    "ÿ́",
    '"a" "b"',
    "x" * 500,
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_search_as_words(
    service: MemoryService, operator: Caller, query: str
) -> None:
    service.store(operator, {"type": "fact", "content": "The dog NOT the cat (content: x)"})
    service.search(operator, {"query": query[:500]})


def test_fts_syntax_words_are_found_literally(service: MemoryService, operator: Caller) -> None:
    e = service.store(operator, {"type": "fact", "content": "NEAR the AND gate"}).entry.id
    assert [r.id for r in service.search(operator, {"query": "NEAR"})] == [e]


def test_stopwords_dropped_only_when_something_else_is_left() -> None:
    assert build_match("what is the dog") == '"dog"'
    assert build_match("the") == '"the"'
    assert build_match("!!!") is None
    assert build_match("dog lu", prefix_last=True) == '"dog" OR "lu"*'
    assert words("Dog dog DOG") == ["dog"]
    # A word in compatibility forms matches as written or in its plain form.
    assert build_match("ＣＡＦＥ") == '("ｃａｆｅ" OR "cafe")'
    assert build_match("dog ＣＯＦ", prefix_last=True) == '"dog" OR ("ｃｏｆ"* OR "cof"*)'


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("%", False),
        ("?!", False),
        ("(", False),
        ("\\", False),
        ("_", False),
        ("— …", False),
        ("dog", True),
        ("9", True),
        ("é", True),
        ("東京", True),
        ("🍣", True),
    ],
)
def test_punctuation_alone_is_nothing_to_search_for(query: str, expected: bool) -> None:
    assert searchable(query) is expected


@given(query=st.text(max_size=200))
def test_a_query_that_is_not_searchable_holds_no_word_or_piece(query: str) -> None:
    if not searchable(query):
        assert unspaced_grams(query) == []
        assert not any(re.search(r"[^\W_]", w) for w in words(query))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=500))
def test_any_text_never_raises(service: MemoryService, operator: Caller, query: str) -> None:
    service.search(operator, {"query": query})
    service.list_ids("main", __import__("core.model.entries").model.entries.EntryFilter(), query)


def test_the_pieces_of_unspaced_text_are_pairs_of_characters() -> None:
    assert unspaced_grams("芒果") == ["芒果"]
    assert unspaced_grams("我的水果") == ["水果"]  # pairs with a function character go
    assert unspaced_grams("是什么") == ["是什", "什么"]  # unless nothing else is left
    assert unspaced_grams("책을 좋아") == ["좋아"]
    # A long question keeps what tells its subject, up to the end.
    asked = unspaced_grams("请问我以前说过的那个关于我的宠物狗的名字是什么来着旺财")
    assert len(asked) <= MAX_GRAMS and {"宠物", "旺财"} <= set(asked)
    assert unspaced_grams("a 猫 b") == ["猫"]
    assert unspaced_grams("plain English") == []
    assert unspaced_grams("🎸🎶 and ☕") == ["🎸", "🎶", "☕"]
    assert len(unspaced_grams("一二三四五六七八九十百千万亿兆京")) == MAX_GRAMS


def test_a_word_inside_unspaced_text_is_found_by_its_characters(
    service: MemoryService, operator: Caller
) -> None:
    # The index keeps "用户最喜欢的水果是芒果" as one token: before, "芒果" (mango)
    # found nothing, in any mode but by meaning, nor in the app's list.
    def store(text: str, kind: str = "fact", tags: tuple[str, ...] = ()) -> str:
        args = {"type": kind, "content": text, "tags": list(tags)}
        return service.store(operator, args).entry.id

    mango = store("用户最喜欢的水果是芒果")
    jogging = store("ユーザーは毎朝ジョギングをする")
    book = store("사용자는 책을 좋아한다")
    tagged = store("A note about fruit", "context", ("芒果",))
    store("The deploy runs nightly")

    def found(query: str, **extra: object) -> list[str]:
        asked = {"query": query, "mode": "keyword", **extra}
        return [r.id for r in service.search(operator, asked)]

    assert sorted(found("芒果")) == sorted([mango, tagged])
    assert found("芒果", type="fact") == [mango]
    assert found("ジョギング") == [jogging]
    assert found("책") == [book]
    fox = store("Sticker on the laptop: 🦊")
    assert found("🦊") == [fox]
    # The model reads these scripts as unknown tokens, every such text nearly alike:
    # auto mode ranks them by their characters, not by that vector.
    service.start_embedding()
    assert service.embedding is not None and service.embedding.wait_idle(60)
    assert [r.id for r in service.search(operator, {"query": "芒果", "limit": 1})] in (
        [mango],
        [tagged],
    )
    assert service.search(operator, {"query": "ジョギング"})[0].id == jogging
    for asked in ("芒果", "汉", "🦊"):
        listed = service.search(operator, {"query": asked})
        assert not any("semantic" in r.signals for r in listed), asked
    # A question holds more of the memory's pairs than of any other.
    assert found("我最喜欢的水果是什么？")[0] == mango
    ids = list_ids(service, "main", EntryFilter(), "芒果")
    assert sorted(ids) == sorted([mango, tagged])
    agent = service.open_session("main", Actor.AGENT, "t")
    log_exchange(service, agent, "user", "The weather is mild today")
    log_exchange(service, agent, "user", "我下个月要去北京出差")
    hits = find_exchanges(service.store_for("main"), "北京", limit=5, mode=Mode.KEYWORD)
    assert hits[0].exchange.text == "我下个月要去北京出差" and "keyword" in hits[0].signals
    # An emoji alone is a query too, not a listing of the latest turns.
    log_exchange(service, agent, "user", "The new mascot is a 🦊")
    log_exchange(service, agent, "user", "Lunch was great")
    hits = find_exchanges(service.store_for("main"), "🦊", limit=5)
    assert hits[0].exchange.text == "The new mascot is a 🦊" and "keyword" in hits[0].signals


def test_forgetting_a_full_width_topic_takes_either_spelling(
    service: MemoryService, operator: Caller
) -> None:
    # Every word must still appear, a word in full-width letters in either spelling.
    plain = service.store(operator, {"type": "fact", "content": "Orders coffee at the station"})
    wide = service.store(
        operator, {"type": "fact", "content": "The sign says ＣＯＦＦＥＥ ＳＨＯＰ"}
    )
    service.store(operator, {"type": "fact", "content": "Tea at noon"})
    found = plan_forget(service, "main", "ＣＯＦＦＥＥ")
    assert {e.id for e in found.entries} == {plain.entry.id, wide.entry.id}
    found = plan_forget(service, "main", "ＣＯＦＦＥＥ station")
    assert {e.id for e in found.entries} == {plain.entry.id}
