"""Pages that refresh now if they are on screen, else when they are next shown."""

from __future__ import annotations

from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QWidget


class LazyPage(QWidget):
    """A page whose :meth:`refresh` waits until the page is visible.

    A change calls :meth:`_invalidate`; a hidden page only notes that it is
    stale and catches up in :meth:`showEvent`. ``reload=True`` asks for a full
    reload (another group, other filters) rather than a refresh of what is
    shown; :meth:`refresh` begins with :meth:`_begin_refresh` to learn which.

    Args:
        parent: the parent widget.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stale = True
        self._reload = True

    def refresh(self) -> None:
        raise NotImplementedError

    def _invalidate(self, *, reload: bool = False) -> None:
        """Refresh now if the page is on screen, else when it is next shown."""
        self._stale = True
        self._reload = self._reload or reload
        if self.isVisible():
            self.refresh()

    def _begin_refresh(self) -> bool:
        """Mark the page fresh; whether a full reload was asked for (clearing the ask)."""
        self._stale = False
        reload, self._reload = self._reload, False
        return reload

    def showEvent(self, event: QShowEvent) -> None:
        if self._stale:
            self.refresh()
        super().showEvent(event)
