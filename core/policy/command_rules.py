"""Credentials on a command line: a password passed to a client as an argument,
and a shell variable named for a credential set by a command.

``mysql -pS3cret``, ``sshpass -p toor``, ``redis-cli -a S3cret`` and ``docker
login -p S3cret`` put the password in the command, and ``gh secret set NAME
--body …`` a secret's value;
``setx PGPASSWORD s3cr3t``, fish's ``set -x OPENAI_API_KEY …`` and "set
DJANGO_SECRET_KEY to '…'" set a variable whose name says what it holds. These
rules report the value only, so the command still reads. ``NAME=value`` itself
is the contextual rules' work (:mod:`core.policy.assignment_rules`).
"""

from __future__ import annotations

import re

from core.policy.assignment_rules import PASS_OWNERS
from core.policy.rule_types import Extract, Rule, Span, Tier
from core.policy.value_judgement import judged_group, password_like, token_like

# A value: quoted, or a bare word that starts neither like another flag nor like
# a command's output ("$(pass show db)", a backquote).
_VALUE = r"(?:\"(?P<dq>[^\"\r\n]+)\"|'(?P<sq>[^'\r\n]+)'|(?P<v>(?!\$\()[^\s\"'`-][^\s\"']*))"
# The rest of one command: not past a line, a pipe, "&&" or ";".
_SAME_COMMAND = r"[^\n;|&`]{0,300}?(?<=[ \t])"


def _client(tools: str, flag: str) -> re.Pattern[str]:
    """``flag`` and its value anywhere in a command that starts with one of ``tools``."""
    return re.compile(rf"(?<![\w./-])(?:{tools})(?![\w-]){_SAME_COMMAND}{flag}{_VALUE}")


# Names that say the variable holds a credential. A name with "PASS" in it holds
# a password; the rest hold a token or a key.
_PASSWORD_NAME = re.compile(
    rf"PASSWORD|PASSWD|PASSPHRASE|PWD|_PASS\Z|\A(?:{'|'.join(PASS_OWNERS).upper()})PASS\Z"
)
_CREDENTIAL_NAME = re.compile(r"SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?\Z")
# An environment variable's name: upper case, or with an underscore ("api_key").
_VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9_]*|[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+")
_PROSE_NEXT = re.compile(r"[ \t]+[A-Za-z]")


def _set_value(value: str) -> bool:
    """Whether a value given to ``gh secret set`` is written on the line, not
    filled in by the shell ("$(cat key.pem)", "${TOKEN}", "$TOKEN")."""
    return not value.startswith(("$(", "${", "`")) and password_like(value)


def _login_password(m: re.Match[str]) -> Span | None:
    """A registry login's ``-p`` value, unless the shell fills it in or it is a word
    of a sentence ("run docker login -p with the token")."""
    bare = m.group("v")
    if bare is not None and bare.isalpha() and _PROSE_NEXT.match(m.string, m.end("v")):
        return None
    inner: Extract = judged_group("v", _set_value)
    return inner(m)


def _variable(m: re.Match[str]) -> Span | None:
    name = m.group("name")
    if not _VARIABLE_NAME.fullmatch(name):
        return None  # "set password to …" is said in words: a credential statement
    upper = name.upper()
    if _PASSWORD_NAME.search(upper):
        judge = password_like
    elif _CREDENTIAL_NAME.search(upper):
        judge = token_like
    else:
        return None
    bare = m.group("v")
    if bare is not None and bare.isalpha() and _PROSE_NEXT.match(m.string, m.end("v")):
        return None  # "set DB_PASSWORD to whatever the vault says"
    inner: Extract = judged_group("v", judge)
    return inner(m)


_P = Tier.PROBABLE
RULES: tuple[Rule, ...] = (
    Rule(
        "cli_credential_flag",
        _P,
        # The MySQL and MariaDB clients take the password glued to -p ("-pS3cret");
        # a bare "-p" asks for it, and "-P" is the port.
        _client(
            r"mysql(?:dump|admin|import|check|show|sh|pump|binlog)?"
            r"|mariadb(?:-dump|-admin|-import|-check|-show)?",
            "-p",
        ),
        ("mysql", "mariadb"),
        needs="-",
        extract=judged_group("v", password_like),
    ),
    Rule(
        "cli_credential_flag",
        _P,
        _client("sshpass", r"-p[ \t]*"),
        ("sshpass",),
        needs="-",
        extract=judged_group("v", password_like),
    ),
    Rule(
        "cli_credential_flag",
        _P,
        _client("redis-cli", r"(?:-a|--pass)[ \t]+"),
        ("redis-cli",),
        needs="-",
        extract=judged_group("v", password_like),
    ),
    Rule(
        "cli_credential_flag",
        _P,
        _client(r"mongo(?:sh|dump|restore|import|export|stat|top)?", r"-p[ \t]+"),
        ("mongo",),
        needs="-",
        extract=judged_group("v", password_like),
    ),
    Rule(
        "cli_credential_flag",
        _P,
        # A registry login: "docker login -u bob -p S3cret registry.example.com", and
        # podman's, nerdctl's, buildah's, skopeo's and "helm registry login" alike.
        # "--password S3cret" is every client's long flag (core.policy.structural_rules);
        # "docker run -p 8080:80" is a port, and no login.
        re.compile(
            r"(?<![\w./-])(?:docker|podman|nerdctl|buildah|skopeo|helm[ \t]+registry)"
            r"[ \t]+login(?![\w-])" + _SAME_COMMAND + r"-p(?:[ \t]+|=)" + _VALUE
        ),
        ("docker", "podman", "nerdctl", "buildah", "skopeo", "helm"),
        needs="-",
        extract=_login_password,
    ),
    Rule(
        "cli_credential_flag",
        _P,
        # GitHub's CLI stores the value of "gh secret set NAME --body value" (or
        # "-b value", "--body=value") as a repository's secret; "--body-file" and
        # stdin keep it off the line.
        re.compile(
            r"(?<![\w./-])gh[ \t]+secret[ \t]+set(?![\w-])"
            + _SAME_COMMAND
            + r"(?:--body(?:[ \t]+|=)|-b[ \t]*)"
            + _VALUE
        ),
        ("gh",),
        needs="-",
        extract=judged_group("v", _set_value),
    ),
    Rule(
        "env_credential",
        _P,
        # cmd's setx, csh's setenv, fish's "set -x NAME value", and in words,
        # "set NAME to value".
        re.compile(
            r"(?<![\w$-])(?:set(?:[ \t]+--?[A-Za-z]+)*|setx|setenv)[ \t]+(?:the[ \t]+)?"
            r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:[ \t]+to)?[ \t]+" + _VALUE,
            re.IGNORECASE,
        ),
        ("set",),
        caseless=True,
        extract=_variable,
    ),
)
