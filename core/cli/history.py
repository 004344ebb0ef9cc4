"""``ambry import --from …`` and ``ambry export --format markdown``: the parts of
``import`` and ``export`` (:mod:`core.cli.data`) that read other apps' files and
write Markdown."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from core.cli.context import Context
from core.model.text import plural
from core.portability import history_import
from core.portability.history import SourceKind
from core.portability.markdown_export import export_markdown

_PHASES = {"check": "checking", "write": "importing"}


class _Meter:
    """Progress on stderr, on one line that rewrites itself, when stderr is a terminal."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.last = 0.0

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self.last < 0.2 and done < total):
            return
        self.last = now
        pct = 100 * done // total if total else 100
        print(
            f"\r{_PHASES.get(phase, phase)}: {pct:3d}% of {total:,} bytes", end="", file=sys.stderr
        )
        if done >= total:
            print(file=sys.stderr)


def import_history(ctx: Context, args: argparse.Namespace) -> int:
    kind = history_import.parse_kind(args.source)
    path: Path = args.file
    meter = _Meter(sys.stderr.isatty() and not ctx.as_json)
    # The file is checked once, before the group is opened (as a plain import does): a
    # mistyped --group with a bad file must not leave a new, empty group behind. A dry
    # run screens every text too, so it counts the secrets the import would redact.
    counts = history_import.plan(
        ctx.service,
        history_import.planner(ctx.group),
        kind,
        path,
        progress=meter,
        screen=args.dry_run,
    )
    if args.dry_run or not counts.adds_anything:
        counts.dry_run = args.dry_run
        ctx.emit(counts.to_dict(), counts.summary() + ("" if args.dry_run else "; nothing to do"))
        return 0
    done = history_import.run(ctx.service, ctx.caller, kind, path, progress=meter, planned=counts)
    text = done.summary()
    if done.memories_new:
        text += "\nreview them with `ambry review` (accept all: `ambry review accept --all`)"
    if done.turns_new:
        text += "\nturns are embedded for search by the app, or now with `ambry reindex`"
    ctx.emit(done.to_dict(), text)
    return 0


def export_as_markdown(ctx: Context, args: argparse.Namespace) -> int:
    summary = export_markdown(ctx.service, ctx.caller, args.file)
    text = (
        f"wrote {plural(summary.memories, 'memory', 'memories')} and "
        f"{plural(summary.threads, 'thread')} ({plural(summary.turns, 'turn')}) "
        f"as Markdown to {args.file}"
    )
    if summary.skipped_private:
        left = plural(summary.skipped_private, "private/secret memory", "private/secret memories")
        text += f"; {left} left out"
    ctx.emit(summary.to_dict(), text)
    return 0


SOURCES = [k.value for k in SourceKind]
