"""Payment card and US social security numbers: secrets made of digits.

Neither has a vendor prefix or the look of random bytes, so the token rules miss
them. A card number is recognised by its issuer's leading digits, its length and
its Luhn check digit (a number that happens to pass all three is rare in a
memory); a social security number only where the text says it is one ("SSN",
"social security"), since its shape alone (``123-45-6789``) is shared by other
identifiers. Both are redacted like any other secret.

A card's security code (CVV, CVC, CSC: three or four digits) has no shape of its
own either, so like a PIN it is recognised by its name ("cvv 123", "the CVC is
4821", "card security code: 123") and the statement is refused
(:func:`statements`; in text nobody composed, its value is cut out). What the
code is, or where, is no code: "CVV is the 3 digits on the back" and "the cvv
field was empty" pass.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.policy.rule_types import Rule, Span, Tier

# 13-19 digits, in one run or in groups split by single spaces, hyphens or dots.
_CARD = re.compile(r"(?<![\w.+-])\d(?:[ .-]?\d){12,18}(?![\w-]|\.\d)")
#: Each issuer's leading digits and the lengths its numbers have: a Visa number is
#: never 15 digits long, which a phone's IMEI (Luhn-checked too) often is.
_ISSUERS: tuple[tuple[re.Pattern[str], frozenset[int]], ...] = tuple(
    (re.compile(lead), frozenset(lengths))
    for lead, lengths in (
        (r"4", (13, 16, 19)),  # Visa
        (r"5[1-5]|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)", (16,)),  # Mastercard
        (r"3[47]", (15,)),  # American Express
        (r"3(?:0[0-5]|[689])", (14, 15, 16, 17, 18, 19)),  # Diners Club
        (r"6(?:011|5|4[4-9])", (16, 17, 18, 19)),  # Discover
        (r"62", (16, 17, 18, 19)),  # UnionPay
        (r"35(?:2[89]|[3-8]\d)", (16, 17, 18, 19)),  # JCB
    )
)


def luhn_valid(digits: str) -> bool:
    """Whether ``digits`` ends in its Luhn check digit."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = ord(char) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(m: re.Match[str]) -> Span | None:
    text = m.group()
    separators = {c for c in text if not c.isdigit()}
    if len(separators) > 1:
        return None  # "1234-5678 9012" mixes them: not one number written down
    if "." in separators and any(len(g) != 4 for g in text.split(".")):
        return None  # dotted, only as 4111.1111.1111.1111: not a version or an address
    digits = "".join(c for c in text if c.isdigit())
    if not any(lead.match(digits) and len(digits) in lengths for lead, lengths in _ISSUERS):
        return None
    return m.span() if luhn_valid(digits) else None


# "SSN 123-45-6789", "social security number: 123456789", "SSN#123 45 6789",
# "Tax ID (SSN) 123-45-6789", "my social is 123-45-6789".
_SSN = re.compile(
    r"(?<![A-Za-z])(?:ssn|social(?:[ \t]+security(?:[ \t]+(?:number|no\.?|#))?)?)s?"
    r"(?:[ \t]*(?:#|:|=|\)|is|was)){0,2}[ \t]*(?P<v>\d{3}([ -]?)\d{2}\2\d{4})(?!\d)",
    re.IGNORECASE,
)


def _ssn(m: re.Match[str]) -> Span | None:
    digits = re.sub(r"\D", "", m.group("v"))
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    if area in ("000", "666") or area[0] == "9" or group == "00" or serial == "0000":
        return None  # never issued: an example or a placeholder
    return m.span("v")


RULES: tuple[Rule, ...] = (
    Rule("payment_card", Tier.DEFINITE, _CARD, (), needs="0123456789", extract=_card),
    Rule(
        "us_ssn",
        Tier.PROBABLE,
        _SSN,
        ("ssn", "social"),
        needs="0123456789",
        caseless=True,
        extract=_ssn,
    ),
)


# "cvv 123", "CVV2: 123", "the CVC is 4821", "card security code 123", "the
# security code on the card is 123". A security code, a CSC or a CVN only where
# the text speaks of a card: "CSC 2024" is a conference, and six digits after
# "security code" are a one-time code (core.policy.access_codes).
_SECURITY_CODE = re.compile(
    r"(?<![\w-])(?:cvv2?|cvc2?|card[ \t-]+(?:security|verification)[ \t-]+"
    r"(?:code|value|number)|(?P<bare>csc|cvn|security[ \t-]+code))"
    r"(?:[ \t]+(?:on|of|for)[ \t]+(?:the|my|our|this|that)[ \t]+(?:[\w-]+[ \t]+)?card)?"
    r"(?:[ \t]+(?:is|was)(?:[ \t]*:)?[ \t]+|[ \t]*[:=#][ \t]*|[ \t]+)"
    r"(?P<value>\d{3,4})(?![\w-]|[.,:/]\d)",
    re.IGNORECASE,
)
_CARD_WORDS = ("card", "visa", "mastercard", "amex", "credit", "debit")


def statements(text: str, lowered: str) -> Iterator[tuple[str, Span]]:
    """Each statement of a card's security code in ``text``: its reason and the
    value's span (``lowered`` is ``text.lower()``, for the cheap look-ups)."""
    if not ("cv" in lowered or "csc" in lowered or "security" in lowered):
        return
    card = any(word in lowered for word in _CARD_WORDS)
    for m in _SECURITY_CODE.finditer(text):
        if m.group("bare") is None or card:
            yield "looks like a card security code statement", m.span("value")
