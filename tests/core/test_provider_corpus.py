"""Provider token formats and credential prose, scored on tests/core/provider_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.policy.credentials import credential_statement
from core.policy.rule_types import Tier
from core.policy.secrets import REPLACEMENT, redact, scan
from tests.core.provider_corpus import NEGATIVES, POSITIVES, Positive, detected, scores


def test_corpus_covers_sixty_providers_with_full_recall_and_few_false_positives() -> None:
    result = scores()
    assert result["providers"] >= 60
    assert result["negatives"] >= 300
    assert result["recall"] == 1.0
    assert result["false_positive_rate"] <= 0.01
    # core.policy.secrets skips words shorter than 20 characters: no token may be that short.
    assert min(len(p.value) for p in POSITIVES if p.provider != "prose") >= 20


@pytest.mark.parametrize("case", POSITIVES, ids=lambda p: p.provider)
def test_every_provider_credential_is_caught(case: Positive) -> None:
    assert detected(case.text, case.value), case.text


@pytest.mark.parametrize("text", NEGATIVES[:60])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert not detected(text)


# The formats an attack stored in plaintext: each must be redacted (not merely
# "possible", which keeps the value), wherever it appears.
_ISSUE_FORMATS = {
    "gitlab_token": "glpat-Zq3xW8vT2mKp9LrN4sYb",
    "slack_webhook": "https://hooks.slack.com/services/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",
    "huggingface_token": "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",
    "npm_token": "npm_Tq8Zk3Wm2Rp9Xv4Ln7Yc5Bd1Hs6Gj0Fk3Qw7",
    "sendgrid_key": "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",
    "twilio_api_key": "SK3f9a1c7e2b8d4f6a0c5e9b1d7f3a8c2e",
    "discord_bot_token": "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.GhT5qZ.Kq3ZmT8wRp2XvL9nYc4Bdg7Hs6Gj0Fk3QwTq8",
}


@pytest.mark.parametrize("pattern", sorted(_ISSUE_FORMATS))
@pytest.mark.parametrize(
    "template", ["{v}", "export TOKEN={v}", "The webhook/token is {v}, keep it safe.", "`{v}`"]
)
def test_issue_formats_are_redacted_not_just_possible(pattern: str, template: str) -> None:
    value = _ISSUE_FORMATS[pattern]
    text = template.format(v=value)
    result = redact(text)
    assert value not in result.text
    assert pattern in result.redacted
    assert all(f.tier is not Tier.POSSIBLE for f in scan(text) if f.pattern == pattern)


# Keys of the services a local agent is set up with, each named by its own rule.
_AGENT_SERVICE_KEYS = {
    # Longer than the 34 characters Hugging Face issues: typed by hand, still a token.
    "huggingface_token": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "openrouter_key": "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",
    "together_key": "tgp_v1_jORS-6ilI8ihN5KXSc7Tvo-hBKqFYY-kv5ZJr3J1TWD",
    "tavily_key": "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",
    "elevenlabs_key": "sk_c1626e53a13043b026c48bbf33feff9243a8f506b40928b5",
    "firecrawl_key": "fc-b7a767c76fb008f86bebb2737f6a6f0f",
    # Not an OpenAI key, though it starts with "sk-".
    "langfuse_secret_key": "sk-lf-7f3e2a10-9b4c-4d8e-a1f2-3c5b6d7e8f90",
}


@pytest.mark.parametrize("pattern", sorted(_AGENT_SERVICE_KEYS))
def test_agent_service_keys_are_redacted_under_their_own_name(pattern: str) -> None:
    value = _AGENT_SERVICE_KEYS[pattern]
    result = redact(f"The MCP server config has {value} in its env block.")
    assert value not in result.text
    assert result.redacted == (pattern,)


@pytest.mark.parametrize(
    "text",
    [
        "Login for the NAS: admin / Tulip-88",
        "login for the router: root/Zq9x!w",
        "Creds for staging db: deploy:Pa55-word",
        "Username/password for Grafana: alice@acme.test / letmein",
    ],
)
def test_login_prose_is_a_credential_statement(text: str) -> None:
    assert credential_statement(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Login for the NAS: see the shared vault",
        "login: https://nas.local/admin",
        "The login page is at /auth/login",
        "Account: ops/team-a owns billing",
        "token = os.environ['GITLAB_TOKEN']",
    ],
)
def test_talk_about_logins_passes(text: str) -> None:
    assert credential_statement(text) is None


R = REPLACEMENT


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=Tr0ub4dor&3", f"password={R}"),
        ("DB_PASSWORD=s3cr3t;x9 now", f"DB_PASSWORD={R} now"),
        ("?password=Zx9&k2&user=bob", f"?password={R}&user=bob"),
        ("Password=Qw3;rty;Database=app", f"Password={R};Database=app"),
        ("mysql --password 'two words9' -u root", f"mysql --password '{R}' -u root"),
        ("login(password=Pq7,x)", f"login(password={R})"),
        ("secret = 'aB3dE5gH7jK9mN1pQ'", f"secret = '{R}'"),
    ],
)
def test_a_redacted_value_leaks_no_part_of_itself(text: str, expected: str) -> None:
    assert redact(text).text == expected


_INNER = st.sampled_from(
    "abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!@#$%^&*()-+,;:.?~/"
)


@settings(max_examples=300, deadline=None)
@given(
    head=st.text(alphabet="bcdfghjkmnpqrstvwz", min_size=3, max_size=5),
    inner=st.text(alphabet=_INNER, max_size=12),
    tail=st.text(alphabet="23456789", min_size=1, max_size=3),
)
def test_redaction_takes_all_of_a_value_or_none(head: str, inner: str, tail: str) -> None:
    # Some values read as code ("cfg.DB2") and are kept whole; none is cut in two.
    value = head + inner + tail
    text = f"password={value}"
    assert redact(text).text in (f"password={REPLACEMENT}", text), value
