"""Handing files and folders to the desktop environment."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices


def open_folder(path: Path) -> None:
    """Show ``path`` in the platform's file manager."""
    QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
