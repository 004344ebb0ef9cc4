"""The most common providers' keys, by their fixed prefix or shape: OpenAI,
Anthropic, AWS, GitHub, Slack, Google, Stripe, and JWTs.

The long tail of providers is in :mod:`core.policy.provider_rules_dev` and
:mod:`core.policy.provider_rules_saas`.
"""

from __future__ import annotations

import re

from core.policy.rule_types import Rule, Span, Tier, edge
from core.policy.token_formats import random_enough


def _openai_body(m: re.Match[str]) -> Span | None:
    # A lower-case hyphenated slug after "sk-" is a CSS class or an id, not a key.
    body = m.group("body")
    if any(c.isdigit() or c.isupper() for c in body):
        return m.span()
    return None


def _random_body(m: re.Match[str]) -> Span | None:
    # Glued to a name, only a generated body counts: "x_ghp_" and 36 letters of one
    # case is a long identifier, not a token.
    return m.span() if random_enough(m.group("body")) else None


def _generated_body(m: re.Match[str]) -> Span | None:
    # Glued to a name, a body that may hold "-" and "_" must mix all of lower case,
    # upper case and digits: "x_sk-learn-classifier-2024-…" is a name, not a key.
    body = m.group("body")
    kinds = (str.islower, str.isupper, str.isdigit)
    return m.span() if all(any(f(c) for c in body) for f in kinds) else None


def _slack(m: re.Match[str]) -> Span | None:
    return m.span() if any(c.isdigit() for c in m.group()) else None


_D, _P = Tier.DEFINITE, Tier.PROBABLE
_EDGE = edge("A-Za-z0-9_-")
#: Right after "_", as in "service_sk_live_…" or "x_ghp_…": the rules above never
#: start a token inside an identifier, so a token glued to a name is caught by its
#: provider's full format alone (exact length and alphabet, a generated body, and
#: nothing of the name's alphabet after it). "my_ghp_helper" and "use_sk_live_mode"
#: are not that.
_GLUED = "(?<=_)"
_GLUED_TAIL = "(?![A-Za-z0-9_])"

#: In the order :data:`core.policy.secret_rules.RULES` tries them.
RULES: tuple[Rule, ...] = (
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
        "github_token",
        _D,
        re.compile(_GLUED + r"gh[pousr]_(?P<body>[A-Za-z0-9]{36})" + _GLUED_TAIL),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        needs="_",
        extract=_random_body,
    ),
    Rule(
        "github_pat",
        _D,
        re.compile(_GLUED + r"github_pat_(?P<body>[A-Za-z0-9]{22}_[A-Za-z0-9]{59})" + _GLUED_TAIL),
        ("github_pat_",),
        needs="_",
        extract=_random_body,
    ),
    Rule(
        "stripe_live_key",
        _D,
        re.compile(_GLUED + r"[sr]k_live_(?P<body>[0-9A-Za-z]{24,})" + _GLUED_TAIL),
        ("k_live_",),
        needs="_",
        back=1,
        extract=_random_body,
    ),
    Rule(
        "anthropic_key",
        _D,
        re.compile(_GLUED + r"sk-ant-(?P<body>[A-Za-z0-9_-]{20,})(?![A-Za-z0-9_-])"),
        ("sk-ant-",),
        needs="-",
        extract=_generated_body,
    ),
    Rule(
        "openai_key",
        _D,
        re.compile(
            _GLUED + r"sk-(?!ant-|lf-|or-v1-)(?:proj-|svcacct-|admin-)?"
            r"(?P<body>[A-Za-z0-9_-]{32,})(?![A-Za-z0-9_-])"
        ),
        ("sk-",),
        needs="-",
        extract=_generated_body,
    ),
    Rule(
        "google_api_key",
        _D,
        re.compile(_GLUED + r"AIza(?P<body>[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"),
        ("AIza",),
        needs="A",
        extract=_generated_body,
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
        "stripe_test_key",
        _P,
        re.compile(_GLUED + r"[sr]k_test_(?P<body>[0-9A-Za-z]{24,})" + _GLUED_TAIL),
        ("k_test_",),
        needs="_",
        back=1,
        extract=_random_body,
    ),
)
