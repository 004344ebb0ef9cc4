"""Turning what a person or agent types into a safe FTS5 query.

Every word is quoted, so FTS5 syntax in user text (``NOT``, ``NEAR``, ``"``,
``*``, ``:``, parentheses) is searched as words and can never raise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from core.model.text import plain_forms

_WORD = re.compile(r"\w+", re.UNICODE)
#: More terms than this add nothing to ranking and only slow the query down.
MAX_TERMS = 32

# Words that match most entries; dropped when the query has anything else.
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)


def words(text: str) -> list[str]:
    """The searchable words of ``text``, lower-cased, in order, without repeats."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(text):
        seen.setdefault(match.group(0).casefold(), None)
    return list(seen)


#: Scripts written without spaces between words (Han, kana) or with particles
#: joined to them (hangul): the index's tokenizer keeps a whole run as one token, so
#: a word inside a sentence ("芒果" in "用户最喜欢的水果是芒果") never matches.
_UNSPACED = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f]+"
)
#: Pictographs (emoji, symbols) the tokenizer skips as separators: each is looked
#: for on its own.
_PICTOGRAPHS = re.compile("[\u2600-\u27bf\u2b00-\u2bff\U0001f000-\U0001faff]")
#: Either: most stored text has neither, and one search says so.
_HAS_GRAMS = re.compile(f"{_UNSPACED.pattern[:-1]}|{_PICTOGRAPHS.pattern}")
#: Most pieces one query looks for in the gram index.
MAX_GRAMS = 12


#: Characters that mostly join or mark words (Chinese function words, Japanese
#: particles, Korean case endings): a pair holding one says little, and a long
#: question is mostly such pairs ("请问我以前说过的…名字是什么", before the name).
_FUNCTION_CHARACTERS = frozenset(
    "的了是我你他她它们吗呢吧啊在有和就都也这那么个什のはがをにでともへやかねよ은는이가을를의에도"
)


def unspaced_pieces(text: str) -> list[str]:
    """The runs of unspaced script and the pictographs of ``text``, as written: what
    the word index cannot match inside longer text."""
    return list(dict.fromkeys([*_UNSPACED.findall(text), *_PICTOGRAPHS.findall(text)]))


def without_unspaced(text: str) -> str:
    """``text`` less its :func:`unspaced_pieces`, for the words the index can match."""
    return _PICTOGRAPHS.sub(" ", _UNSPACED.sub(" ", text))


