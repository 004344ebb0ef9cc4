"""``ambry store``, ``search``, ``show``, ``delete``, ``history``."""

from __future__ import annotations

import argparse
from dataclasses import replace

from core.agent.search_results import search_memories
from core.cli.context import (
    Context,
    at_least,
    command,
    emit_listing,
    format_entry,
    format_result,
    offset_option,
    paging_line,
    read_stdin,
    tool_limit_option,
    whole,
    within,
)
from core.memory.writing import clean_tags
from core.model.entries import (
    ENTRY_TYPES,
    MAX_SEARCH_LIMIT,
    MAX_SEARCH_OFFSET,
    EntryFilter,
    EntryType,
    Privacy,
    SourceType,
    Status,
    Trust,
)
from core.model.errors import InvalidParams
from core.model.paging import read_page
from core.model.text import one_line, plural
from core.policy.manifest import validate_args
from core.policy.screening import strip_controls
from core.semantic.hybrid import Mode


def _tags(text: str | None) -> list[str]:
    """``--tags A,B`` as a list. An empty tag is refused, as the tools refuse one:
    ``--tags ""`` (an unset shell variable, say), or ``a,,b`` and ``a,`` (a stray comma)."""
    if text is None:
        return []
    if not _words(text):
        raise InvalidParams(
            "--tags is empty; give tags separated by commas, or leave the option out",
            field="tags",
            rule="minLength",
        )
    tags = text.split(",")
    for i, tag in enumerate(tags):
        if not _words(tag):
            raise InvalidParams(
                f"--tags {text!r}: tag {i + 1} is empty; take out the extra comma",
                field=f"tags.{i}",
                rule="minLength",
            )
    return tags


def _words(text: str) -> str:
    """``text`` as a tag keeps it: without control characters and outer white space."""
    return " ".join(strip_controls(text).split())


def _store_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("content", help="the memory, as plain text ('-' reads standard input)")
    p.add_argument("--type", default="fact", choices=ENTRY_TYPES, help="entry type (default fact)")
    p.add_argument("--tags", metavar="A,B", help="comma-separated tags")
    p.add_argument("--supersedes", metavar="ID", help="id of the entry this one replaces")
    p.add_argument(
        "--source",
        choices=[t.value for t in SourceType],
        help="where the memory came from (default operator: you; the same text with "
        "--supersedes, a change of tags, keeps the source it had)",
    )
    p.add_argument(
        "--trust",
        choices=[t.value for t in Trust],
        help="trust of the source (default depends on --source; low goes to review)",
    )
    p.add_argument(
        "--privacy",
        choices=[v.value for v in Privacy],
        default="public",
        help="default public; private/secret: encrypted at rest (needs an OS keyring)",
    )


