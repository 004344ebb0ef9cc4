"""Secrets found by the structure around them rather than by a name or a
prefix: a private key block (in PEM or base64 of PEM), a signed URL's
signature, a credential flag on a command line, an ``Authorization`` header's
bearer token or basic pair, and ``user:password@`` in a URL.
"""

from __future__ import annotations

import binascii
import re

from core.policy.rule_types import Rule, Span, Tier
from core.policy.value_judgement import (
    basic_pair,
    judged_group,
    password_like,
    preceded_by,
    token_like,
)


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


def _basic_auth(m: re.Match[str]) -> Span | None:
    return m.span("v") if basic_pair(m.group("v")) else None


_CLI_PREFIX = re.compile(r"(?<![A-Za-z0-9-])--(?:[A-Za-z0-9]+-)*\Z")
_D, _P = Tier.DEFINITE, Tier.PROBABLE

#: Tried first, before any other rule.
PRIVATE_KEY_RULES: tuple[Rule, ...] = (
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
)

#: Tried after the assignment rules.
COMMAND_AND_URL_RULES: tuple[Rule, ...] = (
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
        extract=preceded_by(_CLI_PREFIX, judged_group("v", password_like)),
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
