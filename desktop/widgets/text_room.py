"""How wide a line edit must be for a text to show whole, as the style draws it.

A placeholder that does not fit is cut with "…" ("Search memor…"). The room
for it is the box's width less the style's frame and padding (which a style
sheet sets) and the margins the line edit keeps inside them; :func:`width_for`
takes them all from the style, so it holds for any font and theme, and
:func:`keep_whole` keeps a box that wide as its style changes.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QLineEdit, QStyle, QStyleOptionFrame

#: What changes the room a text needs: a style sheet sets a box's font and padding
#: when the box is polished, and again when the theme changes.
RESTYLED = (QEvent.Type.Polish, QEvent.Type.FontChange, QEvent.Type.StyleChange)
#: Qt draws a line edit's text this far inside its contents on each side
#: (QLineEditPrivate::horizontalMargin); no style reports it.
INNER_MARGIN = 2


def _frame(edit: QLineEdit) -> int:
    """What the frame, padding and margins take of ``edit``'s width."""
    option = QStyleOptionFrame()
    edit.initStyleOption(option)
    contents = edit.style().subElementRect(QStyle.SubElement.SE_LineEditContents, option, edit)
    margins = edit.textMargins()
    return (
        option.rect.width() - contents.width() + margins.left() + margins.right() + 2 * INNER_MARGIN
    )


def width_for(edit: QLineEdit, text: str) -> int:
    """The width at which ``edit`` shows ``text`` whole, in its current font and style."""
    return edit.fontMetrics().horizontalAdvance(text) + _frame(edit)


class _KeepWhole(QObject):
    """Sets its line edit's minimum width from ``text`` whenever the edit is restyled."""

    def __init__(self, edit: QLineEdit, text: str) -> None:
        super().__init__(edit)
        self._text = text
        edit.setMinimumWidth(width_for(edit, text))
        edit.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(watched, QLineEdit) and event.type() in RESTYLED:
            watched.setMinimumWidth(width_for(watched, self._text))
        return False


def keep_whole(edit: QLineEdit, text: str) -> None:
    """Never let ``edit`` get too narrow to show ``text`` (its placeholder) whole.

    In a :class:`~desktop.widgets.flow.FlowLayout` the controls after it move to
    another row instead.
    """
    _KeepWhole(edit, text)
