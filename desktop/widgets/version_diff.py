"""The right-hand side of a version history: what to compare with, the diff, and Restore.

Memory versions and handoff versions show their diffs the same way: a "Show"
choice (what this version changed, or how it differs from the current one), a
read-only view of the diff and a Restore button. The lists of versions beside it
differ, so each history lays this pane out next to its own.
"""

from __future__ import annotations

from enum import IntEnum

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets.flow import FlowLayout

#: Diff colours that read on a light and on a dark background alike: ``add`` and
#: ``del`` mark the words or lines added and taken away.
DIFF_CSS = """
pre { margin: 0; }
.add { background: rgba(46, 160, 67, 0.28); }
.del { background: rgba(248, 81, 73, 0.28); }
.hunk { color: #8b93a5; }
.hint { color: #8b93a5; }
.meta { margin: 0 0 6px 0; }
"""


class Compare(IntEnum):
    """What the diff of a version is taken against."""

    PREVIOUS = 0
    CURRENT = 1


class VersionDiffPane(QWidget):
    """ "Show [what to compare] … Restore this version…" over the diff view.

    Args:
        name: the diff view's object name (for styles and tests).
        restore_tip: the Restore button's tooltip (what a restore does).
        parent: the parent widget.
    """

    def __init__(self, name: str, restore_tip: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.compare_box = QComboBox(self)
        self.compare_box.setAccessibleName("Compare with")
        self.compare_box.addItem("Changes made by this version", Compare.PREVIOUS)
        self.compare_box.addItem("Difference from the current version", Compare.CURRENT)
        self.restore_button = QPushButton("Restore this version…", self)
        self.restore_button.setToolTip(restore_tip)
        self.view = QTextBrowser(self)
        self.view.setObjectName(name)
        self.view.setAccessibleName("Difference between versions")
        self.view.setOpenLinks(False)
        self.view.document().setDefaultStyleSheet(DIFF_CSS)
        show = QHBoxLayout()
        show.addWidget(QLabel("Show", self))
        show.addWidget(self.compare_box)
        # In a narrow pane Restore goes under the choice rather than widening the page.
        row = FlowLayout()
        row.addLayout(show)
        row.addStretch()
        row.addWidget(self.restore_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.view, 1)

    def compared_with(self) -> Compare:
        return Compare(self.compare_box.currentData())
