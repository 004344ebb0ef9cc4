"""Telling two close sentences apart by their words.

Near-duplicates (:mod:`core.recall.duplicates`) and the brief's rewordings pair two
memories whose vectors are close; the vectors alone cannot tell "User lives in the
north of Spain" from "... the south of Spain" (cosine 0.97, higher than most
rewordings). :func:`told_apart` reads the words for what says they are two facts.

Its last rule is general rather than a list: when two sentences are the same
apart from a word swapped for another in one place, the swap makes another fact
unless the two words are one word spelt two ways ("favourite", "favorite") or the
swap is the verb that ties the subject to the rest ("User likes tea", "The user
enjoys tea"). Embedding the two words alone with the shipped model does not tell
a synonym from an opposite: "likes"/"enjoys" scores 0.56 and "lives"/"based" 0.42,
while "north"/"south" scores 0.67, "vegetarian"/"vegan" 0.75 and
"uppercase"/"lowercase" 0.90 (docs/search.md, "Near-duplicates").
"""

from __future__ import annotations

import difflib
import re
from typing import Final

_WORD = re.compile(r"\d+(?:[.:,/-]\d+)*|[^\W\d_][\w'’-]*")
#: Words that tell two facts apart when each side names a different one: when, how
#: many, and who or what a fact is about ("Zara's cousin", "Zara's aunt").
_NAMED = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march "
    "april may june july august september october november december one two three "
    "four five six seven eight nine ten eleven twelve first second third fourth fifth "
    "zero none mother father mom dad sister brother son daughter aunt uncle cousin niece "
    "nephew grandmother grandfather grandma grandpa wife husband partner girlfriend "
    "boyfriend fiancee fiance manager boss colleague coworker neighbour neighbor roommate "
    "dog cat puppy kitten rabbit hamster parrot bird fish horse tortoise turtle".split()
)
#: A fact said not to hold (or no longer to) is not the same fact.
_NOT_NOW = frozenset(
    "not no never without nor cannot neither used formerly former previously anymore "
    "longer stopped quit".split()
)
#: Words of which one side saying one and the other side the other makes two facts
#: ("dark roast", "light roast"): at 0.85 such pairs score as high as rewordings.
#: Verbs are here in their plain form ("hate" stands for "hates" and "hated").
_OPPOSITE_PAIRS = (
    "dark light",
    "hot cold",
    "warm cold",
    "early late",
    "early later",
    "earlier later",
    "morning afternoon",
    "morning evening",
    "morning night",
    "afternoon evening",
    "afternoon night",
    "evening night",
    "sunrise sunset",
    "dawn dusk",
    "noon midnight",
    "am pm",
    "daytime nighttime",
    "weekday weekend",
    "before after",
    "more less",
    "more fewer",
    "most least",
    "up down",
    "upstairs downstairs",
    "upper lower",
    "above below",
    "inside outside",
    "indoor outdoor",
    "indoors outdoors",
    "north south",
    "east west",
    "northern southern",
    "eastern western",
    "northeast southwest",
    "northwest southeast",
    "left right",
    "front back",
    "like dislike",
    "like hate",
    "enjoy hate",
    "love hate",
    "love dislike",
    "prefer avoid",
    "like avoid",
    "enjoy avoid",
    "allowed forbidden",
    "allow forbid",
    "accept reject",
    "include exclude",
    "enable disable",
    "buy sell",
    "teach learn",
    "win lose",
    "send receive",
    "import export",
    "upload download",
    "increase decrease",
    "high low",
    "big small",
    "long short",
    "fast slow",
    "cheap expensive",
    "old new",
    "young old",
    "first last",
    "start stop",
    "start end",
    "begin end",
    "open closed",
    "online offline",
    "minimum maximum",
    "min max",
    "always never",
    "always sometimes",
    "always rarely",
    "often rarely",
    "often seldom",
    "usually rarely",
    "sometimes never",
    "married single",
    "married divorced",
    "sweet savoury",
    "sweet savory",
    "beginner expert",
    "junior senior",
    "frontend backend",
    "uppercase lowercase",
    "vegetarian vegan",
)
_OPPOSITES: dict[str, frozenset[str]] = {}
for _pair in _OPPOSITE_PAIRS:
    _one, _other = _pair.split()
    _OPPOSITES[_one] = _OPPOSITES.get(_one, frozenset()) | {_other}
    _OPPOSITES[_other] = _OPPOSITES.get(_other, frozenset()) | {_one}
