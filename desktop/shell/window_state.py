"""The window's size, place, page and group: remembered between runs, fitted to the screen."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRect, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from core.storage.paths import DataDir
from desktop.widgets.prefs import GEOMETRY, GROUP, PAGE, prefs

#: The size the window asks for when the screen has room.
PREFERRED = QSize(1360, 820)


def fitted(available: QRect, preferred: QSize = PREFERRED) -> QRect:
    """``preferred``, shrunk to fit ``available`` (with a margin) and centred on it."""
    width = min(preferred.width(), available.width() - 24)
    height = min(preferred.height(), available.height() - 48)
    rect = QRect(0, 0, max(width, 200), max(height, 200))
    rect.moveCenter(available.center())
    return rect


def place_window(window: QWidget, data_dir: DataDir) -> None:
    """Put ``window`` where it was last closed, or size a first window to fit the screen.

    A remembered place that is no longer on any screen (a monitor unplugged) is
    dropped for a fitted one.
    """
    saved = prefs(data_dir).value(GEOMETRY)
    if isinstance(saved, QByteArray) and window.restoreGeometry(saved):
        frame = window.frameGeometry()
        if any(s.availableGeometry().intersects(frame) for s in QGuiApplication.screens()):
            return
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is not None:
        window.setGeometry(fitted(screen.availableGeometry()))


def remembered_page(data_dir: DataDir) -> int | None:
    value = prefs(data_dir).value(PAGE)
    try:
        return None if value is None else int(str(value))
    except ValueError:
        return None


def remembered_group(data_dir: DataDir) -> str | None:
    value = prefs(data_dir).value(GROUP)
    return str(value) if value else None


def remember(window: QWidget, data_dir: DataDir, page: int, group: str) -> None:
    settings = prefs(data_dir)
    settings.setValue(GEOMETRY, window.saveGeometry())
    settings.setValue(PAGE, page)
    settings.setValue(GROUP, group)
    settings.sync()
