"""``ambry export``, ``import``, ``forget`` and ``clear``."""

from __future__ import annotations

import argparse
import errno
import getpass
import os
import sys
from pathlib import Path

from core.cli import history
from core.cli.context import (
    Context,
    command,
    confirm,
    fail,
    format_entry,
    progress_line,
    watching,
)
from core.continuity import forget_preview
from core.memory import forgetting
from core.memory.forgetting import Scope
from core.model.errors import InvalidParams, StorageError
from core.model.text import one_line, plural
from core.portability.export import ExportSummary, export
from core.portability.importing import import_checked, read_export
from core.storage.db import backups_note

#: Why a deletion without ``--yes`` is refused when nobody can answer its question.
NEEDS_YES = "this deletes memories and needs confirmation: run it in a terminal or pass --yes"


def _confirm(question: str, refusal: str = NEEDS_YES) -> bool:
    return confirm(question, refusal)


def _passphrase(args: argparse.Namespace, *, twice: bool, need: str) -> str:
    """The passphrase from ``--passphrase-env``, else typed at the terminal.

    Raises:
        InvalidParams: neither can give one; the message, ``need`` (what needs it)
            and then how to give it, names the option (``field``).
    """
    if args.passphrase_env:
        value = os.environ.get(args.passphrase_env)
        if not value:
            raise InvalidParams(f"environment variable {args.passphrase_env} is empty or unset")
        return value
    if not sys.stdin.isatty():
        raise InvalidParams(
            f"{need}: run it in a terminal to type it, or put it in an environment "
            "variable and give its name with --passphrase-env VAR",
            field="passphrase_env",
        )
    first = getpass.getpass("Passphrase: ")
    if twice and getpass.getpass("Passphrase again: ") != first:
        raise InvalidParams("the passphrases differ; nothing was exported")
    return first


def _export_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file",
        type=Path,
        help="where to write the JSON Lines export: a file (a link is written through), "
        "or - for standard output (a folder for markdown)",
    )
    p.add_argument(
        "--format",
        choices=["jsonl", "markdown"],
        default="jsonl",
        help="jsonl (default): a file Ambry imports; markdown: readable files in a folder",
    )
    p.add_argument(
        "--include-private",
        action="store_true",
        help="also export private and secret entries, encrypted with a passphrase",
    )
    p.add_argument(
        "--passphrase-env",
        metavar="VAR",
        help="read the passphrase from this environment variable (for scripts)",
    )


#: What to give instead of a device, a pipe or a folder.
EXPORT_INSTEAD = "give a file name, or - to write the export to standard output"


@command("export", "Export the group to a versioned JSON Lines file.")(_export_args)
def cmd_export(ctx: Context, args: argparse.Namespace) -> int:
    to_stdout = str(args.file) == "-"
    if args.format == "markdown":
        if to_stdout:
            raise InvalidParams(
                "--format markdown writes a folder of files, not standard output; give a folder",
                field="file",
            )
        return history.export_as_markdown(ctx, args)
    if to_stdout and ctx.as_json:
        raise InvalidParams(
            "export - writes the export itself to standard output, where --json would print "
            "its summary; drop --json, or give a file name",
            field="file",
        )
    if to_stdout and sys.stdout is None:
        raise InvalidParams(
            "export - writes to standard output, which is closed; give a file name",
            field="file",
        )
    phrase = (
        _passphrase(
            args,
            twice=True,
            need="exporting private and secret entries needs a passphrase to encrypt them",
        )
        if args.include_private
        else None
    )
    try:
        if to_stdout:
            sys.stdout.flush()
        summary = export(
            ctx.service,
            ctx.caller,
            sys.stdout.buffer if to_stdout else args.file.expanduser(),
            include_private=args.include_private,
            passphrase=phrase,
            progress=progress_line("exporting", watching(ctx)),
            instead=EXPORT_INSTEAD,
        )
        if to_stdout:
            sys.stdout.flush()
    except OSError as exc:
        if not to_stdout:
            raise
        raise _stdout_failed(exc) from None
    text = export_line(summary, "standard output" if to_stdout else str(args.file))
    if to_stdout:
        print(f"note: {text}", file=sys.stderr)  # stdout holds the export alone
    else:
        ctx.emit(summary.to_dict(), text)
    return 0


