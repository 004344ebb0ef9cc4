"""``ambry trash``: list, restore and empty what agents deleted."""

from __future__ import annotations

import argparse

from core.cli.context import Context, command, fail
from core.cli.data import _confirm
from core.memory import trash


def _trash_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "restore", "empty"],
        help="list the trash (default), restore the given ids, or empty it (all, or the ids)",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="entry ids")
    p.add_argument("--yes", action="store_true", help="empty without asking for confirmation")


def _line(item: trash.TrashItem) -> str:
    tags = f"  #{' #'.join(item.tags)}" if item.tags else ""
    return (
        f"{item.id}  [{item.type}] {item.preview}{tags}\n"
        f"  deleted {item.deleted_at} by the {item.deleted_by} (session {item.session_id}), "
        f"purged after {item.expires_at}"
    )


@command("trash", "List, restore or empty the memories agents deleted.")(_trash_args)
def cmd_trash(ctx: Context, args: argparse.Namespace) -> int:
    match args.action:
        case "list":
            if args.ids:
                return fail("trash list takes no ids", 2)
            items = trash.list_trash(ctx.service, ctx.group)
            ctx.emit(
                [i.to_dict() for i in items],
                "\n".join(map(_line, items)) or "the trash is empty",
            )
        case "restore":
            if not args.ids:
                return fail("trash restore needs at least one entry id (see `ambry trash`)", 2)
            done = trash.restore_many(ctx.service, ctx.caller, args.ids)
            if not done.restored:
                raise done.left[0].error  # nothing came back: the first reason, as one error
            ctx.emit(
                {
                    "restored": list(done.ids),
                    "entries": [r.to_dict() for r in done.restored],
                    "left": [x.to_dict() for x in done.left],
                },
                "\n".join(r.describe() for r in done.restored),
            )
            if not ctx.as_json:  # under --json the reasons are in "left"
                for x in done.left:
                    fail(f"{x.entry_id} not restored: {x.reason}")
            return 1 if done.left else 0
        case "empty":
            what = ", ".join(args.ids) if args.ids else "everything in the trash"
            if not args.yes and not _confirm(f"Delete {what} of group {ctx.group} for good?"):
                return fail("cancelled; nothing was deleted")
            count = trash.empty(ctx.service, ctx.caller, args.ids)
            plural = "y" if count == 1 else "ies"
            ctx.emit({"deleted": count}, f"deleted {count} entr{plural} for good")
    return 0
