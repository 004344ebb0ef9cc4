"""``ambry setup CLIENT``: add Ambry's MCP server to an agent client's own config file.

Each client documents where its MCP servers live and in what shape:

- Claude Desktop: ``claude_desktop_config.json`` in the app's config folder, ``mcpServers``;
- Claude Code: ``~/.claude.json`` (user scope; in ``$CLAUDE_CONFIG_DIR`` when that is set)
  or a project's ``.mcp.json``, ``mcpServers`` with ``"type": "stdio"``;
- Cursor: ``~/.cursor/mcp.json`` or a project's ``.cursor/mcp.json``, ``mcpServers``;
- VS Code: ``mcp.json`` in the user profile or ``.vscode/mcp.json``, ``servers`` with
  ``"type": "stdio"``;
- Codex: ``$CODEX_HOME/config.toml`` (``~/.codex``) or ``.codex/config.toml``, a
  ``[mcp_servers.NAME]`` table.

The merge keeps everything else in the file, sets only the keys Ambry writes in
its entry (keys and sub-tables the person added to it stay), changes nothing when
Ambry's entry is already there and the same (so running it twice is harmless), and
copies the file to ``<file>.bak-<time>`` before any change. A file it cannot parse (JSON
with comments, say) is refused with the entry to paste by hand. ``--print``
only shows the entry and where it goes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from core.cli.context import Context, command
from core.cli.toml_edit import toml_key, toml_table, with_entry
from core.model.config import atomic_write
from core.model.errors import AmbryError


def _config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def _app_support(name: str) -> Path:
    """The per-user application folder of a desktop app, by platform."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / name
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming") / name
    return _config_home() / name


@dataclass(frozen=True)
class Client:
    label: str
    key: str  # the table of servers: "mcpServers", "servers" or "mcp_servers"
    user_file: Callable[[], Path]
    project_file: str | None  # relative to --project
    typed: bool  # whether the entry carries "type": "stdio"
    toml: bool = False


CLIENTS: dict[str, Client] = {
    "claude-desktop": Client(
        "Claude Desktop",
        "mcpServers",
        lambda: _app_support("Claude") / "claude_desktop_config.json",
        None,
        typed=False,
    ),
    "claude-code": Client(
        "Claude Code",
        "mcpServers",
        # Claude Code keeps .claude.json in CLAUDE_CONFIG_DIR when that is set.
        lambda: Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home()) / ".claude.json",
        ".mcp.json",
        typed=True,
    ),
    "cursor": Client(
        "Cursor",
        "mcpServers",
        lambda: Path.home() / ".cursor" / "mcp.json",
        ".cursor/mcp.json",
        typed=False,
    ),
    "vscode": Client(
        "VS Code",
        "servers",
        lambda: _app_support("Code") / "User" / "mcp.json",
        ".vscode/mcp.json",
        typed=True,
    ),
    "codex": Client(
        "Codex",
        "mcp_servers",
        lambda: Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "config.toml",
        ".codex/config.toml",
        typed=False,
        toml=True,
    ),
}


def ambry_command() -> list[str]:
    """How a client should start this Ambry: an absolute path, never a bare name."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    argv0 = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if argv0 is not None and argv0.name.startswith("ambry") and argv0.is_file():
        return [str(argv0.absolute())]
    found = shutil.which("ambry")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "ambry"]


def mcp_command(data_dir: str | None = None, group: str | None = None) -> list[str]:
    """The command line that starts this Ambry's MCP server, the data dir and group named."""
    extra: list[str] = []
    if data_dir:
        extra += ["--data-dir", str(Path(data_dir).expanduser().absolute())]
    if group:
        extra += ["--group", group]
    return [*ambry_command(), *extra, "mcp"]


def server_entry(client_name: str, client: Client, args: argparse.Namespace) -> dict[str, Any]:
    exe, *rest = mcp_command(getattr(args, "data_dir", None), getattr(args, "group", None))
    entry: dict[str, Any] = {"type": "stdio"} if client.typed else {}
    entry |= {"command": exe, "args": [*rest, "--client", client_name]}
    return entry


def snippet(client: Client, name: str, entry: dict[str, Any]) -> str:
    if client.toml:
        return toml_table(name, entry)
    return json.dumps({client.key: {name: entry}}, indent=2, ensure_ascii=False) + "\n"


#: A comment line, a block comment or a trailing comma: JSON with comments (JSONC).
_JSONC = re.compile(r"^\s*//|/\*|,\s*[}\]]", re.MULTILINE)


