"""Token formats of developer platforms: code hosts, package registries, CI and
deployment, infrastructure, observability and AI model providers.

Formats are the providers' published shapes (prefix, alphabet, length). Where
a provider documents an exact length the rule asks for it, so a longer run of
the same characters is not mistaken for a token.
"""

from __future__ import annotations

from core.policy.rule_types import Rule
from core.policy.token_formats import (
    ALNUM,
    ALNUM_U,
    BASE64,
    HEX,
    HEX_ANY,
    LOWER_DIGITS,
    UPPER_DIGITS,
    URLSAFE,
    group_span,
    prefixed,
    shaped,
)

CODE_HOSTS: tuple[Rule, ...] = (
    # GitLab: personal, deploy, runner, feed, incoming-mail, agent, OAuth app,
    # SCIM, CI build and trigger tokens all start with "gl" and a kind.
    prefixed(
        "gitlab_token",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glft-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glsoat-",
            "glcbt-",
            "glptt-",
            "glffct-",
        ),
        f"[{URLSAFE}.]{{20,}}",
    ),
    prefixed("bitbucket_app_password", "ATBB", f"[{ALNUM}]{{32}}"),
    prefixed("atlassian_api_token", ("ATATT3", "ATCTT3"), f"[{URLSAFE}=]{{100,}}"),
    prefixed("sourcegraph_token", "sgp_", f"(?:[{HEX}]{{16}}_)?[{HEX}]{{40}}"),
    prefixed("gitea_token", "gta_", f"[{ALNUM}]{{40}}"),
)

REGISTRIES: tuple[Rule, ...] = (
    prefixed("npm_token", "npm_", f"[{ALNUM}]{{32,40}}"),
    prefixed("pypi_token", "pypi-AgEIcHlwaS5vcmc", f"[{URLSAFE}]{{50,}}", check_random=False),
    prefixed("rubygems_key", "rubygems_", f"[{HEX}]{{48}}"),
    prefixed("nuget_key", "oy2", f"[{LOWER_DIGITS}]{{43}}"),
    prefixed("docker_hub_pat", "dckr_pat_", f"[{URLSAFE}]{{27}}"),
    prefixed("clojars_token", "CLOJARS_", f"[{LOWER_DIGITS}]{{60}}"),
    prefixed("jfrog_api_key", "AKCp", f"[{ALNUM}]{{69}}"),
    # An identity token is base64 of "reftkn:01:...".
    prefixed("jfrog_identity_token", "cmVmdGtuOjAxOj", f"[{BASE64}]{{40,}}={{0,2}}"),
    prefixed("cratesio_token", "cio", f"[{ALNUM}]{{32}}"),
    prefixed("hex_pm_key", "hexpm_", f"[{ALNUM_U}]{{20,}}"),
)

DELIVERY: tuple[Rule, ...] = (
    shaped(
        "terraform_cloud_token",
        rf"(?<![A-Za-z0-9])[{ALNUM}]{{14}}\.atlasv1\.[{URLSAFE}=]{{60,70}}(?![A-Za-z0-9])",
        (".atlasv1.",),
        back=14,
    ),
    prefixed("vault_token", ("hvs.", "hvb.", "hvr."), f"[{URLSAFE}]{{24,}}"),
    prefixed(
        "doppler_token",
        ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
        f"[{ALNUM}_.-]{{40,}}",
    ),
    prefixed("pulumi_token", "pul-", f"[{HEX}]{{40}}"),
    prefixed("buildkite_token", "bkua_", f"[{HEX}]{{40}}"),
    prefixed("circleci_token", "CCIPAT_", f"[{ALNUM}]{{20,}}_[{HEX}]{{40}}"),
    prefixed("octopus_api_key", "API-", f"[{UPPER_DIGITS}]{{26,32}}"),
    prefixed(
        "harness_token", ("pat.", "sat."), f"[{URLSAFE}]{{22}}\\.[{HEX}]{{24}}\\.[{ALNUM}]{{20}}"
    ),
    prefixed("sonarqube_token", ("squ_", "sqp_", "sqa_"), f"[{HEX}]{{40}}"),
    prefixed("infracost_key", "ico-", f"[{ALNUM}]{{32}}"),
    prefixed("prefect_key", "pnu_", f"[{ALNUM}]{{36}}"),
    prefixed("readme_key", "rdme_", f"[{LOWER_DIGITS}]{{70}}"),
    prefixed("postman_key", "PMAK-", f"[{HEX_ANY}]{{24}}-[{HEX_ANY}]{{34}}"),
    prefixed("deno_deploy_token", ("ddp_", "ddw_"), f"[{ALNUM}]{{36}}"),
    prefixed("netlify_token", "nfp_", f"[{ALNUM}]{{36,40}}"),
    prefixed("render_key", "rnd_", f"[{ALNUM}]{{28,}}"),
    prefixed("flyio_token", ("fo1_", "fm1r_", "fm1a_", "fm2_"), f"[{URLSAFE}+/=]{{40,}}"),
    prefixed("heroku_key", "HRKU-", f"[{URLSAFE}]{{40,}}"),
    prefixed("supabase_token", ("sbp_", "sb_secret_"), f"[{URLSAFE}]{{32,}}"),
    prefixed(
        "planetscale_token",
        ("pscale_tkn_", "pscale_pw_", "pscale_oauth_"),
        f"[{URLSAFE}.]{{32,64}}",
    ),
    prefixed("databricks_token", "dapi", f"[{HEX}]{{32}}(?:-[0-9])?"),
    prefixed(
        "tailscale_key",
        "tskey-",
        f"(?:api|auth|client|webhook|scim)-[{ALNUM}]{{6,}}-[{ALNUM}]{{16,}}",
    ),
    prefixed("onepassword_service_token", "ops_eyJ", f"[{URLSAFE}+/=]{{100,}}", check_random=False),
)

