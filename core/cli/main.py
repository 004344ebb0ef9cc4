"""The ``ambry`` command line: one composition root for every command.

Every command takes ``--data-dir``, ``--group`` and ``--json`` (before or after
the command name), prints human text by default, and exits 1 with one
``error:`` line on stderr when something goes wrong (2 for usage errors).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

from core import __version__
from core.model.caller import Caller
from core.model.config import load_config
from core.model.entries import Actor, MemoryEntry, SearchResult
from core.model.errors import AmbryError
from core.service import MemoryService
from core.storage.paths import DEFAULT_GROUP, DataDir, resolve_data_dir

Handler = Callable[["Context", argparse.Namespace], int]
_COMMANDS: dict[str, tuple[Handler, Callable[[argparse.ArgumentParser], None], str]] = {}


def command(
    name: str, help_text: str
) -> Callable[[Callable[[argparse.ArgumentParser], None]], Callable[[Handler], Handler]]:
    """Register ``name``: decorate an argument-adding function, then its handler."""

    def with_args(
        add_args: Callable[[argparse.ArgumentParser], None],
    ) -> Callable[[Handler], Handler]:
        def with_handler(handler: Handler) -> Handler:
            _COMMANDS[name] = (handler, add_args, help_text)
            return handler

        return with_handler

    return with_args


@dataclass
class Context:
    """What a command handler needs, built once in :func:`main`."""

    service: MemoryService
    group: str
    as_json: bool
    _caller: Caller | None = None

    @property
    def caller(self) -> Caller:
        """An operator session for this invocation, opened on first use."""
        if self._caller is None:
            self._caller = self.service.open_session(self.group, Actor.OPERATOR, "cli")
        return self._caller

    def emit(self, data: Any, text: str) -> None:
        if self.as_json:
            print(json.dumps(data, indent=2, ensure_ascii=False))
        elif text:
            print(text)


def _common(parser: argparse.ArgumentParser, *, suppress: bool) -> None:
    default: Any = argparse.SUPPRESS if suppress else None
    parser.add_argument(
        "--data-dir",
        default=default,
        metavar="DIR",
        help="data directory (default: $AMBRY_DATA_DIR or the platform's)",
    )
    parser.add_argument(
        "--group", default=default, metavar="NAME", help=f"memory group (default: {DEFAULT_GROUP})"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="print JSON instead of text",
    )


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    # Importing the command modules registers their commands.
    from core.cli import commands  # noqa: F401

    parser = _Parser(prog="ambry", description="Ambry: local memory for AI assistants.")
    parser.add_argument("--version", action="version", version=f"ambry {__version__}")
    parser.add_argument("--verbose", "-v", action="store_true", help="log what happens")
    parser.add_argument(
        "--self-test",
        action="store_true",
        help="check this installation in a temporary data dir (store, search, brief, socket)",
    )
    _common(parser, suppress=False)
    subs = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (_, add_args, help_text) in _COMMANDS.items():
        sub = subs.add_parser(name, help=help_text, description=help_text)
        _common(sub, suppress=True)
        add_args(sub)
    return parser


def fail(message: str, code: int = 1) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def format_entry(entry: MemoryEntry) -> str:
    lines = [
        f"{entry.id}  [{entry.type}] {entry.status}"
        + (f", superseded by {entry.superseded_by}" if entry.superseded_by else ""),
        f"  {entry.content}",
    ]
    if entry.tags:
        lines.append("  tags: " + ", ".join(entry.tags))
    lines.append(
        f"  source: {entry.source.type} ({entry.source.trust} trust), "
        f"confidence {entry.confidence:.2f}, privacy {entry.privacy}"
    )
    lines.append(
        f"  created {entry.provenance.created_at}, updated {entry.provenance.updated_at}, "
        f"session {entry.provenance.session_id}"
    )
    if entry.review_reason:
        lines.append(f"  review: {entry.review_reason}")
    return "\n".join(lines)


def format_result(result: SearchResult) -> str:
    tags = f"  #{' #'.join(result.tags)}" if result.tags else ""
    extra = "" if result.status == "active" else f" ({result.status})"
    if result.superseded_by:
        extra += " (superseded)"
    return f"{result.id}  [{result.type}]{extra} {result.content}{tags}"


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
    handler = _COMMANDS[args.command][0]
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
