"""What a list page shows when it has nothing to list: what belongs here and how it gets here."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

#: Wide enough for two or three lines of advice, narrow enough to read at a glance;
#: narrower where the page is (a 640x400 window), rather than widening it.
BODY_WIDTH = 600


def placeholder(
    title: str, body_html: str, parent: QWidget, button: QPushButton | None = None
) -> QWidget:
    """A centred title, a few lines of rich text and optionally a button.

    The body is up to :data:`BODY_WIDTH` wide and centred by stretches, not by an
    alignment flag: an aligned word-wrapped label is sized by its plain size hint
    and its last lines are clipped. The title wraps too on a narrow page.
    """
    page = QWidget(parent)
    heading = QLabel(title, page)
    heading.setObjectName("emptyTitle")
    heading.setWordWrap(True)
    heading.setAlignment(Qt.AlignmentFlag.AlignHCenter)
    body = QLabel(body_html, page)
    body.setObjectName("hint")
    body.setTextFormat(Qt.TextFormat.RichText)
    body.setWordWrap(True)
    body.setMaximumWidth(BODY_WIDTH)
    body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    layout = QVBoxLayout(page)
    layout.addStretch(1)
    layout.addWidget(heading)
    layout.addSpacing(8)
    row = QHBoxLayout()
    row.addStretch(1)
    # The body takes the width up to its maximum; the stretches only what is left.
    row.addWidget(body, 100)
    row.addStretch(1)
    layout.addLayout(row)
    if button is not None:
        button.setParent(page)
        layout.addSpacing(12)
        layout.addWidget(button, 0, Qt.AlignmentFlag.AlignHCenter)
    layout.addStretch(2)
    return page
