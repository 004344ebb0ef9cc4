"""``ambry serve``, ``ambry mcp`` and ``ambry token``: the ways an agent gets in.

Qt is imported inside the handler that needs it, so every other command (and
``ambry mcp``, which never needs Qt) starts without loading it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.agent.auth import load_or_create_token, regenerate_token
from core.cli.context import Context, command


def _serve_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--socket",
        metavar="PATH",
        help="socket to listen on (default: $AMBRY_SOCKET or <runtime dir>/ambry/agent.sock)",
    )


@command(
    "serve", "Serve agents on the local socket without the GUI (Ctrl-C stops).", starts_group=True
)(_serve_args)
def cmd_serve(ctx: Context, args: argparse.Namespace) -> int:
    from desktop.server.headless import serve_headless

    socket_path = Path(args.socket).expanduser().absolute() if args.socket else None
    # New memories and turns are embedded after their write is acknowledged.
    ctx.service.start_embedding()
    named_by = "--socket" if args.socket else None
    return int(serve_headless(ctx.service, ctx.service.data_dir, socket_path, named_by))


def _mcp_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--client",
        metavar="NAME",
        help="client name recorded with the session (default: the name the client gives)",
    )
    p.add_argument(
        "--thread",
        metavar="TITLE|ID",
        help="open the session in this thread (a new title creates it)",
    )


@command(
    "mcp",
    "Serve Ambry's agent tools over MCP on stdin/stdout (for MCP clients).",
    starts_group=True,
)(_mcp_args)
def cmd_mcp(ctx: Context, args: argparse.Namespace) -> int:
    from core.agent.mcp_stdio import run_stdio

    ctx.service.start_embedding()
    return run_stdio(ctx.service, ctx.group, args.client, args.thread)


def _token_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--regenerate",
        action="store_true",
        help="replace the token: new agent sessions need the new one, open ones keep working",
    )


@command("token", "Print where the agent token is (creating it), or replace it.")(_token_args)
def cmd_token(ctx: Context, args: argparse.Namespace) -> int:
    path = ctx.service.data_dir.token_file
    ctx.service.data_dir.ensure()
    if args.regenerate:
        regenerate_token(path)
    else:
        load_or_create_token(path)
    # The path alone, so `token=$(cat "$(ambry token)")` works.
    ctx.emit({"path": str(path), "regenerated": bool(args.regenerate)}, str(path))
    if args.regenerate:
        ctx.notes(["new token written; agents must read it again before their next hello"])
    return 0
