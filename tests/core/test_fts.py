from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.service import Caller, MemoryService
from core.storage.fts import build_match, words

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


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=st.text(max_size=500))
def test_any_text_never_raises(service: MemoryService, operator: Caller, query: str) -> None:
    service.search(operator, {"query": query})
    service.list_ids("main", __import__("core.model.entries").model.entries.EntryFilter(), query)
