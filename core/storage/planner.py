"""Query planning for memory search: which terms to rank with, from cached term counts.

Ranking cost grows with the number of matching entries; the planner reads each
term's document count (one seek in the index's vocabulary, :mod:`core.storage.vocab`)
and decides which terms to keep and whether ranking every match is cheap.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import apsw

from core.storage import vocab
from core.storage.db import mapped_errors
from core.storage.fts import match_expression

#: Rank every match when the query's terms match at most this many entries.
EXACT_RANK_LIMIT = 1000
#: A term in more than this fraction of entries is dropped if rarer terms remain.
COMMON_FRACTION = 0.10
DF_CACHE_SECONDS = 60.0


class QueryPlanner:
    """Term counts of one group's index, cached for a minute.

    Args:
        conn: the store's connection (used from the store's thread only).
        path: the database file, for error messages.
    """

    def __init__(self, conn: apsw.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self._df_cache: dict[str, tuple[int, float]] = {}
        self._tokenize: Any = None
        self._total_cache: tuple[int, float] = (0, -DF_CACHE_SECONDS)

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> Any:
        with mapped_errors(self.path):
            return self.conn.execute(sql, params)

    def plan(self, terms: list[str], *, prefix_last: bool = False) -> tuple[list[str], bool]:
        """Which terms to search with, and whether to rank every match.

        - If the terms match at most :data:`EXACT_RANK_LIMIT` entries in all,
          every match is ranked: the exact answer, cheap at this size.
        - Otherwise a term found in more than :data:`COMMON_FRACTION` of all
          entries, which adds almost nothing to bm25 but costs the most, is
          dropped when the query has rarer terms that match something.
        - If the remaining terms still match more than
          :data:`EXACT_RANK_LIMIT` entries, the caller orders by recency instead
          of rank (the browser does), which keeps a query over a very common word
          fast at any store size; memory search ranks all of them
          (:mod:`core.recall.memory_recall`).
        """
        total = self._cached_total()
        cap = max(EXACT_RANK_LIMIT, int(COMMON_FRACTION * total)) + 1
        last = len(terms) - 1
        freqs = {
            t: (
                self.doc_freq(match_expression([t], prefix_last=True), cap)
                if prefix_last and i == last
                else self.term_freq(t)
            )
            for i, t in enumerate(terms)
        }
        if sum(freqs.values()) <= EXACT_RANK_LIMIT:
            return terms, True
        rare = [t for t in terms if 0 < freqs[t] <= COMMON_FRACTION * total]
        kept = rare or terms
        return kept, sum(freqs[t] for t in kept) <= EXACT_RANK_LIMIT

    def term_freq(self, word: str) -> int:
        """Entries holding ``word``, from the index's term counts (one seek; core.storage.vocab)."""
        if self._tokenize is None:
            self._tokenize = vocab.tokenizer(self.conn)
        with mapped_errors(self.path):
            return vocab.term_doc_freq(self.conn, self._tokenize, word)

    def doc_freq(self, expression: str, cap: int) -> int:
        """Entries matching one quoted term ``expression``, counted up to ``cap``, cached.

        The figure only steers :meth:`plan`, so a count up to a minute old is fine.
        """
        now = time.monotonic()
        hit = self._df_cache.get(expression)
        if hit is not None and now - hit[1] < DF_CACHE_SECONDS and hit[0] < cap:
            return hit[0]
        if len(self._df_cache) > 50_000:
            self._df_cache.clear()
        count = int(
            self.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? "
                f"LIMIT {int(cap)})",
                (expression,),
            ).get
        )
        self._df_cache[expression] = (count, now)
        return count

    def _cached_total(self) -> int:
        now = time.monotonic()
        if now - self._total_cache[1] >= DF_CACHE_SECONDS:
            self._total_cache = (self.total(), now)
        return self._total_cache[0]

    def total(self) -> int:
        return int(self.execute("SELECT count(*) FROM memory_entries").get)
