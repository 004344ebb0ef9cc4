"""What memory and exchange search share: modes, the query's vector, fusion.

A search gathers candidates two ways, FTS5 bm25 over the words and cosine
similarity over sentence vectors, and scores every candidate on both:

    relevance = SEMANTIC_WEIGHT * semantic + (1 - SEMANTIC_WEIGHT) * keyword

where ``semantic`` maps cosine similarity onto 0..1 (:func:`semantic_strength`)
and ``keyword`` is the candidate's bm25 strength as a fraction of the best one.
A weighted sum keeps how strong each signal's evidence is, where reciprocal
rank fusion keeps only a result's place in each list (``docs/search.md``).
Recency, confidence and thread then adjust it, each by a bounded amount, so
the final ``score`` stays in 0..1.
"""

from __future__ import annotations

import calendar
import math
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from core.model.errors import InvalidParams
from core.model.text import plain_forms, without_accents
from core.semantic.embedding import (
    Embedder,
    EmbeddingUnavailable,
    forget_shared,
    loaded_model_id,
    shared_embedder,
)
from core.semantic.vectors import VectorIndex, VectorTable
from core.storage import fts
from core.storage.fts import query_terms

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Share of relevance that comes from meaning rather than shared words.
SEMANTIC_WEIGHT: Final = 0.6
#: Cosine similarity at or below which two texts are taken as unrelated, and the
#: one at which they count as the same statement (MiniLM's scale).
COSINE_FLOOR: Final = 0.15
COSINE_FULL: Final = 0.8
#: A query more than this share of whose tokens the model does not know (most
#: Chinese, Japanese or Korean text and emoji, to the shipped English model) has
#: no meaning it can compare: every such text gets nearly the same vector, so it
#: would rank unrelated entries in those scripts first.
UNREADABLE: Final = 0.5
#: A result found only by its vector needs at least this similarity in ``auto`` mode.
MIN_SEMANTIC_ONLY: Final = 0.3
#: Candidates taken from each signal before fusion.
CANDIDATES: Final = 50
#: The most matches bm25 ranks for one query (the most recent ones beyond it).
MAX_RANKED: Final = 20_000
#: Confidence moves a memory's score by at most this fraction.
CONFIDENCE_WEIGHT: Final = 0.1


class Mode(StrEnum):
    AUTO = "auto"
    KEYWORD = "keyword"
    SEMANTIC = "semantic"


class Signal(StrEnum):
    """Why a result was found or ranked where it is."""

    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    RECENT = "recent"
    THREAD = "thread"
    SPEAKER = "speaker"
    DATE = "date"
    #: Says a time ("last year", "in May"), for a question asking when.
    WHEN = "when"
    CONTEXT = "context"
    NAME = "name"


#: Signals that say a result matched the search; the others (recent, thread, when)
#: only lift it. A result with none of these only fills a list little else matched.
MATCHED: Final = frozenset(
    s.value
    for s in (
        Signal.KEYWORD,
        Signal.SEMANTIC,
        Signal.NAME,
        Signal.SPEAKER,
        Signal.DATE,
        Signal.CONTEXT,
    )
)


def matched(signals: Iterable[str]) -> bool:
    """Whether ``signals`` say the result matched (:data:`MATCHED`), not only filled a list."""
    return not MATCHED.isdisjoint(signals)


def parse_mode(value: object) -> Mode:
    if value is None:
        return Mode.AUTO
    for mode in Mode:
        if value == mode.value:
            return mode
    raise InvalidParams(
        "mode must be one of: " + ", ".join(m.value for m in Mode), field="mode", rule="enum"
    )


# -- the query -------------------------------------------------------------------

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll"})


def keyword_terms(query: str) -> list[str]:
    """The query's search words; first-person words also look for "user".

    Memories are written about the person in the third person ("User's dog is
    named Luna"), so a question about "my dog" must reach them.
    """
    terms = query_terms(query)
    spoken = {w.casefold() for w in re.findall(r"[\w']+", query)}
    if spoken & FIRST_PERSON and "user" not in terms:
        terms.append("user")
    return terms


_QUESTION_WORDS = frozenset(
    "what when where who whom whose which why how do does did is are was were can could "
    "should would will has have".split()
)


def is_question(query: str) -> bool:
    """Asked in words ("Where does Mei live?"), not typed as keywords ("Mei Lisbon")."""
    words = query.split()
    return bool(words) and (query.rstrip().endswith("?") or words[0].casefold() in _QUESTION_WORDS)


