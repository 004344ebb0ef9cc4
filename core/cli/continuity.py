"""``ambry threads``, ``ambry handoff ...`` and ``ambry exchanges``.

These are the person's tools: reads never consume a session handoff, and an
edit of a handoff is kept as a new version like an agent's write.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from core.agent.listings import thread_list
from core.agent.search_results import ExchangeSearch
from core.cli.context import (
    Context,
    at_least,
    command,
    common_options,
    confirm,
    emit_listing,
    fail,
    found_by,
    offset_option,
    paging_line,
    read_stdin,
    redaction_notes,
    tool_limit_option,
    tool_page,
    whole,
)
from core.continuity import episodes, handoffs, threads
from core.continuity.handoffs import ThreadHandoff
from core.continuity.threads import Thread
from core.model.decoding import decode
from core.model.errors import InvalidParams, NotFound
from core.model.text import one_line, plural
from core.policy.manifest import validate_args
from core.semantic.hybrid import Mode

_Subs = argparse._SubParsersAction  # the type add_subparsers returns


def _subcommands(p: argparse.ArgumentParser, *, required: bool) -> _Subs[argparse.ArgumentParser]:
    # The same parser class, so a usage error exits 2 with one error line here too.
    return p.add_subparsers(
        dest="action", metavar="ACTION", parser_class=type(p), required=required
    )


def _sub(
    subs: _Subs[argparse.ArgumentParser], name: str, help_text: str
) -> argparse.ArgumentParser:
    sub = subs.add_parser(name, help=help_text, description=help_text)
    # Global options may follow the subcommand too, as with every other command.
    common_options(sub, suppress=True)
    return sub


def _thread_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("thread", metavar="THREAD", help="thread id (thr-...) or title")


def _format_thread(t: Thread) -> str:
    handoff = f"handoff v{t.handoff_version}" if t.handoff_version else "no handoff"
    return (
        f"{t.id}  {t.title}\n  updated {t.updated_at}, {handoff}, "
        f"{plural(t.compaction_count, 'compaction')}, {plural(t.exchange_count, 'exchange')}"
    )


def _format_version(h: ThreadHandoff) -> str:
    who = f" by {h.author}" if h.author else ""
    return (
        f"v{h.version}  {h.created_at}{who}  {plural(len(h.markdown), 'char')}, "
        f"{plural(h.compaction_count, 'compaction')}"
    )


# -- ambry threads -------------------------------------------------------------------


def _threads_args(p: argparse.ArgumentParser) -> None:
    tool_limit_option(p, "thread_list", "threads", 100)
    offset_option(p, "threads", tool="thread_list")
    subs = _subcommands(p, required=False)
    sub = _sub(subs, "list", "List threads, most recently active first (the default).")
    tool_limit_option(sub, "thread_list", "threads", 100, suppress=True)
    offset_option(sub, "threads", suppress=True, tool="thread_list")
    sub = _sub(subs, "open", "Create a thread (or find the one with this title).")
    sub.add_argument("title", help="the thread's title (one line, ≤ 200 characters)")
    sub = _sub(subs, "rename", "Give a thread a new title.")
    _thread_arg(sub)
    sub.add_argument("title", help="the new title")
    sub = _sub(subs, "delete", "Delete a thread and its handoffs (its exchanges stay).")
    _thread_arg(sub)
    sub.add_argument("--yes", action="store_true", help="do not ask for confirmation")


@command("threads", "List threads, or open, rename or delete one.", starts_group=True)(
    _threads_args
)
def cmd_threads(ctx: Context, args: argparse.Namespace) -> int:
    service = ctx.service
    match args.action:
        case None | "list":
            limit, offset = tool_page(args, "thread_list")
            # thread_list's result, key for key; a command's session is in no thread.
            page, result = thread_list(service, ctx.group, None, limit=limit, offset=offset)
            emit_listing(
                ctx,
                result,
                map(_format_thread, page.rows),
                offset=offset,
                next_offset=page.next_offset,
                truncated=page.truncated,
                nothing="no threads",
                empty="no threads yet",
            )
        case "open":
            opened = threads.open_titled(service, ctx.caller, args.title)
            thread = opened.thread
            # The id alone, so `tid=$(ambry threads open …)` holds it.
            ctx.emit({**thread.to_dict(), "created": opened.created}, thread.id)
            notes = redaction_notes(opened.redacted)
            if not opened.created:
                notes.append(f"a thread titled {thread.title!r} already exists; this is its id")
            ctx.notes(notes)
        case "rename":
            found = ctx.thread(args.thread)
            renamed = threads.rename_thread(service, ctx.caller, found.id, args.title)
            thread = renamed.thread
            ctx.emit(thread.to_dict(), f"renamed {thread.id} to {thread.title!r}")
            ctx.notes(redaction_notes(renamed.redacted))
        case "delete":
            thread = ctx.thread(args.thread)
            if not args.yes and not confirm(
                f"Delete thread {thread.title!r} and its {thread.handoff_version or 0} "
                "handoff versions? Its exchanges stay.",
                "deleting a thread needs confirmation: run it in a terminal or pass --yes",
            ):
                return fail("cancelled; the thread was not deleted")
            threads.delete_thread(service, ctx.caller, thread.id)
            ctx.emit({"deleted": thread.id}, f"deleted {thread.id}")
    return 0


# -- ambry handoff -------------------------------------------------------------------


def _handoff_args(p: argparse.ArgumentParser) -> None:
    subs = _subcommands(p, required=True)
    sub = _sub(subs, "show", "Print a thread's handoff (the current version by default).")
    _thread_arg(sub)
    sub.add_argument("--version", type=whole, metavar="N", help="an earlier version")
    sub = _sub(subs, "write", "Replace a thread's handoff; the old text stays as a version.")
    _thread_arg(sub)
    sub.add_argument("file", metavar="FILE", help="markdown file ('-' reads standard input)")
    sub.add_argument(
        "--base-version",
        type=whole,
        metavar="N",
        help="refuse if the current version is no longer N (0: none yet)",
    )
    sub.add_argument("--create", action="store_true", help="create the thread if the title is new")
    sub = _sub(subs, "export", "Write a thread's handoff to a file atomically.")
    _thread_arg(sub)
    sub.add_argument("path", metavar="PATH", help="the markdown file to write (replaced whole)")
    sub.add_argument("--version", type=whole, metavar="N", help="an earlier version")
    sub = _sub(subs, "history", "List the kept versions of a thread's handoff, newest first.")
    _thread_arg(sub)
    sub = _sub(subs, "restore", "Make an earlier version current again (as a new version).")
    _thread_arg(sub)
    sub.add_argument("version", type=whole, metavar="VERSION", help="the version to restore")
    sub = _sub(subs, "diff", "Show what changed between two versions (default: to the current).")
    _thread_arg(sub)
    sub.add_argument("old", type=whole, metavar="OLD", help="the earlier version")
    sub.add_argument("new", type=whole, nargs="?", metavar="NEW", help="the later version")


def _read_text(name: str) -> str:
    if name == "-":
        return read_stdin("file")
    path = Path(name)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror}", field="file") from exc
    return decode(raw, str(path))


def _current(ctx: Context, thread: Thread, version: int | None) -> ThreadHandoff:
    handoff = handoffs.read_handoff(ctx.service, ctx.group, thread.id, version)
    if handoff is None:
        raise NotFound(f"thread {thread.title!r} has no handoff yet", field="thread")
    return handoff


def _replaced_line(thread: Thread, old: ThreadHandoff) -> str:
    """The person's note that a write replaced a version they had not seen (``--json``
    keeps the tool's ``note``, written for agents)."""
    who = {"agent": "an agent session", "operator": "you"}.get(old.author or "", "another session")
    return (
        f"this replaced version {old.version}, which {who} wrote at {old.created_at}; "
        f"it is kept: ambry handoff show {thread.id} --version {old.version} "
        "(use --base-version to be refused instead of replacing)"
    )


