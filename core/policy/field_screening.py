"""One screening for every text field on its way into storage.

Content, tags, thread titles, handoffs, conversation turns and their ids,
client names, receipt file names and paths, a file's extracted text, an
agent's observations, and everything an import brings in pass through
:func:`screen_field` before they are written, so a secret cannot reach the
disk by a side door that only the content's screening would have closed.

First, invisible characters that could hide what a field says are removed
(:func:`without_invisible`). Then three things happen to it, in order:

1. Values known to be secret (Ambry's own agent token) are cut out exactly.
2. A credential statement ("my password is ...", "Login for the NAS:
   admin / ...") is refused with a message naming the field, or, for text the
   caller did not compose (a file's contents, see :class:`Statements`), its
   value is cut out.
3. Definite and probable secrets are redacted (:func:`core.policy.secrets.redact`);
   possible ones are reported so the caller can route the write to review.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from core.model.errors import Refused
from core.policy.credentials import statement_values
from core.policy.secrets import REPLACEMENT, redact

#: Known secrets shorter than this are not cut out (they would match ordinary text).
MIN_KNOWN_SECRET = 16


class Statements(StrEnum):
    """What to do with a credential statement in a field."""

    #: The caller wrote the text: refuse it, so they can say it without the secret.
    REFUSE = "refuse"
    #: The caller did not write it (a file's contents): cut the value out, keep the rest.
    REDACT = "redact"


@dataclass(frozen=True)
class Screened:
    """A field as it may be stored.

    Attributes:
        text: The field with known secrets, statement values (when redacting them)
            and definite or probable secrets replaced by ``[SECRET_REDACTED]``.
        redacted: Pattern names of what was replaced, one per replacement.
        possible: Pattern names of possible secrets left in place for review.
    """

    text: str
    redacted: tuple[str, ...]
    possible: tuple[str, ...]

    @property
    def changed(self) -> bool:
        return bool(self.redacted)


#: The reason given for a memory that is nothing but a secret.
ONLY_A_SECRET = "only a secret"


def only_secrets(text: str) -> bool:
    """Whether screened ``text`` holds nothing but placeholders (and the
    punctuation between them). A memory is kept for what it says, so one that is
    only a secret is worthless once the secret is cut out: a write refuses it and
    an import skips it. A conversation turn keeps its place instead
    (:func:`core.continuity.episodes.log_exchange`)."""
    rest = text.replace(REPLACEMENT, "")
    return len(rest) < len(text) and not any(c.isalnum() for c in rest)


def refusal(field: str, reason: str) -> Refused:
    """The error for a credential statement in ``field``."""
    return Refused(
        f"not stored: {field} {reason}. Ambry never keeps credentials; remove the value "
        "(a note of where it lives is fine, such as 'the key is in 1Password') and try again",
        reason=reason,
        field=field,
    )


def _cut(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span (overlapping ones merged) replaced by the placeholder."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    pieces: list[str] = []
    cursor = 0
    for start, end in merged:
        pieces += [text[cursor:start], REPLACEMENT]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _known_spans(text: str, known: Iterable[str]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for secret in known:
        if len(secret) < MIN_KNOWN_SECRET:
            continue
        i = text.find(secret)
        while i != -1:
            spans.append((i, i + len(secret)))
            i = text.find(secret, i + len(secret))
    return spans


# Invisible characters: a zero-width space, soft hyphen, word joiner, byte-order
# mark or tag character inside "AKIA…" hides a key from the secret patterns (and
# a near-duplicate from the duplicate check); bidirectional overrides make a line
# read other than it is stored; tag characters spell words a model reads and a
# person cannot see. Tag characters stay only in a flag's sequence (🏴 and the
# region it spells).
_INVISIBLE = re.compile(
    "(\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f)"
    "|[\u00ad\u180e\u200b\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
    "\ufff9-\ufffb\U0001d173-\U0001d17a\U000e0000-\U000e007f]"
)
# Marks that scripts and emoji need stay, but not beside an ASCII letter or digit,
# where they can only hide something: joiners (Persian, Indic, family emoji),
# direction marks (Hebrew or Arabic beside Latin), the grapheme joiner, variation
# selectors (a heart drawn as an emoji; a keycap's "1\ufe0f\u20e3" keeps its own)
# and the Hangul fillers.
_BESIDE_ASCII = (
    "[\u034f\u061c\u115f\u1160\u17b4\u17b5\u200c-\u200f\u3164\ufe00-\ufe0f\uffa0"
    "\U000e0100-\U000e01ef]+"
)
_JOINERS = re.compile(f"(?<=[0-9A-Za-z]){_BESIDE_ASCII}(?!\u20e3)|{_BESIDE_ASCII}(?=[0-9A-Za-z])")


def without_invisible(text: str) -> str:
    """``text`` without the invisible characters that could hide what it says."""
    return _JOINERS.sub("", _INVISIBLE.sub(lambda m: m.group(1) or "", text))


def screen_field(
    text: str,
    field: str,
    *,
    statements: Statements = Statements.REFUSE,
    known: Iterable[str] = (),
) -> Screened:
    """Screen one field (see the module docstring).

    Args:
        text: The field's text.
        field: Its name, as the caller knows it (``tags.2``, ``client``), for messages.
        statements: Refuse a credential statement, or cut its value out.
        known: Exact values that must never be stored (Ambry's agent token).

    Raises:
        Refused: ``text`` is a credential statement and ``statements`` is REFUSE.
    """
    names: list[str] = []
    text = without_invisible(text)
    spans = _known_spans(text, known)
    if spans:
        names += ["agent_token"] * len(spans)
        text = _cut(text, spans)
    found = statement_values(text)
    if found:
        if statements is Statements.REFUSE:
            raise refusal(field, found[0][0])
        names += ["credential_statement"] * len(found)
        text = _cut(text, (span for _, span in found))
    result = redact(text)
    return Screened(result.text, tuple(names) + result.redacted, result.possible)


def screen_label(text: str, field: str, *, known: Iterable[str] = ()) -> str:
    """A short label (client name, turn id, speaker): anything secret in it is cut out.

    A label is never refused: it names something, and the name still works with
    the secret replaced.
    """
    return screen_field(text, field, statements=Statements.REDACT, known=known).text


def refuse_secret_name(text: str, field: str, *, known: Iterable[str] = ()) -> None:
    """Refuse a name that must stay exact (a file's path) if it holds a secret.

    A path with its secret replaced would point nowhere, so the write is refused
    instead, with what to change.
    """
    screened = screen_field(text, field, statements=Statements.REDACT, known=known)
    if screened.changed:
        raise Refused(
            f"not stored: {field} contains what looks like a secret "
            f"({', '.join(sorted(set(screened.redacted)))}); rename or move the file so "
            "its path holds no credential, then attach it again",
            reason="secret in " + field,
            field=field,
        )