def _refuse(path: Path, why: str, client: Client, name: str, entry: dict[str, Any]) -> AmbryError:
    flag = {v: k for k, v in CLIENTS.items()}.get(client, "CLIENT")
    return AmbryError(
        f"{path}: {why}, so Ambry will not rewrite it; add the entry that "
        f"`ambry setup {flag} --print` (same options) shows to it by hand",
        path=str(path),
        entry=snippet(client, name, entry),
    )


def merged_entry(old: object, entry: dict[str, Any]) -> dict[str, Any]:
    """Ambry's ``entry`` over the ``old`` one of that name, in a JSON or a TOML config.

    Ambry sets only the keys of ``entry`` (command, args, type); the keys the person
    added to the entry (env, disabled, timeouts…) stay, so an entry that differs only
    by them comes out equal to ``old``: already there, not replaced.
    """
    return {**old, **entry} if isinstance(old, dict) else entry


def merged_json(
    path: Path, text: str, client: Client, name: str, entry: dict[str, Any]
) -> str | None:
    """The file with Ambry's entry merged in, or None if it is already there."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        why = f"not plain JSON ({exc.msg}, line {exc.lineno})"
        if _JSONC.search(text):
            # VS Code's files may hold comments: a rewrite through json would drop them.
            why = "it holds comments or trailing commas, which a rewrite would lose"
        raise _refuse(path, why, client, name, entry) from exc
    if not isinstance(data, dict):
        raise _refuse(path, "it is not a JSON object at the top", client, name, entry)
    if not isinstance(data.get(client.key, {}), dict):
        raise _refuse(path, f"'{client.key}' is not an object", client, name, entry)
    servers = data.setdefault(client.key, {})
    old = servers.get(name)
    merged = merged_entry(old, entry)
    if merged == old:
        return None
    servers[name] = merged
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def merged_toml(
    path: Path, text: str, client: Client, name: str, entry: dict[str, Any]
) -> str | None:
    """The file with Ambry's entry merged in, or None if it is already there."""
    import tomllib  # only one client's config is TOML: not loaded with the app

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _refuse(path, f"not valid TOML ({exc})", client, name, entry) from exc
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise _refuse(path, "its mcp_servers is not a table", client, name, entry)
    merged = merged_entry(servers.get(name), entry)
    if merged == servers.get(name):
        return None
    if "mcp_servers" in data and re.search(r"^\s*mcp_servers\s*=", text, re.MULTILINE):
        # Written inline (mcp_servers = { … }): a table of ours after it would repeat it.
        raise _refuse(path, "its mcp_servers is written inline", client, name, entry)
    result = with_entry(text, name, entry)
    plain = f"its mcp_servers.{toml_key(name)} is not a plain [mcp_servers.{toml_key(name)}] table"
    try:
        new = tomllib.loads(result)
    except tomllib.TOMLDecodeError as exc:
        # An entry written inline or as dotted keys is still there, so ours would repeat it.
        raise _refuse(path, plain, client, name, entry) from exc
    others = {k: v for k, v in new.get("mcp_servers", {}).items() if k != name}
    before = {k: v for k, v in data.get("mcp_servers", {}).items() if k != name}
    rest_new = {k: v for k, v in new.items() if k != "mcp_servers"}
    rest_old = {k: v for k, v in data.items() if k != "mcp_servers"}
    if new["mcp_servers"].get(name) != merged or others != before or rest_new != rest_old:
        raise _refuse(path, plain, client, name, entry)
    return result


def _read(path: Path, client: Client, name: str, entry: dict[str, Any]) -> str:
    """The config file's text, or "" if there is none yet."""
    if not path.exists():
        return ""
    try:
        # utf-8-sig: Windows editors may start the file with a byte-order mark.
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _refuse(path, f"not UTF-8 text (byte {exc.start + 1})", client, name, entry) from exc
    except OSError as exc:
        raise _refuse(
            path, f"it cannot be read ({exc.strerror or exc})", client, name, entry
        ) from exc


