"""``ambry tag add|remove TAG ID...``: add a tag to many memories, or take one off.

The same core functions as the app's *Add tag* and *Remove tag* (core.memory.bulk),
in one transaction: a new version of each memory that changes, which keeps all
but the tags, and one audit row for them all.
"""

from __future__ import annotations

import argparse

from core.cli.context import Context, command
from core.memory import bulk
from core.model.errors import Conflict, NotFound


def _tag_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["add", "remove"], help="add the tag, or take it off")
    p.add_argument("tag", metavar="TAG", help="the tag (case aside when removing)")
    p.add_argument("ids", nargs="+", metavar="ID", help="ids of current memories")


@command("tag", "Add a tag to memories, or remove one from them.")(_tag_args)
def cmd_tag(ctx: Context, args: argparse.Namespace) -> int:
    ids = list(dict.fromkeys(args.ids))
    _check_current(ctx, ids)
    change = bulk.add_tag if args.action == "add" else bulk.remove_tag
    done = change(ctx.service, ctx.caller, ids, args.tag).result
    changed = {c.old for c in done.done}
    unchanged = [i for i in ids if i not in changed]
    ctx.emit(
        {
            "versions": [{"old": c.old, "new": c.new, "tags": list(c.tags)} for c in done.done],
            "unchanged": unchanged,
        },
        "\n".join(f"{c.old} → {c.new}" for c in done.done),
    )
    had = "already had" if args.action == "add" else "did not have"
    if unchanged:
        n = "one" if len(unchanged) == 1 else f"{len(unchanged):,}"
        ctx.notes([f"{n} {had} the tag {args.tag.strip()!r}, left as it was: {_some(unchanged)}"])
    return 0


def _check_current(ctx: Context, ids: list[str]) -> None:
    """Refuse an id that names no memory, or an earlier version of one.

    Raises:
        NotFound: no such memory.
        Conflict: a newer version replaced it.
    """
    found = ctx.service.store_for(ctx.group).get_many(ids)
    for entry_id in ids:
        entry = found.get(entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id} in group {ctx.group}", field="id")
        if entry.superseded_by is not None:
            raise Conflict(
                f"{entry_id} is an earlier version: {entry.superseded_by} replaced it; "
                f"tag the current version (`ambry history {entry_id}`)",
                current=entry.superseded_by,
            )


def _some(ids: list[str], limit: int = 3) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit:,} more" if len(ids) > limit else "")
