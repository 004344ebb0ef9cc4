"""Codes and phrases that open something: door, gate, alarm and safe codes,
two-factor secrets, one-time codes, recovery codes and a wallet's recovery phrase.

Like a password said in a sentence (:mod:`core.policy.credentials`), none of them
has a shape of its own, so each is recognised by what the text says it is ("the
gate code is 4821#", "TOTP secret JBSWY3DPEHPK3PXP", "recovery codes: 8f3k-2jd9,
7dk2-9dk3", "seed phrase: abandon ability able …") and the statement is refused
(in text nobody composed for Ambry, its value is cut out). Where a code lives is
not a code: "the door code is on the fridge note", "store recovery codes in the
password manager" and "the seed phrase is written on paper in the safe" pass.

A recovery phrase is recognised without a word list: after "seed phrase",
"recovery phrase" or "mnemonic", twelve to twenty-five words of three to eight
letters (the length of every BIP-39 word) in which none is a word that sentences
need and the BIP-39 list leaves out ("the", "and", "with", ...). A sentence that
long without one of them does not follow "seed phrase:" in practice. Named by
its length alone ("my 12 words are …", "the 24-word phrase:"), exactly that
many such words are taken.

An ``otpauth://`` link carries its secret in a known place, so that secret is
redacted like any token (:data:`RULES`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.policy.rule_types import Rule, Span, Tier

# The optional "for the NAS" part of a statement, as in core.policy.credentials
# (its second word is never the verb: "backup code for google is 4821..."); a
# word may be a possessive ("the gate code at grandma's is *4590").
_WORD = r"[\w@-]+(?:\.[\w@-]+)*(?:['\u2019]s|(?<=s)['\u2019])?"
_FOR = (
    r"(?:[ \t]+(?:for|to|on|of|at)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?"
    rf"{_WORD}(?:[ \t]+(?!(?:is|are|was|were)(?![\w-])){_WORD})?)?"
)
# "is", ":" or "=", or only a space ("remember the door code 1234#").
_SAID = (
    r"(?:[ \t]+(?:is|are|was|were)(?:[ \t]+(?:now|still|just))?(?:[ \t]*:)?[ \t]+"
    r"|[ \t]*[:=][ \t]*|[ \t]+)"
)

_PLACE = (
    r"(?:door|gate|alarm|garage|safe|lock[ \t-]?box|key[ \t-]?safe|keypad|padlock|locker"
    r"|(?:(?:bike|bicycle|cable|combination)[ \t-]+)?lock|(?:building[ \t]+)?entry)"
)
# A digit said as a word ("nine one one five"; "oh" for a zero).
_DIGIT_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
#: A code said one digit at a time: four to twelve digits apart ("1 2 3 4"), or
#: four to eight digits as words ("four four one two", "nine-one-one-five"),
#: and no more of them after it.
DIGITS_ONE_BY_ONE = (
    r"(?P<single>\d(?:[ \t]\d){3,11})(?![\w-]|[ \t]\d|[.,:/]\d)"
    rf"|(?P<spelled>{_DIGIT_WORD}(?:(?:[ \t]*,[ \t]*|[ \t]+|-){_DIGIT_WORD}){{3,7}})"
    rf"(?![\w-]|(?:[ \t]*,[ \t]*|[ \t]+|-){_DIGIT_WORD}(?![\w-]))"
)
# Codes of another kind that can be "for the door": a zip code, a building code,
# an error code ("the error code for the lock is 4001").
_NOT_ACCESS = "".join(
    f"(?<!{word}[ \t])"
    for word in "zip area post postal promo error status country building source discount coupon"
    " fault product".split()
)
#: A place's code by name: "door code", "garage door code", "bike lock combination".
PLACE_CODE = (
    rf"{_PLACE}(?:'s)?(?:[ \t-]+(?:entry|access|door|alarm|keypad))?[ \t-]+"
    r"(?:code|combo|combination|pin)"
)
_ACCESS = re.compile(
    rf"(?<![\w-])(?P<noun>{PLACE_CODE}"
    # "the code to the front door", "code for the garage", "the combination of my locker".
    rf"|{_NOT_ACCESS}(?:combination|combo|code)[ \t]+"
    r"(?:(?:to|for|of)|to[ \t]+(?:open|unlock|get[ \t]+into|enter))[ \t]+"
    r"(?:the[ \t]+|my[ \t]+|our[ \t]+)?(?:(?:front|back|side|main|rear|garden|garage|"
    r"basement|house|building|apartment|flat|office|shed|storage|gym|bike|[\w-]+'s)[ \t]+)?"
    rf"(?:{_PLACE}|lock|house|apartment|flat|shed|storage[ \t]+unit))"
    + _FOR
    + rf"(?P<said>{_SAID})"
    # 4-12 digits, perhaps with the keypad's * or #, or a dial's numbers (12-34-56),
    # or digits in groups ("48 21", "48-21"; only after "is", ":" or "=").
    # Or one digit at a time, in figures or in words ("1 2 3 4", "nine one one five").
    + r"(?P<value>(?P<groups>\d{2,6}(?:[ -]\d{2,6}){1,2})(?![\w-]|[.,:/]\d)"
    + rf"|{DIGITS_ONE_BY_ONE}"
    r"|[*#]?\d{4,12}[*#]?|\d{1,3}(?:[ \t]*[-/][ \t]*\d{1,3}){2,4})(?![\w-]|[.,:/]\d)",
    re.IGNORECASE,
)
_PLACES = (
    "door", "gate", "alarm", "garage", "safe", "lock", "key", "pad", "entry", "house",
    "apartment", "flat", "building", "shed", "storage",
)  # fmt: skip
_YEARS = re.compile(r"(?:19|20)\d\d[ -](?:19|20)?\d\d")
_DIAL = re.compile(r"\d{1,3}(?:-\d{1,3}){2,4}")
# A day, a month and a year ("12 05 2024"): a date, not digits in groups.
_DATE = re.compile(r"\d{1,2} \d{1,2} (?:19|20)\d\d")

# Backup codes: GitHub's "xxxxx-xxxxx", Google's "1234 5678", others' "8f3k-2jd9".
_CODE = r"(?:\d{4}[ ]\d{4}(?![\w-])|[A-Za-z0-9]{3,12}(?:-[A-Za-z0-9]{3,12}){0,3})"
_RECOVERY = re.compile(
    r"(?<![\w-])(?P<noun>(?:(?:2fa|mfa|two[ \t-]factor)[ \t-]+)?"
    r"(?:recovery|backup|emergency|scratch)[ \t-]+codes?)"
    + _FOR
    # Codes are often listed one to a line, after the colon.
    + rf"(?P<said>{_SAID}(?:\r?\n[ \t]*(?:[-*][ \t]+)?)?)(?P<value>{_CODE})(?![\w-])",
    re.IGNORECASE,
)
_NEXT_CODE = re.compile(
    rf"(?:[ \t]*[,;][ \t]*|[ \t]+(?:and[ \t]+)?|[ \t]*\r?\n[ \t]*(?:[-*][ \t]+)?)({_CODE})(?![\w-])"
)

_TOTP = re.compile(
    r"(?<![\w-])(?P<noun>(?:totp|otp|2fa|mfa|two[ \t-]factor|authenticator)(?:[ \t-]+app)?"
    r"(?P<kind>[ \t-]+(?:secret(?:[ \t-]+key)?|seed|(?:setup|backup|recovery|secret)[ \t-]+key"
    r"|key))?)"
    + _FOR
    + rf"(?P<said>{_SAID})"
    + r"(?P<value>[A-Za-z2-7]{16,}=*|[A-Za-z2-7]{4}(?:[ ][A-Za-z2-7]{4}){3,})(?![\w-])",
    re.IGNORECASE,
)

# A one-time code given as such: six digits, whole or in two threes, after a
# noun that names a one-time code ("my 2FA code is 482913", "verification code:
# 482 913", "OTP 482913"), or before "is your ... code" as a text message says it.
# An error, zip or order code is no such noun.
_OTP_NOUN = (
    r"(?:(?:2fa|mfa|t?otp|sms|two[ \t-]factor|one[ \t-]time|verification|security"
    r"|log[ \t-]?in|sign[ \t-]?in|auth(?:entication|enticator)?)[ \t-]+code"
    r"|t?otp|one[ \t-]time[ \t-]pass(?:word|code))"
)
_SIX = r"\d{6}|\d{3}[ -]\d{3}"
_SIX_DIGITS = re.compile(r"\d{3}[ -]?\d{3}")
# Words between the noun and "is" that say where the code came from: "the 2FA
# code they texted me is 558213", "the login code I got is …". Only "is", "was"
# or ":" may follow them. A code of no named kind is a one-time code when it was
# texted ("the code they texted me is 558213"), unless a word before it names
# another kind ("the order code they texted me").
_CLAUSE = r"(?:[ \t]+(?!(?:is|are|was|were)(?![\w'-]))[\w'\u2019-]+){1,5}?"
_TEXTED = (
    r"(?:[ \t]+(?!(?:is|are|was|were)(?![\w'-]))[\w'\u2019-]+){0,3}?"
    r"[ \t]+(?:texted|sms(?:'?e)?d)(?:[ \t]+(?:me|us|him|her|them|you))?"
)
_VERB_SAID = r"(?:[ \t]+(?:is|was)(?:[ \t]+(?:now|still|just))?(?:[ \t]*:)?[ \t]+|[ \t]*:[ \t]*)"
_NOT_OTP_BEFORE = "".join(
    f"(?<!{word}[ \t])"
    for word in "zip area post postal promo error status country building source discount coupon"
    " order tracking referral confirmation booking product invite gift voucher".split()
)
_ONE_TIME = re.compile(
    rf"(?<![\w-])(?:(?P<noun>{_OTP_NOUN})(?:{_FOR}{_SAID}|{_CLAUSE}{_VERB_SAID})"
    rf"|{_NOT_OTP_BEFORE}code{_TEXTED}{_VERB_SAID})"
    rf"(?P<value>{_SIX})(?![\w-]|[.,:/]\d)",
    re.IGNORECASE,
)
# "482913 is your verification code", "G-482913 is your Google verification
# code", "482913 is your Instagram code": a service's name may stand before "code".
_NOT_ONE_TIME = (
    r"(?!(?:zip|postal|post|area|error|status|order|tracking|promo|discount|coupon|referral"
    r"|confirmation|booking|country|product|invite|gift|voucher)(?![\w-]))"
)
_ONE_TIME_FIRST = re.compile(
    rf"(?:(?<=(?<![\w-])G-)|(?<![\w-]))(?P<value>{_SIX})[ \t]+is[ \t]+your[ \t]+{_NOT_ONE_TIME}"
    rf"(?:(?:(?-i:[A-Z])[\w-]*[ \t]+)?{_OTP_NOUN}|(?-i:[A-Z])[\w-]*[ \t]+code)(?![\w-])",
    re.IGNORECASE,
)

_PHRASE_WORD = r"(?:\d{1,2}[.):]?[ \t]+)?[A-Za-z]{3,8}"
_SEED = re.compile(
    r"(?<![\w-])(?P<noun>(?:seed|recovery|mnemonic|backup|wallet|secret[ \t]+recovery)[ \t-]+"
    r"(?:phrase|words)|mnemonic|seed)(?![A-Za-z])"
    + _FOR
    + r"(?:[ \t]+(?:is|are|was|were))?(?:[ \t]*[:=-])?[ \t]*(?:\r?\n[ \t]*)?"
    + rf"(?P<value>{_PHRASE_WORD}(?:(?:[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+){_PHRASE_WORD})"
    r"{11,24})(?![A-Za-z])",
    re.IGNORECASE,
)
# A phrase named by its length alone: "my 12 words are …", "our 24 words:", "the
# 12-word phrase is …". Exactly that many words are taken.
_COUNTS = {
    "12": 12, "twelve": 12, "15": 15, "fifteen": 15, "18": 18, "eighteen": 18,
    "21": 21, "twenty-one": 21, "24": 24, "twenty-four": 24,
}  # fmt: skip
_COUNT = r"(?P<count>1[258]|2[14]|twelve|fifteen|eighteen|twenty[ \t-](?:one|four))"
_COUNTED = re.compile(
    r"(?<![\w-])(?P<noun>(?:(?P<own>my|our)|the|a|wallet(?:'s)?)[ \t]+"
    rf"{_COUNT}[ \t-]+word(?:s|(?P<phrase>[ \t]+phrase))?)"
    r"(?:[ \t]+(?:is|are|was|were))?(?:[ \t]*[:=-])?[ \t]*(?:\r?\n[ \t]*)?(?=[A-Za-z0-9])",
    re.IGNORECASE,
)
_PHRASE_OF = {
    n: re.compile(
        rf"{_PHRASE_WORD}(?:(?:[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*|[ \t]+){_PHRASE_WORD}){{{n - 1}}}"
        r"(?![A-Za-z])"
    )
    for n in set(_COUNTS.values())
}
# Words sentences need that the BIP-39 list leaves out: one of them means prose.
_NOT_SEED_WORDS = frozenset(
    """the and for with from your are was were not but has had our its his her she him
    them their which should would could been being than some these those does did""".split()
)


_HINTS = re.compile(r"code|comb|pin|otp|2fa|mfa|factor|authenticator|seed|mnemonic|phrase|word")


def statements(text: str, lowered: str) -> Iterator[tuple[str, Span]]:
    """Each statement of a code or phrase in ``text``: its reason and the value's span.

    Args:
        text: The text, already read with fullwidth forms folded.
        lowered: ``text.lower()``, for the cheap look-ups that skip most texts.
    """
    # Most texts name none of these things: one search says so. The look-ups
    # below then pick the few statements worth a regex of their own.
    if _HINTS.search(lowered) is None:
        return
    if ("code" in lowered or "comb" in lowered or "pin" in lowered) and any(
        p in lowered for p in _PLACES
    ):
        for m in _ACCESS.finditer(text):
            if _access_code(m):
                yield "looks like an access code statement", m.span("value")
    if "code" in lowered and (
        "recovery" in lowered
        or "backup" in lowered
        or "emergency" in lowered
        or "scratch" in lowered
    ):
        for m in _RECOVERY.finditer(text):
            span = _codes(m)
            if span is not None:
                yield "looks like a recovery codes statement", span
    if (
        "otp" in lowered
        or "2fa" in lowered
        or "mfa" in lowered
        or "factor" in lowered
        or "authenticator" in lowered
    ):
        for m in _TOTP.finditer(text):
            if _named_secret(m) and _base32_secret(m.group("value")):
                yield "looks like a two-factor secret statement", m.span("value")
    if ("code" in lowered or "otp" in lowered or "one" in lowered) and _SIX_DIGITS.search(text):
        for pattern in (_ONE_TIME, _ONE_TIME_FIRST):
            for m in pattern.finditer(text):
                yield "looks like a one-time code statement", m.span("value")
    if "word" in lowered and any(n in lowered for n in _COUNTS):
        for m in _COUNTED.finditer(text):
            if m.group("own") is None and m.group("phrase") is None:
                continue  # "the 12 words" are any twelve; "my 12 words", "the 12-word phrase"
            count = _COUNTS[re.sub(r"[ \t-]+", "-", m.group("count").lower())]
            phrase = _PHRASE_OF[count].match(text, m.end())
            if phrase is not None and _NOT_SEED_WORDS.isdisjoint(
                re.findall(r"[a-z]+", phrase.group().lower())
            ):
                yield "looks like a recovery phrase statement", phrase.span()
    if (
        "seed" in lowered
        or "mnemonic" in lowered
        or (
            ("phrase" in lowered or "words" in lowered)
            and ("recovery" in lowered or "backup" in lowered or "wallet" in lowered)
        )
    ):
        for m in _SEED.finditer(text):
            words = re.findall(r"[a-z]+", m.group("value").lower())
            if _NOT_SEED_WORDS.isdisjoint(words):
                yield "looks like a recovery phrase statement", m.span("value")


def _access_code(m: re.Match[str]) -> bool:
    """Whether an access code statement's value is a code: digits in groups ("48
    21", "48-21"), four to twelve in all and never a range of years ("gate code:
    2023-2024"). Right after the noun, with no "is", ":" or "=", groups joined by
    a hyphen are a dial's "12-34-56" only ("the door code 2023-2024 review" names
    years), and groups joined by spaces are a code ("remember the door code 48
    21") unless they are a date ("12 05 2024")."""
    groups = m.group("groups")
    if groups is None:
        return True
    if not m.group("said").strip():
        if "-" in groups:
            return _DIAL.fullmatch(groups) is not None  # "safe combination 12-34-56"
        if _DATE.fullmatch(groups) is not None:
            return False
    digits = groups.replace(" ", "").replace("-", "")
    return 4 <= len(digits) <= 12 and _YEARS.fullmatch(groups) is None


def _is_code(code: str, *, said: bool) -> bool:
    """Whether ``code`` can be a backup code: six characters or more with a digit;
    without "is" or ":" before it, letters and digits both ("recovery codes 2024"
    is a heading)."""
    alnum = code.replace("-", "").replace(" ", "")
    if len(alnum) < 6 or not any(c.isdigit() for c in alnum):
        return False
    return said or any(c.isalpha() for c in alnum)


def _codes(m: re.Match[str]) -> Span | None:
    """The span of the list of codes that ``m`` starts, or None if its first is none."""
    said = m.group("said").strip() != ""
    if not _is_code(m.group("value"), said=said):
        return _letter_codes(m) if said else None
    end = m.end("value")
    while (more := _NEXT_CODE.match(m.string, end)) is not None and _is_code(
        more.group(1), said=said
    ):
        end = more.end()
    return m.start("value"), end


def _shape(code: str) -> tuple[bool, tuple[int, ...]] | None:
    """A code of letters only in hyphen-joined groups: its case and group lengths."""
    groups = code.split("-")
    if len(groups) < 2 or not all(g.isalpha() for g in groups):
        return None
    if not (code.islower() or code.isupper()):
        return None
    return code.islower(), tuple(len(g) for g in groups)


def _letter_codes(m: re.Match[str]) -> Span | None:
    """The span of a list of codes without a digit ("abcd-efgh, ijkl-mnop"), or None.

    Words can look like such codes ("one-time, two-step"), so it takes two codes
    or more of one shape (case and group lengths), none repeated and none a
    placeholder ("xxxx-xxxx"), with as few vowels as random letters have:
    counting y, about a quarter, where most words have two fifths or more.
    """
    first = m.group("value")
    shape = _shape(first)
    if shape is None:
        return None
    codes, end = [first], m.end("value")
    while (more := _NEXT_CODE.match(m.string, end)) is not None and _shape(more.group(1)) == shape:
        codes.append(more.group(1))
        end = more.end()
    letters = "".join(codes).replace("-", "").lower()
    if len(codes) < 2 or len(set(codes)) < len(codes):
        return None
    if any(len(set(c.replace("-", ""))) * 4 < len(c.replace("-", "")) * 3 for c in codes):
        return None  # "xxxx-xxxx", "abab-abab"
    if sum(c in "aeiouy" for c in letters) * 5 >= len(letters) * 2:
        return None
    return m.start("value"), end


def _base32_secret(value: str) -> bool:
    """Whether ``value`` can be a two-factor secret: base32 in one case, with a
    digit unless it is one unbroken run of capitals that reads as no word. A
    word in capitals ("INTERNATIONALIZATION") is two fifths vowels or more; a
    random draw from the base32 alphabet, where A, E, I, O, U and Y are six
    characters of 32, is about a fifth."""
    letters = value.replace(" ", "").rstrip("=")
    if not (letters.isupper() or letters.islower()):
        return False
    if any(c.isdigit() for c in letters):
        return True
    if " " in value or not letters.isupper():
        return False
    return sum(c in "AEIOUY" for c in letters) * 10 < len(letters) * 3


def _named_secret(m: re.Match[str]) -> bool:
    """Whether a two-factor statement names a secret: "2FA" alone does so with ":"
    or "=" ("2FA: JBSW…"), or before a value with a digit ("2FA is JBSWY3DP…")."""
    if m.group("kind") is not None or m.group("said").strip() in (":", "="):
        return True
    return any(c.isdigit() for c in m.group("value"))


def _param(m: re.Match[str]) -> Span | None:
    return m.span("v") if len(m.group("v")) >= 16 else None


RULES: tuple[Rule, ...] = (
    Rule(
        "otp_secret",
        Tier.DEFINITE,
        # otpauth://totp/ACME:alice?secret=JBSWY3DPEHPK3PXP&issuer=ACME: the secret
        # is the second factor itself; the label and issuer stay.
        re.compile(r"otpauth://[^\s?#]*\?(?:[^\s#&]*&)*?secret=(?P<v>[A-Za-z2-7]+=*)"),
        ("otpauth://",),
        needs=":",
        extract=_param,
    ),
    Rule(
        "otp_secret",
        Tier.DEFINITE,
        # Google Authenticator's export: every account's secret, encoded in one link.
        re.compile(r"otpauth-migration://[^\s?#]*\?(?:[^\s#&]*&)*?data=(?P<v>[A-Za-z0-9%+/_=-]+)"),
        ("otpauth-migration://",),
        needs=":",
        extract=_param,
    ),
)