CLOUD: tuple[Rule, ...] = (
    prefixed("aws_access_key", ("A3T", "ABIA", "ACCA"), f"[{UPPER_DIGITS}]{{16,17}}"),
    shaped(
        "azure_ad_client_secret",
        rf"(?<![A-Za-z0-9_~.-])[{ALNUM}_~.]{{3}}[0-9]Q~[{ALNUM}_~.-]{{31,34}}(?![A-Za-z0-9_~.-])",
        ("Q~",),
        needs="~",
        back=4,
    ),
    shaped(
        "azure_storage_key",
        rf"(?:AccountKey|SharedAccessKey)=(?P<v>[{BASE64}]{{40,88}}={{0,2}})",
        ("AccountKey=", "SharedAccessKey="),
        needs="=",
        extract=group_span("v"),
    ),
    prefixed("google_oauth_secret", "GOCSPX-", f"[{URLSAFE}]{{28}}"),
    prefixed("google_oauth_token", "ya29.", f"[{URLSAFE}]{{30,}}"),
    prefixed("google_refresh_token", "1//0", f"[{URLSAFE}]{{40,}}", lead=r"(?<![A-Za-z0-9_/])"),
    shaped(
        "firebase_cloud_messaging_key",
        rf"(?<![A-Za-z0-9_-])AAAA[{URLSAFE}]{{7}}:APA91b[{URLSAFE}]{{120,}}",
        (":APA91b",),
        needs=":",
        back=11,
    ),
    prefixed("digitalocean_token", ("dop_v1_", "doo_v1_", "dor_v1_"), f"[{HEX}]{{64}}"),
    prefixed("alibaba_access_key", "LTAI", f"[{ALNUM}]{{20}}"),
    prefixed("tencent_secret_id", "AKID", f"[{ALNUM}]{{32}}"),
    prefixed("scaleway_key", "SCW", f"[{UPPER_DIGITS}]{{17}}"),
    prefixed("yandex_api_key", "AQVN", f"[{URLSAFE}]{{35,38}}"),
    prefixed("cloudflare_origin_ca_key", "v1.0-", f"[{HEX}]{{24}}-[{HEX}]{{146}}"),
    prefixed("age_secret_key", "AGE-SECRET-KEY-1", "[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
)

OBSERVABILITY: tuple[Rule, ...] = (
    prefixed("sentry_token", "sntryu_", f"[{HEX}]{{64}}"),
    prefixed("sentry_org_token", "sntrys_eyJ", f"[{BASE64}_=-]{{60,}}", check_random=False),
    prefixed("grafana_cloud_token", "glc_", f"[{BASE64}]{{32,400}}={{0,2}}"),
    prefixed("grafana_service_account_token", "glsa_", f"[{ALNUM}]{{32}}_[{HEX_ANY}]{{8}}"),
    prefixed("newrelic_key", ("NRAK-", "NRII-", "NRRA-"), f"[{UPPER_DIGITS}]{{27,32}}"),
    prefixed("newrelic_browser_key", "NRJS-", f"[{HEX}]{{19}}"),
    prefixed("dynatrace_token", "dt0c01.", f"[{UPPER_DIGITS}]{{24}}\\.[{UPPER_DIGITS}]{{64}}"),
    prefixed("langsmith_key", ("lsv2_pt_", "lsv2_sk_"), f"[{HEX}]{{32}}_[{HEX}]{{10}}"),
    # Langfuse's secret key is "sk-lf-" and a UUID. Its public key ("pk-lf-"), like
    # Stripe's publishable key, is meant for the browser and is not reported.
    prefixed("langfuse_secret_key", "sk-lf-", f"[{URLSAFE}]{{20,}}"),
)

AI: tuple[Rule, ...] = (
    # Hugging Face publishes no length; its tokens have 34 characters after the
    # prefix, and a few more are allowed for a longer format to come.
    prefixed("huggingface_token", ("hf_", "api_org_"), f"[{ALNUM}]{{34,40}}"),
    prefixed("replicate_token", "r8_", f"[{ALNUM}]{{37}}"),
    prefixed("groq_key", "gsk_", f"[{ALNUM}]{{52}}"),
    prefixed("perplexity_key", "pplx-", f"[{ALNUM}]{{48}}"),
    prefixed("xai_key", "xai-", f"[{ALNUM}]{{80}}"),
    prefixed("pinecone_key", "pcsk_", f"[{ALNUM_U}]{{50,}}"),
    prefixed("fireworks_key", "fw_", f"[{ALNUM}]{{24,}}"),
    prefixed("cerebras_key", "csk-", f"[{LOWER_DIGITS}]{{48}}"),
    prefixed("anyscale_key", "esecret_", f"[{ALNUM}]{{20,}}"),
    prefixed("openrouter_key", "sk-or-v1-", f"[{HEX}]{{64}}"),
    prefixed("together_key", "tgp_v1_", f"[{URLSAFE}]{{43}}", tail=r"(?![A-Za-z0-9_-])"),
    # Older Tavily keys have 32 characters after "tvly-"; newer ones start "tvly-dev-".
    prefixed("tavily_key", "tvly-", f"[{ALNUM}-]{{32,80}}"),
    prefixed("elevenlabs_key", "sk_", f"[{HEX}]{{48}}"),
    prefixed("firecrawl_key", "fc-", f"[{HEX}]{{32}}"),
)

RULES: tuple[Rule, ...] = CODE_HOSTS + REGISTRIES + DELIVERY + CLOUD + OBSERVABILITY + AI
