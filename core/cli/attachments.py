"""``ambry attach``, ``verify`` and ``attachments``: receipts for files, not copies."""

from __future__ import annotations

import argparse

from core.agent.listings import attachment_list
from core.attachments import attach as attachments
from core.attachments.receipts import (
    Link,
    Receipt,
    SourceState,
    get_receipt,
    get_receipts,
    human_size,
    links,
)
from core.cli.context import (
    Context,
    command,
    emit_listing,
    fail,
    offset_option,
    progress_line,
    redaction_notes,
    tool_limit_option,
    tool_page,
    watching,
)
from core.model.errors import InvalidParams


def _summary(r: Receipt) -> str:
    return f"{r.id}  {r.filename} ({r.kind}, {human_size(r.size)}, {r.mime_type})"


def _details(r: Receipt, links: list[Link]) -> str:
    lines = [
        _summary(r),
        f"  sha256 {r.sha256}",
        f"  source {r.source_path}",
        f"  {r.state_line}",
        f"  first attached {r.created_at}, last attached {r.updated_at}, {r.link_count} link(s)",
    ]
    if r.excerpt:
        lines.append(f"  excerpt: {r.excerpt}")
    if r.observation:
        lines.append(f"  last observation: {r.observation}")
    for link in links:
        where = ", ".join(
            f"{name} {value}"
            for name, value in (
                ("thread", link.thread_id),
                ("session", link.session_id),
                ("turn", link.turn),
            )
            if value
        )
        lines.append(
            f"  - {link.linked_at}  {link.source_path}" + (f"  ({where})" if where else "")
        )
    return "\n".join(lines)


def _attach_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="the file (symlinks resolve to their target)")
    p.add_argument(
        "--thread", metavar="THREAD", help="the thread the file belongs to (its id or title)"
    )
    p.add_argument("--turn", metavar="ID", help="the conversation turn it was seen in")
    p.add_argument("--observation", metavar="TEXT", default="", help="what was learnt from it")


@command(
    "attach",
    "Record a receipt for a file: its SHA-256, type and excerpt, not a copy.",
    starts_group=True,
)(_attach_args)
def cmd_attach(ctx: Context, args: argparse.Namespace) -> int:
    outcome = attachments.attach(
        ctx.service,
        ctx.caller,
        args.path,
        thread=None if args.thread is None else ctx.thread(args.thread).id,
        turn=args.turn,
        observation=args.observation,
    )
    r = outcome.receipt
    # The id alone, so `rid=$(ambry attach …)` holds it; `ambry attachments ID` shows
    # the receipt in full.
    ctx.emit(outcome.to_dict(), r.id)
    what = f"{r.filename} ({r.kind}, {human_size(r.size)}, {r.mime_type}) at {r.source_path}"
    ctx.notes(
        [
            f"new receipt for {what}"
            if outcome.created
            else f"the same bytes already have this receipt; link {r.link_count} added for {what}",
            *redaction_notes(outcome.redacted),
        ]
    )
    return 0


def _verify_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", nargs="?", help="the receipt (att_...); none: every receipt")
    p.add_argument("--all", action="store_true", help="verify every receipt (the default)")


@command("verify", "Hash the sources of receipts again: verified, changed, missing, unreadable.")(
    _verify_args
)
def cmd_verify(ctx: Context, args: argparse.Namespace) -> int:
    if args.id and args.all:
        raise InvalidParams("give a receipt id or --all, not both", field="id")
    results = attachments.verify_all(
        ctx.service,
        ctx.caller,
        ids=[args.id] if args.id else None,
        progress=progress_line("verifying", watching(ctx)),
    )
    receipts = get_receipts(ctx.service.store_for(ctx.group), [v.receipt_id for v in results])
    lines = []
    for v in results:
        r = receipts.get(v.receipt_id)
        name = f"  {r.filename}" if r else ""
        why = f" ({v.reason})" if v.reason else ""
        lines.append(f"{v.receipt_id}  {v.state:<10}{name}{why}")
    gaps = [v for v in results if v.state is not SourceState.VERIFIED]
    counts = {s: sum(1 for v in results if v.state is s) for s in SourceState}
    summary = f"{len(results)} checked: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    ctx.emit(
        {"results": [v.to_dict() for v in results], **{s.value: n for s, n in counts.items()}},
        "\n".join([*lines, summary]) if results else "no attachment receipts",
    )
    if gaps:
        return fail(f"{len(gaps)} of {len(results)} sources failed verification")
    return 0


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", nargs="?", help="show this receipt in full, with its links")
    p.add_argument(
        "--thread", metavar="THREAD", help="only receipts seen in this thread (its id or title)"
    )
    tool_limit_option(p, "attachment_list", "receipts", 50)
    offset_option(p, "receipts", tool="attachment_list")


@command("attachments", "List attachment receipts, most recently attached first.")(_list_args)
def cmd_attachments(ctx: Context, args: argparse.Namespace) -> int:
    store = ctx.service.store_for(ctx.group)
    if args.id:
        receipt = get_receipt(store, args.id)
        found = links(store, args.id)
        data = {**receipt.to_dict(), "links": [link.to_dict() for link in found]}
        ctx.emit(data, _details(receipt, found))
        return 0
    limit, offset = tool_page(args, "attachment_list")
    thread = None if args.thread is None else ctx.thread(args.thread).id
    # attachment_list's result, key for key.
    page, result = attachment_list(ctx.service, ctx.group, thread, limit=limit, offset=offset)
    emit_listing(
        ctx,
        result,
        (f"{_summary(r)}  [{r.state}]\n  {r.source_path}" for r in page.rows),
        offset=offset,
        next_offset=page.next_offset,
        truncated=page.truncated,
        narrow="--thread",
        nothing="no attachment receipts",
    )
    return 0
