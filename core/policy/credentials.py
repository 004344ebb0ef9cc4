"""Credential statements: prose that discloses a credential, such as "my password is hunter2".

Redaction (:mod:`core.policy.secrets`) finds secrets by their shape; a password said
in a sentence has none, so the sentence itself is recognised here and the
caller refuses or holds the text instead of storing it. Talk *about*
credentials ("use a password manager", "the password is required") passes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from core.policy import access_codes, indirect_statements, personal_numbers
from core.policy.secrets import REPLACEMENT, fold_width

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
# Words that follow "the password is" in ordinary talk about passwords.
_NOT_A_VALUE = frozenset(
    """a an the in on at for from with without to of by not never no too very also still
    always now being been here there this that it what which who how where when whatever
    something anything nothing same different my your our their his her its mine yours
    required optional mandatory needed necessary missing empty blank set unset stored saved
    kept managed handled hidden masked encrypted hashed salted protected secure insecure
    safe unsafe weak strong long short wrong right correct incorrect invalid valid expired
    revoked rotated reset changed updated new old temporary random generated unique shared
    personal private public secret sensitive case-sensitive compromised leaked known unknown
    forgotten lost fine ok okay good bad great complex simple obvious easy hard ready active
    inactive enabled disabled locked unlocked deprecated outdated configured defined
    undefined null none present absent available unavailable sent passed used usually
    generally typically only just probably please must should will can may might
    does did str bytes int bool optional""".split()
)
_ONE_WORD = re.compile(r"[A-Za-z0-9_-]*")
_AROUND = re.compile(r"\A[\"'`(\[]+|[^\w]+\Z")
# "os.environ['TOKEN']", "getpass.getpass(...)", "Field(...)": code computing a value.
_CODE_VALUE = re.compile(r"[A-Za-z_][\w.]*[(\[]")
# "apiKey = process.env.API_KEY", "token: config.auth.token": code naming where a value is.
_CODE_REF = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_UNITS = frozenset(
    "characters chars character digits digit letters letter symbols long days hours minutes "
    "weeks months years times attempts".split()
)
# Words that follow "with password" as one noun ("log in with password authentication").
_COMPOUNDS = frozenset(
    "authentication auth login logins logon signin sign-in protection prompt prompts reset "
    "resets manager managers policy policies field fields hash hashes hashing change changes "
    "expiry expiration rotation recovery rules requirements access entry input hint hints "
    "strength length complexity support fallback entries file files store vault list".split()
)
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

# --- values of more than one word ------------------------------------------------

# Function words: a phrase that has one after its first word is a sentence, not a
# passphrase ("the passphrase is asked for on every push").
_FUNCTION_WORDS = frozenset(
    """a an the and or but nor so yet for of to in on at by with from into onto over under
    about as than then that this these those it its is are was were be been being has have
    had do does did will would can could should may might must shall not no your my our
    their his her them they we you he she i me us which who whom whose what when where why
    how if unless because while until some any each every all both either neither such same
    other another there here also too very just only even still already again enough via
    per""".split()
)
# Verbs that open an instruction ("passphrase: ask Bob tomorrow"), not a passphrase.
_INSTRUCTIONS = frozenset(
    "ask see check use pick choose contact call talk look find get try read type enter "
    "create make write keep store put send share generate copy paste follow".split()
)
_PROSE_WORDS = _FUNCTION_WORDS | _NOT_A_VALUE | _UNITS
# Google's app password: four groups of four lower-case letters, after "app password".
_APP_PASSWORD = re.compile(r"[a-z]{4}(?:[ \t][a-z]{4}){3}(?![\w-])")
_APP_BEFORE = re.compile(
    r"(?<![\w-])(?:app(?:[ \t-]+specific)?|application[ \t-]+specific)[ \t-]+\Z", re.IGNORECASE
)
_QUOTED = re.compile(
    r"[\"'\u201c\u2018](?P<inner>[^\"'\u201c\u201d\u2018\u2019\r\n]{1,80})[\"'\u201d\u2019]"
)
# A password said plainly: three to eight words of letters or digits that close the
# clause (a stop, a comma and the like, the end of the line or of the text).
_PLAIN = re.compile(
    r"[A-Za-z0-9]+(?:[ \t]+[A-Za-z0-9]+){2,7}"
    r"(?=[\"')\]]*(?:[.,;:!?](?:\s|\Z)|[ \t]*(?:\r?\n|\Z)))"
)
# Words a clause about a password is made of and a made-up phrase is not: the
# function words, and the adverbs and prepositions of place and time that say
# where or when ("written down somewhere", "shared between staging and prod",
# "stolen last week").
_CLAUSE_WORDS = _FUNCTION_WORDS | frozenset(
    """between among across along around behind beyond inside outside within through
    throughout toward towards upon since though although whether once like unlike near
    despite except plus minus versus vs up down out off away somewhere anywhere everywhere
    nowhere elsewhere ago yesterday today tonight tomorrow last next""".split()
)
# A first word shaped as a participle or an adverb makes "is" a verb of the clause
# ("is shared between ...", "is rarely used", "is expiring soon"), not the "is" of a value.
_PREDICATE = re.compile(r"[a-z]{3,}(?<!e)ed|[a-z]{3,}ing|[a-z]{3,}ly")
# A password of two words closing the clause: a word in lower case, then a
# number in figures or in words ("hunter two", "dragon 7").
_NUMBER_WORD = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen"
    r"|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty"
    r"|sixty|seventy|eighty|ninety|hundred)"
)
_PAIR = re.compile(
    rf"(?P<word>[a-z]{{3,}})[ \t]+(?:\d{{1,8}}|{_NUMBER_WORD})"
    r"(?=[\"')\]]*(?:[.,;:!?](?:\s|\Z)|[ \t]*(?:\r?\n|\Z)))"
)
# Nouns a number labels or bounds: "the password is step two", "is priority one",
# "is min 8" say which or how much, not what.
_NUMBERED = frozenset(
    """number num no step part phase stage level tier round priority factor option choice
    item point rule section chapter page line table figure version release build day
    week month year hour minute attempt try count type class grade rank size length min
    max minimum maximum top""".split()
)
_NOT_PAIR_WORDS = _PROSE_WORDS | _CLAUSE_WORDS | _COMPOUNDS | _INSTRUCTIONS | _NUMBERED
# A lone word that reads as a participle, before "but" or "and", is a verb of the
# clause ("the password is accepted but login fails", "is working and ...").
_PARTICIPLE = re.compile(r"[a-z]{3,}(?<!e)ed|[a-z]{3,}ing")
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
    if value.startswith("/") or value.lower() in _NOT_A_VALUE or len(value) < 3:
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
    noun = m.group("noun").lower()
    if noun.startswith(("pass", "pw", "pin")):
        digits = _ONE_BY_ONE.match(m.string, m.start("value"))
        if digits is not None:
            return digits.span()
    if noun.startswith(("pass", "pw")):
        phrase = _phrase(m, noun)
        if phrase is not None:
            return phrase
    # Judged without the punctuation around it ("swordfish.", "`qwerty`:", a
    # manual page's "authentication\\&."); the span keeps it.
    value = _AROUND.sub("", m.group("value"))
    if not any(c.isalnum() for c in value):
        return None  # "with a passphrase |" in a table, "the password is …"
    if value.lower() in _NOT_A_VALUE or value == REPLACEMENT.strip("[]"):
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
        # "but" or "and" ("the password is accepted but login fails").
        if rest and (rest not in ("and", "but", "so", "btw") or _PARTICIPLE.fullmatch(value)):
            return None
        if value.lower() in _COMPOUNDS:
            return None  # "log in with password authentication."
    elif value.isdigit() and rest in _UNITS:
        return None  # "the PIN is 4 digits"
    if not _fits(noun, value):
        return None
    return m.span("value")


def _phrase(m: re.Match[str], noun: str) -> tuple[int, int] | None:
    """The span of a password of several words, or None: Google's app password
    ("abcd efgh ijkl mnop"), a quoted phrase ("Summer 2024 rocks"), or a
    passphrase said plainly ("correct horse battery staple")."""
    text, start = m.string, m.start("value")
    if _APP_BEFORE.search(text, max(0, m.start("noun") - 24), m.start("noun")):
        app = _APP_PASSWORD.match(text, start)
        if app is not None:
            return app.span()
    quoted = _QUOTED.match(text, start)
    if quoted is not None:
        words = [w.strip(".,;:!?()").lower() for w in quoted.group("inner").split()]
        if len(words) >= 2 and _reads_as_one(words, min_words=2):
            return quoted.span("inner")
        return None
    # After "passphrase" a plain phrase may follow "is" or ":"; after "password",
    # only "is" ("Password: Bitwarden team vault" is a label saying where it is).
    said = (m.groupdict().get("sep") or "").strip().lower()
    if "phrase" in noun or said in ("is", "was"):
        plain = _PLAIN.match(text, start)
        if plain is not None and _plain_phrase(plain.group().lower().split()):
            return plain.span()
        pair = _PAIR.match(text, start)
        if pair is not None and _pair_word(pair.group("word")):
            return pair.span()
    return None


def _pair_word(word: str) -> bool:
    """Whether ``word``, before a number that closes the clause after "password
    is", reads as the start of a password of two words ("hunter two") rather than
    a clause ("is under 12", "is step two", "is expiring 2"): no word a clause or
    talk about passwords is made of, no participle or adverb, no noun a number
    labels or bounds."""
    return word not in _NOT_PAIR_WORDS and _PREDICATE.fullmatch(word) is None


def _plain_phrase(words: list[str]) -> bool:
    """Whether unquoted ``words`` closing a clause after "password is" read as a
    made-up password ("correct horse battery staple", "purple monkey dishwasher
    42") rather than the rest of a sentence about one ("shared between staging
    environments", "rarely used anymore"). Nothing in quotes marks where such a
    password starts or ends, so the whole clause must read as one: two words of
    letters at least, none a word a clause needs, none after the first a word of
    talk about passwords, and a first word that is neither a participle nor an
    adverb."""
    if sum(w.isalpha() for w in words) < 2 or _PREDICATE.fullmatch(words[0]):
        return False
    if any(w in _CLAUSE_WORDS for w in words):
        return False
    if any(w in _COMPOUNDS for w in words[1:]):
        return False  # "Bitwarden team vault", "company login entry"
    return _reads_as_one(words, min_words=3)


def _reads_as_one(words: list[str], *, min_words: int) -> bool:
    """Whether ``words`` read as one made-up password rather than a sentence: no
    function word, no word of talk about passwords after the first, and a first
    word that opens no instruction. A first word such as "correct" can open a
    phrase ("correct horse battery staple") or a judgement ("correct as typed"),
    so a phrase that starts with one needs a word more."""
    first, others = words[0], words[1:]
    if first in _FUNCTION_WORDS or first in _INSTRUCTIONS or any(w in _PROSE_WORDS for w in others):
        return False
    return len(words) >= min_words + (first in _PROSE_WORDS)


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
    short-lived"); no credential is a measurement ("servo pw is 1500us")."""
    if _MEASURE.fullmatch(value):
        return False
    if noun.startswith("pin"):
        if value.isdigit():
            return 4 <= len(value) <= 12
        # A pin name on a board ("GPIO4", "D13") is wiring; a longer code is a PIN.
        return len(value) >= 6 and _PIN_NAME.fullmatch(value) is None
    if noun.startswith(("pass", "pw")):
        return True  # a password may be any word
    return not value.replace("-", "").replace("'", "").isalpha()
