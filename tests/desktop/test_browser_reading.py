"""The content-first browser: two-line rows, sorting, counts that match, keys into the list."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import EntryType
from core.service import Caller, MemoryService
from desktop.memories.model import DETAIL_ROLE
from desktop.memories.rows import ContentDelegate, TypeChipDelegate
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import add
from tests.desktop.test_browser import listed


def column(window: MainWindow, key: str) -> int:
    return [c.key for c in window.browser.model.columns].index(key)


def test_rows_show_content_over_tags_and_source(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow, qtmodeltester: ModelTester
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    browser = window.browser
    qtmodeltester.check(browser.model)
    table = browser.table
    content = column(window, "content")
    assert isinstance(table.itemDelegateForColumn(content), ContentDelegate)
    assert isinstance(table.itemDelegateForColumn(column(window, "type")), TypeChipDelegate)
    # Tags and source moved onto the content's second line.
    assert table.isColumnHidden(column(window, "tags"))
    assert table.isColumnHidden(column(window, "source"))
    row = browser.model.row_of(filled["office"])
    assert row is not None
    assert browser.model.index(row, content).data(DETAIL_ROLE) == "#work  ·  you"
    assert table.rowHeight(row) >= 2 * table.fontMetrics().height()
    image = table.viewport().grab().toImage()
    assert not image.isNull()


def test_clicking_a_header_sorts_and_a_search_keeps_the_order(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    apple = add(service, operator, "Apples are kept in the cellar", EntryType.FACT)
    cider = add(service, operator, "Cider is made in October", EntryType.CONTEXT)
    brie = add(service, operator, "Brie goes with apples", EntryType.PREFERENCE)
    qtbot.waitUntil(lambda: listed(window) == [brie, cider, apple])
    header = window.browser.table.horizontalHeader()
    content = column(window, "content")
    qtbot.mouseClick(
        header.viewport(),
        Qt.MouseButton.LeftButton,
        pos=QPoint(header.sectionViewportPosition(content) + 20, header.height() // 2),
    )
    qtbot.waitUntil(lambda: listed(window) == [apple, brie, cider])
    assert header.sortIndicatorSection() == content
    header.setSortIndicator(content, Qt.SortOrder.DescendingOrder)
    qtbot.waitUntil(lambda: listed(window) == [cider, brie, apple])

    qtbot.keyClicks(window.browser.filters.search, "apples")
    qtbot.waitUntil(lambda: listed(window) == [brie, apple])
    header.setSortIndicator(column(window, "type"), Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: listed(window) == [apple, brie])  # fact before preference
    window.browser.clear_sort()
    qtbot.waitUntil(lambda: header.sortIndicatorSection() == -1)
    assert window.browser.count_label.text() == "2 memories match"


def test_tag_counts_and_rebuild_count_match_the_list(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    window: MainWindow,
    shown: list[tuple[str, str]],
) -> None:
    first = add(service, operator, "Works in Lyon", tags=("work",))
    add(service, operator, "Standup at nine", tags=("work",))
    request = StoreRequest(EntryType.FACT, "Works in Paris", ("work",), supersedes=first)
    service.store_entries(operator, [request])
    qtbot.waitUntil(lambda: len(listed(window)) == 2)
    tags = window.browser.filters.tag_box
    qtbot.waitUntil(lambda: tags.findText("work (2)") > 0)
    width = tags.sizeHint().width()
    add(service, operator, "Long tag memory", tags=("a-rather-long-tag-name-for-work",))
    qtbot.waitUntil(lambda: tags.count() == 3)
    assert tags.sizeHint().width() == width  # the filter bar does not jump

    window.go(Nav.SETTINGS)
    window.settings.rebuild_button.click()
    qtbot.waitUntil(lambda: any("Search index rebuilt" in t for _, t in shown))
    text = next(t for _, t in shown if "Search index rebuilt" in t)
    assert text == "Search index rebuilt: 3 memories listed, plus 1 old version."


def test_down_and_enter_move_from_the_search_into_the_results(
    qtbot: QtBot, filled: dict[str, str], window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    search = window.browser.filters.search
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(search, "work")
    qtbot.waitUntil(lambda: len(listed(window)) == 2)
    qtbot.keyClick(search, Qt.Key.Key_Down)
    assert window.browser.table.hasFocus()
    assert window.browser.selected_ids() == [listed(window)[0]]
    qtbot.keyClick(window.browser.table, Qt.Key.Key_Down)
    assert window.browser.selected_ids() == [listed(window)[1]]
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(search, Qt.Key.Key_Return)
    assert window.browser.table.hasFocus()
    assert window.browser.selected_ids() == [listed(window)[1]]


def test_ages_refresh_on_a_timer(qtbot: QtBot, filled: dict[str, str], window: MainWindow) -> None:
    qtbot.waitUntil(lambda: len(listed(window)) == 4)
    model = window.browser.model
    with qtbot.waitSignal(model.dataChanged, timeout=1000):
        window.browser._ages.setInterval(10)
    assert window.browser._ages.isActive()
