"""Hybrid search over conversation turns.

Candidates come from bm25 over the turns' words and from their vectors
(:mod:`core.continuity.exchange_candidates`, which also says how a search for one
speaker's turns finds them); each is scored on both (:mod:`core.semantic.hybrid`).
Then conversation structure counts:

- a turn borrows part of its neighbours' relevance (a question and its answer
  belong together, and the answer often shares no word with what is asked):
  the turns logged just before and after it in the same session and thread;
- a turn by a speaker the question names, or said within a date the question
  names ("in May 2023", "last week"), is lifted, and is a candidate even when it
  shares no word with the question;
- a turn of the searcher's thread that the search found by itself (its words,
  meaning, speaker or date, not only its neighbour) is lifted by
  :data:`THREAD_BOOST`: a clearly better match from another thread still comes
  first, and a turn here only for its neighbour (``context``) is not lifted;
- recency, as for memories, by the turn's own time (``said_at``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from core.continuity.exchange_candidates import Query, gather
from core.continuity.speaker_names import speakers_named
from core.model.config import Config
from core.model.paging import tiered_page
from core.model.times import LOCAL, stored_time
from core.semantic import hybrid, vectors
from core.semantic.hybrid import Mode, Signal
from core.semantic.timeref import asks_when, says_when, time_spans
from core.storage.fts import query_terms, unspaced_grams, words
from core.storage.store import GroupStore

#: Share of a neighbour's relevance a turn takes on.
CONTEXT_WEIGHT: Final = 0.5
THREAD_BOOST: Final = 0.1
SPEAKER_BOOST: Final = 0.2
#: More than a named speaker's lift: a speaker says half the turns of a conversation,
#: a named day or month holds one or two of its sessions.
DATE_BOOST: Final = 0.25
#: For a question asking when or how long, a turn that says a time ("last year",
#: "3 weeks", "in May"): a weaker cue than a named speaker or date.
WHEN_BOOST: Final = 0.15
#: How many of the best candidates have their neighbouring turns scored too.
NEIGHBOURED: Final = 40


@dataclass(frozen=True)
class RankedTurn:
    seq: int
    score: float
    signals: tuple[str, ...]


@dataclass(frozen=True)
class _Turn:
    seq: int
    session_id: str
    thread_id: str | None
    speaker: str
    name: str | None
    #: When it was said (parsed once: neighbours, dates and recency all read it).
    said: datetime | None
    #: Whether the turn says a time (read only for a question asking when).
    says_when: bool = False


def _turns(store: GroupStore, seqs: Sequence[int], *, when: bool) -> dict[int, _Turn]:
    """The turns ``seqs``; ``when``: also whether each says a time."""
    found: dict[int, _Turn] = {}
    text = "text" if when else "''"
    for start in range(0, len(seqs), 500):
        chunk = list(seqs[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        for r in store.execute(
            f"SELECT seq, session_id, thread_id, speaker, name, said_at, {text} FROM exchanges "
            f"WHERE seq IN ({marks})",
            chunk,
        ):
            found[int(r[0])] = _Turn(
                int(r[0]), r[1], r[2], r[3], r[4], _time(r[5]), when and says_when(r[6] or "")
            )
    return found


def search_terms(query: str, named: set[str]) -> list[str]:
    """The query's words less the speakers' names (metadata, not words to match),
    unless nothing else is left."""
    terms = query_terms(query)
    # The index's words of each name: "Mary-Jane" and "O'Brien" are two each.
    name_words = {w for name in named for w in words(name)}
    rest = [t for t in terms if t not in name_words]
    return rest or terms


_PRONOUNS: Final = (
    (re.compile(r"\b(?:his|her)\b", re.I), "my"),
    (re.compile(r"\b(?:he|she)\b", re.I), "I"),
    (re.compile(r"\bhim\b", re.I), "me"),
    (re.compile(r"\b(?:himself|herself)\b", re.I), "myself"),
)


def as_spoken(query: str, named: set[str]) -> str:
    """The question as its speaker would have said it, for its vector.

    A turn is said in the first person ("I went camping"), so a question about
    a speaker ("Where has Melanie camped?") is closer in meaning to the turn
    that answers it when the name reads "I" ("Where has I camped?") and,
    with one speaker named, "her"/"his" read "my". The words searched by bm25
    are unchanged (names are matched as metadata there).
    """
    if not named:
        return query
    text = query
    # A full name, then its first word alone ("Mary" for "Mary Jane").
    forms = named | {name.split()[0] for name in named}
    for name in sorted(forms, key=len, reverse=True):
        # Either apostrophe, as the name was found ("O’Brien" names "O'Brien").
        pattern = "".join("['’]" if c in "'’" else re.escape(c) for c in name)
        text = re.sub(rf"\b{pattern}(?:'s|\u2019s)\b", "my", text, flags=re.I)
        text = re.sub(rf"\b{pattern}\b", "I", text, flags=re.I)
    if len(named) == 1:
        for pronoun, spoken in _PRONOUNS:
            text = pronoun.sub(spoken, text)
    return text


#: Turns logged one after the other but said further apart than this (history
#: imported into one session, years between two turns) are not a question and its answer.
NEIGHBOUR_GAP: Final = timedelta(hours=12)


def _said_together(first: datetime | None, second: datetime | None) -> bool:
    return first is None or second is None or abs(first - second) <= NEIGHBOUR_GAP


def _time(value: str | None) -> datetime | None:
    # Without an offset it is UTC; not a time at all (an older import's), unknown.
    return stored_time(value, "said_at")


def rank(
    store: GroupStore,
    query: str,
    *,
    limit: int,
    mode: Mode,
    config: Config,
    now: datetime,
    thread_id: str | None = None,
    speaker: str | None = None,
    beyond: int = 0,
    fill: int | None = None,
) -> list[RankedTurn]:
    """The ``limit`` best turns for ``query`` (``speaker``: that role only).

    Args:
        beyond: this many more after them, from the same candidates: whether
            another page follows. The candidates are chosen for ``limit`` alone,
            so the ``limit`` best are the same whatever ``beyond`` is.
        fill: in ``auto`` mode, fewer matches than this are followed by weaker
            ones rather than a short list (default ``limit``). A deeper pool
            ranked for a later page keeps the page's size here: otherwise every
            pool deeper than the matches would be filled with guesses.
    """
    want = max(2 * hybrid.CANDIDATES, 3 * limit)
    logged_names = speakers_named(store, query)
    named = {n.casefold() for n in logged_names}
    meaning = None
    if mode is not Mode.KEYWORD:
        found = hybrid.query_vector(as_spoken(query, named), config.embedding_model_dir)
        if found is None:
            mode = Mode.KEYWORD
        else:
            embedder, qvec = found
            meaning = (hybrid.vector_index(store, vectors.EXCHANGES, embedder), qvec)
    # The person's days, not UTC's, each with the offset in force on it.
    spans = time_spans(query, now.astimezone(LOCAL))
    asked = Query(search_terms(query, named), unspaced_grams(query), meaning, spans, logged_names)
    by_words = mode is not Mode.SEMANTIC
    every = gather(store, asked, want, by_words=by_words, speaker=None)
    # For one speaker's turns, their own best too, which every speaker's may not hold.
    # Every speaker's stay candidates: they lend context to the turns beside them.
    mine = every
    if speaker is not None:
        mine = gather(store, asked, want, by_words=by_words, speaker=speaker)
    pool = every | mine
    bm25, dated, spoken = pool.words, pool.dated, pool.spoken
    cosines: dict[int, float] = {}
    # A result at least this close says it was found by meaning: in semantic mode,
    # every one; in auto, not the weak matches that fill a short list.
    floor = hybrid.MIN_SEMANTIC_ONLY if mode is Mode.AUTO else hybrid.COSINE_FLOOR
    if meaning is not None:
        index, qvec = meaning
        cosines = {s: c for s, c in pool.near if c >= hybrid.MIN_SEMANTIC_ONLY}
        close = {s for s, c in mine.near if c >= hybrid.MIN_SEMANTIC_ONLY}
        if mode is not Mode.AUTO or len(close | mine.words.keys()) < (fill or limit):
            # Weaker matches too, rather than fewer results than asked for.
            cosines = {s: c for s, c in pool.near if c >= hybrid.COSINE_FLOOR}
        cosines.update(index.similarities([s for s in bm25 if s not in cosines], qvec))
        cosines.update(index.similarities(sorted((dated | spoken) - set(cosines)), qvec))
    keyword = hybrid.keyword_strengths(bm25)

    def scored(seqs: set[int]) -> dict[int, float]:
        return {s: hybrid.relevance(cosines.get(s), keyword.get(s, 0.0), mode) for s in seqs}

    base = scored(set(bm25) | set(cosines) | dated | spoken)
    # Neighbours of the best share relevance, and may be the answer themselves.
    depth = max(NEIGHBOURED, 2 * limit)
    order = sorted(base, key=base.__getitem__, reverse=True)
    best = order[:depth]
    if mine is not every:
        theirs = mine.seqs()
        best += [s for s in order if s in theirs][:depth]
    around = {n for s in best for n in (s - 1, s + 1)} - set(base)
    if meaning is not None:
        cosines.update(meaning[0].similarities(sorted(around), meaning[1]))
    base.update(scored(around))
    found_by_itself = set(bm25) | {s for s, c in cosines.items() if c >= floor} | dated | spoken
    when = asks_when(query)
    turns = _turns(store, sorted(base), when=when)
    ranked: list[tuple[float, RankedTurn]] = []
    for seq, turn in turns.items():
        if speaker is not None and turn.speaker != speaker:
            continue
        neighbours = [
            (base[n], n)
            for n in (seq - 1, seq + 1)
            if n in turns
            and turns[n].session_id == turn.session_id
            and turns[n].thread_id == turn.thread_id
            and _said_together(turns[n].said, turn.said)
        ]
        context, lender = max(neighbours, default=(0.0, 0))
        own = base[seq]
        if own <= 0.0 and context <= 0.0 and seq not in dated and seq not in spoken:
            continue
        score = (own + CONTEXT_WEIGHT * context) / (1 + CONTEXT_WEIGHT)
        signals: list[str] = []
        if seq in bm25:
            signals.append(Signal.KEYWORD.value)
        cosine = cosines.get(seq) if mode is not Mode.KEYWORD else None
        if cosine is not None and cosine >= floor:
            signals.append(Signal.SEMANTIC.value)
        if context > own and lender in found_by_itself:
            # Next to a turn found by its words, meaning, speaker or date; a weak
            # match that only fills a short list lends no "context".
            signals.append(Signal.CONTEXT.value)
        said = turn.said
        if turn.name and turn.name.casefold() in named:
            score += SPEAKER_BOOST
            signals.append(Signal.SPEAKER.value)
        if said is not None and any(start <= said < end for start, end in spans):
            score += DATE_BOOST
            signals.append(Signal.DATE.value)
        if turn.says_when:
            score += WHEN_BOOST
            signals.append(Signal.WHEN.value)
        if thread_id is not None and turn.thread_id == thread_id and seq in found_by_itself:
            # Only a turn the search found by itself: one that is here for its
            # neighbour alone would be lifted above another thread's real match.
            score += THREAD_BOOST
            signals.append(Signal.THREAD.value)
        recent = hybrid.recency(said, now, config.recency_half_life_days)
        if recent >= 0.5:
            signals.append(Signal.RECENT.value)
        score = hybrid.adjusted(score, recent, config.recency_weight)
        ranked.append((score, RankedTurn(seq, hybrid.rounded(score), tuple(signals))))
    ranked.sort(key=lambda r: (-r[0], -r[1].seq))
    return [r for _, r in ranked[: limit + beyond]]


def rank_page(
    store: GroupStore,
    query: str,
    *,
    limit: int,
    offset: int,
    deepest: int,
    mode: Mode,
    config: Config,
    now: datetime,
    thread_id: str | None = None,
    speaker: str | None = None,
) -> tuple[list[RankedTurn], bool]:
    """Turns ``offset`` to ``offset + limit`` of one ranked list for ``query``, and
    whether more follow.

    The list is :func:`~core.model.paging.tiered_page`'s, its first ``limit``
    turns :func:`rank`'s ``limit`` best. A page ranked from a pool sized for it
    alone would repeat and skip turns: a deeper pool brings in candidates (a turn
    by a speaker the question names, or said on its date) that rank above turns
    an earlier page showed.
    """

    def ranked(depth: int) -> list[RankedTurn]:
        return rank(
            store,
            query,
            limit=depth,
            mode=mode,
            config=config,
            now=now,
            thread_id=thread_id,
            speaker=speaker,
            beyond=1,
            fill=limit,
        )

    return tiered_page(ranked, lambda r: r.seq, limit=limit, offset=offset, deepest=deepest)
