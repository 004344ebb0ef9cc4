"""Light and dark: the stylesheet, the palette and following the system's choice.

``resources/style.qss`` is written for the light theme. The dark one is the
same sheet with each light colour swapped for its dark counterpart
(:data:`DARK_COLOURS`), so a rule is written once and both themes keep it.
The Fusion palette is set to match, for what the sheet does not draw (text in
views, popups, scroll bars, links).
"""

from __future__ import annotations

import re
from enum import StrEnum
from importlib import resources

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication


class Theme(StrEnum):
    """What the person chose in Settings; ``SYSTEM`` follows the desktop."""

    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"

    @property
    def label(self) -> str:
        return "Follow the system" if self is Theme.SYSTEM else self.value.capitalize()


#: What radio buttons and check boxes take as their window colour on the dark theme:
#: Fusion outlines them in it, made darker, which reads on the dark window.
INDICATOR_OUTLINE_DARK = "#a0a8b8"

#: Light colour of the sheet → its dark counterpart (lower case, as written there).
DARK_COLOURS = {
    "#f6f7f9": "#16181d",  # window
    "#ffffff": "#20232b",  # surfaces: tables, fields, buttons, editor
    "#fafbfc": "#23262f",  # alternate rows
    "#dde1e7": "#343946",  # borders
    "#cfd4dc": "#3f4553",  # field borders
    "#eef0f4": "#1b1e25",  # headers, status bar
    "#f3f4f7": "#2a2e38",  # hover
    "#f3f4f6": "#1d2027",  # disabled surface
    "#f1f3f6": "#1d2027",  # read-only surface
    "#a0a6b2": "#6b7280",  # disabled text
    "#4a5163": "#b7bdca",  # secondary text
    "#5b6274": "#a3aabb",
    "#6b7280": "#9aa1b0",  # hints
    "#1f2430": "#e6e9ef",  # primary text (the sidebar keeps its own colour, below)
    "#fbe7c2": "#5a4215",  # selection, checked buttons
    "#e6f4ea": "#1c3a26",  # chips
    "#1e6b34": "#7fd49a",
    "#fff1d6": "#3d2f12",
    "#8a5a00": "#f0c36b",
    "#eceef2": "#2c303a",
    "#e7effd": "#1c2b4a",
    "#1d4ed8": "#8fb1ff",
    "#fdecea": "#3e1d1b",  # banner
    "#f5c2bd": "#6b2b26",
    "#fff5e0": "#3a2e14",
    "#f1d08a": "#6b5520",
    "#b42318": "#ff8a80",  # danger
    "#e4c99b": "#6b5a3a",
}

#: Kept as they are in both themes: the sidebar and the snippet are dark already.
_KEEP = ("#sidebar", "#snippet", "#appTitle", "#nav")

_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


def light_sheet() -> str:
    return (resources.files("resources") / "style.qss").read_text(encoding="utf-8")


def dark_sheet(light: str) -> str:
    """``light`` with every colour swapped, except in the rules of always-dark parts."""
    out = []
    for rule in re.split(r"(?<=})", light):
        if any(k in rule.split("{")[0] for k in _KEEP):
            out.append(rule)
            continue
        out.append(_HEX.sub(lambda m: DARK_COLOURS.get(m.group(0).lower(), m.group(0)), rule))
    return "".join(out)


def dark_palette() -> QPalette:
    p = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    colours = {
        role.Window: "#16181d",
        role.WindowText: "#e6e9ef",
        role.Base: "#20232b",
        role.AlternateBase: "#23262f",
        role.Text: "#e6e9ef",
        role.Button: "#20232b",
        role.ButtonText: "#e6e9ef",
        role.BrightText: "#ffffff",
        role.Highlight: "#8a6220",
        role.HighlightedText: "#ffffff",
        role.Link: "#f3c77a",
        role.LinkVisited: "#e0b060",
        role.ToolTipBase: "#2a2e38",
        role.ToolTipText: "#e6e9ef",
        role.PlaceholderText: "#7d8494",
        role.Mid: "#343946",
        role.Dark: "#101216",
        role.Light: "#3a3f4c",
    }
    for r, c in colours.items():
        p.setColor(r, QColor(c))
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(group.Disabled, r, QColor("#6b7280"))
    return p


def light_palette() -> QPalette:
    p = QPalette()
    p.setColor(QPalette.ColorRole.Link, QColor("#a3620a"))
    p.setColor(QPalette.ColorRole.Highlight, QColor("#fbe7c2"))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor("#1f2430"))
    return p


def system_is_dark() -> bool:
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


class ThemeManager(QObject):
    """Applies the chosen theme to the app and re-applies it when the system's changes.

    Args:
        app: the application to style.
        choice: the person's choice.

    Signals:
        applied(bool): a theme was applied; whether it is dark.
    """

    applied = Signal(bool)

    def __init__(self, app: QApplication, choice: Theme = Theme.SYSTEM) -> None:
        super().__init__(app)
        self._app = app
        self._light = light_sheet()
        self._dark = dark_sheet(self._light)
        self.choice = choice
        self.dark = False
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_system)
        self.apply(choice)

    def apply(self, choice: Theme) -> None:
        self.choice = choice
        dark = system_is_dark() if choice is Theme.SYSTEM else choice is Theme.DARK
        self.dark = dark
        palette = dark_palette() if dark else light_palette()
        self._app.setPalette(palette)
        self._app.setStyleSheet(self._dark if dark else self._light)
        # After the sheet, which resets per-class palettes. Fusion outlines a radio
        # button or check box in the window colour made darker, which on the dark
        # theme's window is all but black on black.
        indicators = QPalette(self._app.palette())  # every role resolved
        if dark:
            indicators.setColor(QPalette.ColorRole.Window, QColor(INDICATOR_OUTLINE_DARK))
        for widget_class in ("QRadioButton", "QCheckBox"):
            # PySide6 takes the class name as str; its stubs say bytes.
            QApplication.setPalette(indicators, widget_class)  # type: ignore[arg-type]
        self.applied.emit(dark)

    def _on_system(self, _scheme: Qt.ColorScheme) -> None:
        if self.choice is Theme.SYSTEM:
            self.apply(Theme.SYSTEM)


def theme_manager() -> ThemeManager:
    """The app's theme manager, made on first use (light until a choice is applied)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    found = app.findChild(ThemeManager)
    return found if isinstance(found, ThemeManager) else ThemeManager(app, Theme.LIGHT)