#: Prefixes that turn a word into its opposite ("employed", "unemployed").
_NEGATING: Final = ("un", "dis", "non-", "non", "in", "im", "ir", "il")
_COMPARING = frozenset("over than instead versus vs before after".split())
#: Words whose presence or absence never makes two sentences different facts.
_FILLER = frozenset(
    "a an the is are was were be been am this that these those to of in on at it its "
    "rather s".split()
)
#: Words before a sentence's subject ("The user", "My sister").
_DETERMINERS = frozenset("the a an my our your their his her its this that".split())
_COPULAS = frozenset("is are was were am be been".split())
#: Words that open a sentence and are capitalised only for that: never a name there
#: ("The project uses PostgreSQL 16", "This project runs on PostgreSQL 16"). A word
#: not listed keeps counting as a name in first place ("Alice likes tea").
_OPENERS = _DETERMINERS | frozenset(
    "these those he she it they we you i there here what which who when where why how "
    "if as so and but or also now then currently usually always often sometimes still "
    "every each all some any most both for from with by in on at to after before since "
    "while once today yesterday tomorrow please".split()
)
#: Where a sentence ends: a word after one (or at the start of the text) opens one.
_SENTENCE_END = re.compile(r"[.!?]\s*$|\n\s*$")
#: Two spellings of one word ("favourite", "favorite"; "allergic", "allergy") are at
#: least this alike letter by letter (difflib's ratio); "vegetarian"/"vegan" is 0.67,
#: "north"/"south" 0.6, "upstairs"/"downstairs" 0.67.
SPELLING_RATIO: Final = 0.8


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _openers(text: str) -> set[int]:
    """The positions (in :func:`_words`) of the words that open a sentence."""
    out = set()
    end = 0
    for n, match in enumerate(_WORD.finditer(text)):
        before = text[end : match.start()]
        if n == 0 or _SENTENCE_END.search(before):
            out.add(n)
        end = match.end()
    return out


def _fold(word: str) -> str:
    """A word without case, possessive or plural ending."""
    w = word.casefold().replace("’", "'")
    w = w.removesuffix("'s").removesuffix("'")
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss") and not w[-2].isdigit():
        w = w[:-1]
    return w


def _named(words: list[str], openers: set[int]) -> set[str]:
    """Names (capitalised words), numbers and the words of :data:`_NAMED`.

    A word that opens a sentence (its position in ``openers``) is capitalised for
    that alone when it is one of :data:`_OPENERS`, so it is not a name.
    """
    out = set()
    for n, w in enumerate(words):
        folded = _fold(w)
        capital = w[:1].isupper() and w != "I"
        if capital and n in openers and folded in _OPENERS:
            capital = False
        if any(c.isdigit() for c in w) or folded in _NAMED or capital:
            out.add(folded)
    return out


def _forms(word: str) -> set[str]:
    """``word`` (folded) and the plain forms it may be of: "hate" for "hated",
    "teach" for "teaches" (folded to "teache"), "start" for "starting"."""
    out = {word}
    for end in ("e", "d", "ed", "ing", "ly"):
        if word.endswith(end) and len(word) > len(end) + 2:
            out.add(word.removesuffix(end))
    return out


def _opposite(a: str, b: str) -> bool:
    """Whether one word is the other's opposite, by :data:`_OPPOSITE_PAIRS` or by a
    negating prefix ("unemployed", "dislikes")."""
    if "-" in a or "-" in b:  # "left-handed", "right-handed"
        parts_a, parts_b = set(a.split("-")), set(b.split("-"))
        if any(_opposite(x, y) for x in parts_a - parts_b for y in parts_b - parts_a):
            return True
    forms_a, forms_b = _forms(a), _forms(b)
    if any(_OPPOSITES.get(f, frozenset()) & forms_b for f in forms_a):
        return True
    for one, other in ((a, b), (b, a)):
        for prefix in _NEGATING:
            if one.startswith(prefix) and len(other) > 2 and one.removeprefix(prefix) == other:
                return True
    return False


def _around(words: list[str]) -> tuple[str, str] | None:
    """The words either side of the first comparing word ("tabs over spaces")."""
    for i, w in enumerate(words):
        if w in _COMPARING:
            before = [x for x in words[:i] if x not in _FILLER and x not in _COMPARING]
            after = [x for x in words[i + 1 :] if x not in _FILLER and x not in _COMPARING]
            if before and after:
                return before[-1], after[0]
    return None


def _verb_slot(raw: list[str]) -> int | None:
    """Where the verb that follows the sentence's subject is, if it looks like one.

    The subject is the first word after any determiners, with the word after it
    when it is a possessive ("User's sister"). The verb is the next word; after
    "is" or "was" only a participle is one ("is based", "is named", "is learning"),
    since the word after is otherwise what the subject is ("is vegan").
    """
    i = 0
    while i < len(raw) and raw[i].casefold() in _DETERMINERS:
        i += 1
    if i >= len(raw):
        return None
    if raw[i].casefold().replace("’", "'").endswith("'s"):
        i += 1
    i += 1
    copula = False
    while i < len(raw) and raw[i].casefold() in _COPULAS:
        copula, i = True, i + 1
    if i >= len(raw):
        return None
    word = raw[i].casefold()
    if copula and not (len(word) > 4 and word.endswith(("ed", "ing"))):
        return None  # "is vegan", "is red": what the subject is
    return i


