"""A second corpus for the secret detector: one or more credentials of each of
many providers, in the places people paste them, and ordinary text that only
resembles them.

Every value is drawn from a fixed seed in the provider's published shape
(prefix, alphabet, length); none is a real credential. Positives are scored
by :func:`detected` (the value is redacted, or the text is refused as a
credential statement) and negatives by whether anything fires at all.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from core.policy.credentials import credential_statement
from core.policy.secrets import redact

_rng = random.Random(0x5EC2E7)

AN = string.ascii_letters + string.digits
URL = AN + "-_"
HEX = "0123456789abcdef"
UD = string.ascii_uppercase + string.digits
LD = string.ascii_lowercase + string.digits
B64 = AN + "+/"
BECH = "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper()


def d(alphabet: str, n: int) -> str:
    """``n`` characters of ``alphabet``, mixing cases and digits where it has them."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        kinds = sum(any(f(c) for c in s) for f in (str.islower, str.isupper, str.isdigit))
        if kinds >= min(
            2, sum(any(f(c) for c in alphabet) for f in (str.islower, str.isupper, str.isdigit))
        ):
            return s


def uid() -> str:
    return str(uuid.UUID(int=_rng.getrandbits(128), version=4))


# Where a credential turns up: shell, dotenv, JSON, YAML, code, prose, chat.
CONTEXTS = (
    "export API_TOKEN={v}",
    "{v}",
    'config = {{"token": "{v}"}}',
    "  token: {v}",
    "Here it is: {v} (rotate it after the demo)",
    "curl -H 'Authorization: {v}' https://api.internal.test/v1/me",
    "I pasted {v} into the CI settings yesterday.",
    "client = Client('{v}')",
    "# old credential, do not use: {v}",
    "SERVICE_CREDENTIAL='{v}'",
)

