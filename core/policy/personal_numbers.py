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

Stripe's published test card numbers are documentation and stay; the code
given with one is redacted rather than refused ("4242 4242 4242 4242 CVC
[SECRET_REDACTED]"), so the note keeps its use.
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


#: Stripe's published test card numbers: documentation, kept as written where the
#: text says they are for testing ("Stripe test card 5555 5555 5555 4444"), and
#: 4242 4242 4242 4242, the one every Stripe example uses, wherever it is. Most
#: are valid numbers in real issuers' ranges too, so elsewhere they are cards.
_EVERY_EXAMPLE = "4242424242424242"
_TESTING = ("test", "sandbox", "stripe")
STRIPE_TEST_CARDS = frozenset(
    """4242424242424242 4000056655665556 5555555555554444 2223003122003222 5200828282828210
    5105105105105100 378282246310005 371449635398431 6011111111111117 6011000990139424
    6011981111111113 3056930009020004 36227206271667 6555900000604105 3566002020360505
    6200000000000005 6200000000000047 6205500000000000004 4000002500001001 4000000000000002
    4000000000009995 4000002500003155 4000000000003220 4000000000000077""".split()
)


def _test_card(digits: str, text: str) -> bool:
    if digits not in STRIPE_TEST_CARDS:
        return False
    return digits == _EVERY_EXAMPLE or any(word in text.lower() for word in _TESTING)


def _card(m: re.Match[str]) -> Span | None:
    text = m.group()
    separators = {c for c in text if not c.isdigit()}
    if len(separators) > 1:
        return None  # "1234-5678 9012" mixes them: not one number written down
    if "." in separators and any(len(g) != 4 for g in text.split(".")):
        return None  # dotted, only as 4111.1111.1111.1111: not a version or an address
    digits = "".join(c for c in text if c.isdigit())
    if _test_card(digits, m.string):
        return None
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
        if _after_test_card(text, m.start()):
            continue  # a test card's code: redacted (RULES), not refused
        if m.group("bare") is None or card:
            yield "looks like a card security code statement", m.span("value")


#: How far a test card's code may follow its number, and what ends the card's part.
_CODE_AFTER = 48
_NOT_ONE_CARD = re.compile(r"[;!?\n]|\.[ \t]+[A-Z]|cv|csc|security", re.IGNORECASE)


def _after_test_card(text: str, start: int) -> bool:
    """Whether the code at ``start`` is a test card's: it follows one of
    :data:`STRIPE_TEST_CARDS` closely, in the same sentence, with no other code
    named between ("4242 4242 4242 4242 exp 12/34 CVC 123")."""
    cards = list(_CARD.finditer(text, max(0, start - _CODE_AFTER - 23), start))
    if not cards or not _test_card(re.sub(r"\D", "", cards[-1].group()), text):
        return False
    gap = text[cards[-1].end() : start]
    return len(gap) <= _CODE_AFTER and _NOT_ONE_CARD.search(gap) is None


def _test_card_code(m: re.Match[str]) -> Span | None:
    return m.span("value") if _after_test_card(m.string, m.start()) else None


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
    Rule(
        "card_security_code",
        Tier.PROBABLE,
        _SECURITY_CODE,
        ("cv", "csc", "card", "security"),
        needs="0123456789",
        caseless=True,
        extract=_test_card_code,
    ),
)
