"""How the memory page is arranged: filters on top, the list beside the detail, counts below.

Where the two do not fit side by side (a 1280x800 screen at 200 % leaves a
640x400 window), the detail goes under the list and the page scrolls down,
rather than sideways with the editor's boxes and buttons cut off.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.memories.editor import FORM_WIDTH
from desktop.widgets.stacking import stack_when_narrow

#: The narrowest the list gets beside the editor.
LIST_WIDTH = 320
#: The list's height when the editor is under it: a few rows.
STACKED_LIST_HEIGHT = 160


def arrange(
    page: QWidget,
    filters: QWidget,
    table: QTableView,
    editor: QWidget,
    related: QWidget,
    progress: QWidget,
) -> tuple[QLabel, QPushButton]:
    """Lay ``page`` out, a bulk change's ``progress`` under the list; returns the count
    label and the "Delete all matching" button it adds."""
    count_label = QLabel(page)
    count_label.setObjectName("hint")
    delete_matching = QPushButton("Delete all matching…", page)
    delete_matching.setObjectName("danger")
    delete_matching.setToolTip(
        "Delete every memory the search and filters match (asks first, Ctrl+Z undoes)"
    )
    delete_matching.setEnabled(False)

    splitter = QSplitter(Qt.Orientation.Horizontal, page)
    splitter.addWidget(table)
    side = QWidget(page)
    side_layout = QVBoxLayout(side)
    side_layout.setContentsMargins(0, 0, 0, 0)
    side_layout.addWidget(editor, 1)
    side_layout.addWidget(related)
    splitter.addWidget(side)
    # Both sides give way as the window narrows, the list less than the editor,
    # so on a small screen the list keeps room to read its rows. The editor is as
    # narrow as what it shows allows: the form its fields and buttons, the hint
    # shown when nothing is selected less, leaving the list the rest.
    splitter.setStretchFactor(0, 3)
    splitter.setStretchFactor(1, 1)
    splitter.setChildrenCollapsible(False)
    splitter.setSizes([800, 380])
    table.setMinimumWidth(LIST_WIDTH)
    # As wide as the editor's form needs even while it shows the narrower hint,
    # so selecting a memory does not move the editor under the list.
    stack_when_narrow(page, splitter, second_width=FORM_WIDTH, stacked_height=STACKED_LIST_HEIGHT)
    layout = QVBoxLayout(page)
    layout.addWidget(filters)
    layout.addWidget(splitter, 1)
    bottom = QHBoxLayout()
    bottom.addWidget(count_label)
    bottom.addWidget(delete_matching)
    bottom.addWidget(progress, 1)
    bottom.addStretch(1)
    layout.addLayout(bottom)
    return count_label, delete_matching
