"""``ambry duplicates``: list near-duplicate memories, and keep one of a cluster."""

from __future__ import annotations

import argparse

from core.cli.context import Context, command, fail
from core.cli.data import _confirm
from core.cli.semantic import SemanticSearchOff, catch_up
from core.memory.merging import Carried, keep_one
from core.model.entries import MemoryEntry
from core.model.text import one_line, plural
from core.recall.duplicates import (
    DUPLICATE_COSINE,
    MIN_THRESHOLD,
    Cluster,
    Survey,
    near_duplicates,
)
from core.semantic.embedding import unavailable_reason
from core.semantic.hybrid import Mode

#: What the kept memory took, in words.
_CARRIED = {Carried.PIN: "pin", Carried.CONFIDENCE: "higher confidence"}


def _threshold(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not MIN_THRESHOLD <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be between {MIN_THRESHOLD} and 1")
    return value


def _duplicates_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=["list", "keep"],
        help="list the clusters (default), or keep ID and delete the others of its cluster",
    )
    p.add_argument("id", nargs="?", metavar="ID", help="with keep: the memory to keep")
    p.add_argument(
        "--threshold",
        type=_threshold,
        default=DUPLICATE_COSINE,
        metavar="X",
        help=f"cosine similarity from which memories pair up (default {DUPLICATE_COSINE})",
    )
    p.add_argument("--yes", action="store_true", help="keep without asking for confirmation")


def _line(entry: MemoryEntry, similarity: float) -> str:
    tags = f"  #{' #'.join(entry.tags)}" if entry.tags else ""
    return f"  {entry.id}  [{entry.type}] {one_line(entry.content, 200)}{tags}  ({similarity:.2f})"


def _survey(ctx: Context, threshold: float) -> tuple[Survey, dict[str, MemoryEntry]]:
    # By meaning only; the summary counts what had no vector to compare.
    catch_up(ctx, Mode.SEMANTIC, say=False)
    model_dir = ctx.service.config.embedding_model_dir
    survey = near_duplicates(
        ctx.service.store_for(ctx.group), threshold=threshold, model_dir=model_dir
    )
    if survey.off:
        raise SemanticSearchOff(
            f"semantic search is off: {unavailable_reason(model_dir)}; "
            "near-duplicates are found by meaning"
        )
    ids = [i for c in survey.clusters for i in c.ids]
    return survey, ctx.service.entries(ctx.group, ids)


def _left_out(survey: Survey) -> str:
    parts = []
    if survey.waiting:
        parts.append(
            f"{plural(survey.waiting, 'memory', 'memories')} without a vector yet "
            "(run `ambry reindex`)"
        )
    if survey.sealed:
        parts.append(f"{survey.sealed:,} private or secret (never compared)")
    return f"; not compared: {', '.join(parts)}" if parts else ""


def _cluster_dict(cluster: Cluster, entries: dict[str, MemoryEntry]) -> dict[str, object]:
    return {
        "similarity": cluster.lowest,
        "entries": [
            {**entries[i].to_dict(), "similarity": cluster.similarity[i]}
            for i in cluster.ids
            if i in entries
        ],
    }


@command("duplicates", "List near-duplicate memories, or keep one of a cluster.")(_duplicates_args)
def cmd_duplicates(ctx: Context, args: argparse.Namespace) -> int:
    survey, entries = _survey(ctx, args.threshold)
    match args.action:
        case "list":
            if args.id:
                return fail("duplicates list takes no id (see `ambry duplicates keep ID`)", 2)
            blocks = [
                f"{n}. similarity {c.lowest:.2f}\n"
                + "\n".join(_line(entries[i], c.similarity[i]) for i in c.ids if i in entries)
                for n, c in enumerate(survey.clusters, 1)
            ]
            head = (
                f"{plural(len(survey.clusters), 'cluster')} of near-duplicates among "
                f"{plural(survey.compared, 'memory', 'memories')} compared"
                f"{_left_out(survey)}"
            )
            tail = "\nkeep one of a cluster: ambry duplicates keep ID" if blocks else ""
            ctx.emit(
                {
                    "threshold": args.threshold,
                    "clusters": [_cluster_dict(c, entries) for c in survey.clusters],
                    "compared": survey.compared,
                    "waiting": survey.waiting,
                    "sealed": survey.sealed,
                },
                "\n\n".join([head, *blocks]) + tail,
            )
        case "keep":
            if not args.id:
                return fail("duplicates keep needs the id of the memory to keep", 2)
            cluster = next((c for c in survey.clusters if args.id in c.ids), None)
            if cluster is None:
                return fail(
                    f"{args.id} has no near-duplicate at similarity {args.threshold} "
                    "(see `ambry duplicates`)"
                )
            others = [i for i in cluster.ids if i != args.id]
            listing = "\n".join(
                _line(entries[i], cluster.similarity[i]) for i in others if i in entries
            )
            question = (
                f"Keep {args.id} and delete {plural(len(others), 'memory', 'memories')}?\n"
                f"{listing}\nTheir tags move onto the kept one, and so do a pin and a "
                "higher confidence."
            )
            if not args.yes and not _confirm(question):
                return fail("cancelled; nothing was deleted")
            done = keep_one(ctx.service, ctx.caller, args.id, others)
            said = f"kept {done.kept.id}"
            if done.tags_added:
                said += f" (a new version of {args.id}, with #{' #'.join(done.tags_added)})"
            if done.carried:
                said += f", which took their {' and '.join(_CARRIED[c] for c in done.carried)}"
            said += "; deleted " + ", ".join(done.deleted.ids)
            if done.joined:
                said += (
                    f"; their earlier versions are now the kept one's ({', '.join(done.joined)})"
                )
            ctx.emit(
                {
                    "kept": done.kept.to_dict(),
                    "deleted": list(done.deleted.ids),
                    "tags_added": list(done.tags_added),
                    "carried": [c.value for c in done.carried],
                    "joined": list(done.joined),
                },
                said,
            )
    return 0
