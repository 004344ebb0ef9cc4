"""Token formats of online services: payments and commerce, messaging and
webhooks, e-mail delivery, productivity and social platforms.

A webhook URL is itself the credential (whoever holds it can post), so those
rules report the URL from the host on; the scheme is left to keep the text
readable.
"""

from __future__ import annotations

from core.policy.rule_types import Rule, Tier
from core.policy.token_formats import (
    ALNUM,
    HEX,
    HEX_ANY,
    LOWER_DIGITS,
    URLSAFE,
    group_span,
    prefixed,
    random_enough,
    shaped,
)
from core.policy.value_judgement import judged_group

_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


PAYMENTS: tuple[Rule, ...] = (
    prefixed("stripe_webhook_secret", "whsec_", f"[{ALNUM}]{{32,}}"),
    prefixed("square_token", "EAAA", f"[{URLSAFE}]{{60}}"),
    prefixed("square_token", ("sq0atp-", "sq0csp-"), f"[{URLSAFE}]{{22,43}}"),
    prefixed(
        "braintree_token",
        ("access_token$production$", "access_token$sandbox$"),
        f"[{LOWER_DIGITS}]{{16}}\\$[{HEX}]{{32}}",
    ),
    prefixed("flutterwave_key", ("FLWSECK-", "FLWSECK_TEST-"), f"[{HEX}]{{32}}-X"),
    prefixed("shopify_token", ("shpat_", "shpss_", "shpca_", "shppa_"), f"[{HEX_ANY}]{{32}}"),
    prefixed(
        "plaid_token",
        ("access-sandbox-", "access-development-", "access-production-"),
        _UUID,
    ),
    prefixed("shippo_token", ("shippo_live_", "shippo_test_"), f"[{HEX}]{{40}}"),
    prefixed("easypost_key", ("EZAK", "EZTK"), f"[{ALNUM}]{{54}}"),
    prefixed("duffel_token", ("duffel_live_", "duffel_test_"), f"[{URLSAFE}=]{{43}}"),
)

MESSAGING: tuple[Rule, ...] = (
    prefixed(
        "slack_token",
        ("xapp-", "xoxe.xoxp-", "xoxe-", "xoxs-", "xoxo-"),
        f"[0-9]-[{URLSAFE}]{{20,}}",
    ),
    shaped(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_-]+/[A-Za-z0-9/_-]{16,}",
        ("hooks.slack.com/",),
        needs="/",
    ),
    shaped(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}",
        ("discord.com/api/", "discordapp.com/api/"),
        needs="/",
    ),
    shaped(
        "discord_bot_token",
        r"(?<![A-Za-z0-9_.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}"
        r"(?![A-Za-z0-9_.-])",
        needs=".",
    ),
    shaped(
        "telegram_bot_token",
        r"(?<![A-Za-z0-9_])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
        needs=":",
    ),
    shaped(
        "teams_webhook",
        rf"webhook\.office\.com/webhookb2/{_UUID}@{_UUID}/IncomingWebhook/[0-9a-f]{{32}}/{_UUID}"
        r"(?:/[A-Za-z0-9_-]+)?",
        ("webhook.office.com/",),
        needs="@",
    ),
    shaped(
        "google_chat_webhook",
        r"chat\.googleapis\.com/v1/spaces/[A-Za-z0-9_-]+/messages\?[A-Za-z0-9_%=&.-]*"
        r"(?:key|token)=[A-Za-z0-9_%=&.-]+",
        ("chat.googleapis.com/",),
        needs="?",
    ),
    shaped(
        "zapier_webhook",
        r"hooks\.zapier\.com/hooks/catch/[0-9]+/[A-Za-z0-9]+/?",
        ("hooks.zapier.com/",),
        needs="/",
    ),
    shaped(
        "ifttt_webhook",
        r"maker\.ifttt\.com/(?:trigger/[A-Za-z0-9_-]+/(?:json/)?with/key|use)/[A-Za-z0-9_-]{20,}",
        ("maker.ifttt.com/",),
        needs="/",
    ),
    # Twilio: an account SID (AC + 32 hex) names the account and stays; an API
    # key (SK + 32 hex) is a credential; the account's auth token is 32 hex
    # digits with no prefix, so it is found by its name before it, with or
    # without ":" or "is" ("Twilio auth token 9f8e…", TWILIO_AUTH_TOKEN …).
    prefixed("twilio_api_key", "SK", f"[{HEX_ANY}]{{32}}"),
    shaped(
        "twilio_auth_token",
        r"(?<![A-Za-z0-9])auth[ \t_-]?token(?:[ \t]+(?:is|was)|[ \t]*[:=])?[ \t]*[\"']?"
        r"(?P<v>[0-9a-fA-F]{32})(?![A-Za-z0-9])",
        ("auth",),
        tier=Tier.PROBABLE,
        caseless=True,
        # Hex digits and letters both: 32 digits alone are a number, not a token.
        extract=judged_group("v", random_enough),
    ),
    prefixed(
        "sendgrid_key", "SG.", f"[{URLSAFE}]{{20,24}}\\.[{URLSAFE}]{{40,46}}", check_random=False
    ),
    prefixed("mailgun_key", "key-", f"[{ALNUM}]{{32}}"),
    shaped(
        "mailchimp_key",
        r"(?<![A-Za-z0-9_])[0-9a-f]{32}-us[0-9]{1,2}(?![A-Za-z0-9])",
        ("-us",),
        needs="-",
        back=32,
    ),
    prefixed("brevo_key", ("xkeysib-", "xsmtpsib-"), f"[{HEX}]{{64}}-[{ALNUM}]{{16}}"),
    shaped(
        "okta_token",
        r"(?<![A-Za-z0-9])SSWS[ \t]+(?P<v>00[A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])",
        ("SSWS",),
        extract=group_span("v"),
    ),
)

