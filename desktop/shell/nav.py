"""The pages of the sidebar, in order; the first nine answer to Ctrl and their number plus one."""

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
    CLAIMS = 8
    # From here on the digits have run out: reached from the sidebar and the palette (Ctrl+K).
    LAYERS = 9
    # Last, as a trash is.
    TRASH = 10

    @property
    def key(self) -> str:
        """Ctrl+1 to Ctrl+9 for the first nine pages; the rest from the palette."""
        return f"Ctrl+{self.value + 1}" if self.value < 9 else ""

    @property
    def label(self) -> str:
        return "Connect an agent" if self is Nav.CONNECT else self.name.capitalize()