#: (provider, value makers). Each maker returns a fresh, format-correct value.
PROVIDERS: tuple[tuple[str, tuple[Callable[[], str], ...]], ...] = (
    (
        "GitLab",
        (lambda: "glpat-" + d(URL, 20), lambda: "gldt-" + d(URL, 20), lambda: "glrt-" + d(URL, 20)),
    ),
    ("Bitbucket", (lambda: "ATBB" + d(AN, 32),)),
    ("Atlassian", (lambda: "ATATT3" + d(URL, 180) + "=" + d(HEX.upper(), 8),)),
    ("Sourcegraph", (lambda: "sgp_" + d(HEX, 16) + "_" + d(HEX, 40),)),
    ("Gitea", (lambda: "gta_" + d(AN, 40),)),
    ("npm", (lambda: "npm_" + d(AN, 36),)),
    ("PyPI", (lambda: "pypi-AgEIcHlwaS5vcmc" + d(URL, 70),)),
    ("RubyGems", (lambda: "rubygems_" + d(HEX, 48),)),
    ("NuGet", (lambda: "oy2" + d(LD, 43),)),
    ("Docker Hub", (lambda: "dckr_pat_" + d(URL, 27),)),
    ("Clojars", (lambda: "CLOJARS_" + d(LD, 60),)),
    ("JFrog", (lambda: "AKCp" + d(AN, 69), lambda: "cmVmdGtuOjAxOj" + d(B64, 50))),
    ("crates.io", (lambda: "cio" + d(AN, 32),)),
    ("Hex", (lambda: "hexpm_" + d(AN, 32),)),
    ("Terraform Cloud", (lambda: d(AN, 14) + ".atlasv1." + d(URL, 67),)),
    ("HashiCorp Vault", (lambda: "hvs." + d(URL, 90), lambda: "hvb." + d(URL, 120))),
    ("Doppler", (lambda: "dp.pt." + d(AN, 43), lambda: "dp.st.prd." + d(AN, 43))),
    ("Pulumi", (lambda: "pul-" + d(HEX, 40),)),
    ("Buildkite", (lambda: "bkua_" + d(HEX, 40),)),
    ("CircleCI", (lambda: "CCIPAT_" + d(AN, 22) + "_" + d(HEX, 40),)),
    ("Octopus Deploy", (lambda: "API-" + d(UD, 26),)),
    ("Harness", (lambda: "pat." + d(URL, 22) + "." + d(HEX, 24) + "." + d(AN, 20),)),
    ("SonarQube", (lambda: "squ_" + d(HEX, 40), lambda: "sqp_" + d(HEX, 40))),
    ("Infracost", (lambda: "ico-" + d(AN, 32),)),
    ("Prefect", (lambda: "pnu_" + d(AN, 36),)),
    ("ReadMe", (lambda: "rdme_" + d(LD, 70),)),
    ("Postman", (lambda: "PMAK-" + d(HEX, 24) + "-" + d(HEX, 34),)),
    ("Deno Deploy", (lambda: "ddp_" + d(AN, 36),)),
    ("Netlify", (lambda: "nfp_" + d(AN, 36),)),
    ("Render", (lambda: "rnd_" + d(AN, 32),)),
    ("Fly.io", (lambda: "fo1_" + d(URL, 43),)),
    ("Heroku", (lambda: "HRKU-" + d(URL, 60),)),
    ("Supabase", (lambda: "sbp_" + d(HEX, 40),)),
    ("PlanetScale", (lambda: "pscale_tkn_" + d(URL, 43), lambda: "pscale_pw_" + d(URL, 43))),
    ("Databricks", (lambda: "dapi" + d(HEX, 32),)),
    ("Tailscale", (lambda: "tskey-auth-" + d(AN, 12) + "-" + d(AN, 32),)),
    ("1Password", (lambda: "ops_eyJ" + d(URL, 300),)),
    ("AWS", (lambda: "AKIA" + d(UD, 16), lambda: "ABIA" + d(UD, 16))),
    (
        "Azure",
        (
            lambda: d(AN, 3) + "8Q~" + d(AN + "_~.-", 34),
            lambda: (
                "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
                + d(B64, 86)
                + "==;EndpointSuffix=core.windows.net"
            ),
        ),
    ),
    (
        "Google Cloud",
        (
            lambda: "AIza" + d(URL, 35),
            lambda: "GOCSPX-" + d(URL, 28),
            lambda: "ya29." + d(URL, 120),
            lambda: "1//0" + d(URL, 100),
        ),
    ),
    ("Firebase", (lambda: "AAAA" + d(URL, 7) + ":APA91b" + d(URL, 134),)),
    ("DigitalOcean", (lambda: "dop_v1_" + d(HEX, 64),)),
    ("Alibaba Cloud", (lambda: "LTAI" + d(AN, 20),)),
    ("Tencent Cloud", (lambda: "AKID" + d(AN, 32),)),
    ("Scaleway", (lambda: "SCW" + d(UD, 17),)),
    ("Yandex Cloud", (lambda: "AQVN" + d(URL, 36),)),
    ("Cloudflare", (lambda: "v1.0-" + d(HEX, 24) + "-" + d(HEX, 146),)),
    ("age", (lambda: "AGE-SECRET-KEY-1" + d(BECH, 58),)),
    ("Sentry", (lambda: "sntryu_" + d(HEX, 64), lambda: "sntrys_eyJ" + d(B64, 120))),
    (
        "Grafana",
        (lambda: "glc_" + d(B64, 80) + "==", lambda: "glsa_" + d(AN, 32) + "_" + d(HEX, 8)),
    ),
    ("New Relic", (lambda: "NRAK-" + d(UD, 27), lambda: "NRJS-" + d(HEX, 19))),
    ("Dynatrace", (lambda: "dt0c01." + d(UD, 24) + "." + d(UD, 64),)),
    ("LangSmith", (lambda: "lsv2_pt_" + d(HEX, 32) + "_" + d(HEX, 10),)),
    ("Hugging Face", (lambda: "hf_" + d(string.ascii_letters, 34), lambda: "hf_" + d(AN, 34))),
    ("Replicate", (lambda: "r8_" + d(AN, 37),)),
    ("Groq", (lambda: "gsk_" + d(AN, 52),)),
    ("Perplexity", (lambda: "pplx-" + d(AN, 48),)),
    ("xAI", (lambda: "xai-" + d(AN, 80),)),
    ("Pinecone", (lambda: "pcsk_" + d(AN, 5) + "_" + d(AN, 60),)),
    ("Fireworks", (lambda: "fw_" + d(AN, 24),)),
    ("Cerebras", (lambda: "csk-" + d(LD, 48),)),
    ("Anyscale", (lambda: "esecret_" + d(AN, 26),)),
    ("OpenAI", (lambda: "sk-proj-" + d(URL, 100),)),
    ("OpenRouter", (lambda: "sk-or-v1-" + d(HEX, 64),)),
    ("Anthropic", (lambda: "sk-ant-api03-" + d(URL, 93) + "AA",)),
    ("GitHub", (lambda: "ghp_" + d(AN, 36), lambda: "github_pat_" + d(AN, 22) + "_" + d(AN, 59))),
    (
        "Stripe",
        (
            lambda: "sk_live_" + d(AN, 99),
            lambda: "whsec_" + d(AN, 32),
            lambda: "rk_live_" + d(AN, 99),
        ),
    ),
    ("Square", (lambda: "EAAA" + d(URL, 60), lambda: "sq0csp-" + d(URL, 43))),
    ("Braintree", (lambda: "access_token$production$" + d(LD, 16) + "$" + d(HEX, 32),)),
    ("Flutterwave", (lambda: "FLWSECK-" + d(HEX, 32) + "-X",)),
    ("Shopify", (lambda: "shpat_" + d(HEX, 32), lambda: "shpss_" + d(HEX, 32))),
    ("Plaid", (lambda: "access-production-" + uid(),)),
    ("Shippo", (lambda: "shippo_live_" + d(HEX, 40),)),
    ("EasyPost", (lambda: "EZAK" + d(AN, 54),)),
    ("Duffel", (lambda: "duffel_live_" + d(URL, 43),)),
    (
        "Slack",
        (
            lambda: "xoxb-" + d("0123456789", 12) + "-" + d("0123456789", 13) + "-" + d(AN, 24),
            lambda: "xapp-1-A" + d(UD, 10) + "-" + d("0123456789", 13) + "-" + d(HEX, 64),
            lambda: (
                "https://hooks.slack.com/services/T"
                + d(UD, 10)
                + "/B"
                + d(UD, 10)
                + "/"
                + d(AN, 24)
            ),
        ),
    ),
    (
        "Discord",
        (
            lambda: _rng.choice("MNO") + d(AN, 25) + "." + d(URL, 6) + "." + d(URL, 38),
            lambda: "https://discord.com/api/webhooks/" + d("0123456789", 19) + "/" + d(URL, 68),
        ),
    ),
    ("Telegram", (lambda: d("0123456789", 10) + ":AA" + d(URL, 33),)),
    (
        "Microsoft Teams",
        (
            lambda: (
                f"https://acme.webhook.office.com/webhookb2/{uid()}@{uid()}"
                f"/IncomingWebhook/{d(HEX, 32)}/{uid()}"
            ),
        ),
    ),
    (
        "Google Chat",
        (
            lambda: (
                "https://chat.googleapis.com/v1/spaces/AAAA"
                + d(URL, 7)
                + "/messages?key=AIza"
                + d(URL, 35)
                + "&token="
                + d(URL, 43)
                + "%3D"
            ),
        ),
    ),
    (
        "Zapier",
        (
            lambda: (
                "https://hooks.zapier.com/hooks/catch/" + d("0123456789", 7) + "/" + d(LD, 7) + "/"
            ),
        ),
    ),
    ("IFTTT", (lambda: "https://maker.ifttt.com/trigger/door_open/with/key/" + d(URL, 22),)),
    ("Twilio", (lambda: "SK" + d(HEX, 32),)),
    ("SendGrid", (lambda: "SG." + d(URL, 22) + "." + d(URL, 43),)),
    ("Mailgun", (lambda: "key-" + d(AN, 32),)),
    ("Mailchimp", (lambda: d(HEX, 32) + "-us" + str(_rng.randrange(1, 22)),)),
    ("Brevo", (lambda: "xkeysib-" + d(HEX, 64) + "-" + d(AN, 16),)),
    ("Okta", (lambda: "SSWS 00" + d(URL, 40),)),
    ("Notion", (lambda: "secret_" + d(AN, 43), lambda: "ntn_" + d("0123456789", 11) + d(AN, 35))),
    ("Linear", (lambda: "lin_api_" + d(AN, 40),)),
    ("Airtable", (lambda: "pat" + d(AN, 14) + "." + d(HEX, 64),)),
    ("Asana", (lambda: "2/" + d("0123456789", 16) + "/" + d("0123456789", 16) + ":" + d(HEX, 32),)),
    ("Figma", (lambda: "figd_" + d(URL, 40),)),
    ("Contentful", (lambda: "CFPAT-" + d(URL, 43),)),
    ("Typeform", (lambda: "tfp_" + d(URL, 59),)),
    ("Frame.io", (lambda: "fio-u-" + d(URL, 64),)),
    ("HubSpot", (lambda: "pat-na1-" + uid(),)),
    ("Mapbox", (lambda: "sk.eyJ1IjoiYWNtZSIsImEiOiJ" + d(URL, 20) + "." + d(URL, 22),)),
    ("Salesforce", (lambda: "00D" + d(AN, 15) + "!" + d(AN + ".", 96),)),
    ("Dropbox", (lambda: "sl." + d(URL, 140),)),
    ("Twitter", (lambda: "AAAAAAAAAAAAAAAAAAAAA" + d(AN, 50) + "%3D" + d(AN, 50),)),
    ("Meta", (lambda: "EAAG" + d(AN, 150),)),
    ("Adafruit IO", (lambda: "aio_" + d(AN, 28),)),
    ("Langfuse", (lambda: "sk-lf-" + uid(),)),
)