def without_names(query: str) -> str | None:
    """A question less its capitalised words after the first, the names it is
    about ("How should Felix's notes look?" -> "How should notes look?"); None
    when ``query`` is not a question (keywords: their capitalised words are what
    is looked for), names nothing or asks nothing beside the names ("Who is Lucas?")."""
    words = query.split()
    if not is_question(query):
        return None
    rest = [w for w in words[1:] if not w[:1].isupper()]
    if len(rest) == len(words) - 1 or not set(fts.words(" ".join(rest))) - fts.STOPWORDS:
        return None
    return " ".join([words[0], *rest])


_NAME = re.compile(r"(?<![\w.])([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*(?:\s+[A-Z]\.)?)")
#: Capitalised words that name a time, not whom a memory is about: "Is there a
#: standup on Friday?" is not about someone called Friday. English, as the index's
#: stemmer is.
_TIME_WORDS: Final = frozenset(
    w.casefold()
    for w in (*calendar.day_name, *calendar.month_name)
    if w and w.casefold() != "may"  # "May" is as often a person's name
) | frozenset(w.casefold() + "s" for w in calendar.day_name)
#: "CI", "AWS", "PR": an all-capital word this short is an abbreviation of a thing,
#: not a name; many memories write it, few of them are what the question asks.
_ABBREVIATION = re.compile(r"[A-Z][A-Z0-9]{1,3}")


@dataclass(frozen=True, slots=True)
class AskedName:
    """A name a question holds, and whether it opens the question (where any word is
    capitalised: it names someone only if the store writes it so elsewhere)."""

    name: str
    opening: bool


def question_names(query: str) -> list[AskedName]:
    """The names a question holds, as written: capitalised words or runs of them
    after the question word, less days, months and short abbreviations."""
    found: list[AskedName] = []
    for m in _NAME.finditer(without_accents(query)):
        name = m.group(1)
        if name.endswith(("'s", "’s")):
            name = name[:-2]
        opening = m.start() == 0
        words = name.split()
        if opening and words[0].casefold() in _QUESTION_WORDS:
            words = words[1:]
            opening = False
        while words and _not_a_name(words[0]):
            words = words[1:]
            opening = False
        while words and _not_a_name(words[-1]):
            words = words[:-1]
        if not words or words == ["I"]:
            continue
        found.append(AskedName(" ".join(words), opening))
    return found


def _not_a_name(word: str) -> bool:
    return word.casefold() in _TIME_WORDS or bool(_ABBREVIATION.fullmatch(word))


def name_pattern(name: str) -> re.Pattern[str]:
    """A pattern matching ``name`` exactly: "Rosa" matches "Rosa's birthday", not
    "Rosa M.'s birthday"."""
    return re.compile(rf"(?<![\w.]){re.escape(name)}(?![\w-])(?!\s+[A-Z]\.)")


def names_in(query: str) -> list[re.Pattern[str]]:
    """Patterns for the names a question holds (:func:`question_names`), each matching
    the name exactly (:func:`name_pattern`). Accents do not count ("Jose" is "José"):
    match them with :func:`names_written`."""
    return [name_pattern(n.name) for n in question_names(query)]


def names_written(names: list[re.Pattern[str]], text: str) -> bool:
    """Whether ``text`` writes one of ``names`` (:func:`names_in`) as asked, accents aside."""
    if not names:
        return False
    plain = without_accents(text)
    return any(n.search(plain) for n in names)


@dataclass
class QueryVectors:
    """A small cache of query vectors: a person refines a query, an agent repeats one.

    A query the model cannot read (:data:`UNREADABLE`) is kept as None.
    """

    embedder: Embedder
    cache: OrderedDict[str, npt.NDArray[np.float32] | None]

    def vector(self, query: str) -> npt.NDArray[np.float32] | None:
        if query in self.cache:
            self.cache.move_to_end(query)
            return self.cache[query]
        found = None
        if self.embedder.unknown_share(query) <= UNREADABLE:
            found = self.embedder.encode([query])[0]
        self.cache[query] = found
        if len(self.cache) > 256:
            self.cache.popitem(last=False)
        return found


_query_vectors: dict[str, QueryVectors] = {}


def query_vector(query: str, model_dir: str) -> tuple[Embedder, npt.NDArray[np.float32]] | None:
    """The embedder and the query's vector; None when semantic search is off, or when
    the model cannot read the query (:data:`UNREADABLE`): then it ranks by words.

    The query is read in plain forms (:func:`~core.model.text.plain_forms`): the
    model knows "coffee", not "ＣＯＦＦＥＥ".
    """
    query = plain_forms(query)
    embedder = shared_embedder(model_dir)
    if embedder is None:
        return None
    cached = _query_vectors.get(model_dir)
    if cached is None or cached.embedder is not embedder:
        cached = _query_vectors[model_dir] = QueryVectors(embedder, OrderedDict())
    try:
        found = cached.vector(query)
    except EmbeddingUnavailable:  # the model failed on this text: it is off, logged once
        return None
    return None if found is None else (embedder, found)