@command("store", "Store a memory entry and print its id.", starts_group=True)(_store_args)
def cmd_store(ctx: Context, args: argparse.Namespace) -> int:
    content = read_stdin("content") if args.content == "-" else args.content
    tool_args: dict[str, object] = {"type": args.type, "content": content, "tags": _tags(args.tags)}
    if args.supersedes is not None:
        # An empty --supersedes is refused, not dropped: the new entry would not replace
        # the one meant, and both would stay current.
        if not args.supersedes.strip():
            raise InvalidParams(
                "--supersedes must not be empty: give the id (mem-...) of the entry this one "
                "replaces, or leave the option out",
                field="supersedes",
                rule="minLength",
            )
        tool_args["supersedes"] = args.supersedes
    request = replace(
        ctx.service.parse_store_args(tool_args),
        claimed_type=SourceType(args.source) if args.source else None,
        claimed_trust=Trust(args.trust) if args.trust else None,
        privacy=Privacy(args.privacy),
    )
    outcome = ctx.service.store_entries(ctx.caller, [request])[0]
    said = outcome.to_dict()
    # stdout holds the id alone, so `id=$(ambry store …)` captures it; what the person
    # should know about the write goes to stderr (--json carries it in its keys).
    notes = []
    if not outcome.created:
        notes.append("already stored; the existing entry was kept")
        tags = outcome.tags_note()
        if tags:
            notes.append(tags)
        if outcome.tags_not_added:
            notes.append(
                f"to set its tags, store the text again with --supersedes {outcome.entry.id} "
                "and --tags with every tag it should have"
            )
    if outcome.replaced_earlier_by is not None:
        notes.append(
            f"this text was stored before and replaced by {outcome.replaced_earlier_by}, "
            "which stays current: both are current now; to make this one replace it, "
            f"store it again with --supersedes {outcome.replaced_earlier_by}"
        )
    if outcome.accepted is not None:
        replaced = f", and it replaces {outcome.superseded}" if outcome.superseded else ""
        notes.append(
            f"it awaited review ({outcome.accepted.review_reason}); this store made it "
            f"active{replaced} (`ambry review return {outcome.entry.id}` takes that back)"
        )
    if outcome.entry.status is Status.CANDIDATE:
        replaces = (
            f" and replaces {outcome.supersedes_on_accept}" if outcome.supersedes_on_accept else ""
        )
        notes.append(
            f"awaiting review ({outcome.entry.review_reason}): "
            f"`ambry review accept {outcome.entry.id}` makes it active{replaces}"
        )
    if outcome.redacted:
        # What was kept is not what was typed: say so, and of which kind.
        kinds = ", ".join(said["redacted_kinds"])
        notes.append(f"{plural(said['redacted'], 'secret')} replaced by [SECRET_REDACTED]: {kinds}")
    ctx.emit({**outcome.entry.to_dict(), "created": outcome.created, **said}, outcome.entry.id)
    ctx.notes(notes)
    return 0


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("query", nargs="*", help="words to search for (none: most recent)")
    p.add_argument("--type", choices=ENTRY_TYPES, help="only this type")
    p.add_argument("--tags", metavar="A,B", help="only entries with all these tags")
    p.add_argument("--include-superseded", action="store_true", help="also superseded entries")
    p.add_argument(
        "--limit",
        type=whole,
        default=20,
        metavar="N",
        help=f"at most N results (default 20, at most {MAX_SEARCH_LIMIT})",
    )
    p.add_argument(
        "--offset",
        type=whole,
        default=0,
        metavar="N",
        help=f"skip the N best results, to read on (default 0, at most {MAX_SEARCH_OFFSET})",
    )
    p.add_argument(
        "--mode",
        choices=("auto", "keyword", "semantic"),
        default="auto",
        help="auto: words and meaning fused (default); keyword or semantic alone",
    )


@command("search", "Search memories by words and meaning, or list the most recent.")(_search_args)
def cmd_search(ctx: Context, args: argparse.Namespace) -> int:
    tool_args: dict[str, object] = {
        "query": " ".join(args.query),
        "limit": args.limit,
        "offset": args.offset,
        "include_superseded": args.include_superseded,
        "mode": args.mode,
    }
    if args.type:
        tool_args["type"] = args.type
    if args.tags is not None:  # "" too: refused below, never a search of every tag
        tool_args["tags"] = _tags(args.tags)
    # The tool's own checks (both bounds of --limit and --offset), before any embedding.
    validate_args("memory_search", tool_args)
    waiting: dict[str, object] = {}
    if args.mode != "keyword" and args.query:
        from core.cli.semantic import catch_up

        waiting = catch_up(ctx, Mode(args.mode), say=not ctx.as_json)
    # memory_search's result, key for key: what the text shows, paging, claims, and
    # the rows not found by meaning yet.
    found = search_memories(ctx.service, ctx.caller, tool_args, waiting)
    page = found.page
    results = page.results
    ranked = bool(str(tool_args["query"]).strip())
    none = "no matching memories"
    if args.offset:
        none = f"no matching memories at --offset {args.offset} or beyond"
    text = "\n".join(format_result(r, ranked=ranked) for r in results) or none
    more = paging_line(page.next_offset, page.truncated, "--type or --tags")
    if more:
        text += "\n" + more
    if found.claims:
        # Labelled, so an unverified claim is never read as one of the memories above.
        text += "\n\nclaims:\n" + "\n".join(
            f"{c['id']}  {c['text']}\n  ({c['label']})" for c in found.claims
        )
    ctx.emit(found.to_dict(), text)
    return 0


