"""Telling the person something, from code that is not a widget.

Modelled on qutebrowser's ``utils/message.py``: any module calls
:func:`info`, :func:`warning` or :func:`error`; the main window connects to
:data:`bridge` and shows the text. Questions that need an answer (delete this?)
go through :func:`confirm` and :func:`ask_text`, plain module functions so
tests can replace them with ``monkeypatch.setattr(messages, "confirm", ...)``.

Every message is logged too, but the log never holds what a person wrote: quote
it (a memory, a claim, a tag, a title, a topic forgotten) in “curly quotes”, and
the log line has “…” in its place.
"""

from __future__ import annotations

import logging
import re
from enum import StrEnum

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QInputDialog, QMessageBox, QWidget

from core.model.errors import AmbryError

log = logging.getLogger(__name__)


class Level(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class MessageBridge(QObject):
    """Carries messages to whichever widget shows them.

    Signals:
        shown(str, str): a message to show: its :class:`Level` value and text.
    """

    shown = Signal(str, str)

    def show(self, level: Level, text: str) -> None:
        logged = unquoted(text)
        match level:
            case Level.ERROR:
                log.error("%s", logged)
            case Level.WARNING:
                log.warning("%s", logged)
            case Level.INFO:
                log.info("%s", logged)
        self.shown.emit(level.value, text)


_QUOTED = re.compile(r"“[^”]*”?")


def unquoted(text: str) -> str:
    """``text`` with each “quotation” (a person's words) as “…”, for the log."""
    return _QUOTED.sub("“…”", text)


#: The one bridge; the main window listens to it.
bridge = MessageBridge()


def info(text: str) -> None:
    bridge.show(Level.INFO, text)


def warning(text: str) -> None:
    bridge.show(Level.WARNING, text)


def error(text: str) -> None:
    bridge.show(Level.ERROR, text)


def report(exc: AmbryError) -> None:
    """Show an error a person can act on (an :class:`AmbryError`) as one line."""
    error(exc.message)


def confirm(
    parent: QWidget | None, title: str, question: str, action: str, keep: str | None = None
) -> bool:
    """Ask a yes/no question; ``action`` labels the button that says yes, ``keep`` the
    one that says no (Cancel unless given).

    The safe answer (no) is the default, so a stray Enter never destroys data.
    """
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Question)
    box.setWindowTitle(title)
    box.setText(question)
    yes = box.addButton(action, QMessageBox.ButtonRole.DestructiveRole)
    if keep is None:
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    else:
        cancel = box.addButton(keep, QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(cancel)
    box.exec()
    return box.clickedButton() is yes


def ask_text(parent: QWidget | None, title: str, label: str) -> str | None:
    """Ask for one line of text; ``None`` when the person cancels."""
    text, ok = QInputDialog.getText(parent, title, label)
    return text.strip() if ok and text.strip() else None
