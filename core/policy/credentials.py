"""Credential statements: prose that discloses a credential, such as "my password is hunter2".

Redaction (:mod:`core.policy.secrets`) finds secrets by their shape; a password said
in a sentence has none, so the sentence itself is recognised here and the
caller refuses or holds the text instead of storing it. Talk *about*
credentials ("use a password manager", "the password is required") passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.policy import access_codes, indirect_statements, password_phrases, personal_numbers
from core.policy.prose_words import COMPOUNDS, KEEP_QUIET, NOT_A_VALUE, PARTICIPLE, UNITS
from core.policy.secrets import REPLACEMENT, fold_width
from core.policy.value_judgement import publishable, reference_at

# A word of the "for the NAS" part: dots only inside it (a host name such as db.example.com),
# so the phrase never runs over the end of a sentence ("a pin on your purse. Is it ...").
_WORD = r"[\w@-]+(?:\.[\w@-]+)*"
_STATEMENT = re.compile(
    r"(?<![\w-])(?P<noun>password|passwd|passcode|passphrase|pw|pin(?:[ \t]+(?:code|number))?"
    r"|(?:api|secret|access|private)[ \t_-]?key|(?:(?:access|auth|api)[ \t_-]?)?token|secret"
    r"|credentials?)"
    r"(?:[ \t]+(?:for|to|on|of|at)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?"
    + _WORD
    + r"(?:[ \t]+"
    + _WORD
    + r")?)?"
    r"(?P<sep>[ \t]+(?:is|was|are|=)|[ \t]*:)[ \t]+"
    r"(?:(?:now|still|just|currently|actually|set[ \t]+to)[ \t]+)?"
    r"(?P<value>\S+)(?P<rest>[ \t]+\w+)?",
    re.IGNORECASE,
)
_STATEMENT_NOUNS = ("pass", "pw", "pin", "key", "token", "secret", "credential")
_ONE_WORD = re.compile(r"[A-Za-z0-9_-]*")
_AROUND = re.compile(r"\A[\"'`(\[]+|[^\w]+\Z")
# "os.environ['TOKEN']", "getpass.getpass(...)", "Field(...)": code computing a value.
_CODE_VALUE = re.compile(r"[A-Za-z_][\w.]*[(\[]")
# "apiKey = process.env.API_KEY", "token: config.auth.token": code naming where a value is.
_CODE_REF = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
# "ssh root@10.0.0.5 with password toor", "log in using the password hunter2".
_WITH = re.compile(
    r"(?<![\w-])(?:with|using)[ \t]+(?:(?:the|my|our|a)[ \t]+)?"
    r"(?P<noun>password|passwd|passcode|passphrase|pw|pin)(?:[ \t]+of)?(?P<sep>[ \t]*:)?[ \t]+"
    r"(?P<value>\S+)(?P<rest>[ \t]+\w+)?",
    re.IGNORECASE,
)
# "I set the wifi password to hunter2", "changed my PIN to 4821".
_SET_TO = re.compile(
    r"(?<![\w-])(?:set|changed?|reset|updated?)[ \t]+(?:(?:the|my|our|his|her|their)[ \t]+)?"
    r"(?:[\w.-]+[ \t]+){0,2}?"
    r"(?P<noun>password|passwd|passcode|passphrase|pw|pin(?:[ \t]+code)?)[ \t]+to[ \t]+"
    r"(?P<value>\S+)(?P<rest>[ \t]+\w+)?",
    re.IGNORECASE,
)
# "ssh root@10.0.0.5 password toor", "user admin, password hunter2", "ssh to the NAS
# as root, password toor", "root@10.0.0.5 and the password toor": a user, then its password.
_NOT_A_USER = (
    r"(?!(?:and|or|with|to|for|the|a|an|your|my|no|of|in|name|is|it|if|well|usual|such|long"
    r"|soon|far|much|many|part|needed|required|expected|before|default|follows|shown)"
    r"(?![\w.@+-]))"
)
_USER_THEN_PASSWORD = re.compile(
    r"(?:(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*"
    rf"|(?<![\w-])(?:user(?:name)?|login)[ \t]*[:=]?[ \t]*{_NOT_A_USER}[\w.@+-]+"
    rf"|(?<![\w-])as[ \t]+{_NOT_A_USER}[\w.@+-]+)"
    r"(?:[ \t]*[,;/|][ \t]*|[ \t]+)(?:and[ \t]+(?:(?:the|its|their)[ \t]+)?)?"
    r"(?P<noun>password|passwd|pw)(?P<sep>[ \t]*[:=]|[ \t]+is)?[ \t]+"
    r"(?P<value>\S+)(?P<rest>[ \t]+\w+)?",
    re.IGNORECASE,
)

_POSSESSIVE = re.compile(r"[A-Za-z]+['\u2019]s")
# Digits said one at a time ("1 9 8 4", "four four one two"): one PIN or password.
_ONE_BY_ONE = re.compile(access_codes.DIGITS_ONE_BY_ONE, re.IGNORECASE)


# "Login for the NAS: admin / hunter2", "creds for staging: root:Pa55word".
_LOGIN = re.compile(
    r"(?<![\w-])(?P<noun>log[ \t-]?ins?|logons?|sign[ \t-]?ins?|creds|credentials?"
    r"|user(?:name)?[ \t]*(?:/|and|&)[ \t]*pass(?:word)?|u/p)"
    r"(?:[ \t]+(?:for|to|on|of|at|into)[ \t]+(?:the[ \t]+|my[ \t]+|our[ \t]+)?"
    + _WORD
    + r"(?:[ \t]+"
    + _WORD
    + r")?)?"
    r"(?:[ \t]+(?:is|are|was|=)|[ \t]*[:=])[ \t]+"
    r"(?P<user>[\w.@+-]{1,64})(?P<sep>[ \t]+/[ \t]+|/|:)(?P<value>[^\s]{3,})",
    re.IGNORECASE,
)
_LOGIN_NOUNS = ("log", "sign", "cred", "user", "u/p")


def _login_value(m: re.Match[str]) -> bool:
    """Whether the part after "user /" is a password rather than more prose."""
    value = m.group("value").rstrip(".,;!?)")
    if value.startswith("/") or value.lower() in NOT_A_VALUE or len(value) < 3:
        return False
    if value.lower() in ("password", "pass", "passwd", "secret", "token", "none", "null"):
        return False
    if m.group("sep") == ":" and m.group("user").lower() in ("http", "https", "ssh", "ftp"):
        return False  # a URL, not "user:password"
    if m.group("sep").strip() == "/" and m.group("sep") == "/":
        # "admin/hunter2" is a login; "ops/team-a" and "read/write" are not.
        return (
            any(c.isdigit() for c in value)
            or any(not c.isalnum() and c not in "-_." for c in value)
            or (any(c.isupper() for c in value) and any(c.islower() for c in value))
        )
    return True


def _statement_reason(noun: str) -> str:
    noun = noun.lower()
    if noun.startswith("pass") and "phrase" in noun:
        return "looks like a passphrase statement"
    if noun.startswith("pass") or noun == "pw":
        return "looks like a password statement"
    if noun.startswith("pin"):
        return "looks like a PIN statement"
    if noun.endswith("key"):
        return "looks like an API key statement" if "api" in noun else "looks like a key statement"
    if noun.endswith("token"):
        return "looks like a token statement"
    if noun.startswith("credential"):
        return "looks like a credentials statement"
    return "looks like a secret statement"


def credential_statement(text: str) -> str | None:
    """Recognise prose that discloses a credential, such as "my password is hunter2".

    Redaction cannot find the secret in free prose reliably, so the caller should
    refuse or hold such text instead of storing it. Talk *about* credentials ("use
    a password manager", "the password is required") passes.

    Args:
        text: Any string.

    Returns:
        A short reason, or None if the text does not look like a disclosure.
    """
    for reason, _span in _statements(text):
        return reason
    return None


def statement_values(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Every disclosure in ``text``: its reason and the span of the disclosed value.

    For text nobody composed for Ambry (a file's contents), where refusing the
    whole would lose the rest, the caller cuts these spans out instead.
    """
    return list(_statements(text))


def _statements(text: str) -> Iterator[tuple[str, tuple[int, int]]]:
    if _ONE_WORD.fullmatch(text):
        return  # a tag or a label: every statement has a space, ":" or "=" in it
    text = fold_width(text)  # "ｐａｓｓｗｏｒｄ ｉｓ …" is the statement it looks like
    lowered = text.lower()
    if any(noun in lowered for noun in _LOGIN_NOUNS):
        for m in _LOGIN.finditer(text):
            if _login_value(m):
                yield "looks like a login (user and password)", m.span("value")
    yield from access_codes.statements(text, lowered)
    yield from personal_numbers.statements(text, lowered)
    yield from indirect_statements.statements(text, lowered)
    if not any(noun in lowered for noun in _STATEMENT_NOUNS):
        return  # the regex costs ~50x more than these look-ups
    for m in _STATEMENT.finditer(text):
        span = _value_span(m, assigned=m.group("sep").strip() in ("=", ":"))
        if span is not None:
            yield _statement_reason(m.group("noun")), span
    if "with" in lowered or "using" in lowered:
        for m in _WITH.finditer(text):
            span = _value_span(m)
            if span is not None:
                yield _statement_reason(m.group("noun")), span
    if " to " in lowered:
        for m in _SET_TO.finditer(text):
            span = _value_span(m)
            if span is not None:
                yield _statement_reason(m.group("noun")), span
    if "@" in text or "user" in lowered or "login" in lowered or "as " in lowered:
        for m in _USER_THEN_PASSWORD.finditer(text):
            span = _value_span(m)
            if span is not None:
                yield "looks like a login (user and password)", span


def _value_span(m: re.Match[str], *, assigned: bool = False) -> tuple[int, int] | None:
    """The span of the credential a statement discloses, or None if what follows
    the noun is talk about it ("the password is required").

    Args:
        m: A match with the groups ``noun``, ``value`` (the first word after the
            noun and its verb) and ``rest`` (the word after that, if any).
        assigned: The noun was followed by ``=`` or ``:`` rather than a verb.
    """
    if reference_at(m.string, m.start("value")):
        return None  # "password: ${DB_PASSWORD}", "<your-password>", "[REDACTED]"
    noun = m.group("noun").lower()
    if noun.startswith(("pass", "pw", "pin")):
        digits = _ONE_BY_ONE.match(m.string, m.start("value"))
        if digits is not None:
            return digits.span()
    if noun.startswith(("pass", "pw")):
        phrase = password_phrases.phrase(m, noun)
        if phrase is not None:
            return phrase
    # Judged without the punctuation around it ("swordfish.", "`qwerty`:", a
    # manual page's "authentication\\&."); the span keeps it.
    value = _AROUND.sub("", m.group("value"))
    if not any(c.isalnum() for c in value):
        return None  # "with a passphrase |" in a table, "the password is …"
    if value.lower() in NOT_A_VALUE or value == REPLACEMENT.strip("[]"):
        return None
    if _CODE_VALUE.match(m.group("value")):
        return None
    if (
        assigned
        and _CODE_REF.fullmatch(value)
        and not noun.startswith(("pass", "pw"))  # "correct.horse.battery" is a password
    ):
        return None
    rest = (m.group("rest") or "").strip().lower()
    if value.isalpha() or (_POSSESSIVE.fullmatch(value) and rest):
        # A lone word closing the clause is the value; one that runs on is prose
        # ("the password is Bitwarden's job now"), and so is a participle before
        # "but" or "and" ("the password is accepted but login fails"), unless
        # the clause after asks to keep it quiet ("is dumpling but don't share it").
        if rest and (
            rest not in ("and", "but", "so", "btw")
            or (PARTICIPLE.fullmatch(value) and KEEP_QUIET.match(m.string, m.end("rest")) is None)
        ):
            return None
        if value.lower() in COMPOUNDS:
            return None  # "log in with password authentication."
    elif value.isdigit() and rest in UNITS:
        return None  # "the PIN is 4 digits"
    if not _fits(noun, value):
        return None
    return m.span("value")


# "Servo pw is 1500us", "timeout: 30s": a measurement, not a password.
_MEASURE = re.compile(
    r"\d+(?:\.\d+)?(?:[u\u00b5mn]?s|sec|min|h|[kmg]?hz|m?[vaw]|kw|px|pt|em|%|[kmgt]b"
    r"|[mck]?m|k?g|lbs?|ft|in)",
    re.IGNORECASE,
)


_PIN_NAME = re.compile(r"[A-Za-z]{1,6}\d{1,3}")


def _fits(noun: str, value: str) -> bool:
    """Whether ``value`` can be what ``noun`` names: a PIN is 4-12 digits or a longer
    code ("the LED pin is 13" and "the reset pin is GPIO4" are wiring); a token, key
    or secret is not a plain word ("the secret is patience", "the access token is
    short-lived") nor a key meant to be public ("the api key is pk_live_…"); no
    credential is a measurement ("servo pw is 1500us")."""
    if _MEASURE.fullmatch(value):
        return False
    if noun.startswith("pin"):
        if value.isdigit():
            return 4 <= len(value) <= 12
        # A pin name on a board ("GPIO4", "D13") is wiring; a longer code is a PIN.
        return len(value) >= 6 and _PIN_NAME.fullmatch(value) is None
    if noun.startswith(("pass", "pw")):
        return True  # a password may be any word
    return not value.replace("-", "").replace("'", "").isalpha() and not publishable(value)
