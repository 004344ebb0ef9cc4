"""The detectors behind :mod:`core.policy.secrets`: one rule per kind of secret.

Each :class:`Rule` is a regex tried only where one of its literal anchors
occurs, with a tier saying how sure a match is and, where the match includes
context (``password=``), a function that cuts it down to the secret itself.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum


class Tier(StrEnum):
    """How sure a finding is, which decides what happens to it."""

    DEFINITE = "definite"
    PROBABLE = "probable"
    POSSIBLE = "possible"

    @property
    def redacts(self) -> bool:
        """Whether findings of this tier are replaced in the stored text."""
        match self:
            case Tier.DEFINITE | Tier.PROBABLE:
                return True
            case Tier.POSSIBLE:
                return False

    @property
    def rank(self) -> int:
        """Lower wins when two findings overlap."""
        match self:
            case Tier.DEFINITE:
                return 0
            case Tier.PROBABLE:
                return 1
            case Tier.POSSIBLE:
                return 2


Span = tuple[int, int]
Extract = Callable[[re.Match[str]], Span | None]


@dataclass(frozen=True)
class Rule:
    """One detector.

    Running a regex over every position of the text is what makes scanning slow,
    so each rule names the literal anchors where a match can begin and is only
    tried there; ``str.find`` locates anchors far faster than the regex engine.
    """

    name: str
    tier: Tier
    #: Matched (not searched) at each anchor; it must also work with ``finditer``,
    #: which is the fallback when lower-casing changes the text's length and what
    #: a rule with no anchors uses.
    regex: re.Pattern[str]
    anchors: tuple[str, ...]
    #: Skip the rule unless one of these characters occurs (a memchr-cheap test).
    needs: str = ""
    #: Look anchors up in the lower-cased text.
    caseless: bool = False
    #: The match begins this many characters before its anchor.
    back: int = 0
    #: Turns a match into the span to report, or rejects it; default: whole match.
    extract: Extract | None = None


# --- value judgement -----------------------------------------------------------

_PLACEHOLDER = re.compile(
    r"your|example|placeholder|change[_-]?me|redacted|x{3,}|\*{3,}|\.{3}|…|<|>|\{\{|\$\{"
    r"|dummy|sample|lorem|\btodo\b|\btbd\b|^n/?a$|^\$[A-Za-z_]\w*$|^%[A-Za-z_]\w*%$",
    re.IGNORECASE,
)
_NON_VALUES = frozenset(
    "none null nil true false undefined str string bytes int bool any value optional "
    "required empty hidden masked env password passwd pwd pass secret token key apikey "
    "api_key secretstr boolean number".split()
)
# A bare (unquoted) value shaped like a reference in code, not a literal secret.
_CODE_REF = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z]+(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
)
_PATH_STARTS = ("/", "~/", "./", "../")
# "get_secret(name)" or "os.environ[...]": the value is computed, not written down.
_CALL = re.compile(r"[A-Za-z_][\w.]*[(\[]")
_WORDISH = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")
_PROSE_NEXT = re.compile(r"[ \t]+[A-Za-z]")


def _plausible(value: str) -> bool:
    return not _PLACEHOLDER.search(value) and value.lower() not in _NON_VALUES


def password_like(value: str) -> bool:
    """Whether ``value``, found where a password goes, can be one: not a
    placeholder, a type or a word such as ``none``."""
    return len(value) >= 4 and _plausible(value)


def token_like(value: str) -> bool:
    """Whether ``value``, found where a token or key goes, can be one: generated
    rather than a word."""
    if len(value) < 8 or not _plausible(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha:
        return True
    # Digit-free tokens exist, but only mixed-case gibberish is worth flagging.
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return len(value) >= 16 and mixed and not _WORDISH.fullmatch(value)


def _assignment(judge: Callable[[str], bool]) -> Extract:
    """Build an extractor that returns the span of an assignment's value only."""

    def extract(m: re.Match[str]) -> Span | None:
        for group in ("dq", "sq"):
            if m.group(group) is not None:
                value = m.group(group)
                return m.span(group) if judge(value) else None
        value = _sentence_end(m.group("bare"), m.string, m.end("bare"))
        start = m.start("bare")
        end = start + len(value)
        text = m.string
        after = text[m.end("bare") : m.end("bare") + 1]
        if after in ("(", "[") or (_CALL.match(value) and _closed(value, text, m.end("bare"))):
            return None  # a call or a subscript: code, not a literal
        if _CODE_REF.fullmatch(value) or value.startswith(_PATH_STARTS):
            return None  # PWD=/home/alice is a directory, not a password
        if m.group("sep") == ":" and value.isalpha() and _PROSE_NEXT.match(text, end):
            return None  # "Password: Use at least twelve characters"
        return (start, end) if judge(value) else None

    return extract


