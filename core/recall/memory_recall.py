"""Hybrid search over memory entries: bm25 and vectors fused, then adjusted.

Every match is ranked by bm25, not only the most recent ones: the index ranks
at most :data:`~core.semantic.hybrid.MAX_RANKED` matches of the query's rarer terms (words found in
more than a tenth of the entries are dropped while rarer ones remain), so the
cost is bounded at any store size while a store of tens of thousands is ranked
exactly. The vector scan is one matrix product over every embedded entry.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from core.model.config import Config
from core.model.entries import EntryFilter
from core.model.text import without_accents
from core.model.times import stored_time
from core.semantic import hybrid, vectors
from core.semantic.hybrid import Mode, Signal
from core.storage import fts
from core.storage.fts import STOPWORDS, match_expression, query_terms, term_match, unspaced_grams
from core.storage.rows import HIT_COLUMNS, Hit, where_clause
from core.storage.store import BM25, GroupStore

#: Share of relevance from meaning. Memories are short statements about a few
#: subjects, so shared names match many of them: meaning decides among those.
SEMANTIC_WEIGHT: Final = 0.7
#: Added to the relevance of an entry holding every word of the question.
COVERAGE_BONUS = 0.1
#: Share of a question's similarity judged on what it asks without the names it
#: holds (:func:`core.semantic.hybrid.without_names`).
TOPIC_SHARE: Final = 0.4
#: Share of a question's relevance that is whether the memory names whom (or what)
#: the question names, written the same way (:func:`core.semantic.hybrid.names_in`).
NAME_WEIGHT: Final = 0.3
#: In ``auto`` mode, when fewer memories than asked for share a word with the
#: question or reach :data:`core.semantic.hybrid.MIN_SEMANTIC_ONLY`, the nearest
#: by meaning from this similarity up fill the list, after them, at most
#: :data:`FILL_MOST` of them: a plain question is not answered with nothing.
FILL_FLOOR: Final = 0.2
FILL_MOST: Final = 3
#: A memory that says the opposite of what the question asks ("does not like
#: jazz" for "What does Mia like?") keeps this share of its relevance: it shares
#: the words and most of the meaning, but answers the question less often.
OPPOSITE_WEIGHT: Final = 0.85
#: In ``auto`` mode, a memory sharing only a common verb with a question that asks
#: more ("eats" for "What does the dog eat?") keeps this share of its keyword
#: strength (:func:`verb_only`): the verb is in many memories about anything.
VERB_ONLY_WEIGHT: Final = 0.0


@dataclass(frozen=True)
class RankedHit:
    hit: Hit
    score: float
    signals: tuple[str, ...]


def keyword_candidates(
    store: GroupStore, terms: list[str], flt: EntryFilter, want: int
) -> dict[int, float]:
    """Up to ``want`` entries passing ``flt``, best bm25 first, as {seq: bm25}."""
    if not terms:
        return {}
    kept, _ = store.plan(terms)
    match = match_expression(kept)
    where, params = where_clause(flt)
    window = max(2 * want, 64)
    while True:
        rows = store.execute(
            "SELECT e.seq, f.score FROM ("
            f"  SELECT rowid, score FROM (SELECT rowid, {BM25} AS score FROM memory_fts"
            f"    WHERE memory_fts MATCH ? ORDER BY rowid DESC LIMIT {hybrid.MAX_RANKED})"
            f"  ORDER BY score LIMIT {int(window)}) AS f "
            f"CROSS JOIN memory_entries e ON e.seq = f.rowid WHERE {where} "
            f"ORDER BY f.score LIMIT {int(want)}",
            (match, *params),
        ).fetchall()
        if len(rows) >= want or window >= hybrid.MAX_RANKED or not _more(store, match, window):
            return {int(r[0]): float(r[1]) for r in rows}
        window *= 8


def implied_only(
    store: GroupStore, query: str, terms: list[str], bm25: dict[int, float]
) -> set[int]:
    """The entries of ``bm25`` that match none of the words asked, only those the
    question implies ("user" for "my boss"). Such a word ranks; it does not find:
    these entries count no keyword match, so "my boss" no longer lists every memory
    about the user. A question of nothing but such words ("about me") is left whole.
    """
    asked = [t for t in query_terms(query) if t not in STOPWORDS and t not in hybrid.FIRST_PERSON]
    if not bm25 or not asked or set(asked) >= set(terms):
        return set()
    # bm25 holds the candidates of one search (at most a few hundred): one query.
    found = store.execute(
        "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
        f"AND rowid IN ({', '.join('?' * len(bm25))})",
        (match_expression(asked), *bm25),
    )
    return set(bm25) - {int(r[0]) for r in found}


#: Everyday verbs: sharing one of them alone says little about what a memory is about.
COMMON_VERBS: Final = frozenset(
    "eat eats eating ate eaten use uses using used like likes liked liking have has had "
    "having get gets getting got make makes making made take takes taking took taken "
    "go goes going went want wants need needs do does did doing".split()
)


def verb_only(
    store: GroupStore, query: str, keyword: dict[int, float], by_meaning: bool
) -> set[int]:
    """The entries of ``keyword`` that share only common verbs (:data:`COMMON_VERBS`)
    with a question that asks other words too, when something else answers it:
    another entry holds those words, or the meaning finds one (``by_meaning``).
    When nothing does (a misspelt word: "which edtior does he use"), the verb is
    all there is to go on, and nothing is returned."""
    asked = [t for t in query_terms(query) if t not in STOPWORDS and t not in hybrid.FIRST_PERSON]
    other = [t for t in asked if t.casefold() not in COMMON_VERBS]
    if len(other) == len(asked) or not other:
        return set()
    # keyword holds the candidates of one search (at most a few hundred): one query.
    found = store.execute(
        "SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? "
        f"AND rowid IN ({', '.join('?' * len(keyword))})",
        (match_expression(other), *keyword),
    )
    holding = {int(r[0]) for r in found}
    return set(keyword) - holding if holding or by_meaning else set()


def all_terms(store: GroupStore, terms: list[str], want: int) -> set[int]:
    """Entries holding every one of ``terms`` (at most ``want``, the newest)."""
    match = " AND ".join(term_match(t) for t in terms)
    rows = store.execute(
        f"SELECT rowid FROM memory_fts WHERE memory_fts MATCH ? ORDER BY rowid DESC "
        f"LIMIT {int(want)}",
        (match,),
    )
    return {int(r[0]) for r in rows}


def _more(store: GroupStore, match: str, window: int) -> bool:
    return bool(
        store.execute(
            f"SELECT 1 FROM memory_fts WHERE memory_fts MATCH ? LIMIT 1 OFFSET {int(window)}",
            (match,),
        ).fetchone()
    )


#: Where a row read by :func:`rows_for` holds what follows a :class:`Hit`'s columns.
_SEQ, _CONFIDENCE, _SEEN = len(Hit._fields), len(Hit._fields) + 1, len(Hit._fields) + 2


def hit_of(row: Any) -> Hit:
    """The :class:`Hit` of a row read by :func:`rows_for`."""
    return Hit._make(row[:_SEQ])


def rows_for(store: GroupStore, seqs: Sequence[int], flt: EntryFilter) -> dict[int, Any]:
    """The hit columns, confidence and last-seen time of ``seqs`` that pass ``flt``."""
    found: dict[int, Any] = {}
    where, params = where_clause(flt)
    for start in range(0, len(seqs), 500):
        chunk = list(seqs[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        for row in store.execute(
            f"SELECT {HIT_COLUMNS}, 0.0, e.seq, e.effective_confidence, e.last_seen_at "
            f"FROM memory_entries e WHERE e.seq IN ({marks}) AND {where}",
            (*chunk, *params),
        ):
            found[int(row[_SEQ])] = row
    return found


def search(
    store: GroupStore,
    query: str,
    flt: EntryFilter,
    limit: int,
    *,
    mode: Mode,
    config: Config,
    now: datetime,
) -> list[RankedHit]:
    """The ``limit`` best entries for ``query``, each with its 0..1 score and signals."""
    want = max(hybrid.CANDIDATES, 2 * limit)
    asked = unnamed = query
    names: list[str] = []
    if hybrid.is_question(query):
        names, own = store_names(store, hybrid.question_names(query))
        asked = as_the_user(query, own)
        # "user" stands in for the name: a word the question implies, as for "my".
        unnamed = as_the_user(query, own, "")
    found = None
    if mode is not Mode.KEYWORD:
        found = hybrid.query_vector(asked, config.embedding_model_dir)
        if found is None:
            # No model: keyword ranking (said once in the log) rather than nothing.
            mode = Mode.KEYWORD
    bm25: dict[int, float] = {}
    implied: set[int] = set()
    complete: set[int] = set()
    if mode is not Mode.SEMANTIC:
        terms = hybrid.keyword_terms(asked)
        bm25 = keyword_candidates(store, terms, flt, want)
        implied = implied_only(store, unnamed, terms, bm25)
        complete = all_terms(store, terms, want) if len(terms) > 1 else set()
        grams = unspaced_grams(query)
        within = store.unspaced_matches(flt, grams, want)
        implied -= within.keys()
        bm25 = hybrid.with_pieces(bm25, within, len(grams))
    cosines: dict[int, float] = {}
    rows: dict[int, Any] = {}
    # Near in meaning but under the floor: listed only to fill a short list.
    loose: set[int] = set()
    # How close a match found by meaning alone must be; every result at least this
    # close says it was found by meaning (in semantic mode, every result).
    floor = hybrid.MIN_SEMANTIC_ONLY if mode is Mode.AUTO else hybrid.COSINE_FLOOR
    if found is not None:
        embedder, qvec = found
        index = hybrid.vector_index(store, vectors.MEMORIES, embedder)
        k = want
        while True:
            near = index.nearest(qvec, k)
            picked = [(seq, c) for seq, c in near if c >= floor]
            rows = rows_for(store, sorted({s for s, _ in picked} | set(bm25)), flt)
            cosines = {seq: c for seq, c in picked}
            enough = sum(1 for s in cosines if s in rows) >= limit
            if enough or len(near) < k or len(picked) < len(near):
                break
            k *= 8
        listed = len(rows.keys() - implied)
        if mode is Mode.AUTO and listed < limit:
            fill = [
                seq
                for seq, c in near
                if FILL_FLOOR <= c < floor and (seq not in rows or seq in implied)
            ]
            found_rows = rows_for(store, fill, flt)
            # The nearest first (``near`` is in order), as many as the list lacks.
            passing = [seq for seq in fill if seq in found_rows]
            loose = set(passing[: min(FILL_MOST, limit - listed)])
            rows.update((seq, found_rows[seq]) for seq in loose)
            cosines.update((seq, c) for seq, c in near if seq in loose)
        for seq in bm25:
            if seq not in cosines and seq in rows:
                vec = index.vector_of(seq)
                if vec is not None:
                    cosines[seq] = float(vec @ qvec)
        topic = hybrid.without_names(asked)
        if (
            topic is not None
            and cosines
            and (found_topic := hybrid.query_vector(topic, config.embedding_model_dir))
        ):
            # A short fact's vector is mostly its subject's name: every fact about
            # "Lucas" is near "How does Lucas like his notes?". Its words still
            # find the name (bm25); part of its meaning is judged on what is asked.
            on_topic = index.similarities(list(cosines), found_topic[1])
            cosines = {
                seq: (1 - TOPIC_SHARE) * c + TOPIC_SHARE * on_topic.get(seq, c)
                for seq, c in cosines.items()
            }
    else:
        rows = rows_for(store, list(bm25), flt)
    polarity = Polarity.of(asked)
    keyword = hybrid.keyword_strengths({k: v for k, v in bm25.items() if k not in implied})
    #: Matched by a common verb alone: its words earn it nothing, and say so.
    verb_matched: set[int] = set()
    if mode is Mode.AUTO and keyword:
        # "What does the dog eat?": "Miso only eats wet food" shares only the verb.
        by_meaning = any(c >= floor and s not in keyword for s, c in cosines.items())
        verb_matched = set(verb_only(store, asked, keyword, by_meaning))
        for seq in verb_matched:
            keyword[seq] *= VERB_ONLY_WEIGHT
    patterns = [hybrid.name_pattern(n) for n in names]
    ranked: list[tuple[float, str, int, RankedHit]] = []
    for seq, row in rows.items():
        cosine = cosines.get(seq)
        base = hybrid.relevance(cosine, keyword.get(seq, 0.0), mode, SEMANTIC_WEIGHT)
        if seq in complete:
            # Every word of the question is in it: the strongest keyword evidence.
            base = min(1.0, base + COVERAGE_BONUS)
        named = hybrid.names_written(patterns, str(row[2]))
        if patterns:
            # "Rosa" in a question is Rosa, not "Rosa M.": a name written as asked
            # is the strongest sign the memory is about whom the question is about.
            base = (1 - NAME_WEIGHT) * base + (NAME_WEIGHT if named else 0.0)
        if polarity.opposite(str(row[2])):
            base *= OPPOSITE_WEIGHT
        if seq in implied and not named and seq not in loose and (cosine is None or cosine < floor):
            # Found by an implied word alone: listed only if its meaning would have
            # found it on its own.
            continue
        signals: list[str] = []
        if seq in bm25 and seq not in implied and seq not in verb_matched:
            signals.append(Signal.KEYWORD.value)
        if named:
            signals.append(Signal.NAME.value)
        if cosine is not None and mode is not Mode.KEYWORD and cosine >= floor:
            signals.append(Signal.SEMANTIC.value)
        recent = hybrid.recency(_time(row[_SEEN]), now, config.recency_half_life_days)
        if recent >= 0.5 and base > 0:
            signals.append(Signal.RECENT.value)
        score = hybrid.adjusted(base, recent, config.recency_weight)
        score *= 1 - hybrid.CONFIDENCE_WEIGHT * (1 - float(row[_CONFIDENCE]))
        hit = RankedHit(hit_of(row), hybrid.rounded(score), tuple(signals))
        ranked.append((score, str(row[_SEEN] or ""), seq, hit))
    # Best first by the unrounded score; an exact tie goes to the memory seen last,
    # then to the one stored last (two writes can share a timestamp), so equal
    # matches come back in the same order every time.
    ranked.sort(key=lambda r: (r[2] not in loose, r[0], r[1], r[2]), reverse=True)
    return [r[3] for r in ranked[:limit]]


_NOT = r"(?:not|never|no\s+longer|n't|n’t|cannot|refuse[sd]?|refusing)"
_NEGATOR = rf"\b{_NOT}\b|n't\b|n’t\b"
_NEGATION = re.compile(_NEGATOR, re.I)
#: A negation and the (up to three) words after it.
_NEGATED_WORDS = re.compile(rf"(?:{_NEGATOR})((?:\s+[\w']+){{1,3}})", re.I)
#: Verbs of liking, and what says the opposite of them outright.
_LIKING = frozenset("like likes love loves enjoy enjoys prefer prefers want wants fancy".split())
_AVERSION = re.compile(
    r"\b(?:dislike[sd]?|hate[sd]?|hating|loathe[sd]?|detest[sd]?|can(?:not|'t|’t)\s+stand)\b",
    re.I,
)


@dataclass(frozen=True)
class Polarity:
    """Whether a question asks what is so or what is not, and the words it asks about.

    "What does Mia like?" is answered by what she likes more often than by
    "Mia does not like jazz"; "What food does Sam dislike?" the other way round.
    """

    negated: bool
    words: frozenset[str]

    @classmethod
    def of(cls, question: str) -> Polarity:
        words = frozenset(w.casefold() for w in re.findall(r"[\w']+", question))
        negated = bool(_NEGATION.search(question) or _AVERSION.search(question))
        return cls(negated, words - STOPWORDS)

    def opposite(self, text: str) -> bool:
        """Whether ``text`` says the opposite of what the question asks."""
        if not self.words:
            return False
        if self.negated:
            return not (_NEGATION.search(text) or _AVERSION.search(text))
        return self._negates(text)

    def _negates(self, text: str) -> bool:
        if self.words & _LIKING and _AVERSION.search(text):
            return True
        # "does not like", "doesn't really enjoy", "never eats": a negation and,
        # within two words after it, a word of the question.
        for m in _NEGATED_WORDS.finditer(text):
            if any(_same_word(w, self.words) for w in m.group(1).split()):
                return True
        return False


_ENDINGS = ("s", "es", "ed", "d", "ing")


def _same_word(word: str, asked: frozenset[str]) -> bool:
    word = word.casefold()
    if word in asked:
        return True
    # "eats" for "eat", "enjoyed" for "enjoy": a question word and an ending.
    return any(word.startswith(a) and word[len(a) :] in _ENDINGS for a in asked)


#: "User's name is Sam Whitaker", "my name is Sam", "User goes by Sam": the person
#: the store is about, who is in every memory whether named or "User".
_OWN_NAME = re.compile(
    r"(?:\b(?i:the\s+)?(?i:user)(?:'s|’s)?|\b(?i:my))\s+(?:(?i:full|first|real)\s+)?"
    r"(?i:name)\s+(?i:is)\s+(?P<name>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
    r"|\b(?:(?i:user)|I)\s+(?:(?i:goes\s+by|is\s+called|am\s+called))\s+"
    r"(?P<alias>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*)"
)
#: Written capitalised after another word ("User's wife is Elena", "in Python"):
#: a word the store uses as a name, not only to open a sentence.
_WITHIN = r"(?<=[\w,;:)] ){}(?![\w-])"


def store_names(store: GroupStore, asked: list[hybrid.AskedName]) -> tuple[list[str], set[str]]:
    """The names a question asks about that pick out memories, and the user's own.

    The user's own name (a memory says "User's name is Sam", "my name is Sam")
    names the person every memory is about, most of them as "User": it picks out
    nothing, so it is no name to lift. A word that only opens the question
    ("Deployments this week?") is a name only if the store writes it capitalised
    after another word.
    """
    kept: list[str] = []
    own: set[str] = set()
    for name in asked:
        texts = _texts_with(store, fts.words(name.name), 200)
        if name.opening and not any(
            re.search(_WITHIN.format(re.escape(name.name)), without_accents(t)) for t in texts
        ):
            continue
        if _is_own_name(store, name.name):
            own.add(name.name)
            continue
        kept.append(name.name)
    return kept, own


def _texts_with(store: GroupStore, words: list[str], limit: int) -> list[str]:
    if not words:
        return []
    match = " AND ".join(term_match(w) for w in words)
    rows = store.execute(
        "SELECT e.search_text FROM memory_fts f CROSS JOIN memory_entries e ON e.seq = f.rowid "
        f"WHERE memory_fts MATCH ? ORDER BY f.rowid DESC LIMIT {int(limit)}",
        (match,),
    )
    return [str(r[0] or "") for r in rows]


def _is_own_name(store: GroupStore, name: str) -> bool:
    plain = without_accents(name)
    for text in _texts_with(store, ["name", *fts.words(name)], 50) + _texts_with(
        store, ["goes", "by", *fts.words(name)], 50
    ):
        for m in _OWN_NAME.finditer(without_accents(text)):
            said = m.group("name") or m.group("alias")
            if plain == said or plain in said.split():
                return True
    return False


def as_the_user(query: str, own: set[str], user: str = "the user") -> str:
    """``query`` with the user's own name read as "the user" (or ``user``): "How many
    kids does Sam have?" asks what "User's son is Leo" answers."""
    for name in own:
        pattern = rf"(?<![\w.]){re.escape(name)}(?![\w-])"
        query = re.sub(pattern + r"(?:'s|’s)", f"{user}'s" if user else "", query)
        query = re.sub(pattern, user, query)
    return query


def _time(value: str | None) -> datetime | None:
    # Without an offset it is UTC; not a time at all (an older import's), unknown.
    return stored_time(value, "last_seen_at")
