"""The speakers a question names ("What did Sam say?"), as their names were logged.

A name is metadata of a turn, not one of its words: a question naming a speaker
makes their turns candidates (:mod:`core.continuity.exchange_candidates`). Every
name is looked up in the name index (case-blind), one seek each, never by reading
the turns a name said (a speaker of 30,000 turns would cost milliseconds a question).

What may be a name:

- a word as written, its hyphens and apostrophes kept ("Mary-Jane", "O'Brien" or
  "O’Brien", either apostrophe finding the other): one name, which neither
  "Mary" nor "Mary Jane" is; a possessive "'s" is not part of it;
- with capitals in the question, only its capitalised words and the pairs they
  begin ("Sam Okafor"): the common words around a name are no names; typed all
  in lower case, any word but a stopword;
- a word of a script without capitals (Chinese, Japanese, Korean, Arabic...),
  always: it names someone only when a speaker was logged with it, as written;
- inside text written without spaces ("李雷说了什么"), every stretch of 2 to
  :data:`MAX_UNSPACED_NAME` characters: only those logged as a name match.

A word names the speaker logged with it and those whose full names it begins
("Sam" names "Sam Okafor"), accents aside ("Jose" names "José Ruiz").
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Final

from core.model.text import without_accents
from core.storage.fts import STOPWORDS, unspaced_pieces
from core.storage.store import GroupStore

#: At most this many names are taken for one first name, itself among them ("Sam" for
#: "Sam", "Sam Okafor", "Sam Lee"...).
MAX_NAMES_IN_RANGE: Final = 20
#: At most this many words and word pairs of one question are looked up.
MAX_WORDS: Final = 40
#: The longest name looked for inside a run of unspaced text, and how many
#: stretches of such runs one question looks up at most.
MAX_UNSPACED_NAME: Final = 8
MAX_STRETCHES: Final = 240

#: A word of a name: letters and digits joined by hyphens or apostrophes.
_WORD = re.compile(r"\w+(?:['’-]\w+)*")
_APOSTROPHES = "'’"


def speakers_named(store: GroupStore, query: str) -> set[str]:
    """The speaker names that ``query`` mentions (see the module notes), as logged."""
    words = _words(query)
    if query == query.lower():
        # Typed all in lower case ("what did sam say"): any word but a stopword may
        # be a name; with capitals, only the capitalised ones are.
        words = [w[:1].upper() + w[1:] if w not in STOPWORDS else w for w in words]
    grams = {w for w in words if _may_name(w)} | {
        f"{a} {b}" for a, b in itertools.pairwise(words) if _may_name(a)
    }
    found: set[str] = set()
    # A word of a full name found ("Sam" of "Sam Okafor") names no one else.
    within: set[str] = set()
    # Word pairs first.
    for gram in sorted(grams, key=lambda g: (" " not in g, g))[:MAX_WORDS]:
        if " " not in gram:
            if gram.casefold() not in within:
                for form in _spellings(gram):
                    # The name itself, and the full names it is the first of ("Mary"
                    # for "Mary Jane"): the names from "mary" up to "mary!".
                    found |= _names_in_range(store, form, f"{form}!") or (
                        set() if _caseless(form) else _accents_aside(store, form)
                    )
            continue
        for form in _spellings(gram):
            row = store.execute(
                "SELECT name FROM exchanges WHERE name = ? COLLATE NOCASE "
                "AND name IS NOT NULL LIMIT 1",
                (form,),
            ).fetchone()
            if row is not None:
                found.add(str(row[0]))
                within.update(gram.casefold().split())
    return found | _named_inside(store, query)


def _words(query: str) -> list[str]:
    """The words of ``query`` a name may be, possessives taken off ("Sam's": "Sam")."""
    words = []
    for word in _WORD.findall(query):
        if len(word) > 2 and word[-2] in _APOSTROPHES and word[-1] in "sS":
            word = word[:-2]
        words.append(word)
    return words


def _caseless(word: str) -> bool:
    """Whether ``word`` begins with a letter of a script without capitals ("李雷")."""
    first = word[:1]
    return first.isalpha() and not first.isupper() and not first.islower()


def _may_name(word: str) -> bool:
    return word[:1].isupper() or _caseless(word)


def _spellings(name: str) -> list[str]:
    """``name`` with either apostrophe: "O'Brien" may have been logged as "O’Brien"."""
    if not any(a in name for a in _APOSTROPHES):
        return [name]
    return list(dict.fromkeys([name, name.replace("’", "'"), name.replace("'", "’")]))


def _named_inside(store: GroupStore, query: str) -> set[str]:
    """The names logged as written that stand inside the unspaced runs of ``query``
    ("李雷" in "李雷说了什么"): every stretch of 2 to :data:`MAX_UNSPACED_NAME`
    characters, at most :data:`MAX_STRETCHES`, one seek each. A name inside another
    found ("小明" in "王小明") names no one else."""
    stretches: dict[str, None] = {}
    for run in unspaced_pieces(query):
        for size in range(2, min(len(run), MAX_UNSPACED_NAME) + 1):
            stretches.update(dict.fromkeys(run[i : i + size] for i in range(len(run) - size + 1)))
    asked = list(stretches)[:MAX_STRETCHES]
    if not asked:
        return set()
    rows = store.execute(
        f"WITH asked(name) AS (VALUES {', '.join(['(?)'] * len(asked))}) "
        "SELECT (SELECT name FROM exchanges WHERE name = asked.name COLLATE NOCASE "
        "AND name IS NOT NULL LIMIT 1) FROM asked",
        asked,
    )
    found = {str(r[0]) for r in rows if r[0] is not None}
    return {n for n in found if not any(n != longer and n in longer for longer in found)}


@functools.cache
def _accented() -> dict[str, str]:
    """Each Latin capital's accented forms ("E" -> "ÈÉÊË…"): a name logged as "Éric"
    begins with one of them, not with the "E" a question may type. Worked out once,
    on the first question that needs it, not when the module loads."""
    found: dict[str, str] = {}
    for c in map(chr, range(0xC0, 0x250)):
        base = without_accents(c)
        if base != c and len(base) == 1 and "A" <= base <= "Z":
            found[base] = found.get(base, "") + c
    return found


def _accents_aside(store: GroupStore, word: str) -> set[str]:
    """The names ``word`` is, or is the first word of, when accents are not counted
    ("Jose" names "José Ruiz", "Eric" names "Éric", "Zoë" names "Zoe"): among the
    names that begin with its first two letters, as written, without accents or
    with an accented first letter (the index compares case only), at most
    :data:`MAX_NAMES_IN_RANGE` from each beginning."""
    plain = without_accents(word).casefold()
    found: set[str] = set()
    bare = without_accents(word)[:2]
    starts = [word[:2], bare, *(f"{first}{bare[1:]}" for first in _accented().get(bare[:1], ()))]
    for start in dict.fromkeys(starts):
        if len(start) < 2:
            continue
        for name in _names_in_range(store, start, start + "\U0010ffff"):
            folded = without_accents(name).casefold()
            if folded == plain or folded.startswith(plain + " "):
                found.add(name)
    return found


def _names_in_range(store: GroupStore, low: str, high: str) -> set[str]:
    """The distinct speaker names from ``low`` up to ``high`` (case-blind), one seek each."""
    names: set[str] = set()
    after, op = low, ">="
    while len(names) < MAX_NAMES_IN_RANGE:
        row = store.execute(
            f"SELECT name FROM exchanges WHERE name COLLATE NOCASE {op} ? "
            "AND name COLLATE NOCASE < ? AND name IS NOT NULL "
            "ORDER BY name COLLATE NOCASE LIMIT 1",
            (after, high),
        ).fetchone()
        if row is None:
            break
        after, op = str(row[0]), ">"
        names.add(after)
    return names