@dataclass(frozen=True)
class Positive:
    provider: str
    text: str
    value: str


def _positives() -> list[Positive]:
    out: list[Positive] = []
    k = 0
    for provider, makers in PROVIDERS:
        for make in makers:
            for _ in range(2):
                value = make()
                out.append(Positive(provider, CONTEXTS[k % len(CONTEXTS)].format(v=value), value))
                k += 1
    return out


def _logins() -> list[Positive]:
    """Credentials said in prose: they have no shape, so the sentence is refused."""
    users = ("admin", "root", "pi", "deploy", "alice@acme.test", "svc-backup")
    hosts = ("the NAS", "the router", "staging db", "Grafana", "the printer", "our VPN")
    forms = (
        "Login for {h}: {u} / {p}",
        "login for {h}: {u}/{p}",
        "Creds for {h}: {u}:{p}",
        "Credentials for {h} are {u} / {p}",
        "sign-in to {h}: {u} / {p}",
        "Username/password for {h}: {u} / {p}",
        "my password for {h} is {p}",
        "The PIN for {h} is {p}",
        "the passphrase is {p}",
        "{h} password: {p}",
    )
    out = []
    for i, form in enumerate(forms):
        for j in range(3):
            pw = d("bcdfghjkmnpqrstvwz", 5) + d("23456789", 2) + _rng.choice("!#%&*") + d(AN, 3)
            text = form.format(
                h=hosts[(i + j) % len(hosts)], u=users[(i * 3 + j) % len(users)], p=pw
            )
            out.append(Positive("prose", text, pw))
    return out


