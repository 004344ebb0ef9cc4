"""Secret detection: the corpus bar, each pattern, and properties that must hold
for any input."""

from __future__ import annotations

import dataclasses
import itertools
import string
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.policy.credentials import credential_statement
from core.policy.rule_types import Tier
from core.policy.secrets import (
    REPLACEMENT,
    Finding,
    Redaction,
    redact,
    scan,
)
from tests.core.secret_vectors import BENIGN, CASES, SECRETS, Case, corpus_scores

# --- the corpus ------------------------------------------------------------------


def test_corpus_is_large_and_covers_every_redacting_pattern() -> None:
    assert len(SECRETS) >= 110
    assert len(BENIGN) >= 110
    patterns = {p for _, p in SECRETS}
    assert patterns == set(EXAMPLES)
    for pattern in patterns:
        assert sum(p == pattern for _, p in SECRETS) >= 5, pattern


def test_corpus_scores() -> None:
    scores = corpus_scores()
    assert scores["secrets"] == len(CASES)
    assert scores["recall"] == 1.0
    assert scores["false_positive_rate"] == 0.0
    assert scores["possible_on_benign"] == 0.0


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.pattern)
def test_every_corpus_secret_is_gone(case: Case) -> None:
    # One test per case so a regression names the pattern and the sentence.
    result = redact(case.text)
    assert case.pattern in result.redacted
    for value in case.values:
        assert value not in result.text


