"""Secrets assigned to a name that says what they are: ``password=…``,
``API_KEY: …``, ``clientSecret = "…"``, ``PGPASS=…``, an ``.npmrc``'s ``_auth``,
and an OAuth token named before it in prose ("oauth token 3f9a…").

The rules match the name and its value and report the value only, so the line
still reads; a value that is a placeholder, a type, a path or code is no secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.policy.rule_types import Extract, Rule, Span, Tier
from core.policy.token_formats import random_enough
from core.policy.value_judgement import (
    basic_pair,
    judged_group,
    password_like,
    preceded_by,
    sentence_end,
    token_like,
)

# A bare (unquoted) value shaped like a reference in code, not a literal secret.
_CODE_REF = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z]+(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
)
_PATH_STARTS = ("/", "~/", "./", "../")
# "get_secret(name)" or "os.environ[...]": the value is computed, not written down.
_CALL = re.compile(r"[A-Za-z_][\w.]*[(\[]")
_PROSE_NEXT = re.compile(r"[ \t]+[A-Za-z]")


def _assignment(judge: Callable[[str], bool]) -> Extract:
    """Build an extractor that returns the span of an assignment's value only."""

    def extract(m: re.Match[str]) -> Span | None:
        for group in ("dq", "sq"):
            if m.group(group) is not None:
                value = m.group(group)
                return m.span(group) if judge(value) else None
        value = sentence_end(m.group("bare"), m.string, m.end("bare"))
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


def _auth_value(value: str) -> bool:
    # "auth: required", "AUTH=oauth2" and "auth: OAuth2Bearer" name a method; a
    # Docker or npm "auth" holds base64 of "user:password", a service's a long token.
    return basic_pair(value) or (len(value) >= 16 and token_like(value))


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
_P = Tier.PROBABLE

# An OAuth token said in prose, named before it with or without ":" or "is":
# "oauth token 3f9a…", "OAuth access token 3f9a…", "refresh token: 3f9a…". 32
# to 64 hex digits, letters and digits both (32 digits alone are a number).
# The rule anchors on "token", rarer than "access", and checks the name before it.
_NAMED_TOKEN = re.compile(
    r"token(?:[ \t]+(?:is|was)|[ \t]*[:=])?[ \t]*[\"'(]?"
    r"(?P<v>[0-9a-fA-F]{32,64})(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_TOKEN_NAME = re.compile(
    r"(?<![A-Za-z0-9])(?:oauth2?(?:[ \t_-]+(?:access|bearer|refresh))?|access|refresh)[ \t_-]?\Z",
    re.IGNORECASE,
)


#: In the order :data:`core.policy.secret_rules.RULES` tries them.
RULES: tuple[Rule, ...] = (
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
        extract=preceded_by(_PASS_OWNER, _assignment(password_like)),
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
        extract=preceded_by(_KEY_PREFIX, _assignment(token_like)),
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
        "oauth_token",
        _P,
        _NAMED_TOKEN,
        ("token",),
        needs="0123456789",
        caseless=True,
        extract=preceded_by(_TOKEN_NAME, judged_group("v", random_enough)),
    ),
)
