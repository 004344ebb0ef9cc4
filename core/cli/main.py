"""The ``ambry`` command line: one composition root for every command.

Every command takes ``--data-dir``, ``--group``, ``--json`` and ``--create`` (before
or after the command name), prints human text by default, and exits 1 with one
``error:`` line on stderr when something goes wrong (2 for usage errors); with
``--json`` that line is a JSON object instead. Every run logs to the rotating log
file of :mod:`core.cli.logfile`.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import logging
import re
import sys
from collections.abc import Sequence
from gettext import gettext
from typing import Any, NoReturn

from core import __version__
from core.cli import (
    commands,  # noqa: F401  (importing the command modules registers them)
    qtlibs,
)
from core.cli.completion import SHELLS, completion_script
from core.cli.context import (
    COMMANDS,
    JSON_ERRORS,
    NO_STORE,
    STARTS_GROUP,
    Context,
    add_create_option,
    command,
    common_options,
    fail,
)
from core.cli.logfile import log_file, logging_to_file
from core.model.config import Config, load_config
from core.model.errors import AmbryError, InvalidGroup, InvalidParams
from core.policy.manifest import load_manifest
from core.service import MemoryService
from core.storage.paths import (
    DATA_DIR_ENV,
    DEFAULT_GROUP,
    DataDir,
    DataDirOrigin,
    LocatedDataDir,
    locate_data_dir,
    validate_group,
)

log = logging.getLogger(__name__)


#: How argparse starts the error for missing arguments (translated as it translates it).
_REQUIRED = gettext("the following arguments are required: %s").removesuffix("%s")


class UsageError(Exception):
    """A command line argparse refused; :func:`main` reports it (exit status 2).

    ``field`` and ``rule`` say which argument was refused and why (``offset``,
    ``type``) when argparse names one argument.
    """

    def __init__(
        self, usage: str, message: str, field: str | None = None, rule: str | None = None
    ) -> None:
        super().__init__(message)
        self.usage = usage
        self.message = message
        self.details = {k: v for k, v in (("field", field), ("rule", rule)) if v}


class _Refused(argparse.ArgumentError):
    """An argument's value refused, with the rule it broke (as a tool's schema names it)."""

    def __init__(self, action: argparse.Action, message: str, rule: str) -> None:
        super().__init__(action, message)
        self.rule = rule


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Let an ArgumentError reach parse_known_args below, which reports the
        # argument it names, instead of argparse turning it into a bare message.
        kwargs.setdefault("exit_on_error", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        try:
            return super().parse_known_args(args, namespace)
        except argparse.ArgumentError as exc:
            field = self._dest(exc.argument_name)
            rule = getattr(exc, "rule", None) if field else None
            if field and rule is None and exc.message.startswith(("expected ", "ignored ")):
                rule = "nargs"  # a value missing, or given to an option that takes none
            raise UsageError(self.format_usage(), str(exc), field, rule) from None

    def _dest(self, name: str | None) -> str | None:
        """The destination of the argument argparse calls ``name`` (``--offset``,
        ``--verbose/-v``, ``THREAD``): ``offset``, ``verbose``, ``thread``."""
        if name is None:
            return None
        names = set(name.split("/"))
        for action in self._actions:
            # An option by its option strings, a positional by its metavar or dest.
            known: set[object] = set(action.option_strings) or {action.metavar, action.dest}
            if names & known:
                return action.dest
        return None

    def error(self, message: str) -> NoReturn:
        missing = message.removeprefix(_REQUIRED)
        if missing != message:
            # argparse names them as typed, joined by ", ": `id`, `--source`, `ACTION`.
            # The first is `field`, as a tool's schema names one missing property.
            field = self._dest(missing.split(", ")[0])
            raise UsageError(self.format_usage(), message, field, "required" if field else None)
        raise UsageError(self.format_usage(), message)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as exc:
            raise _Refused(action, exc.message, "type") from None

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse's own message lists every choice (all 36 commands) and guesses none.
        if action.choices is None or value in action.choices:
            return
        names = [str(c) for c in action.choices]
        listing = (
            f"`{self.prog} --help` lists them"
            if len(names) > 12
            else "choose from " + ", ".join(names)
        )
        raise _Refused(
            action,
            f"invalid choice: {value!r}{_did_you_mean(str(value), names)} ({listing})",
            "enum",
        )


def _did_you_mean(typed: str, names: Sequence[str]) -> str:
    """``"; did you mean 'search'?"`` for the name closest to ``typed``, or nothing."""
    close = difflib.get_close_matches(typed, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _chosen(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` name: ``threads list``'s, say."""
    chosen = parser
    while True:
        subs = [a for a in chosen._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs else None
        if name is None:
            return chosen
        chosen = subs[0].choices[name]


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """``parser.parse_args(argv)``, but an unknown option is reported with the usage of
    the (sub)command it was given to, and the nearest option it has."""
    args, extras = parser.parse_known_args(argv)
    if not extras:
        return args
    chosen = _chosen(parser, args)
    message = f"unrecognized arguments: {' '.join(extras)}"
    unknown = [e.partition("=")[0] for e in extras if e.startswith("--")]
    if unknown:
        message += _did_you_mean(unknown[0], list(chosen._option_string_actions))
    chosen.error(message)


def _options(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option of ``parser`` by its destination: ``{"base_version": "--base-version"}``."""
    return {
        action.dest: max(action.option_strings, key=len)
        for action in parser._actions
        if action.option_strings
    }


EPILOG = """\
examples:
  ambry store "Prefers tea to coffee" --tags drinks
  echo "a longer note" | ambry store -
  ambry search tea
  ambry search --json tea | jq -r '.results[0].id'
  ambry forget coffee
  ambry export backup.jsonl
  ambry                     (no command: open the desktop app)
  ambry COMMAND --help      (a command's options, with their defaults)

exit status: 0 done; 1 error (one `error:` line on stderr, or a JSON object
under --json); 2 usage error; 130 interrupted (Ctrl-C)."""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ambry",
        description="Ambry: local memory for AI assistants.\n\n"
        "With no COMMAND, `ambry` opens the desktop app, which also serves agents on the\n"
        "local socket while it runs (`ambry serve` serves them without a window).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
        # After the command's own options: `handoff write --create` creates a thread,
        # so there the data dir's --create goes before the command name.
        if "--create" not in sub._option_string_actions:
            add_create_option(sub, suppress=True)
    # argparse shows the subcommand as required; with none, Ambry opens the app.
    usage = parser.format_usage().removeprefix("usage: ").rstrip("\n")
    parser.usage = usage.replace(" COMMAND ...", " [COMMAND ...]")
    return parser


def _completion_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("shell", choices=SHELLS, help="the shell to print the completion script for")


@command(
    "completion",
    "Print a shell completion script (bash, zsh or fish), generated from this parser.",
    opens_store=False,
)(_completion_args)
def cmd_completion(ctx: Context, args: argparse.Namespace) -> int:
    print(completion_script(build_parser(), args.shell), end="")
    return 0


def run_gui(args: argparse.Namespace) -> int:
    problem = qtlibs.preflight()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 1
    try:
        from desktop.shell.app import run as run_app  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        return fail(
            f"the desktop app is not available ({exc}); use the subcommands, see `ambry --help`"
        )
    return int(run_app(args))


def open_data_dir(
    explicit: str | None, *, create: bool, needs_store: bool
) -> tuple[DataDir, LocatedDataDir]:
    """The data dir to use, and where it was named.

    A data dir the person named (``--data-dir`` or ``AMBRY_DATA_DIR``) that does not
    exist is refused unless ``create``, so a typo never quietly starts a new, empty
    store; the platform's default is created on first use.
    """
    if explicit is not None and not explicit.strip():
        # An unset shell variable, say: not a reason to open the default store.
        raise InvalidParams(
            "--data-dir is empty; give a directory (or leave the option out)",
            field="data_dir",
            rule="minLength",
        )
    located = locate_data_dir(explicit)
    data_dir = DataDir(located.path)
    root = data_dir.root
    # A setting to fix, as a relative AMBRY_DATA_DIR is: ``field`` names the option or
    # the variable that named the folder.
    field = DATA_DIR_ENV if located.origin is DataDirOrigin.ENV else "data_dir"
    if root.exists() and not root.is_dir():
        raise InvalidParams(
            f"data dir {located.describe()} is a file, not a directory; give a directory",
            field=field,
            rule="not_a_directory",
        )
    if create:
        data_dir.ensure()
    elif located.named and needs_store and not root.exists():
        check = "the variable" if located.origin is DataDirOrigin.ENV else "the path"
        raise InvalidParams(
            f"data dir {located.describe()} does not exist; check {check}, or add --create "
            "to start a new store there",
            field=field,
            rule="exists",
        )
    return data_dir, located


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    token = JSON_ERRORS.set("--json" in argv)
    try:
        parser = build_parser()
        try:
            args = _parse(parser, argv)
        except UsageError as exc:
            if not JSON_ERRORS.get():
                print(exc.usage, end="", file=sys.stderr)
            return fail(exc.message, 2, {"code": "usage", **exc.details})
        options = _options(_chosen(parser, args))
        try:
            path = log_file()
        except AmbryError as exc:  # a relative AMBRY_LOG_DIR: nothing to log to yet
            return _refuse(args, exc, options, started=False)
        with logging_to_file(verbose=args.verbose, path=path) as log_path:
            args.log_file = log_path
            try:
                return _run(args, options)
            except Exception:
                log.exception("bug in ambry %s (%s)", args.command or "app", __version__)
                raise
    finally:
        JSON_ERRORS.reset(token)


def _run(args: argparse.Namespace, options: dict[str, str]) -> int:
    """Run the command ``args`` name; ``options`` are its options by destination."""
    if args.self_test:
        from desktop.shell.selftest import run_self_test

        return int(run_self_test())
    service: MemoryService | None = None
    ctx: Context | None = None
    try:
        group = DEFAULT_GROUP if args.group is None else validate_group(args.group)
        data_dir, args.located_data_dir = open_data_dir(
            args.data_dir,
            create=args.create_data_dir,
            # setup writes the data dir into a client's config, where it must exist.
            needs_store=args.command not in NO_STORE or args.command == "setup",
        )
        if args.command is None:
            args.group = group
            return run_gui(args)
        handler = COMMANDS[args.command][0]
        _known_group(args, data_dir, group)
        try:
            config = load_config(data_dir.config_file)
        except AmbryError:
            if args.command not in NO_STORE:
                raise
            # doctor reports the file as a failed check; setup and completion read no
            # setting. Neither should stop at the first thing that is wrong.
            config = Config()
        service = MemoryService(data_dir, config)
        ctx = Context(service=service, group=group, as_json=args.json)
        log.info("ambry %s on %s, group %s", args.command, data_dir.root, group)
        try:
            return handler(ctx, args)
        except UnicodeEncodeError as exc:
            if exc.reason != "surrogates not allowed":
                raise
            # Python keeps bytes that are not UTF-8 (an argument typed in another
            # encoding, a file's name) as lone surrogates, which no store can hold.
            raise InvalidParams(
                "an argument or a file name is not UTF-8 text, which is all Ambry can "
                "store; retype it, or rename the file",
                rule="unicode",
            ) from None
    except AmbryError as exc:
        log.info("refused: %s", exc.message)
        return _refuse(args, exc, options, started=ctx is not None)
    except KeyboardInterrupt:
        if sys.stderr.isatty():
            # The terminal's ^C, a progress line or a question holds the cursor.
            print(file=sys.stderr)
        return fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    finally:
        if service is not None:
            if ctx is not None and ctx.opened is not None:
                # The command's session ends with it, so the sessions list holds
                # no "open" session per command ever run.
                with contextlib.suppress(AmbryError):
                    service.end_session(ctx.opened)
            service.close()


def _refuse(
    args: argparse.Namespace, exc: AmbryError, options: dict[str, str], *, started: bool
) -> int:
    """Report ``exc`` (exit status 1); ``started``: the command had begun its work."""
    message = _for_a_person(exc, options)
    code = fail(message, 1, {**exc.to_dict(), "message": message})
    if args.command == "mcp" and not started and not sys.stdin.isatty():
        # An MCP client shows an answer; the line on stderr few of them show.
        from core.agent.mcp_stdio import refuse_stdio

        refuse_stdio(exc, sys.stdin.fileno(), sys.stdout.fileno())
    return code


def _known_group(args: argparse.Namespace, data_dir: DataDir, group: str) -> None:
    """Refuse a ``--group`` that does not exist for a command that would not write to
    it: a typo must not show an empty group as if its memories were gone."""
    if args.group is None or args.command in NO_STORE or args.command in STARTS_GROUP:
        return
    known = data_dir.groups()
    # One that differs only in letter case gets its own, more precise error on open.
    if group.casefold() not in {k.casefold() for k in known}:
        raise InvalidGroup(
            f"no group {group!r} in {data_dir.root} (groups: {', '.join(known) or 'none yet'}); "
            "check the name (storing or importing into a new group creates it)",
            field="group",
            rule="exists",
        )


def _for_a_person(exc: AmbryError, options: dict[str, str]) -> str:
    """``exc``'s message as the command line reads: without the agent tool it names
    first, and naming the option as typed where the message names the refused field
    ("memory_search: offset must be at most 1000" reads "--offset must be at most
    1000"), whichever bound the CLI or the tool checked."""
    tool, sep, rest = exc.message.partition(": ")
    message = rest if sep and tool in load_manifest() else exc.message
    field = exc.data.get("field")
    if not field or field not in options:
        return message
    # A rule on the value ("offset must be …"); "group 'work' differs …" names the
    # group, not the option.
    if message.startswith(f"{field} must "):
        return options[field] + message[len(field) :]
    # A parameter's name in prose ("write with the new base_version") is the option
    # here; a plain word ("thread", "limit") may be prose, and stays as it is.
    if "_" in field:
        return re.sub(rf"\b{re.escape(field)}\b", options[field], message)
    return message


if __name__ == "__main__":
    sys.exit(main())
