"""Every page at 900x600 (1366x768 at 150 %): no sideways scrolling, no control cut off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import (
    QApplication,
    QLineEdit,
    QScrollArea,
    QStyle,
    QStyleOptionFrame,
    QWidget,
)
from pytestqt.qtbot import QtBot

from core.attachments import attach as attachments
from core.claims import gate
from core.continuity import context as continuity
from core.continuity import handoffs
from core.continuity.episodes import log_exchange
from core.memory.writing import StoreRequest
from core.model.entries import EntryType
from core.service import Caller, MemoryService
from desktop.memories.editor import FORM_WIDTH
from desktop.memories.filters import PLACEHOLDERS
from desktop.shell.app import load_style
from desktop.shell.main_window import MainWindow, Nav
from desktop.widgets.path_label import PathLabel
from desktop.widgets.theme import dark_sheet, light_sheet
from tests.desktop.conftest import add

SMALL = (900, 600)
#: A 1280x800 screen at 200 %.
TINY = (640, 400)


def whole(widget: QWidget) -> bool:
    """On screen and not cut by the window or a scroll area's edge."""
    return widget.isVisible() and widget.visibleRegion().boundingRect() == widget.rect()


@pytest.fixture
def small(
    qtbot: QtBot,
    service: MemoryService,
    operator: Caller,
    agent_caller: Caller,
    window: MainWindow,
    tmp_path: Path,
) -> MainWindow:
    """The window at 900x600 over a group with something on every page."""
    add(service, operator, "Works in the Lyon office", tags=("work",))
    # Enough for the brief's counts to read "… of … memories · 1,234 characters · …".
    notes = [
        StoreRequest(EntryType.FACT, f"Planning note {i}: " + "details " * 8) for i in range(30)
    ]
    service.store_entries(operator, notes)
    entry = continuity.enter_thread(service, agent_caller, "Website redesign")
    assert entry.thread is not None
    handoffs.write_handoff(service, entry.caller, entry.thread.id, "# Redesign\n\n- ship it\n")
    said = log_exchange(service, entry.caller, "user", "The cache is cold on Mondays.", "t1")
    log_exchange(service, entry.caller, "assistant", "Then warm it on Sunday night.", "t1")
    claim = {"text": "The cache is cold on Mondays", "kind": "fact"}
    sources = [{"kind": "exchange", "id": said.exchange.id}]
    gate.propose(service, entry.caller, {**claim, "sources": sources})
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n\nShip on Friday.\n", encoding="utf-8")
    attachments.attach(service, entry.caller, str(plan))
    window.resize(*SMALL)
    qtbot.waitUntil(lambda: window.width() <= SMALL[0] and window.height() <= SMALL[1])
    return window


def no_sideways_scroll(qtbot: QtBot, window: MainWindow) -> None:
    scroll = window.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    pages = scroll.widget()
    # Laid out first: the scroll area learns the page's minimum width from an event.
    qtbot.waitUntil(lambda: pages.width() >= pages.minimumSizeHint().width())
    assert pages.width() <= scroll.viewport().width()
    assert not scroll.horizontalScrollBar().isVisible()


def test_memories_keep_a_readable_list_and_search_box(qtbot: QtBot, small: MainWindow) -> None:
    browser = small.browser
    qtbot.waitUntil(lambda: browser.model.total == 31)
    no_sideways_scroll(qtbot, small)
    search = browser.filters.search
    assert whole(search)
    assert search.width() >= search.fontMetrics().horizontalAdvance("Search memories")
    assert browser.table.width() >= 300 and whole(browser.count_label)


def text_room(edit: QLineEdit) -> int:
    """The pixels ``edit`` draws its text and placeholder in: its contents as the style
    lays them out, less the text margins and the 2 px Qt keeps inside them each side."""
    option = QStyleOptionFrame()
    edit.initStyleOption(option)
    contents = edit.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, edit)
    margins = edit.textMargins()
    return contents.width() - margins.left() - margins.right() - 4


