"""``ambry recall``, ``ambry dig`` and ``ambry layers``: the conversation's layers."""

from __future__ import annotations

import argparse
from datetime import datetime

from core.cli.context import Context, command, whole
from core.continuity import threads
from core.layers.compression import compress
from core.layers.recall import DEFAULT_BUDGET, RecallResult
from core.layers.summaries import clip
from core.layers.timeline import Timeline, timeline
from core.layers.tools import dig_tool, recall_tool
from core.model.entries import utc_now
from core.model.text import plural
from core.model.times import stored_time


def _recall_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help="the live conversation text to find earlier context for")
    p.add_argument(
        "--budget",
        type=whole,
        default=DEFAULT_BUDGET,
        help=f"tokens of results at most (default {DEFAULT_BUDGET})",
    )


def _minute(at: str) -> str:
    """A turn's time to the minute, in UTC with its ``Z``, as ``ambry exchanges`` prints
    times (``2026-11-25T12:35Z``); a stored text that is no time, as it is."""
    moment = stored_time(at, "said_at")
    return at if moment is None else f"{moment:%Y-%m-%dT%H:%M}Z"


def _format_recall(result: RecallResult) -> str:
    if not result.items:
        words = ", ".join(result.keywords) or "none"
        return f"nothing in the layers matches (keywords: {words})"
    lines = [f"keywords: {', '.join(result.keywords)}"]
    for item in result.items:
        s = item.summary
        head = f"[{item.layer.value}]"
        if s is not None:
            turns = plural(s["turn_count"], "turn")
            lines.append(f"{head} {s['id']} {s['period']} ({turns}): {s['hook']}")
            lines += [f"    - {p}" for p in s["points"]]
            lines += [f"    > {q}" for q in s["quotes"]]
        else:
            lines.append(f"{head} turns of the last 48 hours")
        for t in item.turns:
            who = t["name"] or t["speaker"]
            lines.append(f"      #{t['id']} {_minute(t['at'])} {who}: {clip(t['text'], 160)}")
    more = " (budget reached)" if result.truncated else ""
    lines.append(f"~{result.tokens} of {result.budget} tokens{more}")
    return "\n".join(lines)


@command("recall", "Find what older conversation says about a text (layers).")(_recall_args)
def cmd_recall(ctx: Context, args: argparse.Namespace) -> int:
    result = recall_tool(ctx.service, ctx.caller, {"text": args.text, "budget": args.budget})
    ctx.emit(result.to_dict(), _format_recall(result))
    return 0


def _dig_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="a memory (mem-...) or summary (sum-...) id")
    p.add_argument("--depth", type=whole, default=2, help="hops to follow, 0-3 (default 2)")


@command("dig", "Follow the links around a memory or summary.")(_dig_args)
def cmd_dig(ctx: Context, args: argparse.Namespace) -> int:
    found = dig_tool(ctx.service, ctx.caller, {"id": args.id, "depth": args.depth})
    lines = []
    for node in found["nodes"]:
        text = node.get("content") or node.get("hook") or ""
        lines.append(f"{'  ' * node['depth']}{node['id']} [{node['kind']}] {clip(text, 120)}")
    for e in found["edges"]:
        lines.append(f"  {e['from']} -> {e['to']} ({e['strength']}, {e['reason']})")
    ctx.emit(found, "\n".join(lines))
    return 0


def _layers_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--thread", metavar="THREAD", help="a thread (id or title); default: none")
    p.add_argument(
        "--compress", action="store_true", help="run a compression pass now (not only when due)"
    )
    p.add_argument("--rebuild", action="store_true", help="rebuild every summary from the turns")


def _format_timeline(t: Timeline, now: datetime) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in t.counts().items())
    lines = [f"{counts} (flash: turns; others: day summaries)"]
    last = f"last compression: {t.last_pass or 'never'}"
    if t.redraw_pending:
        last += (
            " (summaries wait to be drawn again, as after a rebuild stopped part way: "
            "the next pass does it)"
        )
    lines.append(last)
    for turn in t.flash_turns[-15:]:
        who = turn["name"] or turn["speaker"]
        said = _minute(turn["at"])
        lines.append(f"[flash] #{turn['id']} {said} {who}: {clip(turn['text'], 140)}")
    for d in t.days:
        if d["layer"] == "flash":
            continue
        ids = d["turn_ids"]
        where = f"turns #{ids[0]}-#{ids[-1]}" if ids else "turns expired"
        lines.append(f"[{d['layer']}] {d['id']} {d['period']}: {d['hook']} ({where})")
        lines += [f"    - {p}" for p in d["points"]]
    for r in t.rollups:
        lines.append(
            f"[{r['level']}] {r['id']} {r['period']}: {r['hook']} "
            f"({plural(len(r['children']), 'part')})"
        )
    return "\n".join(lines)


@command("layers", "Show a thread's conversation by layer (flash, warm, recent, archive).")(
    _layers_args
)
def cmd_layers(ctx: Context, args: argparse.Namespace) -> int:
    store = ctx.service.store_for(ctx.group)
    now = utc_now()
    thread_id = None
    if args.thread:
        thread_id = ctx.thread(args.thread).id
    ran = None
    if args.compress or args.rebuild:
        ran = compress(store, now, rebuild=args.rebuild).to_dict()
    view = timeline(store, thread_id, now)
    text = _format_timeline(view, now)
    if thread_id is None and not any(view.counts().values()):
        # Without --thread only turns filed under no thread are shown: say where the rest are.
        count = threads.count_threads(ctx.service, ctx.group)
        if count:
            text += (
                "\nno turns outside threads; a thread's layers: `ambry layers --thread TITLE` "
                f"({plural(count, 'thread')}, `ambry threads` lists them)"
            )
    if ran is not None:
        text = (
            f"compressed: {plural(ran['days'], 'day')}, {plural(ran['rollups'], 'rollup')}, "
            f"{plural(ran['turns'], 'turn')} in {ran['seconds']} s\n{text}"
        )
    ctx.emit({**view.to_dict(), "pass": ran}, text)
    return 0
