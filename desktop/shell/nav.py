"""The pages of the sidebar, in order; each page's key is Ctrl and its number plus one."""

from __future__ import annotations

from enum import IntEnum


class Nav(IntEnum):
    MEMORIES = 0
    REVIEW = 1
    BRIEF = 2
    ATTACHMENTS = 3
    THREADS = 4
    AUDIT = 5
    SETTINGS = 6
    CONNECT = 7
    # Last, as a trash is: the keys of the other pages stay as they were.
    TRASH = 8

    @property
    def label(self) -> str:
        return "Connect an agent" if self is Nav.CONNECT else self.name.capitalize()