def test_the_memory_search_shows_its_placeholder_whole(qtbot: QtBot, small: MainWindow) -> None:
    browser = small.browser
    qtbot.waitUntil(lambda: browser.model.total == 31)
    no_sideways_scroll(qtbot, small)
    search = browser.filters.search
    placeholder = search.placeholderText()
    assert placeholder in PLACEHOLDERS
    assert search.fontMetrics().horizontalAdvance(placeholder) <= text_room(search)
    # The longest that fits: the one before it would not.
    longer = PLACEHOLDERS[: PLACEHOLDERS.index(placeholder)]
    assert all(search.fontMetrics().horizontalAdvance(p) > text_room(search) for p in longer)


def test_threads_show_the_list_beside_the_tabs(qtbot: QtBot, small: MainWindow) -> None:
    small.go(Nav.THREADS)
    page = small.threads
    qtbot.waitUntil(lambda: page.model.rowCount() == 1)
    page.table.selectRow(0)
    no_sideways_scroll(qtbot, small)
    for widget in (page.tabs.tabBar(), page.handoff.edit_button, page.delete_button):
        assert whole(widget), widget
    page.tabs.setCurrentWidget(page.history)
    qtbot.waitUntil(lambda: whole(page.history.restore_button))
    # The title is what names a thread: the counts beside it give way, the list never
    # scrolls sideways, and "Website redesign" reads whole.
    table = page.table
    assert table.horizontalScrollBar().maximum() == 0
    assert table.fontMetrics().horizontalAdvance("Website redesign") < table.columnWidth(0)
    assert table.isColumnHidden(3)


@pytest.mark.parametrize(
    ("nav", "controls"),
    [
        (Nav.BRIEF, ("refresh_button", "copy_button")),
        (Nav.ATTACHMENTS, ("verify_all_button", "attach_button")),
        (Nav.AUDIT, ("search", "actor_box")),
        (Nav.SETTINGS, ("open_button", "save_button")),
        (Nav.CLAIMS, ("diagnostics_button", "accept_button", "reject_button")),
        (Nav.LAYERS, ("compress_button",)),
    ],
)
def test_page_fits_without_cutting_controls(
    qtbot: QtBot, small: MainWindow, nav: Nav, controls: tuple[str, ...]
) -> None:
    small.go(nav)
    page = small.page(nav)
    if nav is Nav.BRIEF:
        qtbot.waitUntil(lambda: "31 of 31 memories" in page.counts.text())
    no_sideways_scroll(qtbot, small)
    for name in controls:
        widget = getattr(page, name)
        qtbot.waitUntil(lambda w=widget: whole(w))
    if nav is Nav.AUDIT:
        # Room for the whole placeholder, which says what the search finds.
        placeholder = page.search.placeholderText()
        assert page.search.fontMetrics().horizontalAdvance(placeholder) <= text_room(page.search)


@pytest.mark.parametrize("nav", list(Nav))
def test_no_page_scrolls_sideways(
    qtbot: QtBot, service: MemoryService, operator: Caller, small: MainWindow, nav: Nav
) -> None:
    """Pages scroll down, never sideways: a long line wraps, a long word is cut short."""
    add(service, operator, "A" * 1990, EntryType.PREFERENCE)
    if nav is Nav.BRIEF:
        # A big group's counts: "27 of 1,232 memories · 4,950 characters · ~1,238
        # tokens · cut short by the character limit", wider than the page.
        notes = [
            StoreRequest(EntryType.FACT, f"Background note {i}: " + "context " * 20)
            for i in range(1200)
        ]
        service.store_entries(operator, notes)
        small.state.update_config(small.state.config.with_changes(max_brief_chars=5000))
    small.go(nav)
    page = small.page(nav)
    if nav is Nav.BRIEF:
        qtbot.waitUntil(lambda: "cut short by the character limit" in page.counts.text())
        assert "1,232 memories" in page.counts.text()
    no_sideways_scroll(qtbot, small)
    scroll = small.findChild(QScrollArea, "pageScroll")
    assert scroll is not None and scroll.horizontalScrollBar().maximum() == 0
    if nav is Nav.BRIEF:
        # Wrapped, not cut: the whole counts line is on screen.
        counts = page.counts
        lines = 2 * counts.fontMetrics().height()
        qtbot.waitUntil(lambda: counts.height() >= lines and whole(counts))
        assert counts.width() <= scroll.viewport().width()


