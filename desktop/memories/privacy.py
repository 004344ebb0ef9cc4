"""The privacy marker: a small padlock painted at run time.

Painted rather than shipped as an image so it needs no icon theme (Linux
desktops differ, the offscreen platform has none) and scales with the screen.
Private entries get a grey lock; secret ones an amber lock with a keyhole, the
colour the app uses for things that need the person's attention.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QComboBox, QWidget

from core.model.entries import Privacy

_COLORS = {Privacy.PRIVATE: QColor("#5b6274"), Privacy.SECRET: QColor("#b26a00")}
#: Painted once per level; QIcon picks the size a view asks for.
_ICONS: dict[Privacy, QIcon] = {}


def privacy_label(privacy: Privacy) -> str:
    return privacy.value.capitalize()


def privacy_tooltip(privacy: Privacy) -> str:
    match privacy:
        case Privacy.PUBLIC:
            return "Public"
        case Privacy.PRIVATE:
            return "Private: encrypted on disk"
        case Privacy.SECRET:
            return "Secret: encrypted, hidden until you reveal it"


def privacy_box(parent: QWidget) -> QComboBox:
    """A choice of the three levels, each with its marker; item data is the :class:`Privacy`."""
    box = QComboBox(parent)
    box.setAccessibleName("Privacy")
    for privacy in Privacy:
        icon = lock_icon(privacy)
        box.addItem(icon or QIcon(), privacy_label(privacy), privacy)
    return box


def lock_icon(privacy: Privacy) -> QIcon | None:
    """The marker of ``privacy``; ``None`` for public entries (no marker at all)."""
    if privacy is Privacy.PUBLIC:
        return None
    icon = _ICONS.get(privacy)
    if icon is None:
        icon = QIcon()
        for size in (16, 32, 64):
            icon.addPixmap(_paint_lock(size, _COLORS[privacy], keyhole=privacy is Privacy.SECRET))
        _ICONS[privacy] = icon
    return icon


def _paint_lock(size: int, color: QColor, *, keyhole: bool) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    s = float(size)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    # The shackle: a half ring with short legs down into the body.
    pen = QPen(color, s * 0.11)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)
    painter.setPen(pen)
    shackle = QPainterPath(QPointF(s * 0.32, s * 0.50))
    shackle.lineTo(s * 0.32, s * 0.33)
    shackle.arcTo(QRectF(s * 0.32, s * 0.12, s * 0.36, s * 0.36), 180, -180)
    shackle.lineTo(s * 0.68, s * 0.50)
    painter.drawPath(shackle)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(color)
    painter.drawRoundedRect(QRectF(s * 0.18, s * 0.44, s * 0.64, s * 0.46), s * 0.08, s * 0.08)
    if keyhole:
        painter.setBrush(QColor("#ffffff"))
        painter.drawEllipse(QPointF(s * 0.5, s * 0.62), s * 0.07, s * 0.07)
        painter.drawRect(QRectF(s * 0.47, s * 0.62, s * 0.06, s * 0.15))
    painter.end()
    return pixmap
