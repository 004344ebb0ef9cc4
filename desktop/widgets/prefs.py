"""The window's own preferences: theme, size and place, the page and group last shown.

They live in ``<data dir>/desktop.ini`` (QSettings, INI format) beside the data
they describe, not in ``config.json``: agents never read them, and a second data
dir (a test, a work profile) keeps its own window without touching the first's.
Like every file in the data dir they are owner-only: QSettings writes with the
process umask (often 0644) but keeps the mode of a file that is there, so the file
is made 0600 before QSettings first writes it, and an older one is tightened.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QSettings

from core.storage.file_safety import tighten
from core.storage.paths import DataDir

FILE_NAME = "desktop.ini"

THEME = "appearance/theme"
GEOMETRY = "window/geometry"
PAGE = "window/page"
GROUP = "window/group"
KEEP_SERVING = "window/keep_serving"


def prefs(data_dir: DataDir) -> QSettings:
    """The preferences of the window on ``data_dir``."""
    path = data_dir.root / FILE_NAME
    _owner_only(path)
    return QSettings(str(path), QSettings.Format.IniFormat)


def _owner_only(path: Path) -> None:
    """Create ``path`` empty and 0600 if it is not there; tighten it and the lock file
    QSettings leaves beside it after a crash if they are."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        tighten(path)
    except OSError:
        return  # a data dir that cannot be written: QSettings cannot save there either
    tighten(path.with_name(path.name + ".lock"))
