"""Credentials said less directly than "my password is …": a Wi-Fi network's key,
and a password given later in the sentence that describes it.

A Wi-Fi key is often called just "the key" ("the wifi at home is BlueFox-5G and
the key is orange-tractor-91", "WPA key: …"). "Key" alone says nothing ("the key
is under the mat", "the key is to start early"), so it names a credential only
in a text that speaks of Wi-Fi, and only before a value that a WPA passphrase
can be: 8 to 63 characters, one word, with a digit or a sign in it, or, after
a key named as Wi-Fi's ("the wifi key is bluemoonlight."), of letters only
when it closes the clause and reads as no word of a sentence. "The wifi key is
on the router sticker" says where the key is, "is different" what it is like.

A password is sometimes described before it is given: "my password is the name
of my first dog plus 1987, i.e. Rex1987". The value then follows "i.e.", "e.g.",
"so", "so it's", "which is" or "that is" in the same sentence whose subject is
someone's password, and is one word mixing letters and digits. And a PIN, a
door's code or a password is given after the news that it changed: "the pin
changed, so it's 4471 now", "door code changed so now 8812".

Like the statements of :mod:`core.policy.credentials`, both are refused (in
text nobody composed, their value is cut out).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.policy import access_codes
from core.policy.prose_words import (
    ADJECTIVE,
    CLAUSE_END,
    CLAUSE_WORDS,
    COMPOUNDS,
    JUDGEMENTS,
    KEEP_QUIET,
    NOT_A_VALUE,
    PREDICATE,
    QUALIFIERS,
    UNITS,
)
from core.policy.rule_types import Span

# The optional "for the guest wifi" part, as in core.policy.access_codes.
_WORD = r"[\w@-]+(?:\.[\w@-]+)*(?:['\u2019]s)?"
_FOR = (
    rf"(?:[ \t]+(?:for|to|on|of|at)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?{_WORD}"
    rf"(?:[ \t]+(?!(?:is|are|was|were)(?![\w-])){_WORD})?)?"
)
_QUOTE = "\"'`\u201c\u201d\u2018\u2019"

# Words that say the text is about a Wi-Fi network.
_WIFI_WORDS = ("wifi", "wi-fi", "wlan", "wpa", "ssid", "hotspot", "wireless")
_NETWORK_KEY = re.compile(
    r"(?<![\w-])(?:(?P<named>wi-?fi|wlan|wpa[23]?(?:[ \t-]?psk)?|wireless|network|hotspot|router"
    r"|wep)[ \t_-]*)?(?:security[ \t]+)?(?:key|psk)"
    + _FOR
    + r"(?:[ \t]+(?:is|was)(?:[ \t]+(?:now|still|just))?(?:[ \t]*:)?[ \t]+|[ \t]*[:=][ \t]*)"
    + rf"[{_QUOTE}]?(?P<value>[^\s{_QUOTE}]+)",
    re.IGNORECASE,
)
# A security mode ("the wifi key is WPA2-PSK"), a link, a path, a date or a
# version number says what, where or when.
_NOT_A_KEY = re.compile(
    r"(?:wpa|wep|tkip|aes|psk)|.*://|[/~.]|\d{4}-\d\d-\d\d\Z|\d+(?:\.\d+)+[a-z]*\Z", re.IGNORECASE
)
# What closes a clause after a key of letters only ("... is bluemoonlight.", "...
# is bluemoonlight but don't share it").
_CLOSED = re.compile(CLAUSE_END)
_CONJUNCTION = re.compile(r",?[ \t]+(?:and|but|so)(?![\w-])", re.IGNORECASE)
_NOT_A_WORD_KEY = NOT_A_VALUE | CLAUSE_WORDS | COMPOUNDS | UNITS | QUALIFIERS
_PLACEHOLDER = re.compile(r"x{3,}|\*{3,}|your|example|redacted|<|>|\{", re.IGNORECASE)

_LATER = re.compile(
    r"(?<![\w-])(?:my|our|his|her|their|the)[ \t]+(?:[\w'\u2019-]+[ \t]+){0,2}?"
    r"(?:password|passwd|passphrase|passcode|pw)" + _FOR + r"[ \t]+(?:is|was)[ \t]+"
    # The description, within the sentence ("…plus 1987"), then the marker.
    r"(?P<about>[^\n.!?;]{1,160}?)(?:[ \t]*[,(:\u2013\u2014-][ \t]*|[ \t]+)"
    r"(?:i\.?[ \t]?e\.?|(?P<example>e\.?[ \t]?g\.?)|so[ \t]+it(?:['\u2019]s|[ \t]+is|[ \t]+was)|so"
    r"|which[ \t]+(?:is|was|makes[ \t]+it)|that[ \t]+is)(?![\w'\u2019])"
    + rf"[ \t]*[:,]?[ \t]*[{_QUOTE}]?(?P<value>[^\s{_QUOTE},;)]+)",
    re.IGNORECASE,
)
_THE_PASSWORD = re.compile(
    r"the[ \t]+(?:password|passwd|passphrase|passcode|pw)[ \t]+(?:is|was)[ \t]+", re.IGNORECASE
)
_LATER_HINTS = ("i.e", "ie ", "e.g", "eg ", "so ", "which", "that is")

# "the pin changed, so it's 4471 now", "door code changed so now 8812", "the
# wifi password was reset: Rex1987": a new code or password given after the
# news that it changed, up to the end of the clause or "now".
_CHANGED = re.compile(
    r"(?<![\w-])(?:(?P<pin>pin(?:[ \t]+(?:code|number))?|passcode)"
    rf"|(?P<place>{access_codes.PLACE_CODE})|(?P<password>password|passwd|pw))"
    r"[ \t]+(?:(?:has|had|was|got|is)[ \t]+)?(?:been[ \t]+)?(?:changed|reset|updated|rotated)"
    r"(?:[ \t]+(?:again|today|yesterday|recently))?"
    # "so it's", "so now", "and now it's", ":", a dash, "to".
    r"(?:[ \t]*[,;:\u2013\u2014-])?[ \t]*(?:(?:so|and)(?![\w'\u2019])[ \t]*)?(?:now[ \t]+)?"
    r"(?:it(?:['\u2019]s|[ \t]+is|[ \t]+was)[ \t]+|to[ \t]+)?(?:now[ \t]*)?(?::[ \t]*)?"
    rf"[{_QUOTE}]?(?P<value>[*#]?\d{{4,12}}[*#]?(?![\w-]|[.,:/]\d)|[^\s{_QUOTE},;)]+)"
    rf"(?={CLAUSE_END}"
    r"|[ \t]+(?:now|instead|and|but|so)(?![\w-]))",
    re.IGNORECASE,
)
# Names of algorithms, formats and protocols mix letters and digits too
# ("the password is hashed, i.e. SHA256"), and so do measurements ("e.g. 12chars").
_NAMED = re.compile(
    r"(?:sha|aes|utf|base|ipv|wpa|http|oauth|pbkdf|tls|ssl|iso|rfc|crc|des|rc)-?\d+"
    r"|(?:md|[hrpe]s)\d{1,3}|rsa-?\d*|ed25519|x509|argon2(?:id|i|d)?|bcrypt\d*|v\d+"
    r"|\d+(?:[a-z]{1,5})",
    re.IGNORECASE,
)

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+|[A-Za-z]\w*_\w+")


def statements(text: str, lowered: str) -> Iterator[tuple[str, Span]]:
    """Each indirect statement in ``text``: its reason and the value's span.

    Args:
        text: The text, already read with fullwidth forms folded.
        lowered: ``text.lower()``, for the cheap look-ups that skip most texts.
    """
    if ("key" in lowered or "psk" in lowered) and any(w in lowered for w in _WIFI_WORDS):
        for m in _NETWORK_KEY.finditer(text):
            span = _trimmed(m)
            if span is None:
                continue
            value = text[span[0] : span[1]]
            if _network_key(value) or (
                m.group("named") is not None and _closes(text, span[1]) and _key_of_letters(value)
            ):
                yield "looks like a Wi-Fi key statement", span
    if ("pass" in lowered or "pw" in lowered) and any(h in lowered for h in _LATER_HINTS):
        for m in _LATER.finditer(text):
            span = _trimmed(m)
            if span is None or _an_example(m):
                continue
            if _later_password(text[span[0] : span[1]]):
                yield "looks like a password statement", span
    if (
        # Spelled out rather than any(...) over a tuple: most texts stop at the
        # first line, and a generator there would cost as much as the rest.
        "changed" in lowered or "reset" in lowered or "updated" in lowered or "rotated" in lowered
    ) and (
        "pin" in lowered
        or "code" in lowered
        or "comb" in lowered
        or "pass" in lowered
        or "pw" in lowered
    ):
        for m in _CHANGED.finditer(text):
            yield from _changed(m)


def _an_example(m: re.Match[str]) -> bool:
    """Whether a value after "e.g." is an example of what the sentence judges
    "the password" to be ("the password is weak, e.g. abc123"), not the password.
    Someone's own password, or one named ("my password is weak, e.g. …", "the
    wifi password is weak, e.g. …"), is likely the example."""
    if m.group("example") is None:
        return False
    if _THE_PASSWORD.fullmatch(m.string, m.start(), m.start("about")) is None:
        return False
    words = re.findall(r"[a-z]+", m.group("about").lower())
    return bool(words) and all(w in JUDGEMENTS for w in words)