def _closed(value: str, text: str, end: int) -> bool:
    """Whether the bracket a call-shaped value opens is closed later on its line."""
    closer = ")" if "(" in value else "]"
    line = text[end : end + 200].split("\n", 1)[0]
    return closer in value[value.index("(" if closer == ")" else "[") :] or closer in line


def _sentence_end(value: str, text: str, end: int) -> str:
    """``value`` without one full stop that ends the sentence around it."""
    if value.endswith(".") and len(value) > 1 and text[end : end + 1] in ("", " ", "\n", "\t"):
        return value[:-1]
    return value


def judged_group(group: str, judge: Callable[[str], bool]) -> Extract:
    """Report the quoted value (groups ``dq``/``sq``) or ``group``, if ``judge`` accepts it."""

    def extract(m: re.Match[str]) -> Span | None:
        for quoted in ("dq", "sq"):
            if quoted in m.re.groupindex and m.group(quoted) is not None:
                return m.span(quoted) if judge(m.group(quoted)) else None
        value = _sentence_end(m.group(group), m.string, m.end(group))
        start = m.start(group)
        return (start, start + len(value)) if judge(value) else None

    return extract


def _prefixed(prefix: re.Pattern[str], inner: Extract) -> Extract:
    """Require ``prefix`` to end right where the match begins.

    This lets a rule anchor on a key's distinctive tail ("key" in ``api_key``,
    "password" in ``--db-password``) and check the varying head afterwards.
    """

    def extract(m: re.Match[str]) -> Span | None:
        if prefix.search(m.string, max(0, m.start() - 32), m.start()) is None:
            return None
        return inner(m)

    return extract


def _in_a_name(inner: Extract) -> Extract:
    """Reject a match glued to the end of a word that starts with a digit.

    A name that holds "password" inside it (``dbPassword``, ``PGPASSWORD``) is a
    variable's, and no variable's name starts with a digit: "1Password: Vault/Work"
    names the password manager and where an entry is kept in it.
    """

    def extract(m: re.Match[str]) -> Span | None:
        text, start = m.string, m.start()
        head = start
        while head > 0 and text[head - 1].isascii() and text[head - 1].isalnum():
            head -= 1
        if head < start and text[head].isdigit() and text[head - 1 : head] != "_":
            return None
        return inner(m)

    return extract


def _openai_body(m: re.Match[str]) -> Span | None:
    # A lower-case hyphenated slug after "sk-" is a CSS class or an id, not a key.
    body = m.group("body")
    if any(c.isdigit() or c.isupper() for c in body):
        return m.span()
    return None


def _slack(m: re.Match[str]) -> Span | None:
    return m.span() if any(c.isdigit() for c in m.group()) else None


def _encoded_private_key(m: re.Match[str]) -> Span | None:
    # "LS0tLS1CRUdJTi" is base64 of "-----BEGIN"; a certificate or a public key
    # (a kubeconfig's certificate-authority-data) is meant to be shared.
    head = m.group()[:64]
    try:
        decoded = binascii.a2b_base64(head)
    except (binascii.Error, ValueError):
        return None
    return m.span() if b"PRIVATE KEY" in decoded else None


#: How many bytes a signature's MAC may have: from a truncated 16 (MD5's length)
#: through SHA-1's 20 and SHA-256's 32 to SHA-512's 64.
_MAC_BYTES = range(16, 65)


def _signature(m: re.Match[str]) -> Span | None:
    # An Azure shared access signature is base64 of an HMAC, SHA-256's 32 bytes
    # in Azure's own, others elsewhere; padded or not, URL-escaped or not, in the
    # standard alphabet or the URL-safe one. Words ("sig=ok", "sig=YOUR_SIGNATURE")
    # are none: a MAC mixes two of lower case, upper case and digits.
    value = m.group("v")
    for escape, char in (("%2B", "+"), ("%2F", "/"), ("%3D", "=")):
        value = value.replace(escape, char).replace(escape.lower(), char)
    body = value.rstrip("=")
    if len(body) % 4 == 1:
        return None  # no base64 has that length
    kinds = (
        any(c.islower() for c in body)
        + any(c.isupper() for c in body)
        + any(c.isdigit() for c in body)
    )
    return m.span("v") if kinds >= 2 and len(body) * 3 // 4 in _MAC_BYTES else None


