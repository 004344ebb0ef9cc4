"""Attachment receipts as rows: the columns, the state badge and how a receipt reads in detail.

A receipt whose source changed, went missing or cannot be read is a
*verification gap*: its excerpt describes a file that may no longer be there.
The badge and the detail say so in words and in colour; nothing here ever
presents a gap as the current state of the file.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from core.attachments.receipts import Link, Receipt, SourceState, human_size
from desktop.memories.values import local_time
from desktop.widgets.record_model import Column, RecordModel

#: The role under which the state column answers with the receipt's :class:`SourceState`.
STATE_ROLE = Qt.ItemDataRole.UserRole + 2

#: Badge colours: (background, text). Gaps are amber (changed) or red (gone, unreadable).
_COLOURS: dict[SourceState, tuple[str, str]] = {
    SourceState.VERIFIED: ("#e6f4ea", "#1e6b34"),
    SourceState.CHANGED: ("#fff1d6", "#8a5a00"),
    SourceState.MISSING: ("#fdecea", "#b42318"),
    SourceState.UNREADABLE: ("#fdecea", "#b42318"),
}


def badge_text(state: SourceState) -> str:
    """The state badge: a gap is marked as one, never shown like a current file."""
    match state:
        case SourceState.VERIFIED:
            return "✓ verified"
        case SourceState.CHANGED | SourceState.MISSING | SourceState.UNREADABLE:
            return f"⚠ {state.value}"


def gap_explanation(state: SourceState) -> str:
    """What a person should make of the state, in one sentence."""
    match state:
        case SourceState.VERIFIED:
            return "The file at the source path has the bytes that were recorded."
        case SourceState.CHANGED:
            return (
                "Verification gap: the file at the source path has changed since it was "
                "attached. The excerpt and observation describe the old file."
            )
        case SourceState.MISSING:
            return (
                "Verification gap: nothing is at the source path any more (moved or "
                "deleted). The excerpt and observation cannot be checked."
            )
        case SourceState.UNREADABLE:
            return (
                "Verification gap: something is at the source path but it cannot be read "
                "as a file. The excerpt and observation cannot be checked."
            )


RECEIPT_COLUMNS: tuple[Column[Receipt], ...] = (
    Column("State", lambda r: badge_text(r.state), lambda r: r.state_line, width=13),
    Column("File", lambda r: r.filename, lambda r: r.id, width=22),
    Column("Kind", lambda r: r.kind.value, lambda r: r.mime_type, width=9),
    Column("Size", lambda r: human_size(r.size), lambda r: f"{r.size:,} bytes", True, 9),
    Column("Source path", lambda r: r.source_path, lambda r: r.source_path, width=0),
    Column("Checked", lambda r: local_time(r.checked_at), width=18),
    Column("Links", lambda r: str(r.link_count), numeric=True, width=5),
)


class ReceiptsModel(RecordModel[Receipt]):
    """The group's receipts, most recently linked first.

    Args:
        parent: the owning QObject.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(RECEIPT_COLUMNS, lambda r: r.id, page=200, parent=parent)

    def extra_data(self, record: Receipt, column: int, role: int) -> Any:
        if column != 0:
            return None
        if role == STATE_ROLE:
            return record.state.value
        if role == Qt.ItemDataRole.ForegroundRole:
            return QBrush(QColor(_COLOURS[record.state][1]))
        return None