def _wide(text: str) -> str:
    """``text`` in fullwidth forms, as some keyboards and converters type it."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.pattern)
def test_a_secret_in_fullwidth_forms_is_gone_too(case: Case) -> None:
    result = redact(_wide(case.text))
    assert case.pattern in result.redacted
    for value in case.values:
        assert _wide(value) not in result.text


def test_a_credential_statement_in_fullwidth_forms_is_one() -> None:
    assert credential_statement(_wide("my password is hunter2")) is not None


@pytest.mark.parametrize("text", [_wide(t) for t in BENIGN] + ["会議は１０時から、ＡＢＣ社で。"])
def test_benign_text_in_fullwidth_forms_is_untouched(text: str) -> None:
    assert redact(text) == Redaction(text, (), ())


@pytest.mark.parametrize("text", BENIGN)
def test_benign_text_is_untouched(text: str) -> None:
    result = redact(text)
    assert result.text == text
    assert result.redacted == ()


# --- one example per pattern -----------------------------------------------------

_B36 = "Q7wErT9yUiOp3AsDfGh2JkLzXc8VbNm4Lk5Jh6Gf"
EXAMPLES: dict[str, tuple[Tier, str, str]] = {
    # pattern: (tier, text, the value that must disappear)
    "private_key_block": (
        Tier.DEFINITE,
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow" + _B36 + "\n-----END RSA PRIVATE KEY-----",
        "MIIEow" + _B36,
    ),
    "openai_key": (Tier.DEFINITE, f"key sk-{_B36}Ab12Cd34 ok", f"sk-{_B36}Ab12Cd34"),
    "anthropic_key": (Tier.DEFINITE, f"sk-ant-api03-{_B36}-x_AA", f"sk-ant-api03-{_B36}-x_AA"),
    "aws_access_key": (Tier.DEFINITE, "id AKIAQ3EGUZ7W4NXM2KFB,", "AKIAQ3EGUZ7W4NXM2KFB"),
    "github_token": (Tier.DEFINITE, f"ghp_{_B36[:36]}", f"ghp_{_B36[:36]}"),
    "github_pat": (Tier.DEFINITE, f"github_pat_{_B36[:22]}_{_B36}", f"github_pat_{_B36[:22]}"),
    "slack_token": (
        Tier.DEFINITE,
        "xoxb-123456789012-1234567890123-Q7wErT9yUiOp3AsDfGh2JkLz",
        "Q7wErT9yUiOp3AsDfGh2JkLz",
    ),
    "google_api_key": (Tier.DEFINITE, f"AIza{_B36[:35]}", f"AIza{_B36[:35]}"),
    "stripe_live_key": (Tier.DEFINITE, f"sk_live_{_B36[:24]}", f"sk_live_{_B36[:24]}"),
    "jwt": (
        Tier.DEFINITE,
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIzNDU2",
        "eyJzdWIiOiIxMjM0In0",
    ),
    "stripe_test_key": (Tier.PROBABLE, f"sk_test_{_B36[:24]}", f"sk_test_{_B36[:24]}"),
    "password_assignment": (Tier.PROBABLE, "password=hunter22", "hunter22"),
    "api_key_assignment": (Tier.PROBABLE, "API_KEY=8d7f6a5s4d3f", "8d7f6a5s4d3f"),
    "secret_assignment": (Tier.PROBABLE, "client_secret: 'Zq81kLm29QpR'", "Zq81kLm29QpR"),
    "token_assignment": (Tier.PROBABLE, "access_token=Zq81kLm29QpR", "Zq81kLm29QpR"),
    "cli_credential_flag": (Tier.PROBABLE, "tool --db-password Zq81kLm2 run", "Zq81kLm2"),
    "env_credential": (Tier.PROBABLE, "setx PGPASSWORD Zq81kLm2", "Zq81kLm2"),
    "credentials_assignment": (Tier.PROBABLE, "SMTP_CREDENTIALS=Zq81kLm29QpR", "Zq81kLm29QpR"),
    "signed_url_signature": (
        Tier.DEFINITE,
        "https://a.blob.core.windows.net/c?sv=2022-11-02&sig="
        + "Zq81kLm29QpR" * 3
        + "Ab4%2Bc9Q%3D",
        "Zq81kLm29QpR" * 3,
    ),
    "bearer_token": (Tier.PROBABLE, "Authorization: Bearer Zq81kLm29QpR7v", "Zq81kLm29QpR7v"),
    "basic_auth": (Tier.PROBABLE, "Authorization: Basic YWxpY2U6czNjcjN0", "YWxpY2U6czNjcjN0"),
    "url_credentials": (Tier.PROBABLE, "redis://bob:Zq81kLm2@cache:6379", "Zq81kLm2"),
    "payment_card": (Tier.DEFINITE, "card 4111 1111 1111 1111 exp 12/29", "4111 1111 1111 1111"),
    "us_ssn": (Tier.PROBABLE, "SSN is 078-05-1121", "078-05-1121"),
    "card_security_code": (Tier.PROBABLE, "4242 4242 4242 4242 CVC 123", "123"),
    "oauth_token": (
        Tier.PROBABLE,
        "oauth token 3f9a0c1b2d4e5f60718293a4b5c6d7e8",
        "3f9a0c1b2d4e5f60718293a4b5c6d7e8",
    ),
    "aws_secret_key": (Tier.DEFINITE, f"aws secret {_B36}", _B36),
    "otp_secret": (
        Tier.DEFINITE,
        "otpauth://totp/ACME:bob?secret=JBSWY3DPEHPK3PXPQ4DS&issuer=ACME",
        "JBSWY3DPEHPK3PXPQ4DS",
    ),
    "huggingface_token": (Tier.DEFINITE, f"HF token hf_{_B36[:36]}", f"hf_{_B36[:36]}"),
    "twilio_auth_token": (
        Tier.PROBABLE,
        "Twilio auth token 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
}


@pytest.mark.parametrize("pattern", sorted(EXAMPLES))
def test_each_pattern(pattern: str) -> None:
    tier, text, value = EXAMPLES[pattern]
    findings = scan(text)
    assert [(f.pattern, f.tier) for f in findings] == [(pattern, tier)]
    result = redact(text)
    assert value not in result.text
    assert REPLACEMENT in result.text
    assert result.redacted == (pattern,)


def test_findings_never_carry_the_value() -> None:
    assert [f.name for f in dataclasses.fields(Finding)] == ["pattern", "tier", "start", "end"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter22 please", "password=[SECRET_REDACTED] please"),
        ('"password": "s3cr3t!"', '"password": "[SECRET_REDACTED]"'),
        ("Authorization: Bearer Zq81kLm29QpR7v", "Authorization: Bearer [SECRET_REDACTED]"),
        ("postgres://app:Xk9mP2q@db:5432/prod", "postgres://app:[SECRET_REDACTED]@db:5432/prod"),
        ("The DB_PASSWORD=hunter22.", "The DB_PASSWORD=[SECRET_REDACTED]."),
        ("PGPASSWORD=s3cr3t psql -h db", "PGPASSWORD=[SECRET_REDACTED] psql -h db"),
        ("mysql -u root -pS3cretPass db", "mysql -u root -p[SECRET_REDACTED] db"),
        (
            "set DJANGO_SECRET_KEY to 'x8#k2!m9@p4$q7&w1^z6'",
            "set DJANGO_SECRET_KEY to '[SECRET_REDACTED]'",
        ),
        ("sshpass -p toor ssh root@10.0.0.5", "sshpass -p [SECRET_REDACTED] ssh root@10.0.0.5"),
        ("pgpassword=s3cr3tPass psql -h db", "pgpassword=[SECRET_REDACTED] psql -h db"),
        ("PGPASS=s3cr3tPass psql", "PGPASS=[SECRET_REDACTED] psql"),
        ("dbpass=s3cr3tPass psql", "dbpass=[SECRET_REDACTED] psql"),
        ("setx PGPASS s3cr3tPass", "setx PGPASS [SECRET_REDACTED]"),
        # Twilio's auth token after its name, with no ":" between; the account SID stays.
        (
            "Twilio auth token 9f8e7d6c5b4a39281706f5e4d3c2b1a0 for account "
            "AC1234567890abcdef1234567890abcdef",
            "Twilio auth token [SECRET_REDACTED] for account AC1234567890abcdef1234567890abcdef",
        ),
        # A Stripe test card's code goes; the published number is documentation and stays.
        ("4242 4242 4242 4242 CVC 123", "4242 4242 4242 4242 CVC [SECRET_REDACTED]"),
        (
            "Stripe test card 5555 5555 5555 4444, exp 12/34, cvc 318",
            "Stripe test card 5555 5555 5555 4444, exp 12/34, cvc [SECRET_REDACTED]",
        ),
        ("Mastercard 5555 5555 5555 4444", "Mastercard [SECRET_REDACTED]"),
        # An OAuth token of hex digits after its name, with or without ":".
        (
            "OAuth access token 3f9a0c1b2d4e5f60718293a4b5c6d7e8f9a0b1c2 for the CRM",
            "OAuth access token [SECRET_REDACTED] for the CRM",
        ),
        (
            "access token 12345678901234567890123456789012",
            "access token 12345678901234567890123456789012",
        ),
    ],
)
def test_probable_findings_redact_the_value_only(text: str, expected: str) -> None:
    assert redact(text).text == expected


def test_private_key_without_end_is_redacted_to_the_end() -> None:
    text = "oops:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nmore"
    assert redact(text).text == "oops:\n" + REPLACEMENT


def test_the_higher_tier_wins_an_overlap() -> None:
    jwt = EXAMPLES["jwt"][1]
    findings = scan(f"Authorization: Bearer {jwt}")
    assert [f.pattern for f in findings] == ["jwt"]


def test_possible_findings_stay_in_place_for_review() -> None:
    blob = "QmFzZTY0IGVuY29kZWQgc3RyaW5nIHdpdGggTWl4ZWQgQ2FzZSBhbmQgMTIz"
    sha = "3f2a9c1b7e4d5f6a8b9c0d1e2f3a4b5c6d7e8f90"
    text = f"blob {blob} and {sha} here"
    result = redact(text)
    assert result == Redaction(text, (), ("long_base64", "hex40"))


@pytest.mark.parametrize(
    "text",
    [
        "Fixed in commit 3f2a9c1b7e4d5f6a8b9c0d1e2f3a4b5c6d7e8f90.",
        "id 123e4567-e89b-12d3-a456-426614174000",
        "![x](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk)",
        "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "pk_live_51H8abcdEFGHijklMNOPqrst is publishable",
        # A key meant to be public, whatever the name before it.
        "api_key=pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "stripe_api_key: pk_test_51H8abcdEFGHijklMNOPqrst",
    ],
)
def test_look_alikes_raise_nothing(text: str) -> None:
    assert scan(text) == []


# --- credential statements -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("my password is hunter2", "looks like a password statement"),
        ("the api key is abc123", "looks like an API key statement"),
        ("our wifi password: xyz", "looks like a password statement"),
        ("PIN is 1234", "looks like a PIN statement"),
        ("my ssh passphrase is correct-horse-battery-staple", "looks like a passphrase statement"),
        ("My password for the router is Tr0ub4dor&3", "looks like a password statement"),
        ("password for db.example.com is Tr0ub4dor&3", "looks like a password statement"),
        ("The token is ghx_9a8b7c6d", "looks like a token statement"),
        ("the password is swordfish.", "looks like a password statement"),
        ("wifi pw is Tr0ub4dor&3 at home", "looks like a password statement"),
        ("my pin is 4821", "looks like a PIN statement"),
        ("the password is 1234abc", "looks like a password statement"),
        ("The secret is Zq81kLm29QpR", "looks like a secret statement"),
        # A reference only when the value ends there.
        ("password: ${DB_PASSWORD}x9", "looks like a password statement"),
        ("the password is <b>hunter2</b>", "looks like a password statement"),
        ("my password is $ecret99", "looks like a password statement"),
    ],
)
def test_credential_statement_positives(text: str, reason: str) -> None:
    assert credential_statement(text) == reason


_PASSWORD = "looks like a password statement"
_PASSPHRASE = "looks like a passphrase statement"
_LOGIN = "looks like a login (user and password)"
_ACCESS_CODE = "looks like an access code statement"
_RECOVERY_CODES = "looks like a recovery codes statement"
_TWO_FACTOR = "looks like a two-factor secret statement"
_RECOVERY_PHRASE = "looks like a recovery phrase statement"
_ONE_TIME = "looks like a one-time code statement"
_WIFI_KEY = "looks like a Wi-Fi key statement"
_CARD_CODE = "looks like a card security code statement"
_BIP39_12 = "abandon ability able about above absent absorb abstract absurd abuse access accident"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        # A password said with "with", "using" or "set ... to", or after its user.
        ("ssh root@10.0.0.5 with password toor", _PASSWORD),
        ("connect to the NAS using the password Tr0ub4dor", _PASSWORD),
        ("The zip is encrypted with password infected", _PASSWORD),
        ("encrypted with a password of hunter22", _PASSWORD),
        ("`daniel`, using the password `qwerty`:", _PASSWORD),
        ("I set the wifi password to hunter2", _PASSWORD),
        ("set password to hunter2", _PASSWORD),
        ("changed my PIN to 4821", "looks like a PIN statement"),
        ("ssh root@10.0.0.5 password toor", _LOGIN),
        ("user admin password hunter2", _LOGIN),
        ("ssh to 10.0.0.5 as root, password toor", _LOGIN),
        ("ssh in as pi, password raspberry", _LOGIN),
        ("connect with ssh root@10.0.0.5 and the password toor", _LOGIN),
        ("user root | password toor", _LOGIN),
        # Passwords of several words: Google's app password, a quoted phrase, a passphrase.
        ("user's gmail app password is abcd efgh ijkl mnop", _PASSWORD),
        ("app password: abcd efgh ijkl mnop", _PASSWORD),
        ("Google app-specific password for Thunderbird: wxyz abcd efgh ijkl", _PASSWORD),
        ('my password is "Summer 2024 rocks"', _PASSWORD),
        ("my passphrase is correct horse battery staple", _PASSPHRASE),
        ("my ssh passphrase: purple monkey dishwasher lamp", _PASSPHRASE),
        ('the GPG passphrase is "correct horse battery staple"', _PASSPHRASE),
        # ... and a password of several words said plainly after "is", up to the clause's end.
        ("my wifi password is correct horse battery staple", _PASSWORD),
        ("the router password is purple monkey dishwasher 42", _PASSWORD),
        ("my password was purple monkey dishwasher.", _PASSWORD),
        ("our wifi password is correct horse battery staple, ask if it fails", _PASSWORD),
        ("The guest wifi password is sunny beach house 2024", _PASSWORD),
        # ... or of two: a word, then a number in figures or in words.
        ("my password is hunter two", _PASSWORD),
        ("my password is hunter 2", _PASSWORD),
        ("the wifi password is dragon seven.", _PASSWORD),
        ("our password was monkey 1987, ask Sam", _PASSWORD),
        # ... a word with a capital and a number in words, or two words after "is".
        ("the password is Hunter two", _PASSWORD),
        ("My password is Hunter seven.", _PASSWORD),
        ("my password is hunter dragon", _PASSWORD),
        ("the wifi password is Purple dragon, ask Sam", _PASSWORD),
        ("the passphrase is ninja turtle", _PASSPHRASE),
        # A lone word before a clause that asks to keep it quiet, participle-shaped or not.
        ("the wifi password is dumpling but don't share it", _PASSWORD),
        ("my password is pudding, but please don't tell anyone", _PASSWORD),
        ("the wifi password is dumpling and it's case sensitive", _PASSWORD),
        ("the password is darling so keep it to yourself", _PASSWORD),
        ("the passphrase is purple monkey dishwasher 42", _PASSPHRASE),
        # Door, gate, alarm and safe codes.
        ("remember the door code 1234#", _ACCESS_CODE),
        ("the gate code is 4821", _ACCESS_CODE),
        ("gate code: *4821#", _ACCESS_CODE),
        ("The alarm code for the shop is 90210", _ACCESS_CODE),
        ("garage door code 5567", _ACCESS_CODE),
        ("safe combination is 12-34-56", _ACCESS_CODE),
        ("the combination to the safe is 22-14-35", _ACCESS_CODE),
        ("building entry code #1234", _ACCESS_CODE),
        # The same codes said other ways: in groups, or "the code to the front door".
        ("Door code: 48 21", _ACCESS_CODE),
        ("Door code: 48-21", _ACCESS_CODE),
        ("the door code is 48 21 now", _ACCESS_CODE),
        ("The code to the front door is 4821", _ACCESS_CODE),
        ("The code for the front door is 4821", _ACCESS_CODE),
        ("code for the garage: 4821", _ACCESS_CODE),
        ("the code to open the garage is 4821#", _ACCESS_CODE),
        ("the front door's code is 4821", _ACCESS_CODE),
        ("the code to the storage unit is 12 34", _ACCESS_CODE),
        # In groups of digits right after the noun.
        ("remember the door code 48 21", _ACCESS_CODE),
        ("safe code 12 34 56 for the basement", _ACCESS_CODE),
        # One digit at a time, in figures or in words.
        ("the alarm code is 1 2 3 4", _ACCESS_CODE),
        ("garage code is 5 5 1 2", _ACCESS_CODE),
        ("padlock code: 1 2 3 4", _ACCESS_CODE),
        ("remember the door code 1 2 3 4", _ACCESS_CODE),
        ("the door code is nine one one five", _ACCESS_CODE),
        ("The door code is Nine-One-One-Five.", _ACCESS_CODE),
        ("the gate code is four, oh, two, one", _ACCESS_CODE),
        ("my pin is 1 9 8 4", "looks like a PIN statement"),
        ("my atm pin is four four one two", "looks like a PIN statement"),
        ("changed my PIN to 1 2 3 4", "looks like a PIN statement"),
        ("my password is four four one two", _PASSWORD),
        # The codes of a bike lock, a cable lock, a lockbox, a keypad, a padlock, a locker.
        ("the bike lock code is 3141", _ACCESS_CODE),
        ("bike lock combination is 3-1-4-1", _ACCESS_CODE),
        ("my cable lock combo: 3141", _ACCESS_CODE),
        ("the lock code for the shed is 4821", _ACCESS_CODE),
        ("the lockbox combination is 3-1-4-1", _ACCESS_CODE),
        ("keypad code is 3141", _ACCESS_CODE),
        ("the padlock combination is 3141", _ACCESS_CODE),
        ("my locker combination is 12-34-56", _ACCESS_CODE),
        # A place between the code and "is", possessive too, and the keypad's * or #.
        ("the gate code at grandma's is *4590", _ACCESS_CODE),
        ("the gate code at my grandma's house is *4590", _ACCESS_CODE),
        ("the door code for the office is 4821#", _ACCESS_CODE),
        ("the door code at the Smiths' is 7731", _ACCESS_CODE),
        # Backup and recovery codes.
        ("The recovery codes are 8f3k-2jd9, 7dk2-9dk3", _RECOVERY_CODES),
        ("GitHub recovery codes: 3f2a1-9c8b7, 77e2d-01fa3, 5b6c9-d2e41", _RECOVERY_CODES),
        ("backup codes:\n- 1234 5678\n- 9012 3456", _RECOVERY_CODES),
        ("my backup code for google is 48213907", _RECOVERY_CODES),
        # Codes without a digit, in a list of one shape with the few vowels of random letters.
        ("recovery codes: abcd-efgh, ijkl-mnop", _RECOVERY_CODES),
        ("The recovery codes are: KDJF-QWPR, ZXCV-BNMT", _RECOVERY_CODES),
        ("backup codes:\n- qwrt-zxvb\n- plmk-hjgf\n- trdc-bnmz", _RECOVERY_CODES),
        # Two-factor secrets.
        ("TOTP secret JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("2FA secret: JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("authenticator setup key: jbsw y3dp ehpk 3pxp kq2a", _TWO_FACTOR),
        ("MFA seed for AWS root is GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ", _TWO_FACTOR),
        # "2FA" alone before ":", and the backup or recovery key of a second factor.
        ("2FA: JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("2FA for GitHub: jbsw y3dp ehpk 3pxp", _TWO_FACTOR),
        ("Authenticator: JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("2FA is JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("2FA backup key JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("2FA recovery key: JBSWY3DPEHPK3PXP", _TWO_FACTOR),
        ("MFA backup key: GEZDGNBVGY3TQOJQ", _TWO_FACTOR),
        # A one-time code given as such, or as a text message gives it.
        ("my 2FA code is 482913", _ONE_TIME),
        ("verification code: 482 913", _ONE_TIME),
        ("OTP 482913", _ONE_TIME),
        ("The 2FA code for GitHub is 482-913", _ONE_TIME),
        ("one-time password 482913", _ONE_TIME),
        ("482913 is your Instagram code", _ONE_TIME),
        ("G-482913 is your Google verification code", _ONE_TIME),
        # ... with words between the noun and "is", or a code of no kind that was texted.
        ("the 2FA code they texted me is 558213", _ONE_TIME),
        ("the verification code I got from the bank is 558 213", _ONE_TIME),
        ("the login code that came this morning was: 558213", _ONE_TIME),
        ("the code they texted me is 558213", _ONE_TIME),
        ("the code Google texted me is: 558213", _ONE_TIME),
        # A Wi-Fi key called "the key" in a text about Wi-Fi.
        ("the wifi at home is BlueFox-5G and the key is orange-tractor-91", _WIFI_KEY),
        ("the wifi key is orange-tractor-91", _WIFI_KEY),
        ("WPA key: orange-tractor-91", _WIFI_KEY),
        ("Wi-Fi: BlueFox-5G / key: Orange#Tractor", _WIFI_KEY),
        ("the network key for the guest wifi is 58213904", _WIFI_KEY),
        # ... of letters only, closing the clause after a key named as Wi-Fi's.
        ("the wifi key is bluemoonlight", _WIFI_KEY),
        ("The WiFi key is BlueMoonLight.", _WIFI_KEY),
        ("WPA key: bluemoonlight", _WIFI_KEY),
        ("the wifi key is bluemoonlight but don't share it", _WIFI_KEY),
        # A password given later in the sentence that describes it.
        ("my password is the name of my first dog plus 1987, i.e. Rex1987", _PASSWORD),
        ("my password is my dog's name plus his birth year, so it's Rex1987.", _PASSWORD),
        ("our wifi password is the street name and number, which is Baker221", _PASSWORD),
        ("the password is the default, which is admin123", _PASSWORD),
        ("my password is Rex's name and year (e.g. Rex-1987)", _PASSWORD),
        # An example after a judgement of someone's own or a named password is likely it.
        ("my password is weak, e.g. abc123", _PASSWORD),
        ("the wifi password is easy to guess, e.g. qwerty123", _PASSWORD),
        # A code or password given after the news that it changed.
        ("the pin changed, so it's 4471 now", "looks like a PIN statement"),
        ("my PIN was reset, it's 0042 now", "looks like a PIN statement"),
        ("door code changed so now 8812", _ACCESS_CODE),
        ("the gate code has changed to 5521#", _ACCESS_CODE),
        ("the wifi password was reset: Rex1987", _PASSWORD),
        ("my password changed, so it's Rex1988 now", _PASSWORD),
        # A card's security code, like a PIN.
        ("card 4111 1111 1111 1111 exp 09/27 cvv 123", _CARD_CODE),
        ("the cvv is 123", _CARD_CODE),
        ("CVC: 4821", _CARD_CODE),
        ("CVV2 is 4821", _CARD_CODE),
        ("the security code on the card is 123", _CARD_CODE),
        ("the card's CSC is 123", _CARD_CODE),
        # ... unless it is a Stripe test card's (redacted instead), and a real card's next to one.
        ("4242 4242 4242 4242 CVC 123, and my card's cvv is 456", _CARD_CODE),
        ("4242 4242 4242 4242 CVC 123\nmy cvv is 456", _CARD_CODE),
        ("Mastercard 5555555555554444 cvc 123", _CARD_CODE),
        # A wallet's recovery phrase.
        (f"Bitcoin seed phrase: {_BIP39_12}", _RECOVERY_PHRASE),
        ("mnemonic: legal winner thank year wave sausage worth useful legal winner thank yellow",
         _RECOVERY_PHRASE),
        ("my recovery phrase is: " + " ".join(f"{i}. {w}" for i, w in
                                               enumerate(_BIP39_12.split(), 1)), _RECOVERY_PHRASE),
        (f"Ledger recovery words:\n{_BIP39_12}\n{_BIP39_12}", _RECOVERY_PHRASE),
        # Named by its length alone.
        (f"my 12 words are {_BIP39_12}", _RECOVERY_PHRASE),
        (f"My twelve words: {_BIP39_12}. Keep them safe", _RECOVERY_PHRASE),
        (f"our 24 words are:\n{_BIP39_12}\n{_BIP39_12}", _RECOVERY_PHRASE),
        (f"the 12-word phrase is {_BIP39_12}", _RECOVERY_PHRASE),
    ],
)  # fmt: skip
def test_more_credential_statements(text: str, reason: str) -> None:
    assert credential_statement(text) == reason


@pytest.mark.parametrize(
    "text",
    [
        "User prefers a password manager",
        "Reset your password via the settings page",
        "The password field should be masked",
        "Use 1Password for secrets",
        "The password is required",
        "My password is 12 characters long",
        "the token is expired",
        "The API key is stored in the keyring",
        "The PIN is 4 digits",
        "the password is what you set during install",
        "Passwords are hashed with argon2id",
        # The "for/on ..." part of a statement never runs past the end of a sentence.
        "I noticed a spiderman pin on your purse. Is Spider-Man your favourite?",
        "We lost the key to the shed. Was Mia-Rose there?",
        "the pw is required",
        "PWD is /home/alice",
        # Wiring, measurements and proverbs, not credentials.
        "The LED pin is 13 on the Arduino",
        "The reset pin is GPIO4",
        "Servo pw is 1500us",
        "The access token is short-lived",
        "The secret is patience",
        "The secret to good bread is time",
        "",
        # Where a password, code or phrase lives, or how it is used, is no disclosure.
        "the password is in 1Password",
        "the password is stored in the keychain",
        "log in with password authentication.",
        "sign in with password or passkey",
        "protected with a password",
        "with the password you set during install",
        "private entries only with a passphrase |",
        "Email alice@example.com password reset link",
        "ssh as root, password authentication disabled",
        "password login is off",
        "log in as admin, password is on the sticky note",
        "Logged in as alice and password changed",
        "such as email and password fields",
        "as long as the password matches",
        "run as root, password prompt appears",
        "as usual, password reset emails go to support",
        "alice@example.com and the password reset link",
        "known as Bob, password manager fan",
        "git@github.com password prompt appears",
        "the config has username and password entries",
        "set the password to expire after 90 days",
        "reset the password to the default",
        "Set PIN to 4 digits",
        "updated the password to meet the new policy",
        "app password for this user will show once",
        'the password is "too short"',
        'the password is "not set"',
        "use a passphrase for the SSH key",
        "the passphrase is stored in the keychain",
        "The passphrase is long enough now",
        "the passphrase is hashed server side",
        "passphrase: ask Bob tomorrow",
        "the passphrase is asked for on every push",
        # A clause about a password, not a password of several words.
        "the password is in the vault",
        "my password is the same as my email password",
        "the password is stored in 1Password",
        "password is required for login",
        "the password is too short",
        "his password is expired",
        "the password is shared between staging environments",
        "the passphrase is shared between staging environments",
        "the passphrase is written down somewhere",
        "the password was stolen last week",
        "the password is rarely used anymore",
        "the password is synced across devices",
        "the password is company name plus year",
        "the new password is pending approval today",
        "Password: Bitwarden team vault",
        "passphrase: Bitwarden team vault",
        "the password is hashed with bcrypt cost 12",
        # Fewer than four digits one at a time, or more than eight in words.
        "the alarm code is 1 2 3",
        "the door code is one two three four five six seven eight nine",
        "the pin is one of three",
        "the bike lock code is in the app",
        "the lock code changed in 2023",
        "the LED pin changed, so it's 13 now",
        "the alarm code changed, so it's 4 digits now",
        "the pin changed so now 1234 is blocked",
        "the password changed, so it's long now",
        "the password changed so now SHA256 is used",
        # Two words after "password is" that are a clause, not a password.
        "the password is expired now",
        "the password is accepted now",
        "the password is changing next week",
        "the password is expiring soon",
        "the password is step two",
        "the password is priority one",
        "the password is min 8",
        "the password is under 12",
        "the password is rotating 2",
        "the password is Bitwarden 8",
        "the password is Windows 11",
        # Two words after "password is" that qualify it or say what it is made of.
        "the password is company name",
        "the password is email address",
        "the password is username backwards",
        "the password is case sensitive",
        "the password is machine readable",
        "the password is user specific",
        "the password is factory default",
        "the password is plain text",
        "the password is pretty obvious",
        "the password is one time",
        "the password is Bitwarden managed",
        "Passphrase: Bitwarden note",
        # A participle before "but" or "and", a possessive before more words.
        "the password is accepted but login fails",
        "the password is working and the token is not",
        "the password is working but don't share the link",
        "the password is expiring so don't forget to change it",
        "the password is Bitwarden's job now",
        "the password is required but never checked",
        "the password is what Sam changed last week",
        "the door code is on the fridge note",
        "the door code changed in 2023",
        "building code 2021 applies",
        "the code for the garage door opener is in the manual",
        "code for the front door lock firmware update",
        "Door code reviewers: Alice and Bob",
        "the code to the front door changed last week",
        "The code for the front door changed in 2021",
        "the code to open the garage door is in the app",
        "The error code for the lock is 4001",
        "the zip code for the gate is 90210",
        "door code 2023-2024 review",
        "gate code: 2023-2024",
        "gate code 2023 2024 review",
        "the alarm code 12 05 2024 update",
        "The code for the door is 4 digits",
        "The alarm code is 4 digits",
        "store recovery codes in the password manager",
        "recovery codes are 10 characters long",
        "The recovery codes are in 1Password",
        "backup codes 2024 refresh",
        "recovery codes: abcd-efgh",
        "recovery codes abcd-efgh, ijkl-mnop",
        "backup codes: one-time, two-step",
        "backup codes: auto-save, auto-sync",
        "recovery codes: xxxx-xxxx, yyyy-yyyy",
        "recovery codes: read-only, write-once",
        "recovery codes are single-use, one-per-login",
        "TOTP uses a shared secret",
        "the TOTP secret is stored in the vault",
        "2FA: enabled on GitHub",
        "2FA backup key is in the safe",
        "2FA: 123456",
        "error code 404",
        "ZIP code 94105",
        "order number 482913",
        "2FA is enabled",
        "error code 482913",
        "482913 is your order code",
        "TOTP codes are 6 digits",
        "2FA JBSWYDPEHPKPXPQQ",
        "2FA: SOME WORD LIKE THIS",
        "2FA: INTERNATIONALIZATION",
        "2FA: internationalization",
        "TOTP secret: REQUIREDFORALLADMINS",
        "2FA recovery key stored offline",
        "the seed phrase is written on paper in the safe",
        "the seed phrase is the only way back into the wallet if the phone dies",
        "Seed words: keep them offline and never type them into a website you do not trust fully",
        "my 12 words are in the safe, written on steel",
        "my 12 words are a lot to remember but I wrote them down on paper",
        "my 12 words are the only backup I have",
        f"My 12 words for the spelling test: {_BIP39_12}",
        f"My 24 words: {_BIP39_12}",
        f"the 12 words are {_BIP39_12}",
        "A 12-word phrase is easier to write down than 24 words",
        # "Key" alone, where a Wi-Fi key is, or what it is, is no Wi-Fi key.
        "the key is under the mat",
        "the key is to start early",
        "the wifi key is on the router sticker",
        "the key point is orange",
        "the key is orange-tractor-91",
        "the wifi is slow and the key is to restart the router",
        "the wifi key is WPA2-PSK",
        "the wifi key is orange-tractor",
        "the wifi key is different",
        "the wifi key is downstairs",
        "the wifi key is lowercase",
        "the wifi key is printed",
        "the wifi key is confidential",
        "the wifi is slow and the key is starlight",
        "the wifi key is bluemoonlight and the ssid is home",
        "the wifi key is 8 characters",
        "the wifi SSID is Home-5G and the key is in 1Password",
        "The hotspot key is 2024-05-01",
        "Wi-Fi 6: key: 802.11ax",
        # Codes of other kinds with words before "is", and a code that was not texted.
        "the error code they showed me is 404",
        "the ZIP code they gave me is 94105",
        "the order number they texted me is 558213",
        "the order code they texted me is 558213",
        "the error code they texted me is 558213",
        "the code they sent me is 558213",
        "the 2FA code they texted me is wrong",
        "verification code sent to 555 123 4567",
        "the gate code at grandma's is on the fridge",
        # After "i.e." or "so": talk, a name in code, an algorithm, digits alone.
        "my password is long, so I wrote it down",
        "the password is hashed with bcrypt, i.e. bcrypt12",
        "the password is hashed with PBKDF2, i.e. PBKDF2-SHA256",
        "the password is set via env, i.e. DB_PASS2",
        "my password is 12 characters, i.e. 12chars",
        "my password is the year I was born, so 1987",
        "my password is the usual one. so Rex1987 is next",
        "a strong password is long, e.g. Tr0ub4dor3",
        # An example of what "the password" is judged to be is not the password.
        "the password is weak, e.g. abc123",
        "The password is far too simple (e.g. abc123)",
        "the password is easy to guess, e.g. qwerty123",
        # What a card's security code is, or where; a CSC that is no card's.
        "CVV is the 3 digits on the back",
        "the cvv field was empty",
        "CVV: 3 digits",
        "the cvv is 3-4 digits",
        "security code 123",
        "CSC 2024 conference",
        "CVC words like cat and dog",
        "4242 4242 4242 4242 CVC 123",
        "Stripe test card 5555 5555 5555 4444, exp 12/34, cvc 123",
        # A key meant to be public is no key statement, whatever a text calls it.
        "the langfuse api key is pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "the stripe api key is pk_live_51H8abcdEFGHijklMNOPqrst",
        "token: pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        # A value that names where the secret comes from, a template's blank, or one
        # already cut out.
        "password: ${DB_PASSWORD}",
        'password: "${DB_PASSWORD}"',
        "password = $DB_PASSWORD",
        "api_key: ${OPENAI_API_KEY}",
        "password: <your-password>",
        "password: <your password here>",
        "password: %(DB_PASS)s",
        "password: %DB_PASS%",
        "password: {db_password}",
        "password: [REDACTED]",
        "password: [SECRET_REDACTED]",
        "password: $(cat /run/secrets/db)",
    ],
)
def test_credential_statement_negatives(text: str) -> None:
    assert credential_statement(text) is None


# --- robustness ------------------------------------------------------------------

ADVERSARIAL = [
    "\ud800\udfff\x00" * 300,
    "!" * 5000,
    "-" * 5000,
    "password=" * 600,
    "sk-" * 1500,
    "a:b@" * 1200,
    "x://" + "a:" * 2500,
    "-----BEGIN RSA PRIVATE KEY-----" * 150,
    "A" * 5000,
    "Bearer " * 700,
    "İ" * 100 + "password=hunter22 " * 200,
    "eyJ" + "a." * 2500,
    " " * 50000,
    "api key " * 6000,
    "my password is " + "plus 1987, " * 2000 + "i.e.",
    "the wifi key " * 3000,
    "the 2FA code " + "they texted " * 2000 + "is 558213",
    "cvv " * 5000,
    "auth token " * 4000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_adversarial_input_is_handled_quickly(text: str) -> None:
    # A generous bound: it is there to catch catastrophic backtracking, not to bench.
    begin = time.perf_counter()
    again = redact(redact(text).text).text
    assert again == redact(text).text
    credential_statement(text)
    assert time.perf_counter() - begin < 0.5


_ANY_TEXT = st.text(st.characters(exclude_categories=()))
_FRAGMENTS = [
    "sk-", "sk-ant-", "AKIA", "ASIA", "ghp_", "github_pat_", "xoxb-", "AIza", "sk_live_",
    "rk_test_", "eyJ", ".", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
    "password", "PASSWORD", "pwd", "_pass", "token", "secret", "api_key", "apiKey", "=", ":",
    "\"", "'", " ", "\n", "Bearer ", "Basic ", "://", "@", "--", "/", "+", "==", "[", "]",
    REPLACEMENT, "İ", "\ud800",
]  # fmt: skip
_SECRETISH = st.lists(
    st.sampled_from(_FRAGMENTS) | st.text(alphabet=string.ascii_letters + string.digits),
    max_size=30,
).map("".join)


@given(_ANY_TEXT)
def test_scan_and_redact_never_raise(text: str) -> None:
    findings = scan(text)
    assert all(0 <= f.start < f.end <= len(text) for f in findings)
    assert findings == sorted(findings, key=lambda f: f.start)
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))
    redact(text)
    credential_statement(text)


@settings(max_examples=300)
@given(_SECRETISH)
def test_secretish_text_is_redacted_idempotently(text: str) -> None:
    once = redact(text)
    assert redact(once.text).text == once.text
    # Each replacement adds at most its own length, so growth is bounded.
    assert len(once.text) <= len(text) + len(REPLACEMENT) * len(once.redacted)
    assert len(once.text) <= 3 * len(text) + 1


# Generated secrets: letters and digits with at least one of each, no vowels,
# so no draw spells a placeholder word.
_SAFE = "bcdfghjkmnpqrstvwzBCDFGHJKMNPQRSTVWZ23456789"


def _safe(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    body = st.text(alphabet=_SAFE, min_size=min_size, max_size=max_size)
    return st.builds(lambda b: f"k{b}7", body)


def _exact(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size)


_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_B64URL = _ALNUM + "-_"
_FORMATS: dict[str, st.SearchStrategy[str]] = {
    "openai_key": st.builds(lambda b: f"sk-{b}Q7", _exact(_ALNUM, 46)),
    "openai_project_key": st.builds(lambda b: f"sk-proj-{b}9", st.text(_B64URL, min_size=40)),
    "anthropic_key": st.builds(lambda b: f"sk-ant-api03-{b}AA", _exact(_B64URL, 93)),
    "aws_access_key": st.builds(lambda p, b: p + b, st.sampled_from(["AKIA", "ASIA"]),
                                _exact(_UPPER, 16)),
    "github_token": st.builds(lambda p, b: f"gh{p}_{b}", st.sampled_from("pousr"),
                              _exact(_ALNUM, 36)),
    "github_pat": st.builds(lambda a, b: f"github_pat_{a}_{b}", _exact(_ALNUM, 22),
                            _exact(_ALNUM, 59)),
    "slack_token": st.builds(lambda k, n, b: f"xox{k}-{n}-{b}", st.sampled_from("abpr"),
                             _exact(string.digits, 12), st.text(_ALNUM, min_size=10)),
    "google_api_key": st.builds(lambda b: f"AIza{b}", _exact(_B64URL, 35)),
    "stripe_key": st.builds(lambda p, m, b: f"{p}k_{m}_{b}", st.sampled_from("sr"),
                            st.sampled_from(["live", "test"]), _exact(_ALNUM, 24)),
    "jwt": st.builds(lambda a, b, c: f"eyJ{a}.{b}.{c}", st.text(_B64URL, min_size=8),
                     st.text(_B64URL, min_size=8), st.text(_B64URL, min_size=8)),
}  # fmt: skip
_CONTEXT_FORMATS: dict[str, str] = {
    "password": "password={v}",
    "quoted_password": 'DB_PASSWORD="{v}"',
    "api_key": "x-api-key: {v}",
    "secret": "client_secret = '{v}'",
    "token": "access_token={v}",
    "cli": "--db-password {v}",
    "bearer": "Authorization: Bearer {v}",
    "url": "postgres://app:{v}@db.internal:5432/prod",
}
_PROSE = st.text(alphabet=string.ascii_lowercase + " ,.", max_size=40)


@pytest.mark.parametrize("fmt", sorted(_FORMATS))
@settings(max_examples=60)
@given(data=st.data())
def test_generated_secrets_never_survive(fmt: str, data: st.DataObject) -> None:
    secret = data.draw(_FORMATS[fmt])
    text = f"{data.draw(_PROSE)} {secret} {data.draw(_PROSE)}"
    result = redact(text)
    assert secret not in result.text
    assert result.redacted


@pytest.mark.parametrize("fmt", sorted(_CONTEXT_FORMATS))
@settings(max_examples=60)
@given(data=st.data())
def test_generated_context_secrets_never_survive(fmt: str, data: st.DataObject) -> None:
    value = data.draw(_safe(6, 40))
    text = f"{data.draw(_PROSE)} {_CONTEXT_FORMATS[fmt].format(v=value)} {data.draw(_PROSE)}"
    result = redact(text)
    assert value not in result.text
    assert result.redacted


def test_a_secret_a_placeholder_uncovers_goes_in_the_same_redaction() -> None:
    # Glued to the end of a key block, the token has no edge until the block is
    # replaced; redacting once must already leave nothing for a second pass.
    text = (
        "-----BEGIN RSA PRIVATE KEY----------END RSA PRIVATE KEY-----"
        "sk-sk-sk-ant-sk-ant-sk-ant------END RSA PRIVATE KEY-----"
    )
    once = redact(text)
    assert redact(once.text).text == once.text
    assert once.text.startswith(REPLACEMENT + REPLACEMENT)