@command("handoff", "Show, write, export or restore a thread's handoff.", starts_group=True)(
    _handoff_args
)
def cmd_handoff(ctx: Context, args: argparse.Namespace) -> int:
    service = ctx.service
    if args.action == "write" and args.base_version is not None:
        at_least(args.base_version, "base_version", 0)  # before a thread is created
    notes = []
    if args.action == "write" and args.create and threads.as_thread_id(args.thread) is None:
        thread, created = threads.open_thread(service, ctx.caller, title=args.thread)
        if created:
            notes.append(f"created the thread {thread.title!r}, {thread.id}")
    else:
        # A new title is written to only when asked, so a mistyped one makes no thread.
        thread = ctx.thread(
            args.thread, if_new="add --create to create it" if args.action == "write" else ""
        )
    match args.action:
        case "show":
            handoff = _current(ctx, thread, args.version)
            if ctx.as_json:
                ctx.emit(handoff.to_dict(), "")
            else:
                print(handoff.markdown)
        case "write":
            outcome = handoffs.write_handoff(
                service,
                ctx.caller,
                thread.id,
                _read_text(args.file),
                base_version=args.base_version,
            )
            version = outcome.handoff.version
            if not outcome.created:
                notes.append(f"the text is already version {version}'s; no version was added")
            notes += redaction_notes(outcome.redacted)
            if outcome.replaced is not None:
                notes.append(_replaced_line(thread, outcome.replaced))
            # The version alone, so `v=$(ambry handoff write …)` can be the next
            # write's --base-version.
            ctx.emit(outcome.to_dict(), str(version))
            ctx.notes(notes)
        case "export":
            if args.path == "-":
                raise InvalidParams(
                    f"handoff export writes a file; `ambry handoff show {thread.id}` prints "
                    "the handoff to standard output",
                    field="path",
                )
            path = Path(args.path).expanduser()
            handoff = handoffs.export_handoff(
                service,
                ctx.caller,
                thread.id,
                path,
                version=args.version,
                instead=f"give a file name (`ambry handoff show {thread.id}` prints the "
                "handoff to standard output)",
            )
            ctx.emit(
                {"path": str(path), "version": handoff.version},
                f"wrote version {handoff.version} to {path}",
            )
        case "history":
            versions = handoffs.handoff_history(service, ctx.group, thread.id)
            ctx.emit(
                [h.to_dict() for h in versions],
                "\n".join(map(_format_version, versions)) or "no handoff yet",
            )
        case "restore":
            outcome = handoffs.restore_handoff(service, ctx.caller, thread.id, args.version)
            version = outcome.handoff.version
            # The current version alone, as `handoff write` prints it.
            ctx.emit({**outcome.to_dict(), "restored": args.version}, str(version))
            ctx.notes(
                [f"restored version {args.version} as version {version}"]
                if outcome.created
                else [f"version {args.version} is already the current text (version {version})"]
            )
        case "diff":
            old = _current(ctx, thread, args.old)
            new = _current(ctx, thread, args.new)
            diff = handoffs.handoff_diff(old, new)
            ctx.emit(
                {"old": old.version, "new": new.version, "diff": diff},
                diff or f"v{old.version} and v{new.version} are the same",
            )
    return 0


