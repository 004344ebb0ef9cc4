"""The "also related" list under the entry editor: the nearest memories by meaning.

Looked up on the executor thread after an entry is shown, so selecting stays
instant; a link opens that memory, clicked or reached with Tab and opened with
Enter. When semantic search is off, the list says
why instead.

Each memory takes one line, cut short with "…" to the pane's width: what the
list holds never widens the pane or takes height from the editor above it (a
memory of one 1,990-character word did both).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from core.model.entries import EntryFilter, Privacy
from core.recall.related import related
from core.semantic.embedding import unavailable_reason
from core.service import MemoryService
from desktop.widgets.ops import Executor

#: Memories listed, and the characters of each shown.
SHOWN = 5
PREVIEW_CHARS = 90


def related_preview(
    service: MemoryService, group: str, entry_id: str
) -> list[tuple[str, str]] | str:
    """(id, text) of the memories nearest ``entry_id``, or why there are none to show."""
    entry = service.get(group, entry_id)
    if entry.privacy is Privacy.SECRET:
        return "Secret memories are not compared with others."
    found = related(
        service.store_for(group),
        entry.id,
        entry.content,
        EntryFilter(privacy=(Privacy.PUBLIC, Privacy.PRIVATE)),
        limit=SHOWN,
        model_dir=service.config.embedding_model_dir,
    )
    if found is None:
        reason = unavailable_reason(service.config.embedding_model_dir) or "the model is missing"
        return f"Semantic search is off: {reason}"
    return [
        (r.hit.id, service.readable_content(r.hit.id, r.hit.privacy, r.hit.content)) for r in found
    ]


class RelatedList(QLabel):
    """Links to the memories most like the shown one.

    Signals:
        open_requested(str): the id of a memory the person clicked.
    """

    open_requested = Signal(str)

    def __init__(self, executor: Executor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("relatedList")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setOpenExternalLinks(False)
        # The pane's width decides how much of each memory shows, never the reverse.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.linkActivated.connect(self.open_requested.emit)
        # As the audit log's detail pane: Tab moves from link to link, Enter opens one.
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard
        )
        self.setAccessibleName("Also related")
        self.setAccessibleDescription("Memories close in meaning to the one shown")
        self._links(False)
        self._executor = executor
        self._showing: str | None = None
        #: The memories listed now: (id, text), drawn again when the width changes.
        self.found: list[tuple[str, str]] = []

    def show_for(self, group: str, entry_id: str | None) -> None:
        """Look up the relatives of ``entry_id`` (None clears the list)."""
        self._showing = entry_id
        self.found = []
        self._links(False)
        self.clear()
        if entry_id is None:
            return

        def task(service: MemoryService) -> list[tuple[str, str]] | str:
            return related_preview(service, group, entry_id)

        self._executor.submit(group, task, lambda found: self._show(entry_id, found))

    def _show(self, entry_id: str, found: list[tuple[str, str]] | str) -> None:
        if entry_id != self._showing:
            return  # the person moved on
        if isinstance(found, str):
            self._say(found)
        elif not found:
            self._say("No other memory is close in meaning.")
        else:
            self.setWordWrap(False)
            self.found = found
            self._links(True)
            self._draw()

    def _links(self, shown: bool) -> None:
        """A Tab stop only while it lists links: a sentence alone is read, not visited."""
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus if shown else Qt.FocusPolicy.NoFocus)

    def _say(self, text: str) -> None:
        self._links(False)
        self.setWordWrap(True)
        self.setText(f"<i>{html.escape(text)}</i>")

    def _draw(self) -> None:
        """One line a memory, cut short to the width the pane has now."""
        metrics = self.fontMetrics()
        bullet = "•\u00a0"
        room = self.contentsRect().width() - metrics.horizontalAdvance(bullet) - 2 * self.margin()
        lines = []
        for entry_id, text in self.found:
            words = " ".join(text.split())[:PREVIEW_CHARS]
            shown = metrics.elidedText(words, Qt.TextElideMode.ElideRight, max(0, room))
            lines.append(f'{bullet}<a href="{html.escape(entry_id)}">{html.escape(shown)}</a>')
        self.setText("<b>Also related</b><br>" + "<br>".join(lines))

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        # Reached by Tab, the first link (by Shift+Tab, the last) is ready for Enter,
        # rather than a stop on the list with no link chosen.
        reason = event.reason()
        tabbed = reason in (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason)
        if tabbed and self.found:
            super().focusNextPrevChild(reason == Qt.FocusReason.TabFocusReason)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.found and event.size().width() != event.oldSize().width():
            self._draw()
