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

import math
import re
from bisect import bisect_right, insort
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from core.policy.rule_types import Rule, Span, Tier, matches
from core.policy.secret_rules import RULES


@cache
def all_rules() -> tuple[tuple[Rule, ...], frozenset[str]]:
    """Contextual rules first, then the providers' token formats; and every
    character some rule needs. Built on first use: compiling about a hundred
    provider patterns is most of what loading the policy costs, and a window
    can open before anything is screened."""
    from core.policy import (
        access_codes,
        command_rules,
        personal_numbers,
        provider_rules_dev,
        provider_rules_saas,
    )

    rules = (
        RULES
        + command_rules.RULES
        + access_codes.RULES
        + personal_numbers.RULES
        + provider_rules_dev.RULES
        + provider_rules_saas.RULES
    )
    return rules, frozenset("".join(r.needs for r in rules))


# The shortest secret any rule finds without a space, "=" or ":" is 13 characters
# (a payment card number); contextual rules need one of those characters.
_INERT = re.compile(r"[A-Za-z0-9_-]{0,12}")

REPLACEMENT = "[SECRET_REDACTED]"


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


#: AWS said in the text: an AWS access key id, the word, or the key's own name
#: ("secret access key", ``aws_secret_access_key``, ``SecretAccessKey``).
_AWS_CONTEXT = re.compile(
    r"(?<![A-Za-z0-9])(?:aws|(?:AKIA|ASIA)[A-Z0-9]{16})(?![a-z])|secret[ _-]?access[ _-]?key",
    re.I,
)
_AWS_SECRET_LENGTH = 40


def _possible(text: str) -> Iterator[Finding]:
    """Long random-looking runs, left for review; except that 40 characters of
    base64 in a text that speaks of AWS are the shape of an AWS secret access key,
    and so definite (an access key id without its secret is of little use, and
    the two are pasted together)."""
    public: list[Span] | None = None
    aws: bool | None = None
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
            if len(run) == _AWS_SECRET_LENGTH and "-" not in run and "_" not in run:
                if aws is None:
                    aws = _AWS_CONTEXT.search(text) is not None
                if aws:
                    yield Finding("aws_secret_key", Tier.DEFINITE, start, end)
                    continue
            yield Finding("long_base64", Tier.POSSIBLE, start, end)


# --- public API ------------------------------------------------------------------


#: Fullwidth forms of the printable ASCII characters (and the ideographic space).
_WIDE = re.compile("[\u3000\uff01-\uff5e]")
_NARROW = {0x3000: " ", **{c: chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}}


def fold_width(text: str) -> str:
    """``text`` with fullwidth letters, digits and signs as their ASCII selves
    ("ＡＫＩＡ" as "AKIA"): one character for one, so a span found in the result
    is the same span of ``text``."""
    return text.translate(_NARROW) if _WIDE.search(text) else text


def scan(text: str) -> list[Finding]:
    """Find secret-like spans in ``text`` (read with :func:`fold_width`: a secret typed
    in fullwidth forms is found as one typed plainly).

    Args:
        text: Any string.

    Returns:
        Non-overlapping findings sorted by start. Overlapping definite and probable
        candidates merge into one finding named after the higher tier (then the
        longer span); a possible candidate never overlaps a redacting one.
    """
    if _INERT.fullmatch(text):
        return []  # a short word (most tags and labels): no rule can match it
    text = fold_width(text)
    lowered = text.lower()
    candidates: list[Finding] = []
    rules, need_chars = all_rules()
    present = {c for c in need_chars if c in text}
    for rule in rules:
        if rule.needs and present.isdisjoint(rule.needs):
            continue
        if rule.anchors:
            # Most rules' anchors are absent; ``in`` says so before a generator is made.
            haystack = lowered if rule.caseless else text
            for anchor in rule.anchors:
                if anchor in haystack:
                    break
            else:
                continue
        for m in matches(rule, text, lowered):
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
    done = _redact_once(text)
    # A placeholder can give what follows it an edge the secret before it hid
    # ("…-----END RSA PRIVATE KEY-----sk-ant-…"): scan again until nothing more
    # goes, so that redacting a redacted text changes nothing. Only a text that
    # had something redacted is scanned twice.
    for _ in range(_MAX_ROUNDS - 1):
        if not done.redacted:
            break
        again = _redact_once(done.text)
        if not again.redacted:
            break
        done = Redaction(again.text, done.redacted + again.redacted, again.possible)
    return done


#: Rounds of :func:`redact` at most (each round after the first is rare).
_MAX_ROUNDS = 4


def _redact_once(text: str) -> Redaction:
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
