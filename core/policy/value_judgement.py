"""Whether a value found where a secret goes can be one, and extractors built on that.

A rule's regex finds a place where a secret could be (``password=``, a
``Bearer`` header); the judgements here decide whether what stands there is a
secret or a placeholder, a type name or a word, and report only its span.
"""

from __future__ import annotations

import binascii
import re
from collections.abc import Callable

from core.policy.rule_types import Extract, Span

_PLACEHOLDER = re.compile(
    r"your|example|placeholder|change[_-]?me|redacted|x{3,}|\*{3,}|\.{3}|…|<|>|\{\{|\$\{|^\$\(|^`"
    r"|dummy|sample|lorem|\btodo\b|\btbd\b|^n/?a$|^\$[A-Za-z_]\w*$|^%[A-Za-z_]\w*%$"
    r"|^%\([A-Za-z_]\w*\)[sdr]$",
    re.IGNORECASE,
)
_NON_VALUES = frozenset(
    "none null nil true false undefined str string bytes int bool any value optional "
    "required empty hidden masked env password passwd pwd pass secret token key apikey "
    "api_key secretstr boolean number".split()
)
_WORDISH = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*")
#: Keys meant for the browser, whatever a text calls them: Stripe's publishable
#: key and Langfuse's public key ("the langfuse api key is pk-lf-…").
_PUBLISHABLE = re.compile(
    r"pk_(?:live|test)_[0-9A-Za-z]{10,}"
    r"|pk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
)


#: A value that says where the secret comes from rather than what it is: a variable
#: (``$DB_PASSWORD``, ``${DB_PASSWORD}``, ``%(db_pass)s``, ``%DB_PASS%``), a command
#: the shell runs (``$(pass show db)``), a template's blank (``<your-password>``,
#: ``{{ db_password }}``, ``{db_password}``) or a value already cut out
#: (``[REDACTED]``, ``[SECRET_REDACTED]``, ``***``). It must end where the value does.
_REFERENCE = re.compile(
    r"(?:\$\{[^}\n]{1,100}\}|\$\([^)\n]{1,200}\)|\$[A-Z_][A-Z0-9_]*"
    r"|%\([A-Za-z_]\w*\)[sdr]|%[A-Za-z_]\w*%"
    r"|<[^<>\n]{1,60}>|\{\{[^}\n]{1,100}\}\}|\{[A-Za-z_][\w.]*\}"
    r"|(?i:\[[a-z_ -]*(?:redacted|removed|hidden|masked|omitted)[a-z_ -]*\])|\*{3,})"
    r"[\"'`]?(?=[\s,;.)\]]|\Z)"
)


def reference_at(text: str, start: int) -> bool:
    """Whether the value at ``start`` of ``text`` (quoted or not) is a reference,
    a template's blank or a redacted value (:data:`_REFERENCE`): no secret is in it."""
    while start < len(text) and text[start] in "\"'`":
        start += 1
    return _REFERENCE.match(text, start) is not None


def publishable(value: str) -> bool:
    """Whether ``value`` is a key meant to be public (Stripe's ``pk_live_…``,
    Langfuse's ``pk-lf-…``): no secret, whatever name stands before it."""
    return _PUBLISHABLE.fullmatch(value) is not None


def _plausible(value: str) -> bool:
    return not _PLACEHOLDER.search(value) and value.lower() not in _NON_VALUES


def password_like(value: str) -> bool:
    """Whether ``value``, found where a password goes, can be one: not a
    placeholder, a type or a word such as ``none``."""
    return len(value) >= 4 and _plausible(value)


def token_like(value: str) -> bool:
    """Whether ``value``, found where a token or key goes, can be one: generated
    rather than a word."""
    if len(value) < 8 or not _plausible(value) or publishable(value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    if has_digit and has_alpha:
        return True
    # Digit-free tokens exist, but only mixed-case gibberish is worth flagging.
    mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
    return len(value) >= 16 and mixed and not _WORDISH.fullmatch(value)


def sentence_end(value: str, text: str, end: int) -> str:
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
        value = sentence_end(m.group(group), m.string, m.end(group))
        start = m.start(group)
        return (start, start + len(value)) if judge(value) else None

    return extract


def preceded_by(prefix: re.Pattern[str], inner: Extract) -> Extract:
    """Require ``prefix`` to end right where the match begins.

    This lets a rule anchor on a key's distinctive tail ("key" in ``api_key``,
    "password" in ``--db-password``) and check the varying head afterwards.
    """

    def extract(m: re.Match[str]) -> Span | None:
        if prefix.search(m.string, max(0, m.start() - 32), m.start()) is None:
            return None
        return inner(m)

    return extract


def basic_pair(value: str) -> bool:
    """Whether ``value`` is base64 of a printable "user:password"."""
    if len(value) % 4 or len(value) < 8:
        return False
    try:
        decoded = binascii.a2b_base64(value)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded[1:] and all(32 <= b < 127 for b in decoded)