PRODUCTIVITY: tuple[Rule, ...] = (
    prefixed("notion_token", ("secret_", "ntn_"), f"[{ALNUM}]{{43,46}}"),
    prefixed("linear_key", "lin_api_", f"[{ALNUM}]{{40}}"),
    prefixed("linear_key", "lin_oauth_", f"[{HEX}]{{64}}"),
    prefixed("airtable_token", "pat", f"[{ALNUM}]{{14}}\\.[{HEX}]{{64}}"),
    shaped(
        "asana_token",
        r"(?<![A-Za-z0-9/])[0-9]/[0-9]{10,20}(?:/[0-9]{10,20})?:[A-Za-z0-9]{32}(?![A-Za-z0-9])",
        needs=":",
    ),
    prefixed("figma_token", "figd_", f"[{URLSAFE}]{{40,}}"),
    prefixed("contentful_token", "CFPAT-", f"[{URLSAFE}]{{43}}"),
    prefixed("typeform_token", "tfp_", f"[{URLSAFE}=.]{{40,}}"),
    prefixed("frameio_token", "fio-u-", f"[{URLSAFE}=]{{64}}"),
    prefixed("hubspot_token", ("pat-na1-", "pat-eu1-"), _UUID),
    prefixed("mapbox_secret_token", "sk.eyJ", f"[{URLSAFE}]+\\.[{URLSAFE}]{{22}}"),
    shaped(
        "salesforce_token",
        r"(?<![A-Za-z0-9])00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}",
        ("00D",),
        needs="!",
    ),
    prefixed("dropbox_token", ("sl.u.", "sl."), f"[{URLSAFE}]{{130,}}"),
    prefixed("twitter_bearer_token", "AAAAAAAAAAAAAAAAAAAAA", f"[{ALNUM}%]{{30,}}"),
    shaped(
        "facebook_token",
        r"(?<![A-Za-z0-9_])EAA[B-Z][A-Za-z0-9]{80,}(?![A-Za-z0-9])",
        ("EAA",),
    ),
    prefixed("adafruit_key", "aio_", f"[{ALNUM}]{{28}}"),
)

RULES: tuple[Rule, ...] = PAYMENTS + MESSAGING + PRODUCTIVITY