def _backup(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.bak-{stamp}-{n}")
    shutil.copy2(path, target)
    return target


def _write(path: Path, text: str) -> None:
    # Through a symlink (a config kept in a dotfiles folder), not over it.
    path = path.resolve() if path.is_symlink() else path
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    atomic_write(path, text.encode("utf-8"), mode)


def target_file(client: Client, args: argparse.Namespace) -> Path:
    if args.config:
        return Path(args.config).expanduser().absolute()
    if args.project:
        if client.project_file is None:
            raise AmbryError(f"{client.label} has no per-project config; drop --project")
        return Path(args.project).expanduser().absolute() / client.project_file
    return client.user_file()


@dataclass(frozen=True)
class Installed:
    """What :func:`install` did to a client's config file."""

    client: str
    path: Path
    entry: dict[str, Any]
    changed: bool
    backup: Path | None
    #: The entry of that name the file held before, when it was a different one.
    replaced: dict[str, Any] | None = None


def _previous(text: str, client: Client, name: str) -> dict[str, Any] | None:
    """The entry named ``name`` in a config ``text`` that merged cleanly, if any."""
    if not text.strip():
        return None
    if client.toml:
        import tomllib

        servers = tomllib.loads(text).get("mcp_servers", {})
    else:
        servers = json.loads(text).get(client.key, {})
    found = servers.get(name)
    if found is None:
        return None
    return found if isinstance(found, dict) else {}


def install(
    client_name: str, path: Path, args: argparse.Namespace, name: str = "ambry"
) -> Installed:
    """Merge Ambry's server into ``path`` (backed up first); nothing changes if it is there.

    ``args`` carries ``data_dir`` and ``group`` for the entry. Used by ``ambry
    setup`` and by the desktop app's Connect page.

    Raises:
        AmbryError: the file cannot be parsed or merged (the message holds the entry).
    """
    client = CLIENTS[client_name]
    entry = server_entry(client_name, client, args)
    text = _read(path, client, name, entry)
    merge = merged_toml if client.toml else merged_json
    new = merge(path, text, client, name, entry)
    if new is None:
        return Installed(client_name, path, entry, False, None)
    try:
        backup = _backup(path) if path.exists() else None
        _write(path, new)
    except OSError as exc:
        raise AmbryError(
            f"{path}: cannot be written ({exc.strerror or exc}); nothing was changed",
            path=str(path),
            entry=snippet(client, name, entry),
        ) from exc
    return Installed(client_name, path, entry, True, backup, _previous(text, client, name))


def replaced_summary(old: dict[str, Any]) -> str:
    """What a replaced entry started, in a few words: ``it started /old/ambry mcp``."""
    command, url = old.get("command"), old.get("url")
    if isinstance(url, str) and command is None:
        return f"it pointed at {url}"
    if not isinstance(command, str):
        return "an entry of another shape"
    args = old.get("args")
    words = [command, *(str(a) for a in args)] if isinstance(args, list) else [command]
    return "it started " + " ".join(words)


def _setup_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("client", choices=list(CLIENTS), help="the client to set up")
    p.add_argument(
        "--project", metavar="DIR", help="the project's config file instead of the user's"
    )
    p.add_argument(
        "--config", metavar="FILE", help="this config file instead of the client's default"
    )
    p.add_argument(
        "--name", default="ambry", help="the server's name in the config (default ambry)"
    )
    p.add_argument("--print", action="store_true", help="only show the entry and where it goes")


@command(
    "setup",
    "Add Ambry's MCP server to a client's config (claude-desktop, claude-code, cursor, vscode, "
    "codex).",
    opens_store=False,
)(_setup_args)
def cmd_setup(ctx: Context, args: argparse.Namespace) -> int:
    client = CLIENTS[args.client]
    # The data dir in use, absolute, whether --data-dir or AMBRY_DATA_DIR named it:
    # the client starts `ambry mcp` without this shell's environment or folder.
    located = args.located_data_dir
    args = argparse.Namespace(**vars(args))
    args.data_dir = str(located.path) if located.named else None
    path = target_file(client, args)
    entry = server_entry(args.client, client, args)
    result: dict[str, Any] = {"client": args.client, "path": str(path), "entry": entry}
    if args.print:
        ctx.emit(result, f"# {client.label}: {path}\n{snippet(client, args.name, entry).rstrip()}")
        return 0
    done = install(args.client, path, args, args.name)
    if not done.changed:
        ctx.emit({**result, "changed": False}, f"{client.label} already starts Ambry ({path})")
        return 0
    backup = done.backup
    note = f"; the previous file is in {backup}" if backup else ""
    did = f"added '{args.name}' to"
    if done.replaced is not None:
        did = f"replaced '{args.name}' ({replaced_summary(done.replaced)}) in"
    ctx.emit(
        {
            **result,
            "changed": True,
            "backup": str(backup) if backup else None,
            "replaced": done.replaced,
        },
        f"{did} {client.label}'s {path}{note}. Restart {client.label} to load it.",
    )
    return 0
