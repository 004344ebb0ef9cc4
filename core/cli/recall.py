"""``ambry brief``, ``ingest``, ``pin``."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from core.cli.context import Context, command, read_stdin
from core.memory.ingest import MAX_INGEST_CHARS
from core.model.decoding import decode
from core.model.errors import InvalidParams


def _brief_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        choices=("markdown", "json"),
        default="markdown",
        help="markdown (default: what the agent reads) or json (the structured MemoryBrief)",
    )
    p.add_argument(
        "--thread",
        metavar="THREAD",
        help="as an agent entering this thread (id or title) would get it",
    )


@command("brief", "Print the memory brief an agent receives at session start.")(_brief_args)
def cmd_brief(ctx: Context, args: argparse.Namespace) -> int:
    caller = ctx.caller
    if args.thread:
        thread = ctx.thread(args.thread)
        caller = replace(caller, thread_id=thread.id)
    brief = ctx.service.brief(caller)
    if ctx.as_json or args.format == "json":
        ctx.as_json = True
        ctx.emit(brief.to_dict(), "")
    else:
        print(brief.markdown)
    return 0


def _ingest_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="text with [MEMORY:category(:service)] lines ('-' for stdin)")


@command(
    "ingest", "Store or reinforce the [MEMORY:...] markers found in a text.", starts_group=True
)(_ingest_args)
def cmd_ingest(ctx: Context, args: argparse.Namespace) -> int:
    if not args.file.strip():
        raise InvalidParams("give a file to read, or - for standard input", field="file")
    if args.file == "-":
        text, name = read_stdin("file"), "standard input"
    else:
        path = Path(args.file)
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InvalidParams(f"cannot read {path}: {exc.strerror}", field="file") from exc
        text, name = decode(raw, path.name), str(path)
    if len(text) > MAX_INGEST_CHARS:
        # The service's own message speaks to an agent sending text, not to a file.
        raise InvalidParams(
            f"{name} holds {len(text):,} characters and ingest reads at most "
            f"{MAX_INGEST_CHARS:,} at a time; split it into smaller files and ingest each",
            field="file",
            rule="maxLength",
        )
    result = ctx.service.ingest_text(ctx.caller, text)
    ctx.emit(
        result.to_dict(),
        f"{result.markers} markers: {len(result.stored)} stored, "
        f"{len(result.reinforced)} reinforced, {result.refused} refused, "
        f"{result.malformed} malformed lines ignored"
        + "".join(f"\n  line {p.line}: {p.reason}" for p in result.problems),
    )
    return 0


def _pin_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="entry id (mem-...)")
    p.add_argument("--off", action="store_true", help="unpin instead")


@command("pin", "Pin an entry so it never goes stale (--off to unpin).")(_pin_args)
def cmd_pin(ctx: Context, args: argparse.Namespace) -> int:
    ctx.service.set_pinned(ctx.caller, args.id, not args.off)
    state = "unpinned" if args.off else "pinned"
    ctx.emit({"id": args.id, "pinned": not args.off}, f"{state} {args.id}")
    return 0
