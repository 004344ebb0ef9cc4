"""Keyboard use of the window: where focus starts and goes, and what Tab reaches."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QScrollArea
from pytestqt.qtbot import QtBot

from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import OFFSCREEN_NOISE, Dialogs, add

CTRL = Qt.KeyboardModifier.ControlModifier


@pytest.fixture
def listed(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> MainWindow:
    """The window over a group with memories, listed."""
    add(service, operator, "Works in the Lyon office", tags=("work",))
    add(service, operator, "Prefers green tea", tags=("food",), low_trust=True)
    qtbot.waitUntil(lambda: window.browser.model.total == 2)
    return window


def test_the_window_opens_with_the_keyboard_in_the_memory_search(
    qtbot: QtBot, listed: MainWindow
) -> None:
    assert QApplication.focusWidget() is listed.browser.filters.search


def test_an_empty_group_opens_with_the_keyboard_on_add_a_memory(
    qtbot: QtBot, window: MainWindow
) -> None:
    qtbot.waitUntil(lambda: window.memories.currentWidget() is window.empty)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.empty.add_button)


@pytest.mark.parametrize(
    ("nav", "control"),
    [
        (Nav.MEMORIES, lambda w: w.browser.filters.search),
        (Nav.REVIEW, lambda w: w.review.table),
        (Nav.AUDIT, lambda w: w.audit.search),
    ],
)
def test_ctrl_and_a_number_puts_the_keyboard_in_the_page(
    qtbot: QtBot, listed: MainWindow, nav: Nav, control: object
) -> None:
    # From the sidebar's group list, where the keyboard used to stay.
    listed.group_box.setFocus()
    qtbot.keyClick(listed.group_box, Qt.Key(Qt.Key.Key_1 + nav.value), CTRL)
    assert listed.nav.currentRow() == nav
    expected = control(listed)  # type: ignore[operator]
    qtbot.waitUntil(lambda: QApplication.focusWidget() is expected)


def test_an_empty_page_leaves_the_keyboard_in_the_page_list(
    qtbot: QtBot, listed: MainWindow
) -> None:
    listed.group_box.setFocus()
    qtbot.keyClick(listed.group_box, Qt.Key.Key_5, CTRL)  # Threads, with none yet
    assert QApplication.focusWidget() is listed.nav


@pytest.mark.parametrize("nav", [Nav.BRIEF, Nav.ATTACHMENTS, Nav.SETTINGS, Nav.CONNECT, Nav.CLAIMS])
def test_every_page_takes_the_keyboard_or_leaves_it_in_the_page_list(
    qtbot: QtBot, listed: MainWindow, nav: Nav
) -> None:
    listed.group_box.setFocus()
    qtbot.keyClick(listed.group_box, Qt.Key(Qt.Key.Key_1 + nav.value), CTRL)
    focused = QApplication.focusWidget()
    assert focused is not None
    assert focused is listed.nav or listed.page(nav).isAncestorOf(focused)


@pytest.mark.qt_log_ignore(OFFSCREEN_NOISE, "This plugin does not support (raise|grabbing)")
@pytest.mark.parametrize("key", [Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_End, Qt.Key.Key_N])
def test_keys_on_the_group_list_never_choose_new_group_or_switch(
    qtbot: QtBot, service: MemoryService, listed: MainWindow, dialogs: Dialogs, key: Qt.Key
) -> None:
    service.store_for("other")
    listed.groups_changed()
    box = listed.group_box
    box.setFocus()
    qtbot.keyClick(box, key)
    assert dialogs.asked == []  # New group… asks for a name: it was not chosen
    assert listed.state.group == "main" and box.currentText() == "main"
    # The list opened instead: choosing needs Enter or a click in it.
    qtbot.waitUntil(lambda: box.view().isVisible())
    box.hidePopup()


def test_no_scroll_area_around_a_page_is_a_tab_stop(window: MainWindow) -> None:
    for item in Nav:
        window.page(item)
    scroll = window.findChild(QScrollArea, "pageScroll")
    assert scroll is not None
    assert [
        s.objectName() or type(s).__name__
        for s in window.findChildren(QScrollArea)
        if s.focusPolicy() != Qt.FocusPolicy.NoFocus
    ] == []
    seen = set()
    widget = window.browser.filters.search
    for _ in range(40):
        widget = widget.nextInFocusChain()
        if widget.isVisible() and widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
            seen.add(widget)
    assert scroll not in seen


def test_tab_on_the_audit_page_goes_from_the_filters_to_the_log(
    qtbot: QtBot, listed: MainWindow
) -> None:
    listed.go_to(Nav.AUDIT)
    audit = listed.audit
    qtbot.waitUntil(lambda: audit.model.rowCount() > 0)
    assert QApplication.focusWidget() is audit.search
    seen = []
    for _ in range(5):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.append(QApplication.focusWidget())
    assert seen == [
        audit.action_box,
        audit.actor_box,
        audit.sessions_box,
        audit.table,
        audit.detail,
    ]