class BadgeDelegate(QStyledItemDelegate):
    """Paints the state column as a rounded badge in the state's colours.

    Args:
        parent: the owning widget (the table).
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)

    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        value = index.data(STATE_ROLE)
        if value is None:
            super().paint(painter, option, index)
            return
        state = SourceState(value)
        # The row's selection and alternating background first, without the text.
        plain = QStyleOptionViewItem(option)
        self.initStyleOption(plain, index)
        plain.text = ""
        # The badge marks the cell; a focus frame around it would only add noise.
        plain.state &= ~QStyle.StateFlag.State_HasFocus
        style = plain.widget.style() if plain.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, plain, painter, plain.widget)
        text = str(index.data(Qt.ItemDataRole.DisplayRole))
        metrics = option.fontMetrics
        height = metrics.height() + 4
        width = metrics.horizontalAdvance(text) + 16
        rect = QRect(option.rect.x() + 6, 0, width, height)
        rect.moveCenter(QPoint(rect.center().x(), option.rect.center().y()))
        back, fore = _COLOURS[state]
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(back))
        painter.drawRoundedRect(rect, height / 2, height / 2)
        painter.setPen(QColor(fore))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    def sizeHint(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> QSize:
        hint = super().sizeHint(option, index)
        return QSize(hint.width() + 22, hint.height())


# -- the detail pane ----------------------------------------------------------------

_MAX_LINKS = 8


def _row(label: str, value: str) -> str:
    return f"<tr><td class='k'>{html.escape(label)}</td><td>{html.escape(value)}</td></tr>"


def receipt_html(receipt: Receipt, sightings: list[Link], titles: dict[str, str]) -> str:
    """The receipt's facts, its state in words, its excerpt and where it was seen.

    Args:
        sightings: the receipt's links, oldest first.
        titles: thread titles by id, for the links.
    """
    back, fore = _COLOURS[receipt.state]
    state = (
        f"<p style='background:{back}; color:{fore}; padding:6px'>"
        f"<b>{html.escape(badge_text(receipt.state))}</b> — "
        f"{html.escape(gap_explanation(receipt.state))}<br/>"
        f"<small>{html.escape(receipt.state_line)}</small></p>"
    )
    facts = "".join(
        (
            _row("Receipt", receipt.id),
            _row("Type", f"{receipt.kind.value} ({receipt.mime_type})"),
            _row("Size", f"{human_size(receipt.size)} ({receipt.size:,} bytes)"),
            _row("Source", receipt.source_path),
            _row("SHA-256", receipt.sha256),
            _row("First attached", local_time(receipt.created_at)),
            _row("Last attached", local_time(receipt.updated_at)),
            _row("Last checked", local_time(receipt.checked_at)),
        )
    )
    parts = [
        f"<h3>{html.escape(receipt.filename)}</h3>",
        state,
        f"<table cellspacing='0' cellpadding='2'>{facts}</table>",
    ]
    stale = " (as recorded; may be stale)" if receipt.state.is_gap else ""
    if receipt.excerpt:
        parts.append(
            f"<h4>Excerpt{stale}</h4><blockquote>{html.escape(receipt.excerpt)}</blockquote>"
        )
    else:
        parts.append("<p class='hint'>No excerpt: only text files keep one.</p>")
    if receipt.observation:
        parts.append(
            f"<h4>Last observation{stale}</h4>"
            f"<blockquote>{html.escape(receipt.observation)}</blockquote>"
        )
    if sightings:
        items = []
        for link in sightings[-_MAX_LINKS:][::-1]:
            where = titles.get(link.thread_id or "", "no thread")
            turn = f", turn {link.turn}" if link.turn else ""
            seen = f"{local_time(link.linked_at)} — {where}{turn}"
            items.append(
                f"<li>{html.escape(seen)}<br/><small>{html.escape(link.source_path)}</small></li>"
            )
        more = len(sightings) - _MAX_LINKS
        tail = f"<p class='hint'>and {more} earlier</p>" if more > 0 else ""
        parts.append(f"<h4>Seen {len(sightings)} time(s)</h4><ul>{''.join(items)}</ul>{tail}")
    return "".join(parts)


# Colours that read on the light and the dark theme alike: the text takes the
# palette's colour, so a background is a translucent tint, never a fixed light one.
DETAIL_CSS = """
h3 { font-size: 13pt; margin: 0 0 6px 0; }
h4 { font-size: 10pt; margin: 10px 0 2px 0; color: #8b93a5; }
td.k { color: #6b7280; padding-right: 10px; }
blockquote { background: rgba(127, 127, 127, 46); margin: 2px 0; padding: 4px 8px; }
.hint { color: #6b7280; }
li { margin-bottom: 3px; }
"""


def source_folder(receipt: Receipt) -> Path:
    """The folder the receipt's source path is in (it may no longer exist)."""
    return Path(receipt.source_path).parent