# -- ambry exchanges -----------------------------------------------------------------


def _exchanges_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="*", help="words to search for (none: the most recent)")
    p.add_argument(
        "--thread",
        metavar="THREAD",
        help="lift this thread's turns (a clearly better match elsewhere still comes first)",
    )
    p.add_argument("--speaker", choices=[s.value for s in episodes.Speaker], help="only this one")
    p.add_argument(
        "--limit",
        type=whole,
        default=episodes.DEFAULT_EXCHANGE_RESULTS,
        metavar="N",
        help=f"at most N turns (default {episodes.DEFAULT_EXCHANGE_RESULTS}, "
        f"at most {episodes.MAX_EXCHANGE_RESULTS})",
    )
    p.add_argument(
        "--offset",
        type=whole,
        default=0,
        metavar="N",
        help="skip the N best turns, to read on "
        f"(default 0, at most {episodes.MAX_EXCHANGE_OFFSET})",
    )
    p.add_argument(
        "--mode",
        choices=("auto", "keyword", "semantic"),
        default="auto",
        help="auto: words and meaning fused (default); keyword or semantic alone",
    )


@command("exchanges", "Search the logged conversation turns (episodic memory).")(_exchanges_args)
def cmd_exchanges(ctx: Context, args: argparse.Namespace) -> int:
    thread_id = None
    if args.thread:
        thread_id = ctx.thread(args.thread).id
    # The tool's own checks, so a query, limit or offset out of range reads as it does
    # for agents (naming the option), before any embedding.
    query = validate_args(
        "exchange_search",
        {"query": " ".join(args.query), "limit": args.limit, "offset": args.offset},
    )
    waiting: dict[str, object] = {}
    if args.mode != "keyword" and args.query:
        from core.cli.semantic import catch_up

        waiting = catch_up(ctx, Mode(args.mode), say=not ctx.as_json)
    page = episodes.search_exchanges_page(
        ctx.service,
        ctx.caller,
        query["query"],
        thread_id=thread_id,
        speaker=episodes.Speaker(args.speaker) if args.speaker else None,
        limit=query["limit"],
        offset=query["offset"],
        mode=Mode(args.mode),
    )
    hits = page.hits

    ranked = bool(query["query"].strip())

    def line(hit: episodes.ExchangeHit) -> str:
        e = hit.exchange
        where = e.thread_title or "no thread"
        who = f"{e.speaker}: {e.name}" if e.name else e.speaker
        head = (
            f"{e.said_at or e.created_at}  [{who}] ({where}, {e.session_id}){found_by(hit, ranked)}"
        )
        return f"{head}\n  {one_line(e.text)}"

    none = "no matching exchanges"
    if args.offset:
        none = f"no matching exchanges at --offset {args.offset} or beyond"
    text = "\n".join(map(line, hits)) or none
    more = paging_line(page.next_offset, page.truncated, "--thread or --speaker")
    if more:
        text += "\n" + more
    # exchange_search's result, key for key, as `ambry --json search` prints memory_search's.
    ctx.emit(ExchangeSearch(page, waiting).to_dict(), text)
    return 0
