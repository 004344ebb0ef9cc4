"""The version chain of a memory: every edit is a new entry that supersedes the last."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from core.model.entries import MemoryEntry
from desktop.memories.values import local_time, source_text


def history_html(chain: Sequence[MemoryEntry], selected: str) -> str:
    """The chain, newest first, as HTML; every stored string is escaped."""
    blocks = []
    for number, entry in reversed(list(enumerate(chain, start=1))):
        when = local_time(entry.provenance.created_at)
        state = (
            "current"
            if entry.superseded_by is None
            else f"replaced {local_time(entry.superseded_at)}"
        )
        marker = " (shown)" if entry.id == selected else ""
        tags = ", ".join(entry.tags) or "no tags"
        blocks.append(
            f"<h3>Version {number}{html.escape(marker)}</h3>"
            f"<p><b>{html.escape(entry.type.value)}</b> · {html.escape(when)} · "
            f"{html.escape(state)}<br/>"
            f"<small>{html.escape(source_text(entry))} · {html.escape(tags)} · "
            f"{html.escape(entry.id)}</small></p>"
            f"<blockquote>{html.escape(entry.content).replace(chr(10), '<br/>')}</blockquote>"
        )
    return "<hr/>".join(blocks)


class HistoryDialog(QDialog):
    """Shows the chain of versions through one entry, newest first.

    Args:
        chain: the versions, oldest first (``MemoryService.history``).
        selected: the id the person opened it from.
        parent: the parent widget.
    """

    def __init__(
        self, chain: Sequence[MemoryEntry], selected: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"History: {len(chain)} version" + ("s" if len(chain) != 1 else ""))
        self.resize(620, 480)
        self.view = QTextBrowser(self)
        self.view.setOpenLinks(False)
        self.view.setHtml(history_html(chain, selected))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        layout.addWidget(buttons)
