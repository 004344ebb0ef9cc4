"""Editing an MCP server's table in a TOML config (Codex) as text, line by line.

The standard library reads TOML but does not write it, so Ambry's keys are set
in the file's own lines and every other line stays as the person wrote it
(comments, their own keys, sub-tables). Whether an edit came out as intended
is for the caller to check by parsing the result (:func:`core.cli.setup.merged_toml`).
"""

from __future__ import annotations

import json
import re
from typing import Any


def toml_key(name: str) -> str:
    """``name`` as a TOML key: bare when TOML allows it, else quoted."""
    # A JSON string is a valid TOML basic string (same escapes), so dumps quotes safely.
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name, ensure_ascii=False)


def _lines(entry: dict[str, Any]) -> list[str]:
    return [f"{k} = {json.dumps(v, ensure_ascii=False)}\n" for k, v in entry.items()]


def toml_table(name: str, entry: dict[str, Any]) -> str:
    return f"[mcp_servers.{toml_key(name)}]\n" + "".join(_lines(entry))


def _statement(lines: list[str], start: int) -> tuple[int, str] | None:
    """Where the key/value statement on ``lines[start]`` ends (it may span lines) and
    the first part of its key; None if it does not parse."""
    import tomllib

    # A statement cut short (an array or a string left open) does not parse alone.
    for end in range(start + 1, len(lines) + 1):
        try:
            parsed = tomllib.loads("".join(lines[start:end]))
        except tomllib.TOMLDecodeError:
            continue
        return end, next(iter(parsed), "")
    return None


def _ambry_statements(lines: list[str], body: int, entry: dict[str, Any]) -> list[range]:
    """The lines of each statement that sets a key of ``entry`` (bare, quoted or dotted)
    in the table whose body starts at ``lines[body]``."""
    found: list[range] = []
    at = body
    while at < len(lines) and not lines[at].lstrip().startswith("["):
        if not lines[at].strip() or lines[at].lstrip().startswith("#"):
            at += 1
            continue
        statement = _statement(lines, at)
        if statement is None:
            break  # not in a file that parsed; the check of the result would refuse it
        end, key = statement
        if key in entry:
            found.append(range(at, end))
        at = end
    return found


def with_entry(text: str, name: str, entry: dict[str, Any]) -> str:
    """``text`` with the keys of ``entry`` set in its ``[mcp_servers.NAME]`` table.

    Every other line stays as written: the person's own keys, comments and
    sub-tables (``[mcp_servers.NAME.env]``) included. Whether the result is the
    intended one is for the caller to check.
    """
    key = "|".join(re.escape(k) for k in (name, json.dumps(name, ensure_ascii=False), f"'{name}'"))
    header = re.compile(rf"^\s*\[\s*mcp_servers\s*\.\s*(?:{key})\s*(\.[^\]]*)?\]\s*(#.*)?$")
    lines = text.splitlines(keepends=True)
    tables = [(n, m.group(1)) for n, line in enumerate(lines) if (m := header.match(line.rstrip()))]
    main = next((n for n, sub in tables if sub is None), None)
    if main is None and not tables:
        body = text.rstrip("\n")
        return (body + "\n\n" if body else "") + toml_table(name, entry)
    gone: set[int] = set()
    if main is None:
        # Only sub-tables such as [mcp_servers.NAME.env]: ours goes before the first.
        at, ours = tables[0][0], [toml_table(name, entry), "\n"]
    else:
        # Ambry's keys are set where the first of them was; the rest of the table stays.
        ambry = _ambry_statements(lines, main + 1, entry)
        at = ambry[0].start if ambry else main + 1
        gone = {n for statement in ambry for n in statement}
        ours = _lines(entry)
    out: list[str] = []
    for n, line in enumerate([*lines, ""]):
        if n == at:
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
            out += ours
        if n not in gone:
            out.append(line)
    return "".join(out)