def test_the_sidebar_shows_every_page_name_whole(qtbot: QtBot, small: MainWindow) -> None:
    nav = small.nav
    qtbot.waitUntil(lambda: nav.viewport().width() > 0)
    # Eleven pages fit the height, and each name fits the width, even beside a scrollbar.
    assert not nav.verticalScrollBar().isVisible()
    assert nav.sizeHintForColumn(0) <= nav.viewport().width()
    assert nav.sizeHintForColumn(0) + nav.verticalScrollBar().sizeHint().width() <= nav.width()


def test_the_memory_list_gets_the_room_the_editor_does_not_need(
    qtbot: QtBot, small: MainWindow
) -> None:
    browser = small.browser
    qtbot.waitUntil(lambda: browser.model.total == 31)
    assert browser.editor.showing_nothing
    # Nothing selected: the hint beside the list takes less than the form would.
    qtbot.waitUntil(lambda: browser.editor.width() < FORM_WIDTH)
    idle_list = browser.table.width()
    assert idle_list > browser.editor.width() * 1.6
    browser.table.selectRow(0)
    qtbot.waitUntil(lambda: browser.editor.width() >= FORM_WIDTH)
    for button in (browser.editor.save_button, browser.editor.delete_button):
        qtbot.waitUntil(lambda b=button: whole(b))
    assert browser.table.width() < idle_list
    no_sideways_scroll(qtbot, small)


def test_a_claim_gets_more_room_than_the_columns_beside_it(qtbot: QtBot, small: MainWindow) -> None:
    small.go(Nav.CLAIMS)
    page = small.claims
    qtbot.waitUntil(lambda: page.table.rowCount() == 1)
    table = page.table
    text = table.item(0, 0).text()
    room = table.columnWidth(0)
    others = [table.columnWidth(c) for c in range(1, table.columnCount())]
    assert room >= max(others) and room >= 0.4 * table.viewport().width()
    # Two lines a claim: "The cache is cold on Mondays" shows whole.
    assert table.fontMetrics().horizontalAdvance(text) <= 2 * (room - 12)
    assert table.rowHeight(0) >= 2 * table.fontMetrics().lineSpacing()


def test_connect_cuts_long_config_paths_instead_of_scrolling_sideways(
    qtbot: QtBot, small: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A home folder as long as many are: the clients' config paths are wider than the page.
    home = tmp_path / "home-of-someone-with-a-long-name"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    small.go(Nav.CONNECT)
    page = small.connect_page
    no_sideways_scroll(qtbot, small)
    # The page is a scroll area of its own: it too scrolls down only.
    qtbot.waitUntil(lambda: page.widget().width() <= page.viewport().width())
    assert not page.horizontalScrollBar().isVisible()
    page.ensureWidgetVisible(page.copy_snippet_button)
    qtbot.waitUntil(lambda: whole(page.copy_snippet_button))
    desktop_path = page.setup_box.paths["claude-desktop"]
    [shown] = [
        label
        for label in page.setup_box.findChildren(PathLabel)
        if label.path() == str(desktop_path)
    ]
    assert "…" in shown.text() and shown.text().endswith("claude_desktop_config.json")
    assert shown.toolTip() == str(desktop_path)


def test_layers_show_every_column_heading(qtbot: QtBot, small: MainWindow) -> None:
    small.go(Nav.LAYERS)
    tree = small.layers.tree
    header = tree.header()
    qtbot.waitUntil(lambda: header.sectionViewportPosition(2) > 0)
    assert not tree.horizontalScrollBar().isVisible()
    for column in range(tree.columnCount()):
        right = header.sectionViewportPosition(column) + header.sectionSize(column)
        assert right <= tree.viewport().width(), tree.headerItem().text(column)
        label = tree.headerItem().text(column)
        assert header.sectionSize(column) >= header.fontMetrics().horizontalAdvance(label)


def test_the_first_run_page_shows_its_actions_without_scrolling(
    qtbot: QtBot, window: MainWindow
) -> None:
    window.resize(*SMALL)
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.empty)
    empty = window.empty
    # Its only actions, above the long MCP snippet, in view as the page opens.
    for button in (empty.add_button, empty.examples_button):
        qtbot.waitUntil(lambda b=button: whole(b))
    assert empty.verticalScrollBar().value() == 0
    # Once the layout has settled (a scroll area may show its bar for a moment).
    qtbot.waitUntil(lambda: not empty.horizontalScrollBar().isVisible())
    # A long home folder's paths are cut in the middle rather than widening the page.
    deep = "/home/firstname.lastname/" + "nested-folder/" * 12
    empty.socket_path.set_path(deep + "ambry.sock")
    empty.token_path.set_path(deep + "agent.token")
    qtbot.waitUntil(lambda: empty.token_path.text() != empty.token_path.path())
    assert "…" in empty.socket_path.text() and empty.socket_path.toolTip().endswith("ambry.sock")
    qtbot.wait(100)
    assert not empty.horizontalScrollBar().isVisible()
    args = json.loads(empty.snippet.toPlainText())["mcpServers"]["ambry"]["args"]
    assert args[-3:] == ["mcp", "--client", "claude-desktop"]