def unspaced_grams(text: str) -> list[str]:
    """The pieces of a query ``text`` the word index cannot match, to look up in
    the gram index (:func:`text_grams`, :func:`gram_match`): each pair of
    neighbouring characters of an unspaced run (the usual length of a word in
    these scripts), or the character of a run of one, leaving out the pairs with
    a function character when others remain; and each emoji."""
    grams: dict[str, None] = {}
    for run in _UNSPACED.findall(text):
        pieces = [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
        grams.update(dict.fromkeys(pieces))
    telling = [g for g in grams if not _FUNCTION_CHARACTERS.intersection(g)]
    kept = telling or list(grams)
    return [*kept, *dict.fromkeys(_PICTOGRAPHS.findall(text))][:MAX_GRAMS]


def text_grams(text: str) -> str:
    """What the gram index (``memory_grams``, ``exchange_grams``) holds for stored
    ``text``, space-separated, each once: every pair of neighbouring characters of
    an unspaced run, the run's last character on its own, and each pictograph; an
    empty string when there are none, as for most text in spaced scripts.

    Every character of a run starts a pair or ends the run, so the one character
    of a query run of one is found as a prefix (:func:`gram_match`) wherever it is.
    """
    if not _HAS_GRAMS.search(text):
        return ""
    grams: dict[str, None] = {}
    for run in _UNSPACED.findall(text):
        grams.update(dict.fromkeys(run[i : i + 2] for i in range(len(run) - 1)))
        grams[run[-1]] = None
    grams.update(dict.fromkeys(_PICTOGRAPHS.findall(text)))
    return " ".join(grams)


def entry_grams(search_text: str, tags: Iterable[str]) -> str:
    """:func:`text_grams` of what ``memory_fts`` indexes of an entry: its search
    text (empty for a private or secret entry) and its tags."""
    return text_grams("\n".join([search_text, *tags]))


#: Rows of the gram index read per piece of a query, newest first: the bound on
#: the work of one query at any size. A piece held by more rows counts for the
#: newest this many only (under 10,000 rows, every row is read).
GRAM_CANDIDATES = 10_000


def gram_match(gram: str) -> str:
    """The FTS5 query for one piece of :func:`unspaced_grams` in a gram index: a pair
    as a token, one character as the prefix of a token."""
    return _quote(gram) + ("*" if len(gram) == 1 else "")


def grams_held(
    index: str, grams: Sequence[str], also: str = "", params: Sequence[Any] = ()
) -> tuple[str, list[Any]]:
    """SQL for the rows of the gram index ``index`` holding pieces ``grams``, as
    ``seq`` and how many of them each holds (``held``), and its parameters: each
    piece is looked up among the :data:`GRAM_CANDIDATES` newest rows holding it.

    ``also``: a condition the rows must meet too (on ``{index}.rowid``), applied
    before the newest are taken; ``params`` are its parameters.
    """
    where = f"AND {also} " if also else ""
    one = (
        f"SELECT rowid AS seq FROM {index} WHERE {index} MATCH ? {where}"
        f"ORDER BY rowid DESC LIMIT {GRAM_CANDIDATES}"
    )
    each = " UNION ALL ".join([f"SELECT seq FROM ({one})"] * len(grams))
    sql = f"SELECT seq, count(*) AS held FROM ({each}) GROUP BY seq"
    return sql, [p for g in grams for p in (gram_match(g), *params)]


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def query_terms(text: str) -> list[str]:
    """The words of a query worth searching for: stopwords go when anything else is left."""
    terms = words(text)
    content = [t for t in terms if t not in STOPWORDS]
    return (content or terms)[:MAX_TERMS]


#: A letter or digit: what a word of the index is made of (``_`` is not one).
_WORD_CHARACTER = re.compile(r"[^\W_]")


def searchable(text: str) -> bool:
    """Whether a query ``text`` holds anything to look for: a letter or digit (a word
    of the index), or unspaced script or a pictograph (the gram index).

    Punctuation and symbols alone ("%", "?", "(", "\\") match no entry by its
    words, and their meaning is noise: such a query finds nothing in any mode.
    """
    return bool(_WORD_CHARACTER.search(text) or _HAS_GRAMS.search(text))


def match_expression(terms: list[str], *, prefix_last: bool = False) -> str:
    """OR the quoted terms (:func:`term_match`); with ``prefix_last`` the final one
    also matches as a prefix."""
    last = len(terms) - 1
    return " OR ".join(term_match(t, prefix=prefix_last and i == last) for i, t in enumerate(terms))


def term_match(term: str, *, prefix: bool = False) -> str:
    """The FTS5 query for one term, quoted (``prefix``: as the start of a word too).

    A term written in compatibility forms (full-width "ｃａｆｅ", half-width kana)
    matches as written or in its plain form (:func:`~core.model.text.plain_forms`,
    "cafe"): the index holds words as they were written, so "ＣＡＦＥ" finds both
    "ＣＡＦＥ" and "café".
    """
    star = "*" if prefix else ""
    plain = plain_forms(term).casefold()
    if plain == term:
        return _quote(term) + star
    return f"({_quote(term)}{star} OR {_quote(plain)}{star})"


def build_match(text: str, *, prefix_last: bool = False) -> str | None:
    """An FTS5 MATCH expression for ``text``, or ``None`` if it has no words.

    Terms are OR-ed and ranked by bm25, so an entry matching more of the words
    ranks higher but one matching only some is still found. With
    ``prefix_last`` the final word also matches as a prefix (search as you type).
    """
    terms, typing = typed_terms(text)
    if not terms:
        return None
    return match_expression(terms, prefix_last=prefix_last and typing)


#: A word being typed matches as a prefix only once it is this long (shorter narrows nothing).
MIN_PREFIX = 2


def typed_terms(text: str) -> tuple[list[str], bool]:
    """:func:`query_terms` of ``text``, and whether its last one is the word being typed.

    The last term is still being typed when it is the text's last word (not a
    dropped stopword) and at least :data:`MIN_PREFIX` characters long.
    """
    terms = query_terms(text)
    if not terms:
        return terms, False
    return terms, terms[-1] == words(text)[-1] and len(terms[-1]) >= MIN_PREFIX
