"""The Exchanges tab's search over every logged turn, with the real model and vectors."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from core.continuity import context as continuity
from core.continuity import episodes
from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow
from desktop.threads.exchanges import SEARCH_RESULTS
from desktop.threads.view import Tab, ThreadsPage
from tests.desktop.conftest import embed_all
from tests.desktop.test_threads_view import open_page


def _thread(service: MemoryService, agent: Caller, title: str, turns: list[str]) -> str:
    entry = continuity.enter_thread(service, agent, title)
    assert entry.thread is not None
    for text in turns:
        episodes.log_exchange(service, entry.caller, "user", text, name="Dana")
    return entry.thread.id


def _page(qtbot: QtBot, window: MainWindow, thread_id: str) -> ThreadsPage:
    page = open_page(qtbot, window, thread_id)
    page.tabs.setCurrentIndex(Tab.EXCHANGES)
    return page


def _texts(page: ThreadsPage) -> list[str]:
    hits = page.exchange_pane.hits
    return [hits.record_at(r).exchange.text for r in range(hits.rowCount())]


def test_a_search_finds_turns_of_every_thread_by_words_and_meaning(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    site = _thread(service, agent_caller, "Website", ["Move the blog templates to the new grid"])
    _thread(service, agent_caller, "Garden", ["My puppy dug up the tulip bed again"])
    embed_all(service)
    page = _page(qtbot, window, site)
    pane = page.exchange_pane
    assert pane.stack.currentWidget() is pane.turns_table
    assert pane.status.text() == "This thread's turns, newest first."

    qtbot.keyClicks(pane.search, "my dog")  # no turn says "dog": found by meaning
    qtbot.waitUntil(lambda: pane.stack.currentWidget() is pane.hits_table, timeout=20_000)
    assert _texts(page)[0] == "My puppy dug up the tulip bed again"
    hit = pane.hits.record_at(0)
    assert "semantic" in hit.signals and hit.exchange.thread_title == "Garden"
    row = [pane.hits.index(0, c).data() for c in range(pane.hits.columnCount())]
    assert "Dana" in row and "Garden" in row
    # Only the Garden turn is found: the Website turn (no word, far in meaning) is not
    # listed as a filler, so no lift is claimed.
    assert _texts(page) == ["My puppy dug up the tulip bed again"]
    assert pane.status.text() == "1 turn found, best first."
    pane.search.setText("blog templates")
    qtbot.waitUntil(lambda: _texts(page)[:1] == ["Move the blog templates to the new grid"])
    assert pane.status.text().endswith("found, best first; this thread's turns are lifted.")
    # Nonsense finds nothing, though every turn has a vector to compare it with.
    pane.search.setText("zxqv")
    qtbot.waitUntil(lambda: "No turn shares these words" in pane.status.text(), timeout=20_000)
    assert _texts(page) == []

    pane.search.clear()
    assert pane.stack.currentWidget() is pane.turns_table
    assert page.exchanges.record_at(0).text == "Move the blog templates to the new grid"


def test_typing_past_a_search_shows_only_the_last_one(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    site = _thread(
        service, agent_caller, "Website", ["Move the blog templates", "Fix the footer links"]
    )
    page = _page(qtbot, window, site)
    pane = page.exchange_pane
    qtbot.keyClicks(pane.search, "blog")
    pane.search.setText("footer")
    qtbot.waitUntil(lambda: pane.stack.currentWidget() is pane.hits_table, timeout=20_000)
    qtbot.waitUntil(lambda: _texts(page)[:1] == ["Fix the footer links"], timeout=20_000)
    pane.search.setText("zzzqqq")
    qtbot.waitUntil(lambda: "No turn shares these words" in pane.status.text(), timeout=20_000)
    assert _texts(page) == []


def test_ctrl_f_on_threads_searches_turns_and_down_moves_into_them(
    qtbot: QtBot, service: MemoryService, agent_caller: Caller, window: MainWindow
) -> None:
    site = _thread(service, agent_caller, "Website", ["Move the blog templates", "Fix the footer"])
    page = open_page(qtbot, window, site)
    page.tabs.setCurrentIndex(0)  # another tab: Ctrl+F brings the turns' search
    window.activateWindow()
    window.find_action.trigger()
    pane = page.exchange_pane
    assert window.pages.currentWidget() is page  # not the Memories page
    assert pane.search.hasFocus() or window.focusWidget() is pane.search
    qtbot.keyClicks(pane.search, "footer")
    qtbot.waitUntil(lambda: _texts(page)[:1] == ["Fix the footer"], timeout=20_000)
    qtbot.keyClick(pane.search, Qt.Key.Key_Down)
    assert window.focusWidget() is pane.hits_table
    assert pane.hits_table.selectionModel().selectedRows()[0].row() == 0


def test_a_search_past_its_first_page_says_so_and_reads_on(
    qtbot: QtBot,
    qtmodeltester: ModelTester,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
) -> None:
    notes = [f"Blog post {n} needs a new header image" for n in range(SEARCH_RESULTS + 10)]
    site = _thread(service, agent_caller, "Website", notes)
    embed_all(service)  # a ranking that moves while turns are embedded would move the pages
    page = _page(qtbot, window, site)
    pane = page.exchange_pane
    qtbot.keyClicks(pane.search, "blog post")
    qtbot.waitUntil(lambda: len(_texts(page)) == SEARCH_RESULTS, timeout=20_000)
    assert pane.status.text() == (
        f"{SEARCH_RESULTS} turns found, best first; this thread's turns are lifted. "
        "More may follow."
    )
    assert pane.more.isVisibleTo(pane) and pane.more.isEnabled()
    qtbot.mouseClick(pane.more, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(_texts(page)) == len(notes), timeout=20_000)
    assert sorted(_texts(page)) == sorted(notes)  # each once, none left out
    assert pane.status.text().startswith(f"{len(notes)} turns found, best first")
    assert not pane.more.isVisibleTo(pane) and "More" not in pane.status.text()
    qtmodeltester.check(pane.hits)
    # A new search starts from its first page.
    pane.search.setText("header image")
    assert not pane.more.isVisibleTo(pane)
    qtbot.waitUntil(lambda: pane.more.isVisibleTo(pane), timeout=20_000)
    assert len(_texts(page)) == SEARCH_RESULTS


def test_the_deepest_page_asks_for_more_words(
    qtbot: QtBot,
    service: MemoryService,
    agent_caller: Caller,
    window: MainWindow,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    notes = [f"Blog post {n} needs a new header image" for n in range(3 * SEARCH_RESULTS)]
    site = _thread(service, agent_caller, "Website", notes)
    embed_all(service)
    # Paging reaches one page past the first here: the next offset would be refused.
    monkeypatch.setattr(episodes, "MAX_EXCHANGE_OFFSET", SEARCH_RESULTS)
    page = _page(qtbot, window, site)
    pane = page.exchange_pane
    qtbot.keyClicks(pane.search, "blog post")
    qtbot.waitUntil(lambda: len(_texts(page)) == SEARCH_RESULTS, timeout=20_000)
    qtbot.mouseClick(pane.more, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(_texts(page)) == 2 * SEARCH_RESULTS, timeout=20_000)
    assert pane.status.text().endswith("More match: add words to narrow the search.")
    assert not pane.more.isVisibleTo(pane)
