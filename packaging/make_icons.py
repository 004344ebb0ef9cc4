"""Draw Ambry's application icon at every size the platforms ask for.

An ambry is a cupboard: two amber doors on a dark tile. Run it after changing the
design; the PNGs it writes are committed under resources/icons/.

Usage: python packaging/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPainterPath

SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
OUT = Path(__file__).resolve().parents[1] / "resources" / "icons"
TILE = QColor("#1f2433")
AMBER = QColor("#e8b04b")
AMBER_DARK = QColor("#b9832a")


def draw(size: int) -> QImage:
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = float(size)
    tile = QPainterPath()
    tile.addRoundedRect(QRectF(0, 0, s, s), s * 0.2, s * 0.2)
    p.fillPath(tile, TILE)
    # The cupboard body, then two doors with a gap and small knobs.
    body = QRectF(s * 0.2, s * 0.16, s * 0.6, s * 0.68)
    frame = QPainterPath()
    frame.addRoundedRect(body, s * 0.05, s * 0.05)
    p.fillPath(frame, AMBER_DARK)
    gap = max(1.0, s * 0.03)
    inset = s * 0.045
    door_w = (body.width() - 2 * inset - gap) / 2
    for i in range(2):
        left = body.left() + inset + i * (door_w + gap)
        door = QPainterPath()
        door.addRoundedRect(
            QRectF(left, body.top() + inset, door_w, body.height() - 2 * inset),
            s * 0.025,
            s * 0.025,
        )
        p.fillPath(door, AMBER)
    if size >= 24:
        knob = max(1.5, s * 0.035)
        for x in (body.center().x() - gap - knob * 1.2, body.center().x() + gap + knob * 0.2):
            p.setBrush(TILE)
            p.setPen(Qt.PenStyle.NoPen)
            p.drawEllipse(QRectF(x, body.center().y() - knob / 2, knob, knob))
    p.end()
    return image


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    OUT.mkdir(parents=True, exist_ok=True)
    for size in SIZES:
        target = OUT / f"ambry-{size}.png"
        if not draw(size).save(str(target)):
            print(f"error: could not write {target}", file=sys.stderr)
            return 1
    del app
    print(f"wrote {len(SIZES)} icons to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