# -- the vectors of an open store ------------------------------------------------------

_indexes: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], VectorIndex]] = (
    weakref.WeakKeyDictionary()
)
#: One copy of a file's vectors for every store object open on it (the desktop's
#: query thread and the agent server in the same process search the same group);
#: it goes when the last of them does.
_by_file: weakref.WeakValueDictionary[tuple[str, int, str, str], VectorIndex] = (
    weakref.WeakValueDictionary()
)
_by_file_lock = threading.Lock()


def vector_index(
    store: Any, kind: VectorTable, embedder: Embedder, *, at_most: int | None = None
) -> VectorIndex:
    """The up-to-date vectors of ``kind`` in ``store`` (one copy per file and model);
    with ``at_most``, at most that many more of them loaded (see :meth:`VectorIndex.refresh`)."""
    with _by_file_lock:
        per_store = _indexes.setdefault(store, {})
    key = (kind.table, embedder.model_id)
    index = per_store.get(key)
    if index is None:
        path = Path(store.path).resolve()
        # The inode too: a file deleted and made anew at the same path is another store.
        file_key = (str(path), path.stat().st_ino, kind.table, embedder.model_id)
        with _by_file_lock:
            index = _by_file.get(file_key)
            if index is None:
                index = VectorIndex(kind, embedder.model_id, embedder.dimensions)
                _by_file[file_key] = index
        per_store[key] = index
    index.refresh(store.conn, at_most=at_most)
    return index


def release_model(model_dir: str) -> None:
    """Free what the model of ``model_dir`` holds in this process once another has taken
    its place: the loaded model, its cached query vectors and every store's copy of its
    vectors. A search still running with them keeps them until it returns."""
    _query_vectors.pop(model_dir, None)
    model_id = loaded_model_id(model_dir)
    if model_id is not None:
        with _by_file_lock:
            stores = list(_indexes.values())
        for per_store in stores:
            for key in [k for k in list(per_store) if k[1] == model_id]:
                per_store.pop(key, None)
    forget_shared(model_dir)


# -- scoring ---------------------------------------------------------------------------


def semantic_strength(cosine: float) -> float:
    """Cosine similarity as 0..1: 0 at :data:`COSINE_FLOOR`, 1 at :data:`COSINE_FULL`."""
    return min(1.0, max(0.0, (cosine - COSINE_FLOOR) / (COSINE_FULL - COSINE_FLOOR)))


def keyword_strengths(bm25: dict[int, float]) -> dict[int, float]:
    """bm25 scores (lower is better) as fractions of the best one."""
    best = max((-s for s in bm25.values()), default=0.0)
    if best <= 0.0:
        return {k: 1.0 for k in bm25}
    return {k: max(0.0, -s) / best for k, s in bm25.items()}


def with_pieces(bm25: dict[int, float], pieces: dict[int, int], asked: int) -> dict[int, float]:
    """``bm25`` with the matches of an unspaced query's pieces ({seq: pieces held} of
    ``asked``) as keyword matches: one holding every piece as strong as the best."""
    if not pieces:
        return bm25
    best = max((-score for score in bm25.values()), default=1.0) or 1.0
    merged = dict(bm25)
    for seq, held in pieces.items():
        merged[seq] = min(merged.get(seq, 0.0), -best * held / asked)
    return merged


def relevance(
    semantic: float | None, keyword: float, mode: Mode, weight: float = SEMANTIC_WEIGHT
) -> float:
    """Fuse the two signals (``semantic`` None: no vector for this row, or none at all)."""
    if mode is Mode.KEYWORD or semantic is None:
        return keyword
    if mode is Mode.SEMANTIC:
        return semantic_strength(semantic)
    return weight * semantic_strength(semantic) + (1 - weight) * keyword


def recency(at: datetime | None, now: datetime, half_life_days: float) -> float:
    """1.0 for now, 0.5 one half-life ago, toward 0 for the distant past."""
    if at is None:
        return 0.0
    age_days = max(0.0, (now - at).total_seconds() / 86_400)
    return math.pow(0.5, age_days / max(half_life_days, 1e-6))


def adjusted(base: float, recent: float, recency_weight: float) -> float:
    """Blend in recency: it can lift a result by at most ``recency_weight`` of the scale."""
    return (1 - recency_weight) * base + recency_weight * recent * min(1.0, base * 2)


def rounded(score: float) -> float:
    return round(min(1.0, max(0.0, score)), 4)