def _stdout_failed(exc: OSError) -> StorageError:
    """Standard output took only part of an export: why, and what to do."""
    if exc.errno == errno.ENOSPC:
        why = "the disk is full; free some space, or write the export to a file elsewhere"
    elif exc.errno == errno.EPIPE:
        why = "the program reading it stopped; give a file name to keep the whole export"
    else:
        why = f"{exc.strerror or exc}; give a file name instead"
    return StorageError(
        f"cannot write the export to standard output, which holds only part of it: {why}"
    )


def export_line(summary: ExportSummary, where: str) -> str:
    """``exported 3 entries, 1 threads to FILE; …``: what went into an export, and
    what was left out with how to keep it."""
    rows = "".join(f", {plural(n, kind)}" for kind, n in summary.rows.items() if n)
    text = f"exported {plural(summary.entries, 'entry', 'entries')}{rows} to {where}"
    if summary.skipped_private:
        text += (
            f"; {plural(summary.skipped_private, 'private/secret entry', 'private/secret entries')}"
            " left out "
            "(--include-private to export them encrypted)"
        )
    if summary.skipped_turns:
        text += (
            f"; {plural(summary.skipped_turns, 'conversation turn')} not exported (an export "
            "holds no turns: copy the data dir to keep them, or export --format markdown "
            "to read them)"
        )
    return text


def _import_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file", type=Path, help="a file written by `ambry export`, or one of --from's sources"
    )
    p.add_argument(
        "--from",
        dest="source",
        choices=history.SOURCES,
        help="another app's file: a Claude or ChatGPT export, an MCP memory server's JSONL, "
        "or Markdown notes (a file or a folder)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="with --from: check and count, write nothing"
    )
    p.add_argument(
        "--passphrase-env",
        metavar="VAR",
        help="read the passphrase from this environment variable (for scripts)",
    )


@command(
    "import",
    "Import an export file: every line is checked first, then all or nothing.",
    starts_group=True,
)(_import_args)
def cmd_import(ctx: Context, args: argparse.Namespace) -> int:
    if str(args.file) == "-":
        # The check reads the file whole before anything is written, and a passphrase
        # may be asked for after it: a file, not a stream.
        raise InvalidParams(
            "import reads a file, not standard input; save the export to a file "
            "(ambry export FILE) and import that",
            field="file",
        )
    if args.source:
        return history.import_history(ctx, args)
    if args.dry_run:
        return fail("--dry-run goes with --from", 2)
    # The file is checked before the group is opened: a mistyped --group with a
    # bad file must not leave a new, empty group behind.
    try:
        checked = read_export(args.file)
    except InvalidParams as exc:
        if exc.field != "passphrase":
            raise
        phrase = _passphrase(
            args,
            twice=False,
            need=f"{args.file} holds encrypted private entries, which need the passphrase "
            "it was exported with",
        )
        checked = read_export(args.file, phrase)
    report = import_checked(
        ctx.service, ctx.caller, checked, progress=progress_line("importing", watching(ctx))
    )
    rows = sum(report.rows.values())
    text = (
        f"imported {plural(report.entries, 'entry', 'entries')} and "
        f"{plural(rows, 'other record')}; {plural(len(report.duplicates), 'duplicate')} skipped"
    )
    if report.updated:
        text += f"; {len(report.updated)} updated (already present, newer in the file)"
    if report.refused:
        text += f"; {plural(len(report.refused), 'credential statement')} refused"
    if report.secret_only:
        count = len(report.secret_only)
        text += f"; {plural(count, 'memory', 'memories')} skipped (nothing but a secret)"
    if report.empty:
        count = len(report.empty)
        text += f"; {plural(count, 'empty memory', 'empty memories')} skipped"
    if report.relinked:
        text += (
            f"; {plural(len(report.relinked), 'older version')} re-linked past "
            "a memory left out (current again if nothing newer was imported)"
        )
    if report.redacted:
        text += f"; {plural(report.redacted, 'secret')} redacted"
    if report.empty_tags:
        text += f"; {plural(report.empty_tags, 'empty tag')} left out"
    ctx.emit(report.to_dict(), text)
    return 0


def _forget_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("topic", nargs="+", help="words that everything forgotten contains")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")