def _basic_pair(value: str) -> bool:
    """Whether ``value`` is base64 of a printable "user:password"."""
    if len(value) % 4 or len(value) < 8:
        return False
    try:
        decoded = binascii.a2b_base64(value)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded[1:] and all(32 <= b < 127 for b in decoded)


def _basic_auth(m: re.Match[str]) -> Span | None:
    return m.span("v") if _basic_pair(m.group("v")) else None


def _auth_value(value: str) -> bool:
    # "auth: required", "AUTH=oauth2" and "auth: OAuth2Bearer" name a method; a
    # Docker or npm "auth" holds base64 of "user:password", a service's a long token.
    return _basic_pair(value) or (len(value) >= 16 and token_like(value))


# --- rules ---------------------------------------------------------------------

# Characters that usually end a bare value (a query's "&", a list's ",", a call's
# ")"), but only where what follows them shows the value is over: the end, a
# space or the next "key=". Elsewhere they are part of the secret
# ("Tr0ub4dor&3"), and redacting only the part before them would leak the rest.
_DELIMS = r"\"'`,;&<>(){}\[\]"
_BARE = (
    rf"(?P<bare>[^\s{_DELIMS}]"
    rf"(?:[^\s{_DELIMS}]|[{_DELIMS}](?![{_DELIMS}]*(?:\s|\Z|[A-Za-z_][\w.-]*=)))*)"
)
_VALUE = (
    r"(?P<sep>:=|=>|=(?!=)|:)\*{0,2}[ \t]*"  # \*{0,2}: "**Password:** value" in Markdown
    rf"(?:\"(?P<dq>[^\"\r\n]+)\"|'(?P<sq>[^'\r\n]+)'|{_BARE})"
)
# "password: str = ..." — skip a short type annotation before the value.
_ANNOTATION = r"(?:[ \t]*:[ \t]*(?:str|bytes|SecretStr|Optional\[str\]|str[ \t]*\|[ \t]*None))?"


def _assign_re(keyword: str, edge: str = "(?<![A-Za-z0-9])") -> re.Pattern[str]:
    return re.compile(
        rf"{edge}(?:{keyword})(?![A-Za-z0-9])[\"']?{_ANNOTATION}[ \t]*{_VALUE}",
        re.IGNORECASE,
    )


def _name_edge(*words: str) -> str:
    """Where one of ``words`` may begin: at the start of a name, or inside a name
    that spells it in capitals (an environment variable: ``PGPASSWORD``,
    ``GITHUBTOKEN``, sshpass's ``SSHPASS``; not sudo's ``NOPASSWD``) or in camel
    case (``dbPassword``, ``clientSecret``; not .NET's ``publicKeyToken``, which
    names a public key's hash). A password's name may also be all lower case
    (``pgpassword``, ``dbpasswd``): no other word ends in "password"."""
    caps = "|".join(w.upper() for w in words) + ("|(?<=SSH)PASS" if "password" in words else "")
    camel = "|".join(w.capitalize() for w in words)
    lower = "|(?<=[a-z0-9])(?<!no)(?=password|passwd|passphrase)" if "password" in words else ""
    return (
        rf"(?-i:(?<![A-Za-z0-9])|(?<=[A-Z0-9])(?<!NO)(?={caps})"
        rf"|(?<=[A-Za-z0-9])(?<![Pp]ublic)(?<![Pp]ublicKey)(?={camel}){lower})"
    )


#: Short names of a password: a client or a service, then "pass" (``PGPASS``,
#: ``dbpass``, ``SSHPASS``). Only these: "compass", "bypass" and "surpass" end so too.
PASS_OWNERS = (
    "db", "pg", "my", "mysql", "sql", "redis", "mongo", "ftp", "sftp", "smtp", "imap", "mail",
    "ldap", "vnc", "rdp", "wifi", "admin", "root", "user", "ssh",
)  # fmt: skip
_PASS_OWNER = re.compile(rf"(?<![A-Za-z0-9])(?:{'|'.join(PASS_OWNERS)})[_-]?\Z", re.IGNORECASE)


_KEY_PREFIX = re.compile(
    r"(?<![A-Za-z0-9])(?:api|access|secret|private|signing|encryption|master|app|client"
    r"|license)[_-]?\Z",
    re.IGNORECASE,
)
_CLI_PREFIX = re.compile(r"(?<![A-Za-z0-9-])--(?:[A-Za-z0-9]+-)*\Z")
_D, _P = Tier.DEFINITE, Tier.PROBABLE


def edge(chars: str) -> str:
    """No token starts right after one of ``chars``, except after a percent-escape:
    in "?next=%2Fcb%3Fkey%3Dghp_..." the "D" of "%3D" is "=", and the token
    after it is whole."""
    return rf"(?:(?<![{chars}])|(?<=%[0-9A-Fa-f]{{2}}))"


