"""The ``ambry`` command line: one composition root for every command.

Every command takes ``--data-dir``, ``--group`` and ``--json`` (before or after
the command name), prints human text by default, and exits 1 with one
``error:`` line on stderr when something goes wrong (2 for usage errors).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import NoReturn

from core import __version__
from core.cli import commands  # noqa: F401  (importing the command modules registers them)
from core.cli.context import COMMANDS, Context, common_options, fail
from core.model.config import load_config
from core.model.errors import AmbryError
from core.service import MemoryService
from core.storage.paths import DEFAULT_GROUP, DataDir, resolve_data_dir


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ambry", description="Ambry: local memory for AI assistants.")
    parser.add_argument("--version", action="version", version=f"ambry {__version__}")
    parser.add_argument("--verbose", "-v", action="store_true", help="log what happens")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation in a temporary data dir (store, search, brief, socket)",
    )
    common_options(parser, suppress=False)
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_, add_args, help_text) in COMMANDS.items():
        sub = subs.add_parser(name, help=help_text, description=help_text)
        common_options(sub, suppress=True)
        add_args(sub)
    return parser


def run_gui(args: argparse.Namespace) -> int:
    try:
        from desktop.shell.app import run as run_app  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        return fail(
            f"the desktop app is not available ({exc}); use the subcommands, see `ambry --help`"
        )
    return int(run_app(args))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.self_test:
        from desktop.shell.selftest import run_self_test

        return int(run_self_test())
    if args.command is None:
        return run_gui(args)
    handler = COMMANDS[args.command][0]
    service: MemoryService | None = None
    try:
        data_dir = DataDir(resolve_data_dir(args.data_dir))
        config = load_config(data_dir.config_file)
        service = MemoryService(data_dir, config)
        ctx = Context(service=service, group=args.group or DEFAULT_GROUP, as_json=args.json)
        return handler(ctx, args)
    except AmbryError as exc:
        return fail(exc.message)
    except KeyboardInterrupt:
        return fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    finally:
        if service is not None:
            service.close()


if __name__ == "__main__":
    sys.exit(main())
