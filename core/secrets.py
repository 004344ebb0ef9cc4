"""Secret detection and redaction for text on its way into memory.

Findings come in three tiers. *Definite* findings have a vendor prefix or a fixed
structure that ordinary prose never produces, so they are redacted without a
second thought. *Probable* findings depend on context (a ``password=`` key, a
``Bearer`` header, ``user:pass@`` in a URL); they are redacted too, but only the
value, so the sentence around it still reads. *Possible* findings are long
random-looking runs that could equally be a checksum or a commit id; they stay in
the text and the caller sends the entry to human review.

Stripe test keys (``sk_test_``/``rk_test_``) are probable rather than definite:
they unlock only a sandbox, but they are still credentials and still redacted.
Publishable keys (``pk_live_``) are public by design and are not reported.

Every function here accepts any ``str`` (lone surrogates, NULs, megabytes of
punctuation) without raising, and no regex can backtrack catastrophically.
"""

from __future__ import annotations

import binascii
import math
import re
from bisect import bisect_right, insort
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum

REPLACEMENT = "[SECRET_REDACTED]"


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


@dataclass(frozen=True)
class Finding:
    """Where a secret-like span is; deliberately never the value itself."""

    pattern: str
    tier: Tier
    start: int
    end: int


@dataclass(frozen=True)
class Redaction:
    """The outcome of :func:`redact`.

    Attributes:
        text: The input with every definite and probable finding replaced.
        redacted: Pattern names of the replaced findings, one per finding, in order.
        possible: Pattern names of possible findings, left in place for review.
    """

    text: str
    redacted: tuple[str, ...]
    possible: tuple[str, ...]


Span = tuple[int, int]
Extract = Callable[[re.Match[str]], Span | None]