def _spelt_alike(a: str, b: str) -> bool:
    """Whether two words are one word spelt two ways; the parts of a hyphenated word
    they share do not count ("left-handed", "right-handed" are "left", "right")."""
    parts_a, parts_b = a.split("-"), b.split("-")
    a = "-".join(p for p in parts_a if p not in parts_b) or a
    b = "-".join(p for p in parts_b if p not in parts_a) or b
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= SPELLING_RATIO


def _swapped(a: Wording, b: Wording) -> bool:
    """Whether the sentences are the same but for a word swapped for another word
    that is neither spelt alike nor the verb after the subject on either side.

    Only sentences that share at least half of each one's words are read so:
    in a sentence said another way ("Neovim is User's editor of choice") the
    words that line up are not a swap. A word that is elsewhere in the other
    sentence was moved, not swapped.
    """
    ca, cb = a.content, b.content
    set_a, set_b = a.content_set, b.content_set
    shared = len(set_a & set_b)
    if not shared or 2 * shared < len(set_a) or 2 * shared < len(set_b):
        return False
    slot_a, slot_b = a.verb_slot, b.verb_slot
    matcher = difflib.SequenceMatcher(None, a.content_words, b.content_words, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        left = [(i, w) for i, w in ca[i1:i2] if w not in set_b]
        right = [(j, w) for j, w in cb[j1:j2] if w not in set_a]
        if not left or not right:
            continue  # moved, not swapped
        verb_a = len(left) == 1 and left[0][0] == slot_a
        verb_b = len(right) == 1 and right[0][0] == slot_b
        if verb_a or verb_b:
            continue  # the verb said another way: "likes" and "enjoys", "lives" and "is based"
        words_a, words_b = [w for _, w in left], [w for _, w in right]
        alike = all(any(_spelt_alike(x, y) for y in words_b) for x in words_a) and all(
            any(_spelt_alike(y, x) for x in words_a) for y in words_b
        )
        if not alike:
            return True
    return False


class Wording:
    """One sentence read once for :func:`differ`: its words, folded, and what they name.

    Comparing one memory with hundreds of close ones reads it once, not per pair.
    """

    __slots__ = (
        "around",
        "content",
        "content_set",
        "content_words",
        "folded",
        "folded_set",
        "named",
        "turned",
        "verb_slot",
    )

    def __init__(self, text: str) -> None:
        raw = _words(text)
        folded = [_fold(w) for w in raw]
        self.folded = folded
        self.folded_set = frozenset(folded)
        self.named = _named(raw, _openers(text))
        self.turned = any(w in _NOT_NOW or w.endswith("n't") for w in folded)
        self.around = _around(folded)
        self.content = [(i, w) for i, w in enumerate(folded) if w not in _FILLER]
        self.content_words = [w for _, w in self.content]
        self.content_set = frozenset(self.content_words)
        self.verb_slot = _verb_slot(raw)


def told_apart(a: str, b: str) -> bool:
    """Whether the words of two close sentences say they are different facts.

    True when each names something the other does not (a name, number, weekday,
    month, relative or pet), when one says "not", "no longer" or "used to" and the
    other does not, when one says a word and the other its opposite ("dark",
    "light"; "employed", "unemployed": see :data:`_OPPOSITE_PAIRS`), when a
    comparison is turned round ("tabs over spaces", "spaces over tabs"), or when
    they are the same sentence but for a word swapped for another that is not the
    same word spelt otherwise nor the verb after the subject ("User is vegetarian",
    "User is vegan"; not "User likes tea", "The user enjoys tea").
    """
    return differ(Wording(a), Wording(b))


def differ(a: Wording, b: Wording) -> bool:
    """:func:`told_apart` of two sentences already read."""
    # A capitalised word the other sentence has in any case is not a difference: the
    # first word of a sentence ("User", "The") is capitalised on one side only.
    named_a, named_b = a.named - b.folded_set, b.named - a.folded_set
    if named_a and named_b:
        return True
    if a.turned != b.turned:
        return True
    only_a, only_b = a.folded_set - b.folded_set, b.folded_set - a.folded_set
    if any(_opposite(x, y) for x in only_a for y in only_b):
        return True
    around_a, around_b = a.around, b.around
    # "tabs over spaces" against "spaces over tabs": the same words, the other way round.
    if around_a is not None and around_a[0] != around_a[1] and around_a == (around_b or ())[::-1]:
        return True
    return _swapped(a, b)
