"""Every control a screen reader reaches has a name: its own, its text, or its label's."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QLabel,
    QTabBar,
    QWidget,
)
from pytestqt.qtbot import QtBot

from core.service import Caller, MemoryService
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import add


def named(widget: QWidget, buddies: set[QWidget]) -> bool:
    """A name read out for ``widget``: set, its own text, or a label that is its buddy."""
    if widget.accessibleName().strip() or widget in buddies:
        return True
    if isinstance(widget, QAbstractButton):
        return bool(widget.text().strip())
    return isinstance(widget, QTabBar | QLabel)  # tabs and labels read their text


def unnamed(page: QWidget) -> list[str]:
    buddies = {label.buddy() for label in page.window().findChildren(QLabel) if label.buddy()}
    return [
        f"{type(w).__name__}[{w.objectName()}]"
        for w in page.findChildren(QWidget)
        if w.focusPolicy() & Qt.FocusPolicy.TabFocus
        and w.focusProxy() is None
        and w.window() is page.window()  # not a combo box's list, which pops up
        and not isinstance(w.parent(), QAbstractButton | QAbstractSpinBox | QComboBox)
        and not named(w, buddies)
    ]


def test_every_focusable_control_on_every_page_has_a_name(
    qtbot: QtBot, service: MemoryService, operator: Caller, window: MainWindow
) -> None:
    add(service, operator, "Works in the Lyon office", tags=("work",))
    qtbot.waitUntil(lambda: window.browser.model.total == 1)
    window.browser.table.selectRow(0)
    missing = {"sidebar": unnamed(window.nav.parentWidget())}
    for item in Nav:
        window.go(item)
        missing[item.label] = unnamed(window.page(item))
    found = {page: names for page, names in missing.items() if names}
    assert not found, "\n".join(f"{p}: {n}" for p, n in found.items())


def test_the_claims_mode_label_names_its_box(window: MainWindow) -> None:
    claims = window.claims
    assert claims.mode_label.buddy() is claims.mode_box
    assert claims.mode_box.accessibleName() == "Claims mode"
    assert window.nav.accessibleName() == "Pages"
