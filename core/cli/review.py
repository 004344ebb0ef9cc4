"""``ambry review`` and ``ambry audit``: the person's side of the write policy."""

from __future__ import annotations

import argparse

from core.cli.context import (
    Context,
    at_least,
    command,
    confirm,
    emit_listing,
    fail,
    format_entry,
    offset_option,
    whole,
    within,
)
from core.memory import curation
from core.memory.acceptance import Acceptance
from core.memory.curation import Decision
from core.model.paging import read_page
from core.model.text import plural
from core.storage import audit

#: The most audit rows one ``ambry audit`` prints. No agent tool reads the log, so
#: no schema bounds it; a thousand is as deep as a search pages, and --action and
#: --actor narrow the rows to the ones wanted (the app scrolls through all of them).
MAX_AUDIT_ROWS = 1000


def _review_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", *[d.value for d in Decision], "return"],
        help="list candidates (default), accept / reject / defer the given ids, or "
        "return accepted ones to review (takes an accept back)",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="candidate ids")
    p.add_argument("--all", action="store_true", help="every candidate (after an import, say)")
    p.add_argument(
        "--yes", action="store_true", help="reject --all without asking for confirmation"
    )


@command("review", "List memories awaiting review, or accept/reject/defer them.")(_review_args)
def cmd_review(ctx: Context, args: argparse.Namespace) -> int:
    if args.action == "return":
        return _return(ctx, args)
    if args.action == "list":
        if args.ids:
            return fail("review list takes no ids", 2)
        pending = curation.candidates(ctx.service, ctx.group)
        ctx.emit(
            [e.to_dict() for e in pending],
            "\n".join(format_entry(e) for e in pending) or "nothing awaits review",
        )
        return 0
    if args.all:
        if args.ids:
            return fail("give ids or --all, not both", 2)
        args.ids = curation.candidate_ids(ctx.service.store_for(ctx.group))
        if not args.ids:
            ctx.emit({"ids": [], "decision": args.action}, "nothing awaits review")
            return 0
        # Ids typed one by one name what goes; --all deletes what nobody listed.
        if args.action == Decision.REJECT and not args.yes and not _confirm_reject(ctx, args.ids):
            return fail("cancelled; nothing was rejected")
    if not args.ids:
        return fail(f"review {args.action} needs at least one candidate id (or --all)", 2)
    decision = Decision(args.action)
    if decision is Decision.ACCEPT:
        return _accept(ctx, args.ids)
    curation.review(ctx.service, ctx.caller, args.ids, decision)
    past = {"reject": "rejected", "defer": "deferred"}[decision]
    ctx.emit(
        {"ids": args.ids, "decision": decision.value}, "\n".join(f"{past} {i}" for i in args.ids)
    )
    return 0


def _accept(ctx: Context, ids: list[str]) -> int:
    """``review accept ID...``: each accepted memory, and the memory it replaces."""
    _, accepted = curation.accept(ctx.service, ctx.caller, ids)
    ctx.emit(
        {
            "ids": ids,
            "decision": Decision.ACCEPT.value,
            "accepted": [
                {
                    "id": a.entry_id,
                    "superseded": a.superseded,
                    "written_to_supersede": a.pending_supersedes,
                }
                for a in accepted
            ],
        },
        "\n".join(map(accepted_line, accepted)),
    )
    return 0


def accepted_line(a: Acceptance) -> str:
    """``accepted B``, ``accepted B; it replaces A``, or, when the memory it was
    written to replace was replaced while it waited, ``…; it replaces C, which
    replaced A since`` (core.memory.acceptance)."""
    if a.superseded is None and a.pending_supersedes is not None:
        return (
            f"accepted {a.entry_id}; it replaces nothing: {a.pending_supersedes}, "
            "which it was written to replace, was deleted since"
        )
    if a.superseded is None:
        return f"accepted {a.entry_id}"
    since = f", which replaced {a.pending_supersedes} since" if a.replaced_since else ""
    return f"accepted {a.entry_id}; it replaces {a.superseded}{since}"


def _confirm_reject(ctx: Context, ids: list[str]) -> bool:
    """Ask before ``review reject --all`` deletes every memory awaiting review."""
    return confirm(
        f"Reject {plural(len(ids), 'memory', 'memories')} awaiting review in group "
        f"{ctx.group}? They are deleted for good.",
        "rejecting every memory awaiting review deletes them and needs confirmation: "
        "run it in a terminal or pass --yes",
    )


def _return(ctx: Context, args: argparse.Namespace) -> int:
    """``review return ID...``: take accepts back, as Ctrl+Z does in the app."""
    if args.all:
        return fail("review return takes the ids of accepted memories, not --all", 2)
    if not args.ids:
        return fail("review return needs at least one accepted memory's id", 2)
    accepted = curation.recorded_acceptances(ctx.service.store_for(ctx.group), args.ids)
    done = curation.return_to_review(ctx.service, ctx.caller, accepted)
    ctx.emit(
        {"returned": list(done.returned), "left": list(done.left)},
        "\n".join(f"returned {i} to review" for i in done.returned),
    )
    if done.left:
        return fail(
            f"not returned: {', '.join(done.left)} changed since the accept (edited, deleted, "
            "or replaced, or the memory it replaced was replaced again) and "
            + ("stays as it is" if len(done.left) == 1 else "stay as they are")
        )
    return 0


def _audit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--limit",
        type=whole,
        default=50,
        metavar="N",
        help=f"at most N rows, newest first (default 50, at most {MAX_AUDIT_ROWS})",
    )
    offset_option(p, "rows")
    p.add_argument("--action", action="append", default=[], help="only this action (repeatable)")
    p.add_argument("--actor", choices=["agent", "operator", "system"], help="only this actor")


@command("audit", "Show the audit log: what happened, never what was stored.")(_audit_args)
def cmd_audit(ctx: Context, args: argparse.Namespace) -> int:
    store = ctx.service.store_for(ctx.group)
    limit = within(args.limit, "limit", 1, MAX_AUDIT_ROWS)
    offset = at_least(args.offset, "offset", 0)
    page = read_page(
        lambda n, skip: audit.recent(
            store, limit=n, offset=skip, actions=args.action, actor=args.actor
        ),
        limit,
        offset,
    )

    def line(r: audit.AuditRecord) -> str:
        ids = " ".join(r.entry_ids[:3]) + (" …" if len(r.entry_ids) > 3 else "")
        bits = [f"{k}={v}" for k, v in sorted(r.detail.items())]
        if r.count is not None:
            bits.insert(0, f"count={r.count}")
        return f"{r.at}  {r.actor:<8} {r.action:<22} {ids}  {' '.join(bits)}".rstrip()

    emit_listing(
        ctx,
        [r.to_dict() for r in page.rows],
        map(line, page.rows),
        offset=offset,
        next_offset=page.next_offset,
        nothing="no audit records",
    )
    return 0
