"""The window's own preferences: theme, size and place, the page and group last shown.

They live in ``<data dir>/desktop.ini`` (QSettings, INI format) beside the data
they describe, not in ``config.json``: agents never read them, and a second data
dir (a test, a work profile) keeps its own window without touching the first's.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings

from core.storage.paths import DataDir

FILE_NAME = "desktop.ini"

THEME = "appearance/theme"
GEOMETRY = "window/geometry"
PAGE = "window/page"
GROUP = "window/group"
KEEP_SERVING = "window/keep_serving"


def prefs(data_dir: DataDir) -> QSettings:
    """The preferences of the window on ``data_dir``."""
    return QSettings(str(data_dir.root / FILE_NAME), QSettings.Format.IniFormat)
