"""Building blocks for the provider rules: a vendor prefix followed by a token body.

Most providers mark their credentials with a fixed prefix (``glpat-``, ``hf_``,
``npm_``) and a body of a known alphabet and length; those facts come from the
providers' own documentation and the public rule sets of secret scanners. Each
provider module (:mod:`core.policy.provider_rules_dev`, :mod:`core.policy.provider_rules_saas`)
lists its formats with :func:`prefixed` and :func:`shaped`; :mod:`core.policy.secrets`
runs them after the contextual rules of :mod:`core.policy.secret_rules`.
"""

from __future__ import annotations

import re

from core.policy.rule_types import Extract, Rule, Span, Tier, edge

#: Alphabets of token bodies, as regex character-class contents.
ALNUM = "A-Za-z0-9"
ALNUM_U = "A-Za-z0-9_"
URLSAFE = r"A-Za-z0-9_\-"
HEX = "a-f0-9"
HEX_ANY = "a-fA-F0-9"
BASE64 = "A-Za-z0-9+/"
UPPER_DIGITS = "A-Z0-9"
LOWER_DIGITS = "a-z0-9"

#: No token starts in the middle of an identifier or another token (a
#: percent-escape before it is no part of it: see :func:`edge`).
LEAD = edge("A-Za-z0-9_")
#: Nor does it run on into more token characters.
TAIL = r"(?![A-Za-z0-9])"


def random_enough(body: str) -> bool:
    """Whether ``body`` looks generated rather than written.

    Generated tokens mix at least two of lower case, upper case and digits;
    identifiers such as ``hf_hub_download`` or ``npm_config_cache`` do not.
    """
    lower = any(c.islower() for c in body)
    upper = any(c.isupper() for c in body)
    digit = any(c.isdigit() for c in body)
    return lower + upper + digit >= 2


def _whole_if_random(m: re.Match[str]) -> Span | None:
    body = m.group("body")
    return m.span() if random_enough(body) else None


def _needs(prefix: str) -> str:
    # The cheapest gate is a separator the prefix must contain.
    for sep in "_-.:/$!~":
        if sep in prefix:
            return sep
    return ""


def prefixed(
    name: str,
    prefix: str | tuple[str, ...],
    body: str,
    *,
    tier: Tier = Tier.DEFINITE,
    lead: str = LEAD,
    tail: str = TAIL,
    check_random: bool = True,
    caseless: bool = False,
) -> Rule:
    """A rule for ``prefix`` followed by ``body`` (a regex; name its group ``body``
    or let it be wrapped as one).

    Args:
        name: The pattern name reported (and audited) for a finding.
        prefix: One literal prefix, or several sharing the same body.
        body: Regex of the part after the prefix.
        tier: How sure a match is.
        lead: What must not come before the prefix.
        tail: What must not follow the body.
        check_random: Reject bodies that read like identifiers (see :func:`random_enough`).
        caseless: Match the prefix in any case.
    """
    prefixes = (prefix,) if isinstance(prefix, str) else prefix
    head = "|".join(re.escape(p) for p in prefixes)
    if "(?P<body>" not in body:
        body = f"(?P<body>{body})"
    flags = re.IGNORECASE if caseless else 0
    regex = re.compile(f"{lead}(?:{head}){body}{tail}", flags)
    needs = "".join(sorted({_needs(p) for p in prefixes}))
    if any(not _needs(p) for p in prefixes):
        needs = ""
    anchors = tuple(p.lower() for p in prefixes) if caseless else prefixes
    extract: Extract | None = _whole_if_random if check_random else None
    return Rule(name, tier, regex, anchors, needs=needs, caseless=caseless, extract=extract)


def shaped(
    name: str,
    regex: str,
    anchors: tuple[str, ...] = (),
    *,
    tier: Tier = Tier.DEFINITE,
    needs: str = "",
    back: int = 0,
    extract: Extract | None = None,
    caseless: bool = False,
) -> Rule:
    """A rule for a format with no single leading prefix (a URL, a dotted triple).

    With no ``anchors`` the regex is searched over the whole text, so it should
    start with something rare; ``needs`` skips texts that cannot match at all.
    """
    flags = re.IGNORECASE if caseless else 0
    return Rule(
        name,
        tier,
        re.compile(regex, flags),
        anchors,
        needs=needs,
        back=back,
        extract=extract,
        caseless=caseless,
    )


def group_span(group: str) -> Extract:
    """Report only ``group`` of the match (the secret part of a longer shape)."""

    def extract(m: re.Match[str]) -> Span | None:
        return m.span(group)

    return extract