def _changed(m: re.Match[str]) -> Iterator[tuple[str, Span]]:
    """The code or password given after the news that it changed: 4 to 12 digits
    for a PIN or a place's code, a word mixing letters and digits for a password."""
    value = m.group("value")
    digits = 4 <= len(value.strip("*#")) <= 12 and value.strip("*#").isdigit()
    if m.group("pin") is not None and digits:
        yield "looks like a PIN statement", m.span("value")
    elif m.group("place") is not None and digits:
        yield "looks like an access code statement", m.span("value")
    elif m.group("password") is not None:
        span = _trimmed(m)
        if span is not None and _later_password(m.string[span[0] : span[1]]):
            yield "looks like a password statement", span


def _trimmed(m: re.Match[str]) -> Span | None:
    """The value's span without the punctuation that closes the sentence."""
    start, end = m.span("value")
    while end > start and m.string[end - 1] in ".,;:!?)]":
        end -= 1
    return (start, end) if end > start else None


def _network_key(value: str) -> bool:
    """Whether ``value`` can be a WPA passphrase said as one word: 8 to 63
    characters with a digit or a sign ("orange-tractor-91"), or 64 hex digits."""
    if not 8 <= len(value) <= 64 or _NOT_A_KEY.match(value) or _PLACEHOLDER.search(value):
        return False
    if len(value) == 64:
        return all(c in "0123456789abcdefABCDEF" for c in value)
    return any(c.isdigit() or not (c.isalpha() or c in "-'") for c in value)