def _said_other_ways() -> list[Positive]:
    """Codes, two-factor secrets and logins said in other words than the usual
    statement: refused like it."""
    said = [
        ("Door code: 48 21", "48 21"),
        ("Door code: 48-21", "48-21"),
        ("remember the door code 48 21", "48 21"),
        ("The code to the front door is 4821", "4821"),
        ("The code for the front door is 4821", "4821"),
        ("code for the garage: 4821", "4821"),
        ("2FA: JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP"),
        ("2FA backup key JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP"),
        ("2FA recovery key: JBSWY3DPEHPK3PXP", "JBSWY3DPEHPK3PXP"),
        ("ssh to 10.0.0.5 as root, password toor", "toor"),
        ("connect with ssh root@10.0.0.5 and the password toor", "toor"),
        ("recovery codes: abcd-efgh, ijkl-mnop", "abcd-efgh"),
        (
            "my 12 words are legal winner thank year wave sausage worth useful legal winner "
            "thank yellow",
            "legal winner thank year",
        ),
        # A one-time code given as such.
        ("my 2FA code is 482913", "482913"),
        ("verification code: 482 913", "482 913"),
        ("OTP 482913", "482913"),
        ("G-482913 is your Google verification code", "482913"),
        # A password of several words, said plainly after "is".
        ("my wifi password is correct horse battery staple", "correct horse battery staple"),
        ("the router password is purple monkey dishwasher 42", "purple monkey dishwasher 42"),
        ("The guest wifi password is sunny beach house 2024.", "sunny beach house 2024"),
        # ... or of two, a word and a number.
        ("my password is hunter two", "hunter two"),
        ("the wifi password is dragon 7.", "dragon 7"),
        # ... with a capital before a number in words, or two words after "is".
        ("the password is Hunter two", "Hunter two"),
        ("my password is hunter dragon", "hunter dragon"),
        # A lone word before a clause that asks to keep it quiet.
        ("the wifi password is dumpling but don't share it", "dumpling"),
        # Codes said one digit at a time, in figures or in words.
        ("the alarm code is 1 2 3 4", "1 2 3 4"),
        ("my pin is 1 9 8 4", "1 9 8 4"),
        ("garage code is 5 5 1 2", "5 5 1 2"),
        ("my atm pin is four four one two", "four four one two"),
        ("the door code is nine one one five", "nine one one five"),
        # The codes of other locks.
        ("the lockbox combination is 3-1-4-1", "3-1-4-1"),
        ("the bike lock code is 3141", "3141"),
        ("keypad code: 7 7 0 1", "7 7 0 1"),
        # A Wi-Fi key called "the key" where the text speaks of Wi-Fi.
        ("the wifi at home is BlueFox-5G and the key is orange-tractor-91", "orange-tractor-91"),
        ("the wifi key is orange-tractor-91", "orange-tractor-91"),
        ("WPA key: Lantern#Pebble-2024", "Lantern#Pebble-2024"),
        ("the network key for the guest wifi is 58213904", "58213904"),
        ("the wifi key is bluemoonlight", "bluemoonlight"),
        # A one-time code with words between the noun and "is".
        ("the 2FA code they texted me is 558213", "558213"),
        ("the verification code I got from the bank is 558 213", "558 213"),
        ("the code they texted me is 558213", "558213"),
        # A place, possessive, between the code and "is"; the keypad's * or #.
        ("the gate code at grandma's is *4590", "*4590"),
        ("the door code for the office is 4821#", "4821#"),
        ("the door code at the Smiths' is 7731", "7731"),
        # A password given later in the sentence that describes it.
        ("my password is the name of my first dog plus 1987, i.e. Rex1987", "Rex1987"),
        ("my password is my dog's name plus his birth year, so it's Rex1987.", "Rex1987"),
        ("our wifi password is the street and number, which is Baker221", "Baker221"),
        ("my password is weak, e.g. abc123", "abc123"),
        # A code given after the news that it changed.
        ("the pin changed, so it's 4471 now", "4471"),
        ("door code changed so now 8812", "8812"),
        # A card's security code.
        ("card 4111 1111 1111 1111 exp 09/27 cvv 123", "123"),
        ("the cvv is 123", "123"),
        ("CVC: 4821", "4821"),
        ("the security code on the card is 318", "318"),
        # A Stripe test card's code is redacted (the published number stays).
        ("4242 4242 4242 4242 CVC 123", "123"),
    ]
    return [Positive("prose", text, value) for text, value in said]


