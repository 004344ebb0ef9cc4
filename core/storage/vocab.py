"""How many entries hold a word, read from the index's own term counts.

The search planner drops words found in more than a tenth of the entries. It
used to count each word's matches with a query, which at 100,000 entries was
most of an uncached search's time. ``memory_vocab`` (an ``fts5vocab`` table,
schema v7) holds every indexed term's document count; the word is stemmed by
the same tokenizer the index uses, and its count read in one seek.
"""

from __future__ import annotations

from typing import Any

import apsw

#: The index's tokenizer (schema v1: ``porter unicode61 remove_diacritics 2``).
TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])


def tokenizer(conn: apsw.Connection) -> Any:
    """The index's tokenizer, for ``conn`` (a callable; keep one per connection)."""
    return conn.fts5_tokenizer(TOKENIZER[0], list(TOKENIZER[1]))


def terms(tokenize: Any, text: str, reason: int = apsw.FTS5_TOKENIZE_QUERY) -> list[str]:
    """``text`` as the index's terms, by ``tokenize`` (:func:`tokenizer`): stemmed,
    folded; ``reason`` says whether it is a query or a document."""
    return list(
        tokenize(text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False)
    )


def term_doc_freq(conn: apsw.Connection, tokenize: Any, word: str) -> int:
    """Entries holding ``word`` as the index stores it (an estimate for planning).

    A word the tokenizer splits ("luna's") counts as its rarest part, the most
    a phrase of those parts can match.
    """
    tokens = terms(tokenize, word)
    if not tokens:
        return 0
    counts = []
    for token in tokens:
        row = conn.execute("SELECT doc FROM memory_vocab WHERE term = ?", (token,)).fetchone()
        counts.append(int(row[0]) if row else 0)
    return min(counts)
