"""The candidates of a search over conversation turns, each way they are found.

By words (bm25, and the pieces of unspaced text), by meaning (the nearest
vectors), by a date the question names and by a speaker it names: each way
gives at most ``want`` turns, which :mod:`core.continuity.exchange_recall`
then scores and ranks.

A search for one role's turns (``speaker``) takes each way's best among that
role's turns, not the best of all filtered after: a role heard rarely, under
many better matches of the others, would otherwise never be a candidate, and
its search come back short with no next page while more of its turns match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.model.entries import iso
from core.semantic import hybrid
from core.semantic.timeref import Span
from core.storage.fts import grams_held, match_expression
from core.storage.store import GroupStore

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from core.semantic.vectors import VectorIndex


@dataclass(frozen=True)
class Candidates:
    #: bm25 scores (lower is better) of the best matches by words and pieces.
    words: dict[int, float]
    #: The nearest by meaning, (seq, cosine similarity), best first.
    near: list[tuple[int, float]]
    #: The latest said within a date the question names.
    dated: set[int]
    #: The latest said by a speaker the question names.
    spoken: set[int]

    def seqs(self) -> set[int]:
        return {*self.words, *(s for s, _ in self.near), *self.dated, *self.spoken}

    def __or__(self, other: Candidates) -> Candidates:
        if other is self:
            return self
        return Candidates(
            self.words | other.words,
            sorted({*self.near, *other.near}, key=lambda n: -n[1]),
            self.dated | other.dated,
            self.spoken | other.spoken,
        )


@dataclass(frozen=True)
class Query:
    """What a question asks, as each way of finding turns reads it."""

    #: Words for bm25 (speakers' names left out) and pieces of its unspaced text.
    terms: list[str]
    grams: list[str]
    #: The vectors to search and the question's, when it is searched by meaning.
    meaning: tuple[VectorIndex, npt.NDArray[np.float32]] | None
    spans: Sequence[Span]
    names: set[str]


def gather(
    store: GroupStore, query: Query, want: int, *, by_words: bool, speaker: str | None
) -> Candidates:
    """Up to ``want`` turns each way (``speaker``: that role's turns only)."""
    words: dict[int, float] = {}
    if by_words:
        words = _keyword(store, query.terms, want, speaker)
        pieces = _unspaced(store, query.grams, want, speaker)
        words = hybrid.with_pieces(words, pieces, len(query.grams))
    near: list[tuple[int, float]] = []
    if query.meaning is not None:
        index, vector = query.meaning
        among = None if speaker is None else _spoken_as(store, speaker)
        near = index.nearest(vector, want, among=among)
    return Candidates(
        words,
        near,
        _said_within(store, query.spans, want, speaker),
        _said_by(store, query.names, want, speaker),
    )


def _of_role(table: str) -> str:
    """SQL: the row of ``table`` (an FTS index of turns) is a turn by the role bound next.

    A correlated lookup of each match, not ``rowid IN (that role's turns)``: with
    that, SQLite read every turn of the role for each match (150 ms at 6,000 turns).
    """
    return f"EXISTS (SELECT 1 FROM exchanges x WHERE x.seq = {table}.rowid AND x.speaker = ?)"


def _bound(speaker: str | None) -> tuple[str, ...]:
    return () if speaker is None else (speaker,)


def _keyword(
    store: GroupStore, terms: list[str], want: int, speaker: str | None
) -> dict[int, float]:
    """The ``want`` best turns by bm25 among the newest matches."""
    if not terms:
        return {}
    role = "" if speaker is None else f"AND {_of_role('exchanges_fts')} "
    rows = store.execute(
        "SELECT rowid, score FROM (SELECT rowid, rank AS score FROM exchanges_fts "
        f"WHERE exchanges_fts MATCH ? {role}ORDER BY rowid DESC LIMIT {hybrid.MAX_RANKED}) "
        f"ORDER BY score LIMIT {int(want)}",
        (match_expression(terms), *_bound(speaker)),
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def _unspaced(
    store: GroupStore, grams: list[str], want: int, speaker: str | None
) -> dict[int, int]:
    """Turns holding pieces of an unspaced query ({seq: pieces held}), most first,
    then newest, from the gram index (:func:`~core.storage.fts.grams_held`)."""
    if not grams:
        return {}
    role = "" if speaker is None else _of_role("exchange_grams")
    held, bound = grams_held("exchange_grams", grams, role, _bound(speaker))
    rows = store.execute(f"{held} ORDER BY held DESC, seq DESC LIMIT {int(want)}", bound)
    return {int(r[0]): int(r[1]) for r in rows}


def _said_within(
    store: GroupStore, spans: Sequence[Span], want: int, speaker: str | None
) -> set[int]:
    """Turns said within any of ``spans``, the latest first: a date in the question
    makes them candidates even when they share no word with it."""
    if not spans:
        return set()
    within = " OR ".join(["(said_at >= ? AND said_at < ?)"] * len(spans))
    if speaker is not None:
        within = f"({within}) AND speaker = ?"
    rows = store.execute(
        f"SELECT seq FROM exchanges WHERE {within} ORDER BY said_at DESC LIMIT {int(want)}",
        [*(iso(t) for span in spans for t in span), *_bound(speaker)],
    )
    return {int(r[0]) for r in rows}


def _said_by(store: GroupStore, names: set[str], want: int, speaker: str | None) -> set[int]:
    """The latest turns said by the speakers ``names`` (as logged): a question about
    a speaker ("What did Sam say?") makes their turns candidates even when they share
    no word with it."""
    if not names:
        return set()
    # One index range per name, read from its latest turn (the names as logged,
    # compared as the index is, case-blind), then the latest of them all.
    role = "" if speaker is None else "AND speaker = ? "
    latest = (
        "SELECT * FROM (SELECT seq, said_at FROM exchanges WHERE name = ? COLLATE NOCASE "
        f"AND name IS NOT NULL {role}ORDER BY said_at DESC LIMIT {int(want)})"
    )
    rows = store.execute(
        f"SELECT seq FROM ({' UNION ALL '.join([latest] * len(names))}) "
        f"ORDER BY said_at DESC LIMIT {int(want)}",
        [p for name in sorted(names) for p in (name, *_bound(speaker))],
    )
    return {int(r[0]) for r in rows}


def _spoken_as(store: GroupStore, speaker: str) -> list[int]:
    """Every turn by the role ``speaker``, to take the nearest by meaning among
    (one read of the table: no index holds the role)."""
    rows = store.execute("SELECT seq FROM exchanges WHERE speaker = ?", (speaker,))
    return [int(r[0]) for r in rows]
