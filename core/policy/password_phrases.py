"""Passwords of more than one word, said after "password is" or "passphrase:".

A password of one word is the word after "is"; one of several has no mark
where it ends, so the clause's shape decides (:mod:`core.policy.prose_words`):
Google's app password after "app password" ("abcd efgh ijkl mnop"), a quoted
phrase ("'Summer 2024 rocks'"), three to eight words that close the clause
("correct horse battery staple"), or a word and a number or another word
("hunter two", "Hunter two", "hunter dragon").
"""

from __future__ import annotations

import re

from core.policy.prose_words import (
    ADJECTIVE,
    CLAUSE_END,
    CLAUSE_WORDS,
    COMPOUNDS,
    FUNCTION_WORDS,
    INSTRUCTIONS,
    PREDICATE,
    PROSE_WORDS,
    QUALIFIERS,
)
from core.policy.rule_types import Span

# Google's app password: four groups of four lower-case letters, after "app password".
_APP_PASSWORD = re.compile(r"[a-z]{4}(?:[ \t][a-z]{4}){3}(?![\w-])")
_APP_BEFORE = re.compile(
    r"(?<![\w-])(?:app(?:[ \t-]+specific)?|application[ \t-]+specific)[ \t-]+\Z", re.IGNORECASE
)
_QUOTED = re.compile(
    r"[\"'\u201c\u2018](?P<inner>[^\"'\u201c\u201d\u2018\u2019\r\n]{1,80})[\"'\u201d\u2019]"
)
# A password said plainly: three to eight words of letters or digits that close the
# clause (a stop, a comma and the like, the end of the line or of the text).
_PLAIN = re.compile(
    r"[A-Za-z0-9]+(?:[ \t]+[A-Za-z0-9]+){2,7}"
    rf"(?={CLAUSE_END})"
)
# A password of two words closing the clause: a word, then a number in figures
# or in words ("hunter two", "dragon 7") or a second word in lower case ("hunter
# dragon"). A word with a capital before figures is a name and its version
# ("Bitwarden 8", "Windows 11"); before a number in words it is a password's
# ("Hunter two").
_NUMBER_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety|hundred)"
)
_PAIR = re.compile(
    rf"(?P<word>[A-Za-z][a-z]{{2,}})[ \t]+"
    rf"(?:(?P<figures>\d{{1,8}})|{_NUMBER_WORD}(?![a-z])|(?P<second>[a-z]{{3,}}))"
    rf"(?={CLAUSE_END})"
)
# Nouns a number labels or bounds: "the password is step two", "is priority one",
# "is min 8" say which or how much, not what.
_NUMBERED = frozenset(
    """number num no step part phase stage level tier round priority factor option choice
    item point rule section chapter page line table figure version release build day
    week month year hour minute attempt try count type class grade rank size length min
    max minimum maximum top""".split()
)
_NOT_PAIR_WORDS = PROSE_WORDS | CLAUSE_WORDS | COMPOUNDS | INSTRUCTIONS | _NUMBERED
_A_NUMBER = re.compile(_NUMBER_WORD)


def phrase(m: re.Match[str], noun: str) -> Span | None:
    """The span of a password of several words, or None: Google's app password
    ("abcd efgh ijkl mnop"), a quoted phrase ("Summer 2024 rocks"), a
    passphrase said plainly ("correct horse battery staple"), or two words
    ("hunter two", "hunter dragon")."""
    text, start = m.string, m.start("value")
    if _APP_BEFORE.search(text, max(0, m.start("noun") - 24), m.start("noun")):
        app = _APP_PASSWORD.match(text, start)
        if app is not None:
            return app.span()
    quoted = _QUOTED.match(text, start)
    if quoted is not None:
        words = [w.strip(".,;:!?()").lower() for w in quoted.group("inner").split()]
        if len(words) >= 2 and _reads_as_one(words, min_words=2):
            return quoted.span("inner")
        return None
    # After "passphrase" a plain phrase may follow "is" or ":"; after "password",
    # only "is" ("Password: Bitwarden team vault" is a label saying where it is).
    said = (m.groupdict().get("sep") or "").strip().lower()
    if "phrase" in noun or said in ("is", "was"):
        plain = _PLAIN.match(text, start)
        if plain is not None and _plain_phrase(plain.group().lower().split()):
            return plain.span()
        pair = _PAIR.match(text, start)
        if (
            pair is not None
            and not (pair.group("figures") and pair.group("word")[0].isupper())
            and _pair(pair.group("word").lower(), pair.group("second"), said)
        ):
            return pair.span()
    return None


def _pair(word: str, second: str | None, said: str) -> bool:
    """Whether ``word`` and a number or a ``second`` word, closing the clause
    after "password is", read as a password of two words ("hunter two", "hunter
    dragon") rather than a clause ("is under 12", "is step two", "is expiring 2",
    "is rarely used", "is case sensitive"): no word a clause or talk about
    passwords is made of, no participle or adverb, no noun a number labels or
    bounds. A second word follows "is" only ("Passphrase: Bitwarden note" is a
    label), and then neither word qualifies a password or says what it is made
    of, the first is no number ("is one time"), and the second is not shaped as
    an adjective."""
    if not _pair_word(word):
        return False
    if second is None:
        return True
    if said not in ("is", "was"):
        return False
    if _A_NUMBER.fullmatch(word) or not QUALIFIERS.isdisjoint((word, second)):
        return False
    return ADJECTIVE.fullmatch(second) is None and _pair_word(second)


def _pair_word(word: str) -> bool:
    return word not in _NOT_PAIR_WORDS and PREDICATE.fullmatch(word) is None


def _plain_phrase(words: list[str]) -> bool:
    """Whether unquoted ``words`` closing a clause after "password is" read as a
    made-up password ("correct horse battery staple", "purple monkey dishwasher
    42") rather than the rest of a sentence about one ("shared between staging
    environments", "rarely used anymore"). Nothing in quotes marks where such a
    password starts or ends, so the whole clause must read as one: two words of
    letters at least, none a word a clause needs, none after the first a word of
    talk about passwords, and a first word that is neither a participle nor an
    adverb."""
    if sum(w.isalpha() for w in words) < 2 or PREDICATE.fullmatch(words[0]):
        return False
    if any(w in CLAUSE_WORDS for w in words):
        return False
    if any(w in COMPOUNDS for w in words[1:]):
        return False  # "Bitwarden team vault", "company login entry"
    return _reads_as_one(words, min_words=3)


def _reads_as_one(words: list[str], *, min_words: int) -> bool:
    """Whether ``words`` read as one made-up password rather than a sentence: no
    function word, no word of talk about passwords after the first, and a first
    word that opens no instruction. A first word such as "correct" can open a
    phrase ("correct horse battery staple") or a judgement ("correct as typed"),
    so a phrase that starts with one needs a word more."""
    first, others = words[0], words[1:]
    if first in FUNCTION_WORDS or first in INSTRUCTIONS or any(w in PROSE_WORDS for w in others):
        return False
    return len(words) >= min_words + (first in PROSE_WORDS)
