"""Markdown to the HTML subset Qt's rich text shows (briefs and handoffs).

Raw HTML in a memory or a handoff never renders: it is shown as text. Task-list
items (``- [x] done``, ``- [ ] to do``) show as ☑ and ☐, since Qt's rich text
has no form controls to draw a checkbox with.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_core import StateCore

_TASK = re.compile(r"\[([ xX])\] ")


def _task_boxes(state: StateCore) -> None:
    tokens = state.tokens
    for i in range(2, len(tokens)):
        inline = tokens[i]
        # A list item's first paragraph: list_item_open, paragraph_open, inline.
        if inline.type != "inline" or tokens[i - 2].type != "list_item_open":
            continue
        first = inline.children[0] if inline.children else None
        if first is not None and first.type == "text" and (m := _TASK.match(first.content)):
            box = "☐" if m.group(1) == " " else "☑"
            first.content = f"{box} {first.content[m.end() :]}"


@cache
def _parser() -> MarkdownIt:
    """Built on first use: the window opens without loading the Markdown parser."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "linkify": False})
    parser.core.ruler.push("task_boxes", _task_boxes)
    return parser


def render_markdown(markdown: str) -> str:
    return str(_parser().render(markdown))