_EDGE = edge("A-Za-z0-9_-")
RULES: tuple[Rule, ...] = (
    Rule(
        "private_key_block",
        _D,
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*)",
            re.DOTALL,
        ),
        ("-----BEGIN",),
    ),
    Rule(
        "private_key_block",
        _D,
        # Base64 of a PEM block (a kubeconfig's client-key-data, a Kubernetes
        # secret), on one line or wrapped into lines of base64.
        re.compile(
            r"LS0tLS1CRUdJTi[A-Za-z0-9+/]*"
            r"(?:\r?\n[ \t]*[A-Za-z0-9+/]{16,}(?=={0,2}(?:\r?\n|\Z|[^A-Za-z0-9+/])))*={0,2}"
        ),
        ("LS0tLS1CRUdJTi",),
        needs="L",
        extract=_encoded_private_key,
    ),
    Rule(
        "anthropic_key",
        _D,
        re.compile(_EDGE + r"sk-ant-[A-Za-z0-9_-]{20,}"),
        ("sk-ant-",),
        needs="-",
    ),
    Rule(
        "openai_key",
        _D,
        # An OpenRouter key (sk-or-v1- and 64 hex digits) and a Langfuse secret key
        # (sk-lf-) are named by their own rules.
        re.compile(
            _EDGE + r"sk-(?!ant-|lf-|or-v1-[0-9a-f]{64}(?![A-Za-z0-9_-]))"
            r"(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{32,})"
        ),
        ("sk-",),
        needs="-",
        extract=_openai_body,
    ),
    Rule(
        "aws_access_key",
        _D,
        re.compile(edge("A-Za-z0-9") + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("AKIA", "ASIA"),
        needs="A",
    ),
    Rule(
        "github_token",
        _D,
        re.compile(edge("A-Za-z0-9_") + r"gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        needs="_",
    ),
    Rule(
        "github_pat",
        _D,
        re.compile(edge("A-Za-z0-9_") + r"github_pat_[A-Za-z0-9_]{22,}"),
        ("github_pat_",),
        needs="_",
    ),
    Rule(
        "slack_token",
        _D,
        re.compile(edge("A-Za-z0-9") + r"xox[abpr]-[A-Za-z0-9-]{10,}"),
        ("xox",),
        needs="-",
        extract=_slack,
    ),
    Rule(
        "google_api_key",
        _D,
        re.compile(_EDGE + r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
        ("AIza",),
        needs="A",
    ),
    Rule(
        "stripe_live_key",
        _D,
        re.compile(edge("A-Za-z0-9_") + r"[sr]k_live_[0-9A-Za-z]{10,}"),
        ("k_live_",),
        needs="_",
        back=1,
    ),
    Rule(
        "jwt",
        _D,
        re.compile(_EDGE + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        ("eyJ",),
        needs="J",
    ),
    Rule(
        "stripe_test_key",
        _P,
        re.compile(edge("A-Za-z0-9_") + r"[sr]k_test_[0-9A-Za-z]{10,}"),
        ("k_test_",),
        needs="_",
        back=1,
    ),
    Rule(
        "password_assignment",
        _P,
        _assign_re(
            r"password|passwd|passphrase|passcode|pwd|(?<=_)pass|(?-i:(?<=SSH)PASS)",
            edge=_name_edge("password", "passwd", "passphrase"),
        ),
        ("pass", "pwd"),
        needs="=:",
        caseless=True,
        extract=_in_a_name(_assignment(password_like)),
    ),
    Rule(
        "password_assignment",
        _P,
        # No edge: the owner before "pass" bounds the name ("PGPASS=", "dbpass=").
        _assign_re("pass", edge=""),
        ("pass",),
        needs="=:",
        caseless=True,
        extract=_prefixed(_PASS_OWNER, _assignment(password_like)),
    ),
    Rule(
        "api_key_assignment",
        _P,
        # No edge: "apiKey" is camel case; the prefix check bounds the key instead.
        # Rails names its secret SECRET_KEY_BASE.
        _assign_re("key(?:_base)?", edge=""),
        ("key",),
        needs="=:",
        caseless=True,
        extract=_prefixed(_KEY_PREFIX, _assignment(token_like)),
    ),
    Rule(
        "secret_assignment",
        _P,
        _assign_re("secret", edge=_name_edge("secret")),
        ("secret",),
        needs="=:",
        caseless=True,
        extract=_in_a_name(_assignment(token_like)),
    ),
    Rule(
        "token_assignment",
        _P,
        _assign_re("token", edge=_name_edge("token")),
        ("token",),
        needs="=:",
        caseless=True,
        extract=_in_a_name(_assignment(token_like)),
    ),
    Rule(
        "credentials_assignment",
        _P,
        _assign_re(r"credentials?|creds"),
        ("cred",),
        needs="=:",
        caseless=True,
        extract=_assignment(token_like),
    ),
    Rule(
        "credentials_assignment",
        _P,
        # "_auth" in .npmrc, "auth" in a Docker config.json, SERVICE_AUTH in a .env.
        _assign_re(r"auth"),
        ("auth",),
        needs="=:",
        caseless=True,
        extract=_assignment(_auth_value),
    ),
    Rule(
        "cli_credential_flag",
        _P,
        re.compile(
            r"(?:password|passwd|token|api-key|secret)[ \t]+"
            r"(?:\"(?P<dq>[^\"\r\n]+)\"|'(?P<sq>[^'\r\n]+)'|(?P<v>[^\s\"'-][^\s\"']*))",
            re.IGNORECASE,
        ),
        ("pass", "token", "secret", "api-key"),
        needs="-",
        caseless=True,
        extract=_prefixed(_CLI_PREFIX, judged_group("v", password_like)),
    ),
    Rule(
        "signed_url_signature",
        _D,
        # A SAS URL (Azure storage) or token (Service Bus, Event Hubs, IoT Hub:
        # "SharedAccessSignature sr=…&sig=…") grants access until it expires.
        re.compile(
            r"(?:(?<=[?&])|(?<=SharedAccessSignature[ \t]))"
            r"sig=(?P<v>(?:[A-Za-z0-9+/_-]|%2[BbFf]){20,}(?:=|%3[Dd]){0,2})"
        ),
        ("sig=",),
        needs="=",
        extract=_signature,
    ),
    Rule(
        "signed_url_signature",
        _D,
        # A presigned S3 (or S3-compatible) URL: a hex HMAC-SHA256.
        re.compile(r"(?<=[?&])X-Amz-Signature=(?P<v>[0-9a-f]{64})(?![0-9A-Za-z])"),
        ("X-Amz-Signature=",),
        needs="=",
        extract=lambda m: m.span("v"),
    ),
    Rule(
        "cli_credential_flag",
        _P,
        # curl's "-u user:password".
        re.compile(
            r"(?<![\w-])curl[ \t][^\n]{0,400}?(?<![\w-])(?:-u|--user)(?:[ \t]+|=)"
            r"(?:\"[^\"\s:]+:(?P<dq>[^\"\r\n]+)\"|'[^'\s:]+:(?P<sq>[^'\r\n]+)'"
            r"|[^\s:\"'$]+:(?P<v>[^\s\"']+))"
        ),
        ("curl",),
        needs="-",
        extract=judged_group("v", password_like),
    ),
    Rule(
        "bearer_token",
        _P,
        re.compile(r"(?<![A-Za-z0-9])bearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]+=*)", re.IGNORECASE),
        ("bearer",),
        caseless=True,
        extract=judged_group("v", token_like),
    ),
    Rule(
        "basic_auth",
        _P,
        re.compile(
            r"(?<![A-Za-z0-9])basic[ \t]+(?P<v>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])",
            re.IGNORECASE,
        ),
        ("basic",),
        caseless=True,
        extract=_basic_auth,
    ),
    Rule(
        "url_credentials",
        _P,
        # Anchored on "://"; the look-behind stands in for the scheme.
        re.compile(r"(?<=[A-Za-z0-9])://[^\s:/@?#\[\]]{0,128}:(?P<v>[^\s/?#]{1,256})@"),
        ("://",),
        needs=":",
        extract=judged_group("v", password_like),
    ),
)


def matches(rule: Rule, text: str, lowered: str) -> Iterator[re.Match[str]]:
    if not rule.anchors or (rule.caseless and len(lowered) != len(text)):
        # No literal to anchor on (a shape, not a prefix), or lower-casing moved
        # the offsets (e.g. "İ" became two characters): search the whole text.
        yield from rule.regex.finditer(text)
        return
    haystack = lowered if rule.caseless else text
    starts: set[int] = set()
    for anchor in rule.anchors:
        i = haystack.find(anchor)
        while i != -1:
            starts.add(i - rule.back)
            i = haystack.find(anchor, i + 1)
    # Never retry inside an earlier match: that keeps a run of repeated anchors
    # ("password=password=...") linear instead of quadratic.
    done = 0
    for start in sorted(starts):
        if start < done:
            continue
        m = rule.regex.match(text, start)
        if m is not None:
            done = m.end()
            yield m
