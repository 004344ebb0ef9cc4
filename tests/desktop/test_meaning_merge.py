"""Matches by meaning merged into the browser's word matches, with the real model."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from core.model.config import Config
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from desktop.memories.meaning import Ranked, fused, merged, warm
from desktop.memories.model import DETAIL_ROLE
from desktop.memories.state import BrowserQuery
from desktop.shell.main_window import MainWindow
from tests.desktop.conftest import Dialogs, add, embed_all
from tests.desktop.test_browser import listed


def _ranked(ids: tuple[str, ...], by_meaning: frozenset[str]) -> Ranked:
    return Ranked("main", BrowserQuery(text="x"), ids, by_meaning)


def test_merging_puts_the_fused_best_first_or_adds_at_the_end() -> None:
    words = ["w1", "w2", "w3"]
    ranked = _ranked(("m1", "w2", "w1"), frozenset({"m1"}))
    assert merged(words, ranked, in_place=False) == ["m1", "w2", "w1", "w3"]
    assert merged(words, ranked, in_place=True) == ["w1", "w2", "w3", "m1"]
    # Nothing found by meaning alone: the fused order still leads an untouched list ...
    only_words = _ranked(("w3", "w1"), frozenset())
    assert merged(words, only_words, in_place=False) == ["w3", "w1", "w2"]
    # ... and a touched one stays as it is.
    assert merged(words, only_words, in_place=True) == words


def test_a_search_sharing_no_word_finds_the_memory_by_meaning(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    luna = add(service, operator, "Has a dog named Luna")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    qtbot.keyClicks(browser.filters.search, "puppy")
    qtbot.waitUntil(lambda: listed(window) == [luna], timeout=20_000)
    detail = browser.model.index(0, 1).data(DETAIL_ROLE)
    assert detail.endswith("by meaning")
    assert browser.count_label.text() == "1 memory match, 1 by meaning"
    assert not browser.no_results.isVisible()


def test_word_matches_come_at_once_and_keep_their_place_once_touched(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    walk = add(service, operator, "Walk the dog before the standup")
    luna = add(service, operator, "Has a puppy named Luna")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 3)
    qtbot.keyClicks(browser.filters.search, "dog")
    qtbot.waitUntil(lambda: listed(window)[:1] == [walk])  # the word match, before the model
    browser.open_entry(walk)  # the person has picked a row: nothing moves under it
    qtbot.waitUntil(lambda: listed(window) == [walk, luna], timeout=20_000)
    assert browser.selected_ids() == [walk]
    assert browser.model.index(1, 1).data(DETAIL_ROLE).endswith("by meaning")
    assert not browser.model.index(0, 1).data(DETAIL_ROLE).endswith("by meaning")


def test_a_list_sorted_by_a_column_holds_the_word_matches_only(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    walk = add(service, operator, "Walk the dog before the standup")
    add(service, operator, "Has a puppy named Luna")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    content = [c.key for c in browser.model.columns].index("content")
    browser.table.horizontalHeader().setSortIndicator(content, Qt.SortOrder.AscendingOrder)
    qtbot.keyClicks(browser.filters.search, "dog")
    qtbot.waitUntil(lambda: listed(window) == [walk])
    qtbot.wait(800)  # longer than the pause before a ranking by meaning
    assert listed(window) == [walk] and browser.count_label.text() == "1 memory match"


def test_warming_loads_the_vectors_a_first_ranking_would_wait_for(
    service: MemoryService, operator: Caller
) -> None:
    add(service, operator, "Has a dog named Luna")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    assert warm("main", service) == (2, False)


def test_a_guess_that_only_fills_an_agents_list_is_not_shown(
    service: MemoryService, operator: Caller
) -> None:
    running = add(service, operator, "User goes running three times a week")
    add(service, operator, "The tax return is due in April")
    embed_all(service)
    # An agent's search gets the nearest memory as a low-scored guess ...
    guesses = service.search_entries(
        "main", "How often do I exercise?", BrowserQuery().entry_filter()
    )
    assert [r.id for r in guesses][:1] == [running]
    assert not {"keyword", "semantic"} & set(guesses[0].signals)
    # ... the list a person reads says nothing matched.
    ranked = fused("main", BrowserQuery(text="How often do I exercise?"), service)
    assert ranked is not None and ranked.ids == () and ranked.by_meaning == frozenset()


def test_without_the_model_there_is_nothing_to_merge(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data")
    data.ensure()
    service = MemoryService(data, Config(embedding_model_dir=str(tmp_path / "nowhere")))
    try:
        assert fused("main", BrowserQuery(text="puppy"), service) is None
        assert warm("main", service) == (0, False)
    finally:
        service.close()


def test_delete_all_matching_keeps_what_only_meaning_found_and_says_so(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    dialogs: Dialogs,
    shown: list[tuple[str, str]],
) -> None:
    walk = add(service, operator, "Walk the dog before the standup")
    luna = add(service, operator, "Has a puppy named Luna")
    embed_all(service)
    browser = window.browser
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2)
    qtbot.keyClicks(browser.filters.search, "dog")
    qtbot.waitUntil(
        lambda: browser.count_label.text() == "2 memories match, 1 by meaning", timeout=20_000
    )
    assert set(listed(window)) == {walk, luna}
    dialogs.answer = False
    browser.delete_matching_button.click()
    assert dialogs.asked[-1].startswith("Delete 1 memory matching “dog”?")
    assert "1 memory found by meaning alone is kept" in dialogs.asked[-1]

    browser.filters.search.setText("canine")  # shares no word with either memory
    model = browser.model
    qtbot.waitUntil(lambda: 1 <= model.listed_by_meaning == model.total, timeout=20_000)
    asked = len(dialogs.asked)
    browser.delete_matching_button.click()
    assert len(dialogs.asked) == asked  # nothing to ask: no word matches
    assert "No memories share the words of the search" in shown[-1][1]
    assert service.store_for("main").total() == 2