@dataclass(frozen=True)
class _Rule:
    """One detector.

    Running a regex over every position of the text is what makes scanning slow,
    so each rule names the literal anchors where a match can begin and is only
    tried there; ``str.find`` locates anchors far faster than the regex engine.
    """

    name: str
    tier: Tier
    #: Matched (not searched) at each anchor; it must also work with ``finditer``,
    #: which is the fallback when lower-casing changes the text's length.
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
    "api_key secretstr".split()
)
# A bare (unquoted) value shaped like a reference in code, not a literal secret.
_CODE_REF = re.compile(
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[a-z]+(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
)
_PATH_STARTS = ("/", "~/", "./", "../")
_WORDISH = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")
_PROSE_NEXT = re.compile(r"[ \t]+[A-Za-z]")


def _plausible(value: str) -> bool:
    return not _PLACEHOLDER.search(value) and value.lower() not in _NON_VALUES


def _password_like(value: str) -> bool:
    return len(value) >= 4 and _plausible(value)


def _token_like(value: str) -> bool:
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
        value = m.group("bare").rstrip(".:")
        start = m.start("bare")
        end = start + len(value)
        text = m.string
        if text[m.end("bare") : m.end("bare") + 1] in ("(", "["):
            return None  # a call or a subscript: code, not a literal
        if _CODE_REF.fullmatch(value) or value.startswith(_PATH_STARTS):
            return None  # PWD=/home/alice is a directory, not a password
        if m.group("sep") == ":" and value.isalpha() and _PROSE_NEXT.match(text, end):
            return None  # "Password: Use at least twelve characters"
        return (start, end) if judge(value) else None

    return extract


def _group_span(group: str, judge: Callable[[str], bool]) -> Extract:
    def extract(m: re.Match[str]) -> Span | None:
        value = m.group(group).rstrip(".")
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


def _openai_body(m: re.Match[str]) -> Span | None:
    # A lower-case hyphenated slug after "sk-" is a CSS class or an id, not a key.
    body = m.group("body")
    if any(c.isdigit() or c.isupper() for c in body):
        return m.span()
    return None


def _slack(m: re.Match[str]) -> Span | None:
    return m.span() if any(c.isdigit() for c in m.group()) else None


def _basic_auth(m: re.Match[str]) -> Span | None:
    value = m.group("v")
    if len(value) % 4:
        return None
    try:
        decoded = binascii.a2b_base64(value)
    except (binascii.Error, ValueError):
        return None
    # Basic credentials decode to printable "user:password".
    if b":" in decoded and all(32 <= b < 127 for b in decoded):
        return m.span("v")
    return None


# --- rules ---------------------------------------------------------------------

_VALUE = (
    r"(?P<sep>:=|=>|=(?!=)|:)\*{0,2}[ \t]*"  # \*{0,2}: "**Password:** value" in Markdown
    r"(?:\"(?P<dq>[^\"\r\n]+)\"|'(?P<sq>[^'\r\n]+)'|(?P<bare>[^\s\"'`,;&<>(){}\[\]]+))"
)
# "password: str = ..." — skip a short type annotation before the value.
_ANNOTATION = r"(?:[ \t]*:[ \t]*(?:str|bytes|SecretStr|Optional\[str\]|str[ \t]*\|[ \t]*None))?"


def _assign_re(keyword: str, edge: str = "(?<![A-Za-z0-9])") -> re.Pattern[str]:
    return re.compile(
        rf"{edge}(?:{keyword})(?![A-Za-z0-9])[\"']?{_ANNOTATION}[ \t]*{_VALUE}",
        re.IGNORECASE,
    )


_KEY_PREFIX = re.compile(
    r"(?<![A-Za-z0-9])(?:api|access|secret|private|signing|encryption|master|app|client"
    r"|license)[_-]?\Z",
    re.IGNORECASE,
)
_CLI_PREFIX = re.compile(r"(?<![A-Za-z0-9-])--(?:[A-Za-z0-9]+-)*\Z")
_D, _P = Tier.DEFINITE, Tier.PROBABLE
_EDGE = r"(?<![A-Za-z0-9_-])"
_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private_key_block",
        _D,
        re.compile(
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|.*)",
            re.DOTALL,
        ),
        ("-----BEGIN",),
    ),
    _Rule(
        "anthropic_key",
        _D,
        re.compile(_EDGE + r"sk-ant-[A-Za-z0-9_-]{20,}"),
        ("sk-ant-",),
        needs="-",
    ),
    _Rule(
        "openai_key",
        _D,
        re.compile(_EDGE + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?(?P<body>[A-Za-z0-9_-]{32,})"),
        ("sk-",),
        needs="-",
        extract=_openai_body,
    ),
    _Rule(
        "aws_access_key",
        _D,
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("AKIA", "ASIA"),
        needs="A",
    ),
    _Rule(
        "github_token",
        _D,
        re.compile(r"(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])"),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        needs="_",
    ),
    _Rule(
        "github_pat",
        _D,
        re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,}"),
        ("github_pat_",),
        needs="_",
    ),
    _Rule(
        "slack_token",
        _D,
        re.compile(r"(?<![A-Za-z0-9])xox[abpr]-[A-Za-z0-9-]{10,}"),
        ("xox",),
        needs="-",
        extract=_slack,
    ),
    _Rule(
        "google_api_key",
        _D,
        re.compile(_EDGE + r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
        ("AIza",),
        needs="A",
    ),
    _Rule(
        "stripe_live_key",
        _D,
        re.compile(r"(?<![A-Za-z0-9_])[sr]k_live_[0-9A-Za-z]{10,}"),
        ("k_live_",),
        needs="_",
        back=1,
    ),
    _Rule(
        "jwt",
        _D,
        re.compile(_EDGE + r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        ("eyJ",),
        needs="J",
    ),
    _Rule(
        "stripe_test_key",
        _P,
        re.compile(r"(?<![A-Za-z0-9_])[sr]k_test_[0-9A-Za-z]{10,}"),
        ("k_test_",),
        needs="_",
        back=1,
    ),
    _Rule(
        "password_assignment",
        _P,
        _assign_re(r"password|passwd|passphrase|passcode|pwd|(?<=_)pass"),
        ("pass", "pwd"),
        needs="=:",
        caseless=True,
        extract=_assignment(_password_like),
    ),
    _Rule(
        "api_key_assignment",
        _P,
        # No edge: "apiKey" is camel case; the prefix check bounds the key instead.
        _assign_re("key", edge=""),
        ("key",),
        needs="=:",
        caseless=True,
        extract=_prefixed(_KEY_PREFIX, _assignment(_token_like)),
    ),
    _Rule(
        "secret_assignment",
        _P,
        _assign_re("secret"),
        ("secret",),
        needs="=:",
        caseless=True,
        extract=_assignment(_token_like),
    ),
    _Rule(
        "token_assignment",
        _P,
        _assign_re("token"),
        ("token",),
        needs="=:",
        caseless=True,
        extract=_assignment(_token_like),
    ),
    _Rule(
        "cli_credential_flag",
        _P,
        re.compile(
            r"(?:password|passwd|token|api-key|secret)[ \t]+(?P<v>[^\s\"'-][^\s\"']*)",
            re.IGNORECASE,
        ),
        ("pass", "token", "secret", "api-key"),
        needs="-",
        caseless=True,
        extract=_prefixed(_CLI_PREFIX, _group_span("v", _password_like)),
    ),
    _Rule(
        "bearer_token",
        _P,
        re.compile(r"(?<![A-Za-z0-9])bearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]+=*)", re.IGNORECASE),
        ("bearer",),
        caseless=True,
        extract=_group_span("v", _token_like),
    ),
    _Rule(
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
    _Rule(
        "url_credentials",
        _P,
        # Anchored on "://"; the look-behind stands in for the scheme.
        re.compile(r"(?<=[A-Za-z0-9])://[^\s:/@?#\[\]]{0,128}:(?P<v>[^\s/?#]{1,256})@"),
        ("://",),
        needs=":",
        extract=_group_span("v", _password_like),
    ),
)


def _matches(rule: _Rule, text: str, lowered: str) -> Iterator[re.Match[str]]:
    if rule.caseless and len(lowered) != len(text):
        # Lower-casing moved the offsets (e.g. "İ" became two characters).
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


# --- possible tier ---------------------------------------------------------------

_RUN_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-"
# Maps the run alphabet to "a" and every other byte to " ", so a C-speed ``find``
# locates runs; UTF-8 never puts ASCII bytes inside a multi-byte character.
_RUN_TABLE = bytes(ord("a") if b in _RUN_ALPHABET else ord(" ") for b in range(256))
_RUN_MIN = 40
_RUN_NEEDLE = b"a" * _RUN_MIN
_RUN = re.compile(r"[A-Za-z0-9+/_-]{40,}")
_HEX = frozenset("0123456789abcdefABCDEF")
_DIGIT = re.compile(r"[0-9]")
_ENTROPY_SAMPLE = 256
_WORD = re.compile(r"[a-z]{3,}")
_TOKEN_BREAKS = " \t\r\n\"'<>()`"
_SSH_KEY_TYPE = re.compile(r"(?:ssh-(?:rsa|dss|ed25519)|ecdsa-sha2-nistp\d+)[ \t]+\Z")
_SHA_CONTEXT = re.compile(
    r"commit|sha|hash|checksum|digest|revision|cherry-pick|\brev\b|\bgit\b", re.IGNORECASE
)
_PUBLIC_BLOCK = re.compile(
    r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|PGP PUBLIC KEY BLOCK)-----"
    r".*?-----END [A-Z ]+-----",
    re.DOTALL,
)


def _runs(text: str) -> Iterator[Span]:
    raw = text.encode("utf-8", "surrogatepass")
    marks = raw.translate(_RUN_TABLE)
    if _RUN_NEEDLE not in marks:
        return
    if len(raw) != len(text):
        yield from (m.span() for m in _RUN.finditer(text))
        return
    i = marks.find(_RUN_NEEDLE)
    while i != -1:
        end = marks.find(b" ", i)
        end = len(marks) if end == -1 else end
        yield i, end
        i = marks.find(_RUN_NEEDLE, end)


def _addressing(text: str, start: int) -> bool:
    """Whether the run at ``start`` is part of a URL, a data: URI or an SSH public key."""
    window = text[max(0, start - 256) : start]
    cut = max(window.rfind(c) for c in _TOKEN_BREAKS)
    head = window[cut + 1 :]
    if "://" in head or head[:5].lower() == "data:":
        return True
    return not head and _SSH_KEY_TYPE.search(window, max(0, len(window) - 32)) is not None


def _wordy(run: str) -> bool:
    """Mostly made of lower-case words: an identifier or a slug, not random bytes."""
    # Random base64 seldom has three lower-case letters in a row; names mostly do.
    return sum(len(w) for w in _WORD.findall(run)) * 2 > len(run)


def _entropy(s: str) -> float:
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _possible(text: str) -> Iterator[Finding]:
    public: list[Span] | None = None
    for start, end in _runs(text):
        if public is None:
            public = [m.span() for m in _PUBLIC_BLOCK.finditer(text)] if "-----" in text else []
        if any(s <= start < e for s, e in public):
            continue  # certificates and public keys are meant to be shared
        if _addressing(text, start):
            continue
        run = text[start:end]
        if len(run) == _RUN_MIN and _HEX.issuperset(run):
            digits = sum(c.isdigit() for c in run)
            # Hex with commit-ish words nearby is a git object id, said in prose.
            if 0 < digits < _RUN_MIN and not _SHA_CONTEXT.search(text, max(0, start - 40), start):
                yield Finding("hex40", Tier.POSSIBLE, start, end)
            continue
        if run.startswith(("sha256-", "sha384-", "sha512-")):
            continue  # a subresource-integrity digest
        separators = run.count("/") + run.count("-") + run.count("_")
        if separators * 10 > len(run):
            continue  # a path or a slug
        # The run is ASCII, so comparing case-mapped copies is a C-speed class test.
        mixed_case = run.lower() != run != run.upper()
        has_digit = not run.isalpha() and bool(_DIGIT.search(run))
        if not (mixed_case and has_digit) or _wordy(run):
            continue
        if _entropy(run[:_ENTROPY_SAMPLE]) >= 4.2:
            yield Finding("long_base64", Tier.POSSIBLE, start, end)


# --- public API ------------------------------------------------------------------


def scan(text: str) -> list[Finding]:
    """Find secret-like spans in ``text``.

    Args:
        text: Any string.

    Returns:
        Non-overlapping findings sorted by start. Overlapping definite and probable
        candidates merge into one finding named after the higher tier (then the
        longer span); a possible candidate never overlaps a redacting one.
    """
    lowered = text.lower()
    candidates: list[Finding] = []
    for rule in _RULES:
        if rule.needs and not any(c in text for c in rule.needs):
            continue
        for m in _matches(rule, text, lowered):
            span = m.span() if rule.extract is None else rule.extract(m)
            if span is not None and span[1] > span[0]:
                candidates.append(Finding(rule.name, rule.tier, span[0], span[1]))
    candidates.extend(_possible(text))
    return _resolve(candidates)


def _resolve(candidates: list[Finding]) -> list[Finding]:
    """Make the findings disjoint.

    Overlapping redacting candidates are merged into their union, named after the
    strongest of them: dropping the weaker one would leave its unmatched part in
    the text, where it could match again once the stronger one is redacted.
    Possible candidates only fill the gaps that are left.
    """
    merged: list[Finding] = []
    for f in sorted((c for c in candidates if c.tier.redacts), key=lambda c: c.start):
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            best = min(last, f, key=lambda c: (c.tier.rank, c.start - c.end))
            merged[-1] = Finding(best.pattern, best.tier, last.start, max(last.end, f.end))
        else:
            merged.append(f)
    starts = [f.start for f in merged]
    accepted = dict(zip(starts, merged, strict=True))
    possible = (c for c in candidates if not c.tier.redacts)
    for f in sorted(possible, key=lambda c: (c.start - c.end, c.start)):
        i = bisect_right(starts, f.start)
        if i and accepted[starts[i - 1]].end > f.start:
            continue
        if i < len(starts) and starts[i] < f.end:
            continue
        insort(starts, f.start)
        accepted[f.start] = f
    return [accepted[s] for s in starts]


def redact(text: str) -> Redaction:
    """Replace definite and probable secrets with ``[SECRET_REDACTED]``.

    Args:
        text: Any string.

    Returns:
        The redacted text, plus the pattern names that were replaced and those that
        were only possible (left in place for a person to judge).
    """
    pieces: list[str] = []
    redacted: list[str] = []
    possible: list[str] = []
    cursor = 0
    for f in scan(text):
        if not f.tier.redacts:
            possible.append(f.pattern)
            continue
        pieces.append(text[cursor : f.start])
        pieces.append(REPLACEMENT)
        redacted.append(f.pattern)
        cursor = f.end
    pieces.append(text[cursor:])
    return Redaction("".join(pieces), tuple(redacted), tuple(possible))