def _id_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="entry id (mem-...)")


@command("show", "Print one memory entry.")(_id_arg)
def cmd_show(ctx: Context, args: argparse.Namespace) -> int:
    entry = ctx.service.get(ctx.group, args.id)
    ctx.emit(entry.to_dict(), format_entry(entry))
    return 0


@command("reveal", "Print a secret entry in clear (audited).")(_id_arg)
def cmd_reveal(ctx: Context, args: argparse.Namespace) -> int:
    entry = ctx.service.reveal(ctx.caller, args.id)
    ctx.emit(entry.to_dict(), format_entry(entry))
    return 0


@command("history", "Print the supersession chain of an entry, oldest first.")(_id_arg)
def cmd_history(ctx: Context, args: argparse.Namespace) -> int:
    chain = ctx.service.history(ctx.group, args.id)
    ctx.emit([e.to_dict() for e in chain], "\n".join(format_entry(e) for e in chain))
    return 0


@command("delete", "Delete one memory entry by id (it names one entry, so no prompt).")(_id_arg)
def cmd_delete(ctx: Context, args: argparse.Namespace) -> int:
    done = ctx.service.delete(ctx.caller, args.id)
    said = f"deleted {args.id}"
    if done.current_again is not None:
        # The fact has not vanished: say which version the agent now sees.
        again = ctx.service.get(ctx.group, done.current_again)
        said += f"\n{again.id} is current again: {one_line(again.content, 200)}"
    ctx.emit(done.to_dict(), said)
    return 0


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--type", choices=ENTRY_TYPES, help="only this type")
    p.add_argument("--tags", metavar="A,B", help="only entries with all these tags")
    # memory_search's page size (cmd_list checks it); no ceiling on the offset.
    tool_limit_option(p, "memory_search", "entries", 50)
    offset_option(p, "entries")


@command("list", "List current entries, newest first, a page at a time.")(_list_args)
def cmd_list(ctx: Context, args: argparse.Namespace) -> int:
    # memory_search's page size, which lists the same entries when given no words. Not
    # its deepest offset: that bounds the ranking's work, and a list by age reads on
    # to the oldest entry.
    limit = within(args.limit, "limit", 1, MAX_SEARCH_LIMIT)
    offset = at_least(args.offset, "offset", 0)
    # Every privacy, as the list shows them: a secret entry's tags find it, masked.
    flt = EntryFilter(
        types=(EntryType(args.type),) if args.type else (), tags=clean_tags(_tags(args.tags))
    )
    store = ctx.service.store_for(ctx.group)
    page = read_page(lambda n, skip: store.recent(flt, n, skip), limit, offset)
    entries = [ctx.service.readable(e) for e in page.rows]  # private text decrypted, secrets masked
    empty = None
    if not entries and not offset:
        # The list holds current memories; say where the ones not yet accepted are
        # (counted as the Review badge counts them).
        waiting = store.count(EntryFilter(statuses=(Status.CANDIDATE,)))
        if waiting:
            empty = (
                f"no memories ({plural(waiting, 'memory', 'memories')} awaiting review: "
                f"`ambry review` lists {'it' if waiting == 1 else 'them'})"
            )
    emit_listing(
        ctx,
        [e.to_dict() for e in entries],
        map(format_entry, entries),
        offset=offset,
        next_offset=page.next_offset,
        nothing="no memories",
        empty=empty,
    )
    return 0