def _closes(text: str, end: int) -> bool:
    """Whether the clause ends at ``end``, or goes on only to ask to keep it quiet."""
    if _CLOSED.match(text, end) is not None:
        return True
    conjunction = _CONJUNCTION.match(text, end)
    return conjunction is not None and KEEP_QUIET.match(text, conjunction.end()) is not None


def _key_of_letters(value: str) -> bool:
    """Whether ``value``, closing the clause after a Wi-Fi key named as one ("the
    wifi key is bluemoonlight."), is a WPA passphrase of letters only: 8 to 63
    of them, in one word that says nothing of the key ("is different", "is
    printed", "is downstairs", "is lowercase")."""
    word = value.lower()
    if not (8 <= len(word) <= 63 and word.isascii() and word.isalpha()):
        return False
    if word in _NOT_A_WORD_KEY or _PLACEHOLDER.search(word):
        return False
    return PREDICATE.fullmatch(word) is None and ADJECTIVE.fullmatch(word) is None


def _later_password(value: str) -> bool:
    """Whether ``value``, given after "i.e." or "so" in a sentence about a
    password, is one: 6 to 64 characters mixing letters and digits ("Rex1987"),
    not the name of an algorithm or a measurement."""
    if not 6 <= len(value) <= 64 or _PLACEHOLDER.search(value):
        return False
    if not (any(c.isalpha() for c in value) and any(c.isdigit() for c in value)):
        return False
    if _IDENTIFIER.fullmatch(value):
        return False  # "i.e. DB_PASS2", "i.e. conf.v2": a name in code
    # "i.e. PBKDF2-SHA256", "HMAC-SHA256": names all through.
    return not all(p.isalpha() or _NAMED.fullmatch(p) for p in re.split(r"[-_/]", value))
