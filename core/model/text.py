"""Plain-text helpers shared by every capability that renders a line for a person or agent."""

from __future__ import annotations

import hashlib

# Every character str.splitlines() breaks on is whitespace to str.split(); the
# other C0/C1 controls (escape sequences, NUL) are folded too, as nothing
# legitimate in a one-line summary needs them.
_CONTROLS = {code: " " for code in (*range(0x20), 0x7F, *range(0x80, 0xA0))}


def single_line(text: str) -> str:
    """``text`` on one line: every line break and whitespace run becomes one space."""
    return " ".join(text.translate(_CONTROLS).split())


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` as UTF-8 (lone surrogates kept): how a point or a
    claim records the exact text it was drawn from, and checks it later."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
