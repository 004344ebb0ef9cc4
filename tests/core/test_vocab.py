"""The planner's term counts come from the index's vocabulary and agree with real matches."""

from __future__ import annotations

from core.service import Caller, MemoryService
from core.storage.fts import match_expression


def test_term_counts_follow_stemming_edits_and_deletes(
    service: MemoryService, operator: Caller
) -> None:
    ids = [
        service.store(operator, {"type": "fact", "content": text}).entry.id
        for text in (
            "The dogs were running in the park",
            "Luna's dog runs every morning",
            "A cat sleeps all day",
            "Running shoes for the marathon",
        )
    ]
    store = service.store_for("main")
    for word in ("run", "running", "dog", "cat", "luna's", "zebra"):
        actual = store.doc_freq(match_expression([word]), 1000)
        assert store.term_freq(word) == actual, word
    service.delete(operator, ids[0])
    assert store.term_freq("dogs") == store.doc_freq(match_expression(["dogs"]), 1000) == 1
    assert store.term_freq("") == 0