@command(
    "forget",
    "Delete every memory, conversation turn and handoff about a topic (and take it "
    "out of thread titles and speaker names).",
)(_forget_args)
def cmd_forget(ctx: Context, args: argparse.Namespace) -> int:
    plan = forgetting.plan_forget(ctx.service, ctx.group, " ".join(args.topic))
    if plan.empty:
        text = "nothing matches; nothing was deleted"
        if plan.sealed_unsearched:
            text += f" ({_sealed_line(plan.sealed_unsearched)})"
        ctx.emit({**plan.to_dict(), "deleted": False}, text)
        return 0
    if not ctx.as_json:
        print(f"This will forget {forgetting.plan_counts(plan)}:")
        for entry in plan.entries:
            print(format_entry(entry))
        for line in _preview_lines(forget_preview.preview(ctx.service, ctx.group, plan)):
            print(line)
        if plan.sealed_unsearched:
            print(f"({_sealed_line(plan.sealed_unsearched)})")
    refusal = "forgetting needs confirmation: run it in a terminal or pass --yes"
    if not args.yes and not _confirm("Forget them?", refusal):
        return fail("cancelled; nothing was forgotten")
    ctx.service.forget(ctx.caller, plan)
    copies = backups_note(ctx.service.store_for(ctx.group).path)
    if copies:
        print(f"note: {copies}", file=sys.stderr)
    ctx.emit({**plan.to_dict(), "deleted": True}, f"forgot {forgetting.plan_counts(plan)}")
    return 0


def _sealed_line(count: int) -> str:
    """Says that ``count`` private or secret memories were matched by their tags only,
    and how the person finds and deletes one by its words."""
    them = plural(count, "private/secret memory", "private/secret memories")
    return (
        f"{them} not searched by their words, which are encrypted, only by their tags: "
        "`ambry list` shows them (a secret one's text: `ambry reveal ID`), "
        "`ambry list --tags TAG` finds them by tag, and `ambry delete ID` deletes one"
    )


def _preview_lines(preview: forget_preview.ForgetPreview) -> list[str]:
    """A line per memory in the trash, per earlier version current again after, per
    thread whose handoff versions go (saying which one is current after) and per
    session handoff."""
    lines = [f"{item.id}  (in the trash) {item.preview}" for item in preview.trashed]
    lines += [
        f"{entry.id}  (an earlier version, without the topic: current again) "
        f"{one_line(entry.content, 80)}"
        for entry in preview.current_again
    ]
    lines += [
        f"{fate.thread_id}  (handoff of {fate.title!r}) {fate.gone}; {fate.outcome}"
        for fate in preview.handoffs
    ]
    for going in preview.session_notes:
        note = going.note
        where = "no thread" if going.thread_title is None else repr(going.thread_title)
        lines.append(
            f"session handoff {note.id}  ({where}, left by {note.session_id} at "
            f"{note.created_at}) {one_line(note.markdown, 80)}"
        )
    plan = preview.plan
    for turn in preview.turns:
        who = turn.name or turn.speaker
        where = turn.thread_title or "no thread"
        lines.append(f"turn {turn.id}  ({where}, {who}) {one_line(turn.text, 80)}")
    if len(plan.exchange_ids) > len(preview.turns):
        lines.append(f"(and {plural(len(plan.exchange_ids) - len(preview.turns), 'more turn')})")
    lines += [
        f"{tid}  (thread title {title!r} becomes 'Untitled {tid}')"
        for tid, title in plan.thread_titles
    ]
    lines += [
        f"speaker name {name!r} (taken off the turns that stay)" for name in plan.speaker_names
    ]
    if plan.turn_labels:
        labels = plural(len(plan.turn_labels), "turn label")
        lines.append(f"{labels} (taken off the turns that stay)")
    return lines


def _clear_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "scope",
        choices=[s.value for s in Scope],
        help="episodic: conversation turns; semantic: memories; all: everything",
    )
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")


@command("clear", "Delete a whole kind of memory (asks first; `all` asks twice).")(_clear_args)
def cmd_clear(ctx: Context, args: argparse.Namespace) -> int:
    scope = Scope(args.scope)
    counts = forgetting.clear_counts(ctx.service, ctx.group, scope)
    listing = forgetting.cleared_text(counts)
    if not listing:
        ctx.emit(
            {"scope": scope.value, "deleted": counts}, f"nothing to delete in group {ctx.group}"
        )
        return 0
    if not args.yes:
        if not _confirm(f"Delete {listing} from group {ctx.group}?"):
            return fail("cancelled; nothing was deleted")
        if scope is Scope.ALL and not _confirm("This cannot be undone. Really delete everything?"):
            return fail("cancelled; nothing was deleted")
    deleted = ctx.service.clear(ctx.caller, scope)
    ctx.emit({"scope": scope.value, "deleted": deleted}, f"deleted {listing}")
    return 0
