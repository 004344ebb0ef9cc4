"""Where the keyboard goes when a page comes up: its search field, else its list.

Ctrl+1 … Ctrl+9 and the window's first showing put the keyboard in the page's
main control, so typing searches and the arrow keys move through rows, rather
than leaving it in the sidebar's group list (where Down changed group).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QStackedWidget, QWidget


def tabbable(widget: QWidget) -> bool:
    """On screen, enabled and reached by Tab."""
    return (
        widget.isVisible()
        and widget.isEnabled()
        and bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus)
    )


def focus_chain(page: QWidget) -> list[QWidget]:
    """The tabbable widgets of ``page``, in Tab order."""
    found: list[QWidget] = []
    widget = page.nextInFocusChain()
    while widget is not None and widget is not page and page.isAncestorOf(widget):
        if tabbable(widget) and widget.focusProxy() is None:
            found.append(widget)
        widget = widget.nextInFocusChain()
    return found


def main_control(page: QWidget | None) -> QWidget | None:
    """The first field to type in or list to move through on ``page``; else its first
    tabbable control (a page of buttons and settings). A page that names its own
    (a focus proxy: the first-run page's *Add a memory*) gets that."""
    if page is None:
        return None
    shown = page.currentWidget() if isinstance(page, QStackedWidget) else None
    if shown is not None:
        return main_control(shown)
    proxy = page.focusProxy()
    if proxy is not None and tabbable(proxy):
        return proxy
    chain = focus_chain(page)
    for widget in chain:
        if isinstance(widget, QAbstractItemView) or (
            isinstance(widget, QLineEdit) and not widget.isReadOnly()
        ):
            return widget
    return chain[0] if chain else None


def focus_page(page: QWidget | None) -> bool:
    """Put the keyboard in ``page``'s main control; False if it has none (an empty page)."""
    control = main_control(page)
    if control is not None:
        control.setFocus(Qt.FocusReason.ShortcutFocusReason)
    return control is not None
