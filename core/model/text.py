"""Plain-text helpers shared by every capability that renders a line for a person or agent."""

from __future__ import annotations

import hashlib
import re
import unicodedata

from core.model.errors import InvalidParams

# Every character str.splitlines() breaks on is whitespace to str.split(); the
# other C0/C1 controls (escape sequences, NUL) are folded too, as nothing
# legitimate in a one-line summary needs them. (A regular expression: str.translate
# with a table is slow on text that is not ASCII.)
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def check_unicode(text: str, field: str) -> None:
    """Refuse a string no UTF-8 database can hold: one with a lone surrogate, as bytes
    that are not UTF-8 decode to (a command-line argument, say)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidParams(
            f"{field} contains a lone surrogate (not valid Unicode text)",
            field=field,
            rule="unicode",
        ) from None


def single_line(text: str) -> str:
    """``text`` on one line: every line break and whitespace run becomes one space."""
    return " ".join(_CONTROLS.sub(" ", text).split())


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line (:func:`single_line`), cut to ``limit`` characters with "…"
    where it was cut, for a list row; the full text is a click or a command away."""
    flat = single_line(text)
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def without_accents(text: str) -> str:
    """``text`` with its accents and other combining marks taken off ("José" ->
    "Jose"), case kept, as the index's tokenizer reads words (``remove_diacritics``)."""
    if text.isascii():
        return text
    parts = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(c for c in parts if not unicodedata.combining(c)))


def plain_forms(text: str) -> str:
    """``text`` with compatibility forms as their plain selves (NFKC): full-width
    letters and digits ("ＣＡＦＥ" -> "CAFE"), ligatures ("ﬁ" -> "fi"), half-width
    kana, non-breaking spaces. Case and accents are kept."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 memory``, ``2 turns``, ``1,234 memories``: a count and its noun."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


def sha256_text(text: str) -> str:
    """The hex sha256 of ``text`` as UTF-8 (lone surrogates kept): how a point or a
    claim records the exact text it was drawn from, and checks it later."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# Tokenizers of LLMs are trained mostly on English: a word of ASCII or Latin text
# is about four characters a token, but scripts they saw less of are split far
# finer, down to UTF-8 bytes. So each character costs by its script, counted in
# quarter tokens to stay in whole numbers:
#   1   ASCII, Latin-1, Latin Extended, combining accents, Vietnamese, and the
#       punctuation and currency signs Latin text uses (dashes, quotes, …, €)
#   2   Greek, Cyrillic, Armenian, Hebrew, Arabic, Syriac, Thaana, N'Ko: the
#       other two-byte characters of UTF-8 (U+0370-U+07FF)
#   4   every other character up to U+FFFF: CJK ideographs, kana, hangul,
#       Indic, Thai and other scripts, symbols, joiners, variation selectors
#   12  a character above U+FFFF: emoji (each part of a sequence), rare ideographs
# Past the Latin ones, those classes are the characters' UTF-8 lengths (2, 3 and
# 4 bytes), so they are counted from the lengths of two encodings, not one by one.
_LATIN_RUNS = re.compile("[\x00-\u036f\u1e00-\u1eff\u2010-\u205e\u20a0-\u20cf]+")


def token_quarters(text: str) -> int:
    """Four times the estimated tokens of ``text``: one per ASCII character.

    Additive, so the estimate of a text being assembled can be kept as a running
    sum; :func:`quarters_to_tokens` rounds it up to tokens.
    """
    if text.isascii():
        return len(text)
    rest = _LATIN_RUNS.sub("", text)
    chars = len(rest)
    utf8 = len(rest.encode("utf-8", "surrogatepass"))
    astral = len(rest.encode("utf-16-le", "surrogatepass")) // 2 - chars
    # utf8 = 2 * two_byte + 3 * three_byte + 4 * astral, chars = the three's sum
    three_byte = utf8 - 2 * chars - 2 * astral
    two_byte = chars - three_byte - astral
    return len(text) - chars + 2 * two_byte + 4 * three_byte + 12 * astral


def quarters_to_tokens(quarters: int) -> int:
    return -(-quarters // 4)


def estimate_tokens(text: str) -> int:
    """Tokens an LLM would likely count in ``text``, without a tokenizer.

    Characters / 4 for ASCII and Latin text, 2 for Cyrillic, Greek, Hebrew and
    Arabic; one token a character for CJK, kana, hangul and other scripts; three
    for an emoji (see the table above :data:`_LATIN_RUNS`).
    """
    return quarters_to_tokens(token_quarters(text))