@pytest.mark.parametrize("dark", [False, True])
def test_the_page_lists_scrollbar_is_drawn_in_the_sidebars_colours(
    qtbot: QtBot, qapp: QApplication, window: MainWindow, dark: bool
) -> None:
    if dark:
        qapp.setStyleSheet(dark_sheet(light_sheet()))
    window.resize(*TINY)
    bar = window.nav.verticalScrollBar()
    qtbot.waitUntil(bar.isVisible)
    image = bar.grab().toImage()
    # Below the handle, at the top: the empty track, which was drawn black.
    track = image.pixelColor(image.width() // 2, image.height() - 4)
    assert track.name() == "#1f2430"
    qapp.setStyleSheet(load_style())


@pytest.fixture
def tiny(small: MainWindow, qtbot: QtBot) -> MainWindow:
    """The same window at 640x400 (1280x800 at 200 %)."""
    small.resize(*TINY)
    qtbot.waitUntil(lambda: small.width() <= TINY[0] and small.height() <= TINY[1])
    return small


def test_at_640x400_the_editor_goes_under_the_list_and_nothing_is_cut(
    qtbot: QtBot, tiny: MainWindow
) -> None:
    browser = tiny.browser
    qtbot.waitUntil(lambda: browser.model.total == 31)
    browser.table.selectRow(0)
    editor = browser.editor
    qtbot.waitUntil(lambda: editor.width() >= FORM_WIDTH)
    no_sideways_scroll(qtbot, tiny)
    # Under the list, as wide as the page, and reached by scrolling down.
    assert editor.mapTo(browser, editor.rect().topLeft()).y() > browser.table.geometry().bottom()
    scroll = tiny.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    for widget in (
        editor.type_box,
        editor.privacy_box,
        editor.content,
        editor.save_button,
        editor.delete_button,
    ):
        scroll.ensureWidgetVisible(widget)
        qtbot.waitUntil(lambda w=widget: whole(w))
    assert browser.table.height() >= 150


def test_back_at_900x600_the_editor_is_beside_the_list_again(
    qtbot: QtBot, tiny: MainWindow
) -> None:
    browser = tiny.browser
    qtbot.waitUntil(lambda: browser.model.total == 31)
    tiny.resize(*SMALL)
    browser.table.selectRow(0)
    editor = browser.editor
    left = lambda: editor.mapTo(browser, editor.rect().topLeft()).x()  # noqa: E731
    qtbot.waitUntil(lambda: left() > browser.table.geometry().right())
    qtbot.waitUntil(lambda: whole(editor.save_button))
    scroll = tiny.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    # Once the scroll bar the small window needed has gone.
    qtbot.waitUntil(lambda: scroll.widget().width() <= scroll.viewport().width())
    no_sideways_scroll(qtbot, tiny)


@pytest.mark.parametrize(
    "nav",
    [
        Nav.REVIEW,
        Nav.BRIEF,
        Nav.SETTINGS,
        Nav.CONNECT,
        Nav.LAYERS,
        Nav.TRASH,
    ],
)
def test_at_640x400_pages_scroll_down_only(qtbot: QtBot, tiny: MainWindow, nav: Nav) -> None:
    """An empty list's advice wraps to the page instead of widening it."""
    tiny.go(nav)
    no_sideways_scroll(qtbot, tiny)


def filled(qtbot: QtBot, window: MainWindow, nav: Nav) -> QWidget:
    """Open ``nav`` and wait for what the fixture put on it, its first row selected."""
    window.go(nav)
    page = window.page(nav)
    match nav:
        case Nav.THREADS | Nav.ATTACHMENTS:
            qtbot.waitUntil(lambda: page.model.rowCount() == 1)
            page.table.selectRow(0)
        case Nav.AUDIT:
            qtbot.waitUntil(lambda: page.model.rowCount() >= 4)
            page.table.selectRow(0)
        case Nav.CLAIMS:
            qtbot.waitUntil(lambda: page.table.rowCount() == 1)
            page.table.selectRow(0)
    return page


@pytest.mark.parametrize(
    ("nav", "controls"),
    [
        (Nav.THREADS, ("rename_button", "delete_button", "tabs", "handoff")),
        (Nav.AUDIT, ("search", "action_box", "actor_box", "sessions_box", "table", "detail")),
        (
            Nav.CLAIMS,
            (
                "filter",
                "mode_box",
                "rollback_button",
                "diagnostics_button",
                "extract_button",
                "accept_button",
                "reject_button",
                "defer_button",
            ),
        ),
        (
            Nav.ATTACHMENTS,
            ("attach_button", "folder_button", "verify_button", "verify_all_button", "detail"),
        ),
    ],
)
def test_at_640x400_full_pages_scroll_down_only(
    qtbot: QtBot, tiny: MainWindow, nav: Nav, controls: tuple[str, ...]
) -> None:
    """Rows of controls wrap and panes stack: every control whole, reached by scrolling down."""
    page = filled(qtbot, tiny, nav)
    no_sideways_scroll(qtbot, tiny)
    scroll = tiny.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    for name in controls:
        widget = getattr(page, name)
        scroll.ensureWidgetVisible(widget)
        qtbot.waitUntil(lambda w=widget: whole(w))


def test_at_640x400_the_thread_tabs_go_under_the_list(qtbot: QtBot, tiny: MainWindow) -> None:
    page = filled(qtbot, tiny, Nav.THREADS)
    no_sideways_scroll(qtbot, tiny)
    table, tabs = page.table, page.tabs
    assert (
        tabs.mapTo(page, tabs.rect().topLeft()).y()
        > table.mapTo(page, table.rect().bottomLeft()).y()
    )
    # As wide as the page: the title reads whole, the list does not scroll sideways.
    assert table.horizontalScrollBar().maximum() == 0
    assert table.fontMetrics().horizontalAdvance("Website redesign") < table.columnWidth(0)
    assert table.height() >= 120
    page.tabs.setCurrentWidget(page.exchange_pane)
    qtbot.waitUntil(lambda: page.exchanges.rowCount() == 2)
    no_sideways_scroll(qtbot, tiny)


@pytest.mark.parametrize("nav", [Nav.THREADS, Nav.AUDIT, Nav.CLAIMS, Nav.ATTACHMENTS])
@pytest.mark.parametrize("size", [SMALL, (1280, 800)])
def test_bigger_windows_keep_full_pages_as_they_were(
    qtbot: QtBot, tiny: MainWindow, nav: Nav, size: tuple[int, int]
) -> None:
    """Back from 640x400: the thread tabs beside the list again, nothing scrolls sideways."""
    page = filled(qtbot, tiny, nav)
    tiny.resize(*size)
    scroll = tiny.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    qtbot.waitUntil(lambda: scroll.widget().width() <= scroll.viewport().width())
    no_sideways_scroll(qtbot, tiny)
    if nav is Nav.THREADS:
        table, tabs = page.table, page.tabs
        right = lambda: table.mapTo(page, table.rect().topRight()).x()  # noqa: E731
        qtbot.waitUntil(lambda: tabs.mapTo(page, tabs.rect().topLeft()).x() > right())
    # Where they have the room, a group of controls keeps to one row.
    rows = {
        Nav.ATTACHMENTS: ("attach_button", "folder_button", "verify_button", "verify_all_button"),
        Nav.CLAIMS: ("mode_box", "rollback_button", "diagnostics_button"),
        Nav.AUDIT: ("action_box", "actor_box"),
    }
    together = [getattr(page, name) for name in rows.get(nav, ())]
    top = lambda w: w.mapTo(page, w.rect().center()).y()  # noqa: E731
    qtbot.waitUntil(lambda: len({top(w) for w in together}) <= 1)
