"""The window's pages other than the memory list and review, built when first used.

The window opens on the memory list; building every other page (and importing
its module) at launch cost about a fifth of the time to the first rows at
100,000 memories. Each is built the first time it is shown or asked for, in
place of an empty placeholder, so the stack keeps one page per :class:`Nav` item.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from PySide6.QtWidgets import QStackedWidget, QWidget

from desktop.memories.actions import MemoryActions
from desktop.shell.nav import Nav
from desktop.widgets.ops import Executor
from desktop.widgets.watch import AppState

if TYPE_CHECKING:
    from desktop.server.agent_server import AgentServer

P = TypeVar("P", bound=QWidget)


class PageSlot(Generic[P]):
    """A window attribute that builds its page on first access (``window.page(item)``)."""

    def __init__(self, item: Nav) -> None:
        self.item = item

    def __get__(self, window: Any, owner: type | None = None) -> P:
        return cast(P, window.page(self.item))


def build_page(
    item: Nav,
    state: AppState,
    executor: Executor,
    server: AgentServer | None,
    socket_path: Path,
    commands: MemoryActions,
) -> QWidget:
    """A new page for ``item`` (not the memory list or review: the window builds those)."""
    match item:
        case Nav.BRIEF:
            from desktop.brief.view import BriefPage

            return BriefPage(state, commands)
        case Nav.ATTACHMENTS:
            from desktop.attachments.view import AttachmentsPage

            return AttachmentsPage(state, executor)
        case Nav.THREADS:
            from desktop.threads.view import ThreadsPage

            return ThreadsPage(state, executor)
        case Nav.AUDIT:
            from desktop.audit.view import AuditPage

            return AuditPage(state)
        case Nav.SETTINGS:
            from desktop.settings.view import SettingsPage

            return SettingsPage(state, executor, socket_path)
        case Nav.CONNECT:
            from desktop.connect.view import ConnectPage

            return ConnectPage(state, server, socket_path)
        case Nav.CLAIMS:
            from desktop.claims.view import ClaimsPage

            return ClaimsPage(state, executor, commands)
        case Nav.LAYERS:
            from desktop.layers.view import LayersPage

            return LayersPage(state)
        case Nav.TRASH:
            from desktop.trash.view import TrashPage

            return TrashPage(state, commands.jobs)
    raise ValueError(f"the {item.label} page is built with the window")


def put_in_place(stack: QStackedWidget, item: Nav, page: QWidget) -> None:
    """Put ``page`` where ``item``'s placeholder is, keeping the page on screen."""
    placeholder = stack.widget(item)
    current = stack.currentIndex()
    stack.insertWidget(item, page)
    if placeholder is not None:
        stack.removeWidget(placeholder)
        placeholder.deleteLater()
    stack.setCurrentIndex(current)
