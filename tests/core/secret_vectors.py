"""A corpus for the secret detector: fake credentials in realistic sentences, and
benign text that merely looks like them.

Every secret here is generated from a fixed seed in the shape of the real thing;
none is a real credential. The corpus is data, so other suites (benchmarks, the
review UI's fixtures) may import it too.
"""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
import uuid
from dataclasses import dataclass

from core.policy.personal_numbers import luhn_valid
from core.policy.secrets import redact

_rng = random.Random(0xA3B7)

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
UPPER_DIGITS = string.ascii_uppercase + string.digits
# Values judged in context (passwords, tokens) avoid vowels and "x" so that no
# draw can spell a placeholder such as "example" or "xxx" by chance.
SAFE = "bcdfghjkmnpqrstvwzBCDFGHJKMNPQRSTVWZ23456789"


def _draw(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _safe(n: int) -> str:
    """A context-judged value with at least one letter and one digit."""
    return _draw("bcdfghjk", 1) + _draw(SAFE, n - 2) + _draw("23456789", 1)


def _b64url_json(obj: object) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass(frozen=True)
class Case:
    text: str
    pattern: str
    #: Substrings that must not survive redaction.
    values: tuple[str, ...]


def _cases(pattern: str, templates: list[str], make: list[str]) -> list[Case]:
    return [Case(t.format(v=v), pattern, (v,)) for t, v in zip(templates, make, strict=True)]


def _openai() -> list[str]:
    return [
        "sk-" + _draw(ALNUM, 48),
        "sk-proj-" + _draw(B64URL, 120),
        "sk-" + _draw(ALNUM, 48),
        "sk-svcacct-" + _draw(B64URL, 96),
        "sk-proj-" + _draw(B64URL, 150),
        "sk-" + _draw(ALNUM, 48),
        "sk-admin-" + _draw(B64URL, 64),
    ]


def _jwt() -> str:
    header = _b64url_json({"alg": _rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"})
    payload = _b64url_json(
        {
            "sub": str(_rng.randrange(10**6, 10**7)),
            "name": _rng.choice(["Ada", "Grace", "Linus"]),
            "iat": _rng.randrange(1_600_000_000, 1_800_000_000),
        }
    )
    return f"{header}.{payload}.{_draw(B64URL, 43)}"


def _pem(kind: str, lines: int, end: bool = True) -> tuple[str, tuple[str, ...]]:
    label = f"{kind} PRIVATE KEY".strip()
    body = tuple(_draw(B64, 64) for _ in range(lines))
    block = f"-----BEGIN {label}-----\n" + "\n".join(body)
    if end:
        block += f"\n-----END {label}-----"
    return block, body


def _basic() -> str:
    user = _rng.choice(["admin", "deploy", "ci-bot", "grafana"])
    return base64.b64encode(f"{user}:{_safe(14)}".encode()).decode()


def _secret_cases() -> list[Case]:
    cases: list[Case] = []
    cases += _cases(
        "openai_key",
        [
            "I set OPENAI_API_KEY={v} in my shell profile.",
            "export OPENAI_API_KEY='{v}'",
            'The notebook calls openai.api_key = "{v}" near the top.',
            "Here's the key for the staging project: {v}",
            'client = OpenAI(api_key="{v}")',
            "My old key {v} was revoked last week.",
            "Use {v} for the admin scripts.",
        ],
        _openai(),
    )
    cases += _cases(
        "anthropic_key",
        [
            "ANTHROPIC_API_KEY={v}",
            "The Claude key is {v}, keep it out of the repo.",
            "client = anthropic.Anthropic(api_key='{v}')",
            "curl -H 'x-api-key: {v}' https://api.anthropic.com/v1/messages",
            "Switched the batch job to {v} today.",
            "{v}",
        ],
        [f"sk-ant-api03-{_draw(B64URL, 93)}AA" for _ in range(6)],
    )
    cases += _cases(
        "aws_access_key",
        [
            "aws_access_key_id = {v}",
            "The CI user's access key is {v}.",
            "AWS_ACCESS_KEY_ID={v} aws s3 ls",
            "Temporary creds start with {v} and expire hourly.",
            "Rotated {v} after the audit.",
            "  AccessKeyId: {v}",
        ],
        ["AKIA" + _draw(UPPER_DIGITS, 16) for _ in range(4)]
        + ["ASIA" + _draw(UPPER_DIGITS, 16) for _ in range(2)],
    )
    cases += _cases(
        "github_token",
        [
            "git clone https://x-access-token:{v}@github.com/acme/app.git",
            "GITHUB_TOKEN={v}",
            "My personal token for the bot account is {v}",
            "The OAuth app returned {v} after the device flow.",
            "gh auth login --with-token <<< {v}",
            "Actions injected {v} into the job env.",
            "Refresh token: {v}",
        ],
        [f"{p}_{_draw(ALNUM, 36)}" for p in ("ghp", "ghp", "ghp", "gho", "ghp", "ghs", "ghr")],
    )
    cases += _cases(
        "github_pat",
        [
            "Created a fine-grained PAT: {v}",
            "GH_TOKEN={v}",
            "token {v} only has read access to the docs repo",
            "Use {v} for the release workflow.",
            "[credential]\n  helper = store\n# {v}",
            "The renovate bot runs with {v}.",
        ],
        [f"github_pat_{_draw(ALNUM, 22)}_{_draw(ALNUM, 59)}" for _ in range(6)],
    )
    slack = [
        f"xoxb-{_draw(string.digits, 12)}-{_draw(string.digits, 13)}-{_draw(ALNUM, 24)}",
        f"xoxp-{_draw(string.digits, 12)}-{_draw(string.digits, 12)}-"
        f"{_draw(string.digits, 13)}-{_draw('0123456789abcdef', 32)}",
        f"xoxa-2-{_draw(string.digits, 12)}-{_draw(ALNUM, 30)}",
        f"xoxb-{_draw(string.digits, 11)}-{_draw(string.digits, 13)}-{_draw(ALNUM, 24)}",
        f"xoxr-{_draw(string.digits, 10)}-{_draw(ALNUM, 40)}",
        f"xoxp-{_draw(string.digits, 12)}-{_draw(string.digits, 12)}-"
        f"{_draw(string.digits, 13)}-{_draw('0123456789abcdef', 32)}",
    ]
    cases += _cases(
        "slack_token",
        [
            "SLACK_BOT_TOKEN={v}",
            "The user token is {v}; it can read DMs, be careful.",
            "slack = WebClient(token='{v}')",
            "Bot token for #alerts: {v}",
            "refresh with {v} when the app token expires",
            "I pasted {v} into the bot config.",
        ],
        slack,
    )
    cases += _cases(
        "google_api_key",
        [
            "Maps key: {v}",
            '<script src="https://maps.googleapis.com/maps/api/js?key={v}"></script>',
            "GOOGLE_API_KEY={v}",
            'The Firebase config has apiKey: "{v}"',
            "Gemini works with {v} on the free tier.",
            "restrict {v} to our domain before launch",
        ],
        ["AIza" + _draw(B64URL, 35) for _ in range(6)],
    )
    cases += _cases(
        "stripe_live_key",
        [
            "STRIPE_SECRET_KEY={v}",
            'stripe.api_key = "{v}"',
            "The live restricted key {v} can only create refunds.",
            "Payments broke until I swapped in {v}.",
            "Live key: {v}",
            "billing service env: {v}",
        ],
        [f"{p}_live_{_draw(ALNUM, 24)}" for p in ("sk", "sk", "rk", "sk", "sk", "rk")],
    )
    cases += _cases(
        "stripe_test_key",
        [
            "For local dev use {v}.",
            "STRIPE_KEY={v} npm run dev",
            "The sandbox key is {v}",
            "stripe listen --api-key {v}",
            "test mode: {v}",
            "Replace {v} before going live.",
        ],
        [f"{p}_test_{_draw(ALNUM, 24)}" for p in ("sk", "sk", "rk", "sk", "sk", "sk")],
    )
    cases += _cases(
        "jwt",
        [
            "Authorization: Bearer {v}",
            "The session cookie was token={v}",
            "Decoded {v} on jwt.io and the exp was in 2019.",
            "localStorage.setItem('id_token', '{v}')",
            "Here's the failing JWT: {v}",
            'curl -H "Authorization: Bearer {v}" localhost:8000/me',
            "{v}",
        ],
        [_jwt() for _ in range(7)],
    )
    for kind, lines, end, template in [
        ("RSA", 6, True, "Deploy key for the box:\n{v}\n"),
        ("OPENSSH", 5, True, "~/.ssh/id_ed25519 contains\n{v}"),
        ("", 8, True, 'service-account.json had "private_key": "{v}"'),
        ("EC", 3, True, "{v}"),
        ("ENCRYPTED", 4, True, "The signing key (passphrase elsewhere):\n{v}\nthanks"),
        ("RSA", 4, False, "I pasted half of it by mistake:\n{v}"),
        ("PGP", 0, True, "n/a"),
    ]:
        if kind == "PGP":
            body = tuple(_draw(B64, 64) for _ in range(3))
            block = (
                "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
                + "\n".join(body)
                + "\n-----END PGP PRIVATE KEY BLOCK-----"
            )
            cases.append(Case(f"My GPG export:\n{block}", "private_key_block", body))
            continue
        block, body = _pem(kind, lines, end)
        cases.append(Case(template.format(v=block), "private_key_block", body))

    passwords = [_safe(n) + s for n, s in zip(range(8, 16), "!#%*+@?$", strict=True)]
    cases += _cases(
        "password_assignment",
        [
            "The staging DB uses password={v} until we move to IAM auth.",
            "DB_PASSWORD={v}",
            'config.json has "password": "{v}" in plain text.',
            "mysql -u root --password={v} app",
            "  passwd: {v}",
            "db_pass = '{v}'",
            "SMTP settings: user=alerts pwd={v} port=587",
            "**Password:** {v}",
        ],
        passwords,
    )
    cases += _cases(
        "cli_credential_flag",
        [
            "run it as `backup --db-password {v} --host db1`",
            "mycli --password {v} -h localhost",
            "deploy.sh --api-key {v} --env prod",
            "vault-sync --secret {v}",
            "./push --token {v}",
            "restic --password {v} snapshots",
        ],
        [_safe(n) for n in (10, 12, 16, 20, 24, 14)],
    )
    cases += _cases(
        "bearer_token",
        [
            "Authorization: Bearer {v}",
            "curl -H 'Authorization: Bearer {v}' https://api.internal/v2/jobs",
            "The webhook sends bearer {v} on each call.",
            'headers = {{"Authorization": "Bearer {v}"}}',
            "I tested with Bearer {v} and got a 403.",
            'proxy_set_header Authorization "Bearer {v}";',
        ],
        [_safe(n) + "." + _safe(8) for n in (24, 32, 40, 28, 36, 20)],
    )
    cases += _cases(
        "basic_auth",
        [
            "Authorization: Basic {v}",
            "curl -H 'Authorization: Basic {v}' http://jenkins:8080/api/json",
            "The scraper sends Basic {v} to the registry.",
            "nginx logs show basic {v} from the old client",
            "set header Authorization=Basic {v}",
            "Basic {v}",
        ],
        [_basic() for _ in range(6)],
    )
    cases += _cases(
        "url_credentials",
        [
            "DATABASE_URL=postgres://app:{v}@db.internal:5432/prod",
            "redis://:{v}@cache-1:6379/0 is what the worker uses",
            "Clone with https://deploy:{v}@git.acme.dev/infra.git",
            "amqp://orders:{v}@rabbit.local/vhost",
            "The FTP drop is ftp://upload:{v}@files.acme.dev/in/",
            "mongodb+srv://admin:{v}@cluster0.abcde.mongodb.net/test",
        ],
        [_safe(n) + s for n, s in zip((10, 12, 14, 9, 16, 11), "!*$~=;", strict=True)],
    )
    cases += _cases(
        "api_key_assignment",
        [
            "API_KEY={v}",
            "x-api-key: {v}",
            "SECRET_KEY = '{v}'",
            'const config = {{ apiKey: "{v}" }};',
            "master_key = {v}",
            "the mailer reads access_key={v} from env",
            "private_key: {v}",
        ],
        [_safe(n) for n in (32, 24, 50, 39, 40, 20, 44)],
    )
    cases += _cases(
        "secret_assignment",
        [
            "client_secret={v}",
            "JWT_SECRET={v}",
            'webhook_secret: "{v}"',
            "  secret: {v}",
            "The OAuth app's client_secret = '{v}'",
            "SESSION_SECRET={v} node server.js",
        ],
        [_safe(n) for n in (40, 32, 24, 28, 36, 48)],
    )
    cases += _cases(
        "token_assignment",
        [
            "access_token={v}",
            "https://api.acme.dev/v1/items?access_token={v}&page=2",
            '{{"refresh_token": "{v}", "expires_in": 3600}}',
            "AUTH_TOKEN={v}",
            "x-auth-token: {v}",
            "HF_TOKEN={v} python train.py",
            "token: {v}",
        ],
        [_safe(n) for n in (30, 40, 48, 32, 24, 34, 20)],
    )
    later = (
        _command_cases()
        + _huggingface_cases()
        + _otp_cases()
        + _glued_name_cases()
        + _signature_cases()
        + _twilio_auth_token_cases()
        + _test_card_code_cases()
        + _oauth_token_cases()
        + _glued_token_cases()
    )
    return cases + _number_cases() + _wrapped_cases() + later


def _with_check_digit(body: str) -> str:
    """``body`` and the Luhn check digit that makes it a valid card number."""
    for d in "0123456789":
        if luhn_valid(body + d):
            return body + d
    raise AssertionError(body)


def _wrapped_cases() -> list[Case]:
    """Known formats in the wrappings they arrive in: percent-escaped inside a URL."""
    cases: list[Case] = []
    cases += _cases(
        "github_token",
        [
            "https://ci.acme.test/login?next=%2Fsettings%3Ftoken%3D{v}",
            "redirect_uri=https%3A%2F%2Fapp.acme.test%2Fcb%3Fgh%3D{v}%26x%3D1",
        ],
        [f"ghp_{_draw(ALNUM, 36)}" for _ in range(2)],
    )
    cases += _cases(
        "stripe_live_key",
        ["key%3D{v}", "https://hooks.acme.test/relay?u=https%3A%2F%2Fpay.test%3Fk%3D{v}"],
        [f"sk_live_{_draw(ALNUM, 24)}" for _ in range(2)],
    )
    cases += _cases(
        "aws_access_key",
        ["s3.test/get?X-Amz-Credential%3D{v}%2F20240101%2Fus-east-1"],
        ["AKIA" + _draw(UPPER_DIGITS, 16)],
    )
    cases += _cases(
        "slack_token",
        ["https://relay.acme.test/?to=slack%26token%3D{v}"],
        [f"xoxb-{_draw(string.digits, 12)}-{_draw(string.digits, 13)}-{_draw(ALNUM, 24)}"],
    )
    cases += _cases(
        "credentials_assignment",
        [
            "SMTP_CREDENTIALS={v}",
            "export REGISTRY_CREDS='{v}'",
            "SERVICE_AUTH={v}",
            "//registry.npmjs.org/:_auth={v}",
            '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{v}"}}}}}}',
            '{{"auths": {{"ghcr.io": {{"auth": "{v}"}}}}}}',
        ],
        [_safe(14), _safe(20), _safe(32), _basic(), _basic(), _basic()],
    )
    keys = [
        base64.b64encode(_pem(kind, lines)[0].encode()).decode()
        for kind, lines in (("RSA", 4), ("EC", 2), ("OPENSSH", 5))
    ]
    wrapped = "\n".join(keys[2][i : i + 76] for i in range(0, len(keys[2]), 76))
    cases += [
        Case(f"    client-key-data: {keys[0]}", "private_key_block", (keys[0][20:60],)),
        Case(f"data:\n  tls.key: {keys[1]}\n  tls.crt: none", "private_key_block", (keys[1][20:],)),
        Case(f"base64 of my key:\n{wrapped}\nthanks", "private_key_block", (keys[2][80:200],)),
    ]
    sigs = [
        urllib.parse.quote(base64.b64encode(_rng.randbytes(32)).decode(), safe="") for _ in range(4)
    ]
    cases += _cases(
        "signed_url_signature",
        [
            "https://acme.blob.core.windows.net/backups?sv=2022-11-02&ss=b&sp=rl&sig={v}",
            "BlobEndpoint=https://acme.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02"
            "&ss=b&srt=sco&sp=rwdlac&se=2026-01-01T00:00:00Z&spr=https&sig={v}",
            "the export link https://acme.file.core.windows.net/share/a.csv?sv=2021-08-06&sig={v}"
            "&se=2025-03-01 expires Friday",
            "az storage blob upload --sas-token '?sv=2022-11-02&sp=w&sig={v}'",
        ],
        sigs,
    )
    cases += _cases(
        "signed_url_signature",
        [
            "https://acme-logs.s3.amazonaws.com/app.log?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Expires=3600&X-Amz-Signature={v}",
        ],
        ["".join(_rng.choice("0123456789abcdef") for _ in range(64))],
    )
    cases += _cases(
        "cli_credential_flag",
        [
            "curl -u admin:{v} https://api.acme.test/v1/me",
            'curl -s --user "deploy:{v}" -X POST https://ci.acme.test/job',
        ],
        [_safe(18), _safe(12) + "!"],
    )
    return cases


def _number_cases() -> list[Case]:
    """Secrets made of digits, and AWS secret keys by their context (no random draws:
    the corpus drawn before them stays as it was)."""
    cards = [
        _with_check_digit(b)
        for b in (
            "411111111111111",
            "555555555555444",
            "37828224631000",
            "601111111111111",
            "352800000000001",
            "222300000000002",
            "400012345678901",
        )
    ]
    spaced = [" ".join(c[i : i + 4] for i in range(0, len(c), 4)) for c in cards]
    aws = "Q9xk2LmP7vRt4WzY8bNc3HdF6gJs1KaE5uTo0iVq"
    return (
        _cases(
            "payment_card",
            [
                "Card number {v} exp 12/29",
                "my visa is {v}",
                "amex: {v}",
                "pay with {v} next time",
                "{v}",
                "The company card ({v}) is for travel only.",
                "Billing card {v}, expires 2027",
                "Mastercard {v}",
            ],
            [
                spaced[0],
                cards[1],
                cards[2],
                spaced[3],
                cards[4],
                spaced[5],
                cards[6],
                spaced[1].replace(" ", "."),
            ],
        )
        + _cases(
            "us_ssn",
            [
                "SSN is {v}",
                "ssn: {v}",
                "Social security number {v} on the tax form",
                "her SSN#{v}",
                "social security no. {v}",
                "Tax ID (SSN) {v}",
                "my social is {v}",
            ],
            [
                "078-05-1121",
                "123456789",
                "219 09 9999",
                "457-55-5462",
                "536-22-1234",
                "078-05-1122",
                "078-05-1123",
            ],
        )
        + _cases(
            "aws_secret_key",
            [
                "Deploy with AWS key AKIAQ3EGUZ7W4NXM2KFC and secret {v}",
                "aws creds: {v}",
                "The AWS secret is {v}",
                "export AWS_SECRET_ACCESS_KEY={v}",
                "aws_secret_access_key = {v}",
                # The key's own name says AWS even where the word does not appear.
                "The secret access key for the backup user is {v}",
                "  SecretAccessKey: {v}",
            ],
            [
                aws,
                aws[::-1],
                aws[5:] + aws[:5],
                aws[10:] + aws[:10],
                aws[20:] + aws[:20],
                aws[15:] + aws[:15],
                aws[25:] + aws[:25],
            ],
        )
    )


# Cases added later draw from their own generator, so the ones above stay as drawn.
_later = random.Random(0x7E57)


def _later_safe(n: int) -> str:
    """Like :func:`_safe`, from the later cases' generator."""
    return (
        _later.choice("bcdfghjk")
        + "".join(_later.choice(SAFE) for _ in range(n - 2))
        + _later.choice("23456789")
    )


def _command_cases() -> list[Case]:
    """Credentials in shell commands and in variables named for them."""
    cases: list[Case] = []
    cases += _cases(
        "password_assignment",
        [
            "PGPASSWORD={v} psql -h db -U app",
            "export PGPASSWORD='{v}'",
            '$env:PGPASSWORD = "{v}"',
            "SSHPASS={v} sshpass -e ssh root@10.0.0.5",
            'datasource: {{ dbPassword: "{v}" }}',
            "keystore.properties: storePassword={v}",
        ],
        [_later_safe(n) for n in (8, 10, 12, 9, 14, 11)],
    )
    cases += _cases(
        "token_assignment",
        ["GITHUBTOKEN={v}", 'new Client({{ accessToken: "{v}" }})'],
        [_later_safe(n) for n in (36, 24)],
    )
    cases += _cases(
        "secret_assignment",
        ['clientSecret = "{v}"', "CLIENTSECRET={v}"],
        [_later_safe(n) for n in (32, 28)],
    )
    cases += _cases("api_key_assignment", ["SECRET_KEY_BASE={v}"], [_later_safe(64)])
    cases += _cases(
        "env_credential",
        [
            "set DJANGO_SECRET_KEY to '{v}'",
            "setx PGPASSWORD {v}",
            "setenv MYSQL_PWD {v}",
            "set -x OPENAI_API_KEY {v}",
            'set -gx HF_TOKEN "{v}"',
            "Set the DB_PASSWORD to {v} before running the migrations.",
        ],
        ["x8#k2!m9@p4$q7&w1^z6"] + [_later_safe(n) for n in (10, 12, 40, 34, 14)],
    )
    cases += _cases(
        "cli_credential_flag",
        [
            "mysql -u root -p{v} db",
            "mysqldump -uroot -p'{v}' app > dump.sql",
            "mariadb -h db -u app -p{v} -e 'show tables'",
            "sshpass -p {v} ssh root@10.0.0.5",
            "sshpass -p '{v}' scp backup.tgz nas:/volume1/",
            "redis-cli -h cache -a {v} ping",
            "mongosh -u admin -p {v} --authenticationDatabase admin",
        ],
        ["S3cretPass"] + [_later_safe(n) for n in (12, 10, 8, 14, 16, 12)],
    )
    cases += _cases(
        "cli_credential_flag",
        [
            "gh secret set DEPLOY_TOKEN --body {v}",
            "gh secret set NPM_TOKEN -b {v} --repo acme/web",
            "gh secret set SENTRY_AUTH -b'{v}'",
            'gh secret set DB_PASSWORD --env production --body "{v}"',
            "gh secret set API_KEY --body={v}",
        ],
        [_later_safe(n) for n in (24, 20, 16, 14, 32)],
    )
    cases += _cases(
        "cli_credential_flag",
        [
            "docker login -u bob -p {v} registry.example.com",
            "podman login -p '{v}' quay.io",
            "helm registry login ghcr.io -u bot -p={v}",
        ],
        # Fixed values: drawing them would change every later case's.
        ["Qz8vLm2PxR7tWk3", "Hq7#vN2pLw9", "tR4wX8kM2nB6"],
    )
    return cases


def _otp_cases() -> list[Case]:
    """The secret of an otpauth:// link (a QR code's text) and of an authenticator export."""
    base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    secrets = ["".join(_later.choice(base32) for _ in range(n)) for n in (16, 26, 32, 20)]
    export = "".join(_later.choice(ALNUM) for _ in range(120))
    return _cases(
        "otp_secret",
        [
            "otpauth://totp/ACME:alice@acme.test?secret={v}&issuer=ACME",
            "The QR code says otpauth://totp/GitHub:bob?issuer=GitHub&secret={v}&digits=6",
            "otpauth://hotp/VPN?secret={v}&counter=0",
            "2FA backup: otpauth://totp/AWS%20root?secret={v}&period=30",
            "Authenticator export: otpauth-migration://offline?data={v}%3D%3D",
        ],
        [*secrets, export],
    )


def _huggingface_cases() -> list[Case]:
    """Hugging Face tokens longer than the 34 characters after "hf_" it issues
    (typed by hand, or a longer format): the provider corpus has the usual ones."""
    tokens = ["hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"] + [
        "hf_" + "".join(_later.choice(ALNUM) for _ in range(n)) for n in (35, 37, 38, 40)
    ]
    return _cases(
        "huggingface_token",
        [
            "HF token {v}",
            "HUGGING_FACE_HUB_TOKEN={v}",
            "huggingface-cli login --token {v}",
            'AutoModel.from_pretrained("meta-llama/Llama-3.1-8B", token="{v}")',
            "git clone https://alice:{v}@huggingface.co/datasets/acme/evals",
        ],
        tokens,
    )


def _glued_name_cases() -> list[Case]:
    """A password in a variable whose name glues its owner to "password" or
    "pass" in lower case or in capitals."""
    return _cases(
        "password_assignment",
        [
            "pgpassword={v} psql -h db",
            "PGPASS={v} psql",
            "dbpass={v} psql",
            "export MYSQLPASS='{v}'",
            'confirmpassword: "{v}"',
            "ROOTPASS={v}",
        ],
        [_later_safe(n) for n in (10, 12, 9, 14, 11, 13)],
    )


def _glued_token_cases() -> list[Case]:
    """Tokens in their provider's full format glued after "_" to a name, where no
    token starts otherwise ("service_sk_live_…")."""

    def alnum(n: int) -> str:
        while True:
            body = "".join(_later.choice(ALNUM) for _ in range(n))
            if sum(any(f(c) for c in body) for f in (str.islower, str.isupper, str.isdigit)) > 1:
                return body

    return (
        _cases(
            "github_token",
            ["x_{v}", "GITHUB_TOKEN_{v}", "deploy with backup_{v} today"],
            [p + alnum(36) for p in ("ghp_", "gho_", "ghs_")],
        )
        + _cases(
            "github_pat",
            ["ci_{v}"],
            ["github_pat_" + alnum(22) + "_" + alnum(59)],
        )
        + _cases(
            "stripe_live_key",
            ["service_{v}", "STRIPE_{v}", "billing_{v} is the live key"],
            ["sk_live_" + alnum(24), "rk_live_" + alnum(24), "sk_live_" + alnum(99)],
        )
        + _cases("stripe_test_key", ["sandbox_{v}"], ["sk_test_" + alnum(24)])
        + _cases(
            "anthropic_key",
            ["claude_{v}", "ANTHROPIC_{v}"],
            ["sk-ant-api03-" + alnum(93) + "-" + alnum(6) + "AA", "sk-ant-" + alnum(40)],
        )
        + _cases(
            "openai_key",
            ["openai_{v}", "key_{v} for the batch job"],
            ["sk-proj-" + alnum(48), "sk-" + alnum(48)],
        )
        + _cases("google_api_key", ["maps_{v}"], ["AIza" + alnum(35)])
    )


def _signature_cases() -> list[Case]:
    """Shared access signatures of other lengths than HMAC-SHA256's padded 44
    characters: unpadded, URL-safe, SHA-1's, SHA-512's, in a Service Bus token."""

    def sig(size: int, *, urlsafe: bool = False, pad: bool = True, quote: bool = True) -> str:
        encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
        value = encode(_later.randbytes(size)).decode()
        value = value if pad else value.rstrip("=")
        return urllib.parse.quote(value, safe="") if quote else value

    return _cases(
        "signed_url_signature",
        [
            "https://acme.blob.core.windows.net/c/a.zip?sv=2022-11-02&sp=r&sig={v}&se=2026-01-01",
            "SAS: ?sv=2021-08-06&ss=b&sp=rl&sig={v}",
            "https://acme.queue.core.windows.net/jobs?sig={v}&se=2026-02-01&sp=p",
            "https://cdn.acme.test/v/intro.mp4?exp=1760000000&sig={v}",
            "Endpoint=sb://acme.servicebus.windows.net/;SharedAccessSignature="
            "SharedAccessSignature sr=sb%3A%2F%2Facme.servicebus.windows.net&sig={v}"
            "&se=1760000000&skn=send",
            "Authorization: SharedAccessSignature sig={v}&se=1760000000&skn=device&sr=acme.azure-"
            "devices.net",
        ],
        [
            sig(32, pad=False),
            sig(32, urlsafe=True, pad=False, quote=False),
            sig(20),
            sig(64),
            sig(32),
            sig(32, quote=False),
        ],
    )


def _twilio_auth_token_cases() -> list[Case]:
    """Twilio's auth token, 32 hex digits with no prefix, after its name with
    no ":" or "is" between them."""
    tokens = ["".join(_later.choice("0123456789abcdef") for _ in range(32)) for _ in range(5)]
    return _cases(
        "twilio_auth_token",
        [
            "Twilio auth token {v} for account AC1234567890abcdef1234567890abcdef",
            "TWILIO_AUTH_TOKEN {v}",
            "staging SMS uses SID AC0f1e2d3c4b5a69788796a5b4c3d2e1f0 and auth token {v}",
            "SMS: auth_token {v}, from +15005550006",
            "rotate the Twilio Auth Token {v} after the demo",
        ],
        tokens,
    )


def _test_card_code_cases() -> list[Case]:
    """The security code given with a Stripe test card: the code goes, the
    published number stays."""
    return _cases(
        "card_security_code",
        [
            "4242 4242 4242 4242 CVC {v}",
            "Stripe test card 5555 5555 5555 4444, exp 12/34, cvc {v}",
            "sandbox: pay with 4242424242424242 exp 12/34 CVV {v}",
            "Amex test card 3782 822463 10005 with CVC {v} in Stripe",
            "test visa 4000 0566 5566 5556, card security code: {v}",
        ],
        ["123", "318", "4821", "7391", "552"],
    )


def _oauth_token_cases() -> list[Case]:
    """An OAuth token of 32 to 64 hex digits, named before it with or without
    ":" or "is"."""
    tokens = [
        "".join(_later.choice("0123456789abcdef") for _ in range(n)) for n in (32, 40, 48, 64, 32)
    ]
    return _cases(
        "oauth_token",
        [
            "oauth token {v}",
            "OAuth access token {v} for the CRM sandbox",
            "here's the refresh token {v}, it expires in a day",
            "got a new access token ({v}) from the consent screen",
            "OAUTH_TOKEN {v}",
        ],
        tokens,
    )


CASES: list[Case] = _secret_cases()
SECRETS: list[tuple[str, str]] = [(c.text, c.pattern) for c in CASES]


def _uuid() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


def _hex(n: int) -> str:
    return _draw("0123456789abcdef", n)


def _png_data_uri() -> str:
    payload = b"\x89PNG\r\n\x1a\n" + bytes(_rng.getrandbits(8) for _ in range(90))
    return "data:image/png;base64," + base64.b64encode(payload).decode()


def _benign() -> list[str]:
    written = [
        # Talk about credentials, not credentials.
        "User prefers a password manager",
        "Reset your password via the settings page",
        "The password field should be masked",
        "Use 1Password for secrets",
        "Password: must be at least 12 characters long.",
        "Password: Use a passphrase of four or more words",
        "Never commit your API key to git; keep it in the OS keyring.",
        "Store the token in the keyring, not in config.toml.",
        "Rotate secrets every 90 days.",
        "The Bearer token goes in the Authorization header.",
        "Use a Bearer token for the API and Basic Authentication for the legacy admin.",
        "Tokens expire after 24 hours.",
        "The secret: keep functions small.",
        "token: the smallest unit the model reads",
        "Prefers OAuth over API keys where the provider supports it.",
        "The PIN pad is on the left of the door.",
        "My password is stored in the keychain.",
        "The API key is required for the paid tier.",
        "Ask before changing the password policy.",
        "passwords are hashed with argon2id",
        # A Twilio account SID names the account; the auth token's name without a token.
        "Twilio account AC1234567890abcdef1234567890abcdef sends the reminders.",
        "Call twilio.rest.Client(account_sid, auth_token) to send the SMS.",
        "auth token 12345678901234567890123456789012 is the sample in the docs' table",
        "The oauth token refresh runs every 3600 s.",
        # Code that names credentials without holding one.
        'password = os.environ["DB_PASSWORD"]',
        "api_key: str = Field(..., description='Provider key')",
        "token = get_token()",
        'headers = {"Authorization": f"Bearer {token}"}',
        "password=None",
        "secret_key = settings.SECRET_KEY",
        "PASSWORD=${DB_PASSWORD}",
        'password: "{{ vault_db_password }}"',
        "client_secret: <your-client-secret>",
        "API_KEY=your_api_key_here",
        "token=YOUR_TOKEN",
        "if password == confirm:",
        "def check_password(password: str) -> bool:",
        "password_hash = bcrypt.hashpw(pw, salt)",
        # An auth method or a setting, not a credential.
        "auth: required",
        "export AUTH=oauth2",
        "auth: OAuth2Bearer",
        "AUTH_METHOD=ldap",
        "credentials: none",
        "credentials=default",
        "CREDENTIALS_FILE=~/.aws/credentials",
        '{"auth": "dXNlcg==", "type": "basic"}',
        "The npm _auth line goes in .npmrc, never in the repo.",
        # Flags and links that carry no credential.
        "curl -u $USER:$TOKEN https://api.acme.test",
        "curl -u user:password https://example.com (put yours in)",
        "docker run -u 1000:1000 alpine id",
        "git push -u origin main",
        "https://acme.blob.core.windows.net/public/logo.png?sv=2022-11-02&sp=r",
        "https://login.acme.test/callback?code=abc&state=xyz&sig=ok",
        "https://acme.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig=YOUR_SAS_SIGNATURE_HERE",
        "https://example.test/share?sig=signature_placeholder_value&id=7",
        "Append &sig=<signature> to the URL you were given.",
        "const token = req.headers.authorization;",
        "export OPENAI_API_KEY=sk-...",
        "password: ********",
        "max_tokens: 4096",
        "token_count=12345",
        "secret = secrets.token_urlsafe(32)",
        "api_key=os.getenv('API_KEY')",
        "self.password = password",
        "--password-file /run/secrets/db",
        "mysql --password",
        'ANTHROPIC_API_KEY="$ANTHROPIC_API_KEY"',
        "PWD=/home/alice/src/ambry OLDPWD=/var/log",
        "by-pass: enabled",
        # Shell commands and variables that hold no credential: a prompt, a flag
        # of another tool, a value computed when the command runs.
        "Reset the PGPASSWORD variable after the migration",
        "PGPASSWORD is read by psql",
        "mysql -u root -p db",
        "mysql -h db -P 3306 -p app",
        'mysql -u root -p"$MYSQL_PWD" app',
        "mysql -e 'select 1' && tar -pczf build.tgz build",
        "`git log -p`",
        "pip install -p",
        "mkdir -p build",
        "sshpass -f ~/.config/nas.pw ssh admin@nas",
        'redis-cli -a "$REDIS_PASSWORD" ping',
        'docker login -u bob -p "$REGISTRY_PASSWORD" registry.example.com',
        "docker login -u bob -p $(pass show registry) registry.example.com",
        "docker run -p 8080:80 nginx",
        "podman login -p --help",
        "mongosh -u admin -p --authenticationDatabase admin",
        "set -e PGPASSWORD",
        "set DB_PASSWORD to whatever the vault says",
        "set PGPASSWORD to $(pass show db/prod)",
        "DB_PASSWORD=$(pass show db)",
        'DB_PASSWORD="$(pass show db)"',
        "DB_PASSWORD=`pass show db`",
        "password=%(db_pass)s",
        # A secret's value that GitHub's CLI reads from a file, stdin or the shell.
        "gh secret set DEPLOY_KEY --body-file deploy_key.pem",
        "gh secret set DEPLOY_KEY < deploy_key.pem",
        'gh secret set NPM_TOKEN --body "$NPM_TOKEN"',
        'gh secret set SSH_KEY --body "$(cat ~/.ssh/id_ed25519)"',
        "gh variable set REGION --body eu-west-1",
        "gh secret list --repo acme/web",
        "%admin ALL=(ALL) NOPASSWD:SETENV: /usr/bin/apt",
        "BYPASS=enabled",
        "isPassword: boolean;",
        "nextToken: string",
        '<assemblyIdentity name="Microsoft.VC90.CRT" publicKeyToken="1fc8b3b9a1e18e3b"/>',
        "export SECRET_KEY_BASE=$(bin/rails secret)",
        # Talk about two-factor secrets and where codes are kept.
        "TOTP uses a shared secret",
        "Scan the otpauth://totp/ QR code with the authenticator app.",
        "store recovery codes in the password manager",
        "the seed phrase is written on paper in the safe",
        "the door code is on the fridge note",
        "the code for the garage door opener is in the manual",
        "code for the front door lock firmware update",
        "Door code reviewers: Alice and Bob",
        "the code to the front door changed last week",
        "2FA: enabled on GitHub",
        "2FA backup key is in the safe",
        "2FA: INTERNATIONALIZATION",
        "ssh as root, password authentication disabled",
        "password login is off",
        "backup codes: one-time, two-step",
        "my 12 words are in the safe, written on steel",
        # Names that end in "pass" or hold "password" without naming a password.
        "PGPASSFILE=~/.pgpass",
        "passthrough=true",
        "compass=north",
        "bypass=1",
        "dbpass=$DB_PASS",
        "DBPASS=${DB_PASS}",
        "surpass=everyone",
        "overpass=api",
        "nopassword=hunter22",
        "showpassword=false",
        "setx COMPASS north-west-2",
        "use a passphrase for the SSH key",
        # The password manager, and where an entry is kept in it.
        "1Password: Vault/Work",
        "Stored in 1Password: Private/Bank Logins",
        "1password: Shared/Infra",
        # Look-alikes of vendor prefixes.
        "hf_hub_download fetches files",
        "TAVILY_API_KEY=tvly-YOUR_API_KEY",
        "OpenRouter keys start with sk-or-v1- and Together keys with tgp_v1_.",
        "The calendar cell has class fc-daygrid-day-frame.",
        "See task-sk-1234567890abcdefghijklmnopqrstuvwxyzAB for the subtask.",
        "We switched from sk-learn's old API to the new estimator interface.",
        "OpenAI keys start with sk- and Anthropic keys with sk-ant-.",
        "LANGFUSE_PUBLIC_KEY=pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "api_key=pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "stripe_api_key: pk_test_51H8abcdEFGHijklMNOPqrst",
        "AKIA is the prefix of long-term AWS access key ids.",
        "GitHub classic tokens look like ghp_ followed by 36 characters.",
        "Slack bot tokens begin with xoxb-.",
        "A JWT header starts with eyJ because it is base64 of '{\"'.",
        "Publishable key: pk_live_51H8abcdEFGHijklMNOPqrst (safe to ship to browsers).",
        "The Maps JS loader needs an AIza key in the query string.",
        # Addresses, versions and numbers.
        "https://docs.python.org/3/library/re.html#re.IGNORECASE",
        "https://github.com/acme/ambry/pull/123/files",
        "http://localhost:8080/api/v1/items?page=2&sort=desc",
        "postgres://localhost:5432/ambry",
        "ssh://git@github.com/acme/ambry.git",
        "git@github.com:acme/ambry.git",
        "https://alice@example.com/dav/calendar",
        "mailto:alice@example.com",
        "Contact bob.smith+ambry@example.org for access.",
        "Call +1 (555) 010-4477 after 9am.",
        "Build 4111 1111 1111 1112 failed; order 1234 5678 9012 3456 shipped.",
        # Stripe's test cards are documentation.
        "Stripe test card 4242 4242 4242 4242, any future expiry, any CVC",
        "In test mode, 5555 5555 5555 4444 is a Mastercard that succeeds.",
        "Phone IMEI is 490154203237518; firmware 4.1.1.1111111111111.",
        "Our social media post got 123-45-6789 impressions.",
        "The epoch was 1700000000000 ms; invoice 30000000000000 is paid.",
        "Case 123-45-6789 is closed; the SSN field is optional.",
        "Social security is a pension scheme, number 5 on the list.",
        "The AWS bill for 2024 was 4,111.11 USD across 37 accounts.",
        "ISBN 978-0-13-468599-1",
        "Upgraded to Python 3.11.7 and Node v20.11.1.",
        "Release 2.0.0-rc.1+build.5 is out.",
        "The router is at 192.168.1.1 and the NAS at 2001:db8::1.",
        "MAC 00:1A:2B:3C:4D:5E",
        "Meeting at 2024-06-11T14:30:00Z.",
        "color: #1e90ff;",
        "Base64 uses A-Za-z0-9+/ with = padding.",
        "Path: /home/alice/Projects2024/AmbryDesktop/src/core/secrets.py",
        "/usr/lib/python3.11/site-packages/hypothesis/strategies/_internal/core.py",
        "https://cdn.example.com/assets/Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90.js",
        "AbstractSingletonProxyFactoryBeanWithVersion2Support is a real class name somewhere",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
        'integrity="sha512-WFN04cbTHLDnmfLfQzbRJfUlPqp0UZbiqqRb9h2H3gkf/mV2UdaBl4rOVcsQpTxw/'
        'KRaPfsFo0wuF6Z46jzm+A=="',
        "sha256:9b2c7f4e1a0d8e6f5c3b2a190817263544536271809a0b1c2d3e4f5a6b7c8d9e",
        "-----BEGIN PUBLIC KEY-----\n"
        "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo\n"
        "4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u\n"
        "-----END PUBLIC KEY-----",
        "-----BEGIN CERTIFICATE-----\n"
        "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n"
        "RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD\n"
        "-----END CERTIFICATE-----",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGq3n8Kd2Lm5Xz7Qp9Rt4Vw6Yb8Ce1Fg3Hj5Kl7Mn9Op"
        " alice@laptop",
        "- [ ] rotate credentials\n- [x] set up 2FA",
        "The secret ingredient is cardamom.",
        "He said the password was 'swordfish' in the 1932 film Horse Feathers.",
        # Names that hold a provider's prefix after "_", in no token's format.
        "my_ghp_helper = load_helper()",
        "if use_sk_live_mode: charge(card)",
        "settings.use_sk_live_mode_for_all_the_payments_now = False",
        "is_sk_live_configured_for_tenant_acmecorp = check()",
        "from tools import run_ghp_sync_against_the_whole_organisation_repos",
        "STRIPE_SK_TEST_MODE_ENABLED_FOR_EVERY_SANDBOX_ACCOUNT=1",
        "def fetch_github_pat_scopes(session): ...",
        "from sklearn import pipeline_sk-learn-classifier-2024-version-for-the-reports",
        "run_sk-ant-helper-script-for-all-the-evaluation-datasets",
        "use_AIza_prefix_check_for_every_google_maps_key_we_load",
    ]
    generated: list[str] = []
    for _ in range(8):
        generated.append(
            _rng.choice(
                [
                    "Entry {u} was superseded by a newer fact.",
                    "request_id={u}",
                    "Session {u} ended at 17:02.",
                    "uuid: {u}",
                ]
            ).format(u=_uuid())
        )
    for template in [
        "Fixed in commit {h}.",
        "git revert {h}",
        "The regression started at revision {h}.",
        "Cherry-picked {h} onto release/2.0 (commit message: fix fts quoting).",
        "HEAD is now at {h7} Merge pull request #42",
        "See https://github.com/acme/ambry/commit/{h}",
        "sha1: {h}",
        "git bisect marked {h} as the first bad commit",
    ]:
        h = _hex(40)
        generated.append(template.format(h=h, h7=h[:7]))
    for name in ["ambry-0.1.0.tar.gz", "Ambry-0.1.0.dmg", "ambry_0.1.0_amd64.deb", "model.bin"]:
        generated.append(f"sha256sum: {_hex(64)}  {name}")
    generated.append(f"Checksum (SHA-256): {_hex(64).upper()}")
    generated.append(f"md5 {_hex(32)} for the old archive")
    for alt in ["diagram", "screenshot", "logo", "chart", "avatar"]:
        generated.append(f"Here is the {alt}: ![{alt}]({_png_data_uri()})")
    generated.append(f'<img alt="icon" src="{_png_data_uri()}">')
    return written + generated


BENIGN: list[str] = _benign()


def _recalled(case: Case) -> bool:
    result = redact(case.text)
    return case.pattern in result.redacted and not any(v in result.text for v in case.values)


def corpus_scores() -> dict[str, float | int]:
    """Score :func:`core.policy.secrets.redact` on this corpus.

    Returns:
        Counts, recall over :data:`SECRETS` (value gone and pattern reported), the
        false-positive rate over :data:`BENIGN` (text changed at all) and the share
        of benign texts that raised a "possible" finding (routed to review).
    """
    benign = [redact(t) for t in BENIGN]
    return {
        "secrets": len(CASES),
        "benign": len(BENIGN),
        "recall": sum(_recalled(c) for c in CASES) / len(CASES),
        "false_positive_rate": sum(r.text != t for r, t in zip(benign, BENIGN, strict=True))
        / len(BENIGN),
        "possible_on_benign": sum(bool(r.possible) for r in benign) / len(BENIGN),
    }
