"""``ambry claims``: the person's side of claims (review, decide, extract, mode, diagnostics)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from typing import Any

from core.agent.listings import claim_search
from core.claims import gate, modes, records
from core.claims.diagnostics import diagnose
from core.claims.extract import Extraction
from core.claims.model import MAX_SOURCES, ClaimKind, ClaimStatus, Decision
from core.claims.verify import ClaimReport, verify_claim
from core.cli.context import (
    Context,
    command,
    common_options,
    confirm,
    emit_listing,
    fail,
    offset_option,
    tool_limit_option,
    tool_page,
    whole,
)
from core.model.errors import AmbryError, InvalidParams, NotFound
from core.model.text import plural

_DECISIONS = {
    "accept": Decision.ACCEPT,
    "reject": Decision.REJECT,
    "defer": Decision.DEFER,
    "retract": Decision.RETRACT,
}
_SOURCE_HELP = (
    "a source: exchange:ID, handoff:THREAD[@VERSION], attachment:ATT_ID[#START-END] or "
    "memory:MEM_ID (repeat for several)"
)


def _claims_args(p: argparse.ArgumentParser) -> None:
    parsers = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))

    def sub(name: str, help_text: str) -> argparse.ArgumentParser:
        # The global options may follow the subcommand too: `ambry claims list --json`.
        parser = parsers.add_parser(name, help=help_text, description=help_text)
        common_options(parser, suppress=True)
        return parser

    ls = sub("list", "list claims, newest first (or best match with --query)")
    ls.add_argument("--status", choices=[s.value for s in ClaimStatus], help="only this status")
    ls.add_argument("--kind", choices=[k.value for k in ClaimKind], help="only this kind")
    ls.add_argument(
        "--query", default="", metavar="WORDS", help="words to look for (best match first)"
    )
    tool_limit_option(ls, "claim_search", "claims", 50)
    offset_option(ls, "claims", tool="claim_search")
    for name, text in (
        ("show", "a claim, its sources and its decision history"),
        ("verify", "check a claim's sources now and recommend (changes nothing)"),
        ("history", "the decision receipts of a claim"),
    ):
        sub(name, text).add_argument("id", help="the claim's id (clm-...)")
    for name, text in (
        ("accept", "verify a candidate after reviewing it and its sources"),
        ("reject", "reject a candidate"),
        ("defer", "leave a candidate for later"),
        ("retract", "take a verified claim back out of the trusted lane"),
    ):
        sp = sub(name, text)
        sp.add_argument("id", help="the claim's id (clm-...)")
        sp.add_argument("--note", default="", help="why, kept with the decision receipt")
        sp.add_argument("--yes", action="store_true", help="decide without asking after the review")
    pr = sub("propose", "record a claim of your own (a candidate to review)")
    pr.add_argument("text", help="the statement")
    pr.add_argument(
        "--kind",
        required=True,
        choices=[k.value for k in ClaimKind],
        help="what the claim is about",
    )
    pr.add_argument("--source", action="append", required=True, metavar="SOURCE", help=_SOURCE_HELP)
    pr.add_argument("--recheck-days", type=whole, help="days a verified claim stays fresh")
    ex = sub(
        "extract",
        "record candidates from thread handoffs and day summaries (both only read)",
    )
    ex.add_argument(
        "--thread",
        metavar="THREAD",
        help="only this thread's current handoff and day summaries (its id or title)",
    )
    sub("diagnose", "recurring, conflicting, ready and decayed candidates")
    md = sub("mode", "show, plan, apply or roll back the claims mode")
    md.add_argument(
        "step",
        choices=["show", "plan", "apply", "rollback"],
        nargs="?",
        default="show",
        help="show the mode (default), plan a change (a dry run), apply it, or roll it back",
    )
    md.add_argument("target", nargs="?", help="observe, diagnostic or enforce (plan, apply)")
    md.add_argument("--yes", action="store_true", help="confirm apply or rollback")


def parse_source(text: str) -> dict[str, Any]:
    """``exchange:12``, ``handoff:thr-x@3`` (or the thread's title), ``attachment:att_…#10-80``,
    ``memory:mem-…``."""
    kind, sep, rest = text.partition(":")
    if not sep or not rest:
        raise InvalidParams(
            f"--source {text!r}: write it as KIND:REF ({_SOURCE_HELP})", field="source"
        )
    match kind:
        case "exchange":
            if not rest.isdigit():
                raise InvalidParams(
                    f"--source {text!r}: an exchange id is a number", field="source"
                )
            return {"kind": kind, "id": int(rest)}
        case "handoff":
            # A title may hold "@": the version is what follows the last one.
            thread, _, version = rest.rpartition("@") if "@" in rest else (rest, "", "")
            out: dict[str, Any] = {"kind": kind, "thread": thread}
            if version:
                if not version.isdigit():
                    raise InvalidParams(
                        f"--source {text!r}: the version is a number", field="source"
                    )
                out["version"] = int(version)
            return out
        case "attachment":
            rid, _, span = rest.partition("#")
            out = {"kind": kind, "id": rid}
            if span:
                start, dash, end = span.partition("-")
                if not (dash and start.isdigit() and end.isdigit()):
                    raise InvalidParams(
                        f"--source {text!r}: write the span as #START-END", field="source"
                    )
                out |= {"start": int(start), "end": int(end)}
            return out
        case "memory":
            return {"kind": kind, "id": rest}
        case _:
            raise InvalidParams(
                f"--source {text!r}: the kind must be exchange, handoff, attachment or memory",
                field="source",
            )


#: A refused source's field as the tool names it: ``sources.0`` and the part, ``version``.
_SOURCE_FIELD = re.compile(r"sources\.(\d+)(?:\.(\w+))?")
#: Each part of a source by what it is in the ``--source`` typed (``handoff:THREAD@VERSION``).
_PARTS = {
    "thread": "the thread",
    "version": "the version",
    "start": "the span's start",
    "end": "the span's end",
    "kind": "the kind",
}


def _as_typed(exc: AmbryError, typed: Sequence[str], sources: Sequence[dict[str, Any]]) -> str:
    """``exc``'s message naming the ``--source`` as typed rather than the tool's path to
    it: "sources.0.version must be at least 1" reads "--source 'handoff:thr-…@0': the
    version must be at least 1"; "" when it names no single source."""
    field = exc.data.get("field")
    if field == "sources" and exc.data.get("rule") == "maxItems":
        return (
            f"--source is given {len(typed)} times; a claim cites at most {MAX_SOURCES} "
            "sources, so split the claim"
        )
    found = _SOURCE_FIELD.fullmatch(field) if isinstance(field, str) else None
    if found is None or int(found[1]) >= len(typed):
        return ""
    index, part = int(found[1]), found[2]
    tool, sep, message = exc.message.partition(": ")
    message = message if sep and tool == "claim_propose" else exc.message
    if message.startswith(f"sources[{index}]: "):  # what the source itself says
        rest = message.removeprefix(f"sources[{index}]: ")
    elif message.startswith(f"{field} ") and part:  # a bound of the tool's schema
        name = f"the {sources[index]['kind']} id" if part == "id" else _PARTS.get(part, part)
        rest = f"{name} {message.removeprefix(f'{field} ')}"
    else:
        return ""
    return f"--source {typed[index]!r}: {rest}"


def _review(report: ClaimReport) -> str:
    c = report.claim
    lines = [
        f"{c.id}  [{c.kind.value}] {c.status.value} ({c.origin.value}), re-check every "
        f"{c.recheck_days} days" + (f", due {c.recheck_due_at}" if c.recheck_due_at else ""),
        f"  claim: {c.text}",
        f"  sources now: {report.state.value}; recommendation: {report.recommendation.value}",
    ]
    for s in report.sources:
        lines.append(f"  - {s.handle.label}: {s.state.value}")
        lines.append(f"      cited: {s.handle.quote[:300]!r}")
        if s.matched_text:
            lines.append(f"      says now: {s.matched_text[:300]!r}")
        lines.append(f"      {s.evidence}")
    return "\n".join(lines)


def _ask(question: str) -> bool:
    return confirm(
        question,
        "deciding on a claim needs your confirmation: run it in a terminal, or pass --yes "
        "after reading `ambry claims show ID`",
    )


def _decide(ctx: Context, args: argparse.Namespace) -> int:
    decision = _DECISIONS[args.action]
    store = ctx.service.store_for(ctx.group)
    report = verify_claim(store, records.get_claim(store, args.id))
    if not ctx.as_json:
        print(_review(report))
    if not args.yes and not _ask(f"{decision.value} this claim, as shown above?"):
        return fail("cancelled; nothing was decided")
    outcome = gate.decide(
        ctx.service,
        ctx.caller,
        args.id,
        decision,
        confirmed_text=report.claim.text,
        confirmed_state=report.state,
        note=args.note,
    )
    ctx.emit(
        outcome.to_dict(),
        f"{decision.value}: {args.id} is {outcome.claim.status.value} "
        f"(receipt {outcome.receipt_id})",
    )
    return 0


def _extracted(result: Extraction) -> str:
    lines = [
        f"{result.created} new candidate(s), {result.recurring} recurring, "
        f"from {result.statements} statement(s)"
    ]
    for name, read, counts in (
        ("handoff", result.handoffs, result.from_handoffs),
        ("day summary", result.summaries, result.from_summaries),
    ):
        lines.append(
            f"  {name} ({read} read): {counts.statements} statement(s), "
            f"{counts.created} new, {counts.recurring} recurring"
        )
    if result.unsourced:
        lines.append(
            f"  {result.unsourced} of them were built before points recorded their turns and "
            "gave nothing: `ambry layers --compress` draws them again"
        )
    if not result.statements:
        lines.append(
            "Candidates come from statements in thread handoffs (`ambry handoff`: list items, "
            "not tasks, next steps or questions) and from what the person said in day "
            "summaries (`ambry layers --compress` builds them from logged turns)."
        )
    return "\n".join(lines)


def _mode(ctx: Context, args: argparse.Namespace) -> int:
    svc = ctx.service
    match args.step:
        case "show":
            mode = modes.current_mode(svc.store_for(ctx.group))
            ctx.emit(
                {"group": ctx.group, "mode": mode.value, "effects": modes.effects(mode)},
                f"claims mode of {ctx.group}: {mode.value}\n"
                + "\n".join(f"  - {e}" for e in modes.effects(mode)),
            )
            return 0
        case "plan" | "apply" if args.target is None:
            return fail(
                f"claims mode {args.step} needs the mode: observe, diagnostic or enforce", 2
            )
        case "plan":
            result = modes.plan(svc, ctx.group, args.target)
        case "apply":
            result = modes.apply(svc, ctx.caller, args.target, yes=args.yes)
        case _:
            if args.target is not None:
                return fail(
                    "claims mode rollback takes no mode: it restores the mode the last "
                    "change replaced",
                    2,
                )
            result = modes.rollback(svc, ctx.caller, yes=args.yes)
    d = result.to_dict()
    verb = "changed" if result.applied else "would change" if result.changes else "already"
    text = [f"claims mode of {ctx.group}: {d['current']} -> {d['target']} ({verb})"]
    text += [f"  - {e}" for e in d["effects"]] + [f"  boundary: {b}" for b in d["boundary"]]
    if result.backup:
        text.append(f"  prior settings backed up to {result.backup}")
    elif not result.applied:
        text.append(f"  apply it with: ambry claims mode apply {d['target']} --yes")
    ctx.emit(d, "\n".join(text))
    return 0


@command(
    "claims",
    "Review, verify, reject or retract claims; extract them; set the claims mode.",
    starts_group=True,
)(_claims_args)
def cmd_claims(ctx: Context, args: argparse.Namespace) -> int:
    store = ctx.service.store_for(ctx.group)
    match args.action:
        case "list":
            limit, offset = tool_page(args, "claim_search")
            # claim_search's result, key for key (the person's reads are not audited).
            page, listing = claim_search(
                ctx.service,
                ctx.group,
                query=args.query,
                status=args.status,
                kind=args.kind,
                limit=limit,
                offset=offset,
            )
            emit_listing(
                ctx,
                listing,
                (f"{c.id}  [{c.kind.value}] {c.status.value}: {c.text}" for c in page.rows),
                offset=offset,
                next_offset=page.next_offset,
                truncated=page.truncated,
                narrow="--status or --kind",
                nothing="no claims",
            )
        case "show" | "verify":
            report = verify_claim(store, records.get_claim(store, args.id))
            text = _review(report)
            if args.action == "show":
                receipts = records.decisions(store, args.id)
                text += "".join(
                    f"\n  decided {d.at}: {d.decision.value} by the {d.actor}" for d in receipts
                )
            ctx.emit(report.to_dict(), text)
        case "history":
            receipts = records.decisions(store, records.get_claim(store, args.id).id)
            ctx.emit(
                [d.to_dict() for d in receipts],
                "\n".join(
                    f"{d.at}  {d.decision.value} by the {d.actor} (session {d.session_id}): "
                    + ", ".join(f"{s['source']} {s['state']}" for s in d.source_states)
                    + (f"  note: {d.note}" if d.note else "")
                    for d in receipts
                )
                or "no decisions yet",
            )
        case "accept" | "reject" | "defer" | "retract":
            return _decide(ctx, args)
        case "propose":
            sources = [parse_source(s) for s in args.source]
            params: dict[str, Any] = {"text": args.text, "kind": args.kind, "sources": sources}
            if args.recheck_days is not None:
                params["recheck_days"] = args.recheck_days
            try:
                outcome = gate.propose(ctx.service, ctx.caller, params)
            except (InvalidParams, NotFound) as exc:
                message = _as_typed(exc, args.source, sources)
                if not message:
                    raise
                raise type(exc)(message, **exc.data) from None
            claim = outcome.claim
            # The id alone, so `cid=$(ambry claims propose …)` holds it.
            ctx.emit(outcome.to_dict(), claim.id)
            if not outcome.created:
                added = plural(outcome.added_sources, "source")
                ctx.notes([f"the same claim exists ({claim.status.value}); {added} added to it"])
        case "extract":
            thread = None if args.thread is None else ctx.thread(args.thread).id
            result = ctx.service.extract_claims(ctx.caller, thread)
            ctx.emit(result.to_dict(), _extracted(result))
        case "diagnose":
            d = diagnose(store).to_dict()
            out = [f"claims diagnostics ({d['mode']} mode, {d['scanned']} candidates scanned)"]
            for name in ("recurring", "conflicts", "ready", "decayed"):
                out.append(f"{name}: {len(d[name])}")
                out += [f"  - {i['id']} {', '.join(i['sources'])}: {i['text']}" for i in d[name]]
            ctx.emit(d, "\n".join(out))
        case "mode":
            return _mode(ctx, args)
    return 0