def _twilio_auth_tokens() -> list[Positive]:
    """Twilio's auth token: 32 hex digits with no prefix, named before it."""
    token = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    return [
        Positive("Twilio", text.format(v=token), token)
        for text in (
            "Twilio auth token {v} for account AC1234567890abcdef1234567890abcdef",
            "TWILIO_AUTH_TOKEN {v}",
            'client = Client(account_sid, authToken="{v}")',
            "auth-token {v}",
        )
    ]


def _oauth_tokens() -> list[Positive]:
    """An OAuth token of 32 to 64 hex digits, named before it in prose (fixed
    values: the corpus drawn above stays as it was)."""
    tokens = (
        "3f9a0c1b2d4e5f60718293a4b5c6d7e8",
        "a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e",
        "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
    )
    texts = (
        "oauth token {v}",
        "OAuth access token {v} for the CRM sandbox",
        "here's the refresh token {v}, it expires in a day",
    )
    return [Positive("prose", t.format(v=v), v) for t, v in zip(texts, tokens, strict=True)]


POSITIVES: list[Positive] = (
    _positives() + _logins() + _said_other_ways() + _twilio_auth_tokens() + _oauth_tokens()
)


def _negatives() -> list[str]:
    fixed = [
        "Remember that Ana prefers tea over coffee in the mornings.",
        "The NAS is in the hall cupboard; log in with the admin account from 1Password.",
        "Login for the NAS: see the shared vault, entry 'NAS admin'.",
        "Credentials for staging live in Vault under kv/staging/db.",
        "1Password: Vault/Work",
        "The deploy key is in 1Password: Shared/Infra, entry 'deploy'.",
        "The password must be at least 12 characters long.",
        "Use a password manager; never reuse a password.",
        "The login page is at /auth/login and redirects to /home.",
        "Account: ops/team-a owns the billing dashboard.",
        "from huggingface_hub import hf_hub_download",
        "const apiKey = process.env.API_KEY;",
        "api_key = settings.OPENAI_API_KEY",
        "access token: config.auth.accessToken",
        "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMvakNDQWVhZ0F3SUJB",
        "npm_config_cache=/tmp/npm-cache npm ci",
        "Run `npm publish` after bumping the version in package.json.",
        "GitLab personal access tokens start with glpat- and expire after a year.",
        "SendGrid keys look like SG.<22 characters>.<43 characters>.",
        "The button uses the class sk-button-primary-large-outline.",
        "Order SKU-2024-0183 shipped; SKU 44 is backordered.",
        "Slack webhooks live at hooks.slack.com/services/... (ask Sam for the real one).",
        "Discord bots need the MESSAGE_CONTENT intent enabled.",
        "def get_token(self) -> str:\n    return self._token",
        "token = os.environ['GITLAB_TOKEN']",
        "password = getpass.getpass('Password: ')",
        "api_key: str = Field(..., description='the key')",
        "secret_key_base is set per environment in Rails.",
        "The hf_transfer package speeds up downloads.",
        "Call twilio.rest.Client(account_sid, auth_token) to send the SMS.",
        "Email alerts go through SendGrid; templates are in the marketing repo.",
        "Version 2.14.0-rc.3 fixed the pagination bug.",
        "The meeting moved to 15:30; dial-in is in the calendar invite.",
        'Build cache key: v2-deps-{{ checksum "poetry.lock" }}',
        "Use the pat.ly shortener only for internal links.",
        "Sort keys with key=lambda k: k.lower() to ignore case.",
        "SELECT id, name FROM users WHERE created_at > now() - interval '7 days';",
        "The CSS variable --sk-primary sets the brand colour.",
        "Ports: 5432 for Postgres, 6379 for Redis, 9200 for Elasticsearch.",
        "Grafana dashboards are provisioned from grafana/dashboards/*.json.",
        "The sentry DSN is public by design; it only allows sending events.",
        "LANGFUSE_PUBLIC_KEY=pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d (browser scores only)",
        "Langfuse keys look like sk-lf-... and pk-lf-...",
        "the langfuse api key is pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "api_key=pk-lf-0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx8Qk3f1aTq9bVZ7y2mHnR5cJd0sLwE4uPoKiT6vXyB a@pc",
        "Use `docker login` with the credential helper, not a plain-text config.",
        "Project id: my-project-123456; region europe-west1.",
        "Bucket names: acme-prod-assets, acme-staging-assets.",
        "The regex ^[A-Za-z0-9_-]{1,64}$ validates group names.",
        # Where a code is kept, or what it is for, is no code.
        "the door code is on the fridge note",
        "door code 2023-2024 review",
        "gate code 2023 2024 review",
        "the code for the garage door opener is in the manual",
        "code for the front door lock firmware update",
        "Door code reviewers: Alice and Bob",
        "the code to the front door changed last week",
        "The error code for the lock is 4001 (battery low).",
        "2FA: enabled on GitHub",
        "2FA backup key is in the safe",
        "2FA: INTERNATIONALIZATION (the i18n team's account)",
        "2FA is enabled",
        "error code 404",
        "ZIP code 94105",
        "order number 482913",
        "482913 is your order code",
        "ssh as root, password authentication disabled",
        "password login is off",
        "Run the installer as root, password prompt appears twice.",
        "Backup codes: one-time, two-step; print them and keep them offline.",
        "my 12 words are in the safe, written on steel",
        # A clause about a password, not a password of several words.
        "the password is in the vault",
        "my password is the same as my email password",
        "the password is stored in 1Password",
        "password is required for login",
        "the password is too short",
        "his password is expired",
        "the passphrase is shared between staging environments",
        "the password was stolen last week",
        "Password: Bitwarden team vault",
        # Too few digits, or too many digit words, for a code.
        "the alarm code is 1 2 3",
        "the door code is one two three four five six seven eight nine",
        "the bike lock code is in the app",
        # Two words after "password is" that are a clause, not a password.
        "the password is expired now",
        "the password is accepted now",
        "the password is changing next week",
        "the password is expiring soon",
        "the password is step two",
        "the password is Windows 11",
        "the password is company name",
        "the password is case sensitive",
        "the password is factory default",
        "Passphrase: Bitwarden note",
        # A participle before "but", a possessive before more words.
        "the password is accepted but login fails",
        "the password is working but don't share the link",
        "the password is Bitwarden's job now",
        "the password is required but never checked",
        "the password is what Sam changed last week",
        # "Key" alone, or a Wi-Fi key's place, is no Wi-Fi key.
        "the key is under the mat",
        "the key is to start early",
        "the wifi key is on the router sticker",
        "the key point is orange",
        "the key is orange-tractor-91",
        "the wifi SSID is Home-5G and the key is in 1Password",
        "the wifi key is WPA2-PSK",
        "the wifi key is different",
        "the wifi key is downstairs",
        # Codes of other kinds, with words before "is".
        "the error code they showed me is 404",
        "the ZIP code they gave me is 94105",
        "the order number they texted me is 558213",
        "the order code they texted me is 558213",
        "the gate code at grandma's is on the fridge",
        "the LED pin changed, so it's 13 now",
        "the alarm code changed, so it's 4 digits now",
        # Talk about a password, and names of algorithms, after "i.e." or "so".
        "my password is long, so I wrote it down",
        "the password is hashed with PBKDF2, i.e. PBKDF2-SHA256",
        "the password is set via env, i.e. DB_PASS2",
        "my password is the usual one. so Rex1987 is next",
        "the password is weak, e.g. abc123",
        "the password is easy to guess, e.g. qwerty123",
        # What a card's security code is, or where.
        "CVV is the 3 digits on the back",
        "the cvv field was empty",
        "the cvv is 3-4 digits",
        "CSC 2024 conference",
        "Stripe test card 4242 4242 4242 4242, any future expiry, any CVC",
        # Twilio's account SID names the account; 32 digits alone are a number.
        "Twilio account SID AC1234567890abcdef1234567890abcdef; the auth token is in 1Password",
        "auth token 12345678901234567890123456789012",
        "access token 12345678901234567890123456789012",
        "access token hash 3f9a0c1b2d4e5f60718293a4b5c6d7e8 is logged, never the token",
    ]
    out = list(fixed)
    repos = ("ambry", "infra", "website", "billing", "mobile-app")
    for _ in range(60):
        out.append(f"Deployed commit {d(HEX, 40)} to staging after the review.")
        out.append(f"Artifact digest sha256:{d(HEX, 64)} matches the release notes.")
        out.append(f"Request {uid()} timed out after 30 s; retried once.")
        out.append(
            f"See https://github.com/acme/{_rng.choice(repos)}/pull/{_rng.randrange(1, 9999)}"
            f"?tab=files&diff=split#r{_rng.randrange(10**8)}"
        )
        out.append(f"git cherry-pick {d(HEX, 12)} && git push origin HEAD")
        out.append(f"The checksum of backup-{_rng.randrange(100)}.tar is {d(HEX, 32)} (md5).")
        out.append(
            f"Visit https://docs.example.test/guide/{d(string.ascii_lowercase, 8)}"
            f"?page={_rng.randrange(50)}&lang=en for details."
        )
        out.append(
            f"Ticket OPS-{_rng.randrange(10000)} covers the {d(string.ascii_lowercase, 6)} outage."
        )
    return out


NEGATIVES: list[str] = _negatives()


def detected(text: str, value: str | None = None) -> bool:
    """Whether the detector acts on ``text``: refuses it, or redacts (``value`` from) it."""
    if credential_statement(text) is not None:
        return True
    redacted = redact(text)
    if value is None:
        return redacted.text != text
    return value not in redacted.text and bool(redacted.redacted)


def scores() -> dict[str, float | int]:
    """Recall over :data:`POSITIVES`, false-positive rate over :data:`NEGATIVES`."""
    found = sum(detected(p.text, p.value) for p in POSITIVES)
    flagged = sum(detected(t) for t in NEGATIVES)
    return {
        "providers": len({p.provider for p in POSITIVES if p.provider != "prose"}),
        "positives": len(POSITIVES),
        "negatives": len(NEGATIVES),
        "recall": found / len(POSITIVES),
        "false_positive_rate": flagged / len(NEGATIVES),
    }
