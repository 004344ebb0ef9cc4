"""Keywords by TF-IDF over the group's day summaries.

The method, in full:

* **Terms.** Words of three or more letters, lower-cased, without an English
  stop list and chat filler; a plural is folded into its singular (``dogs`` ->
  ``dog``, ``stories`` -> ``story``). The display form is the spelling seen most.
* **Documents.** One document per day summary (one session's turns of one day in
  one thread). ``layer_vocab`` holds in how many documents each term occurs; a
  summary keeps its own term set (``terms``) so a rebuild takes it out again.
* **Weight.** ``tf-idf = (1 + ln tf) * (ln((1 + N) / (1 + df)) + 1)`` with ``tf``
  the term's count in the document, ``N`` the number of documents and ``df`` the
  term's document count (the smoothed form, so a term in every document still
  weighs something).
* Rollups (week, month) add their children's weights.

Keywords of live text (``recall``) are its terms ranked by idf alone: a word rare
in the group's history says more about what to load than a frequent one.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final

_TERM = re.compile(r"[^\W\d_][\w'-]*[^\W_]|[^\W\d_]", re.UNICODE)

STOPWORDS: Final = frozenset(
    """
    a about above after again against all also am an and any are aren't as at be because
    been before being below between both but by can can't cannot could couldn't did didn't
    do does doesn't doing don't down during each few for from further get gets getting got
    had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
    him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just let's like me more most much mustn't my myself no nor not now of off on once only or
    other ought our ours ourselves out over own really same shan't she she'd she'll she's
    should shouldn't so some such than that that's the their theirs them themselves then
    there there's these they they'd they'll they're they've this those through to too
    under until up very was wasn't we we'd we'll we're we've were weren't what what's when
    when's where where's which while who who's whom why why's will with won't would
    wouldn't you you'd you'll you're you've your yours yourself yourselves
    yes yeah yep ok okay oh wow hey hi hello thanks thank lol haha hmm sure great cool
    nice awesome amazing good glad love lot lots thing things stuff way really pretty
    know think feel make made see going go went want say said tell told one two also
    well still even ever always never something anything everything someone anyone
    totally definitely absolutely actually maybe kind sort bit time times day days
    today yesterday tomorrow right new old back around gonna wanna gotta sounds sound
    """.split()
)

#: Terms kept per summary for matching (its keyword index: in practice every term of a day).
INDEX_TERMS: Final = 400
#: Keywords shown with a summary.
SHOWN_TERMS: Final = 8


def fold(word: str) -> str:
    """A term's counting key: lower case, plural folded into the singular."""
    w = word.casefold().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is", "ous")):
        return w[:-1]
    return w


def tokens(text: str) -> list[tuple[str, str]]:
    """``(key, surface)`` for each content word of ``text``, in order, repeats kept."""
    out: list[tuple[str, str]] = []
    for m in _TERM.finditer(text):
        surface = m.group(0).replace("’", "'")
        key = fold(surface)
        if len(key) < 3 or key in STOPWORDS or surface.casefold() in STOPWORDS:
            continue
        out.append((key, surface.casefold()))
    return out


def as_written(text: str) -> dict[str, str]:
    """Each content word's key in ``text`` with its first spelling there, as written."""
    out: dict[str, str] = {}
    for m in _TERM.finditer(text):
        surface = m.group(0).replace("’", "'")
        key = fold(surface)
        if len(key) >= 3 and key not in STOPWORDS and surface.casefold() not in STOPWORDS:
            out.setdefault(key, surface)
    return out


def term_counts(texts: Iterable[str]) -> tuple[Counter[str], dict[str, str]]:
    """Term counts over ``texts`` and each term's most frequent spelling."""
    counts: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    for text in texts:
        for key, surface in tokens(text):
            counts[key] += 1
            spellings.setdefault(key, Counter())[surface] += 1
    display = {k: c.most_common(1)[0][0] for k, c in spellings.items()}
    return counts, display


def idf(df: int, total: int) -> float:
    return math.log((1 + total) / (1 + df)) + 1.0


def tfidf(counts: Mapping[str, int], df: Mapping[str, int], total: int) -> dict[str, float]:
    """Each term's weight in one document (see the module notes)."""
    return {
        term: (1.0 + math.log(tf)) * idf(df.get(term, 0), total)
        for term, tf in counts.items()
        if tf > 0
    }


def top(weights: Mapping[str, float], n: int) -> list[str]:
    """The ``n`` heaviest terms, ties broken alphabetically (stable across runs)."""
    return [t for t, _ in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
