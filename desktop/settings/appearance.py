"""Settings → Window: the theme, and whether closing the window keeps agents served.

These are the window's preferences (``desktop.ini``), not Ambry's settings: they
apply at once, need no Save, and agents never see them.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QWidget

from core.storage.paths import DataDir
from desktop.widgets.prefs import KEEP_SERVING, THEME, prefs
from desktop.widgets.theme import Theme, theme_manager


def theme_choice(data_dir: DataDir) -> Theme:
    """The theme chosen for ``data_dir``'s window (the system's by default)."""
    value = str(prefs(data_dir).value(THEME, Theme.SYSTEM.value))
    return Theme(value) if value in Theme.__members__.values() else Theme.SYSTEM


def keeps_serving(data_dir: DataDir) -> bool:
    """Whether closing the window leaves Ambry serving agents from the tray (default yes)."""
    return str(prefs(data_dir).value(KEEP_SERVING, "true")).lower() == "true"


class WindowBox(QGroupBox):
    """The theme and the close behaviour, applied and remembered as they change.

    Args:
        data_dir: whose window preferences these are.
        parent: the parent widget.
    """

    def __init__(self, data_dir: DataDir, parent: QWidget | None = None) -> None:
        super().__init__("Window", parent)
        self._data_dir = data_dir
        self.theme_box = QComboBox(self)
        self.theme_box.setAccessibleName("Theme")
        for theme in Theme:
            self.theme_box.addItem(theme.label, theme.value)
        self.theme_box.setCurrentIndex(self.theme_box.findData(theme_choice(data_dir).value))
        self.keep_serving = QCheckBox("Keep serving agents when the window is closed", self)
        self.keep_serving.setChecked(keeps_serving(data_dir))
        hint = QLabel(
            "Ambry stays in the system tray; quit it from the tray icon's menu or with Ctrl+Q.",
            self,
        )
        hint.setObjectName("hint")
        hint.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Theme", self.theme_box)
        form.addRow("", self.keep_serving)
        form.addRow("", hint)
        self.theme_box.currentIndexChanged.connect(self._on_theme)
        self.keep_serving.toggled.connect(self._on_keep)

    def _on_theme(self) -> None:
        theme = Theme(self.theme_box.currentData())
        prefs(self._data_dir).setValue(THEME, theme.value)
        theme_manager().apply(theme)

    def _on_keep(self, keep: bool) -> None:
        prefs(self._data_dir).setValue(KEEP_SERVING, "true" if keep else "false")
