"""The tray icon: Ambry keeps serving agents while its window is closed."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon


class Tray(QObject):
    """A tray icon with Show and Quit, and a line saying how many agents are connected.

    Args:
        icon: the app icon.
        parent: the owning QObject (the window).

    Signals:
        show_requested(): the person asked for the window.
        quit_requested(): the person asked to quit (the socket closes).
    """

    show_requested = Signal()
    quit_requested = Signal()

    def __init__(self, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.icon = QSystemTrayIcon(icon, self)
        self.icon.setToolTip("Ambry")
        self.menu = QMenu()
        self.status_action = QAction("No agents connected", self)
        self.status_action.setEnabled(False)
        self.show_action = QAction("Show Ambry", self)
        self.quit_action = QAction("Quit Ambry", self)
        self.menu.addAction(self.status_action)
        self.menu.addSeparator()
        self.menu.addAction(self.show_action)
        self.menu.addAction(self.quit_action)
        self.icon.setContextMenu(self.menu)
        self.show_action.triggered.connect(self.show_requested)
        self.quit_action.triggered.connect(self.quit_requested)
        self.icon.activated.connect(self._on_activated)
        self._told = False

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def set_status(self, text: str) -> None:
        self.status_action.setText(text)
        self.icon.setToolTip(f"Ambry: {text}")

    def tell_once(self) -> None:
        """Say, the first time only, that closing the window did not stop Ambry."""
        if not self._told and QSystemTrayIcon.supportsMessages():
            self.icon.showMessage(
                "Ambry is still serving agents",
                "Your agents keep their memory. Quit from this icon's menu.",
                QSystemTrayIcon.MessageIcon.Information,
                4000,
            )
        self._told = True

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.show_requested.emit()
