"""``ambry reindex`` and ``ambry related``: the vectors behind semantic search."""

from __future__ import annotations

import argparse
import contextlib
import sys
from typing import Any

from core.agent.search_results import related_memories
from core.cli.context import Context, command, fail, format_result, whole
from core.model.errors import AmbryError
from core.recall.related import DEFAULT_RELATED, MAX_RELATED
from core.semantic import backfill, vectors
from core.semantic.embedding import EmbeddingUnavailable, shared_embedder, unavailable_reason
from core.semantic.hybrid import Mode
from core.storage import index_levels
from core.storage.best_effort import best_effort


class SemanticSearchOff(AmbryError):
    """The embedding model cannot be loaded; the message says why."""

    code = "semantic_search_off"


#: A search from the command line embeds at most this many waiting rows first.
CATCH_UP_LIMIT = 1000


def catch_up(ctx: Context, mode: Mode, *, say: bool = True) -> dict[str, Any]:
    """Embed the few rows written since the last run, so a one-shot search sees them.

    The CLI runs no background worker; a long backlog is left to ``ambry reindex``.
    Returns what a search in ``mode`` adds about that backlog (``pending_vectors`` and
    ``note``, as the tools add theirs), empty when there is none; ``say`` also prints
    the note on stderr.
    """
    embedder = shared_embedder(ctx.service.config.embedding_model_dir)
    if embedder is None:
        return {}
    store = ctx.service.store_for(ctx.group)
    if store.read_only:
        return {}  # a read-only or full disk: the search still works, by words for new rows
    waiting = sum(
        vectors.pending_count(store.conn, kind, embedder.model_id) for kind in vectors.TABLES
    )
    if 0 < waiting <= CATCH_UP_LIMIT:
        # Vectors are derived data: a failed write here must never fail the search.
        # A model that fails on a row is logged; the search then ranks by words.
        with (
            best_effort(store, "embedding new rows before the search"),
            contextlib.suppress(EmbeddingUnavailable),
        ):
            backfill.reindex(store.conn, store.path, ctx.group, embedder)
        return {}
    said = backfill.pending_note(waiting, mode, command_line=True)
    if said and say:
        print(f"note: {said['note']}", file=sys.stderr)
    return said


def _reindex_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="drop every vector and embed all again (after changing the model)",
    )
    p.add_argument(
        "--words",
        action="store_true",
        help="rebuild the word indexes from the memories, turns, claims and summaries "
        "instead (when doctor finds one damaged); needs no model",
    )


@command("reindex", "Embed the memories and turns that have no vector yet, with progress.")(
    _reindex_args
)
def cmd_reindex(ctx: Context, args: argparse.Namespace) -> int:
    if args.words:
        if args.rebuild:
            return fail("--words rebuilds the word indexes, --rebuild the vectors: give one", 2)
        return _rebuild_words(ctx)
    model_dir = ctx.service.config.embedding_model_dir
    embedder = shared_embedder(model_dir)
    if embedder is None:
        raise SemanticSearchOff(
            f"semantic search is off: {unavailable_reason(model_dir)}; keyword search still works"
        )
    store = ctx.service.store_for(ctx.group)
    shown = not ctx.as_json and sys.stderr.isatty()

    def report(progress: backfill.Progress) -> None:
        if shown:
            print(f"\rembedded {progress.done} of {progress.total}", end="", file=sys.stderr)

    try:
        done = backfill.reindex(
            store.conn, store.path, ctx.group, embedder, rebuild=args.rebuild, on_progress=report
        )
    except EmbeddingUnavailable as exc:
        raise SemanticSearchOff(f"semantic search is off: {exc}") from None
    except KeyboardInterrupt:
        if shown:
            print(file=sys.stderr)
        # Each batch commits on its own: what is embedded stays, a new run goes on.
        return fail(
            "interrupted; the vectors made so far are kept: run `ambry reindex` again to go on",
            130,
        )
    else:
        if shown:
            print(file=sys.stderr)
    ctx.emit(
        {**done.to_dict(), "model": embedder.model_id},
        f"{done.done} of {done.total} memories and turns have vectors ({embedder.model_id})",
    )
    return 0


def _rebuild_words(ctx: Context) -> int:
    """Rebuild every full-text index of the group from its rows, in one transaction."""
    store = ctx.service.store_for(ctx.group)
    with store.transaction():
        rebuilt = index_levels.rebuild_all(store)
    ctx.emit(
        {"group": ctx.group, "rebuilt": list(rebuilt)},
        f"rebuilt the word indexes of group {ctx.group} from its rows: {', '.join(rebuilt)}",
    )
    return 0


def _related_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("id", help="entry id (mem-...)")
    p.add_argument(
        "--limit",
        type=whole,
        default=DEFAULT_RELATED,
        metavar="N",
        help=f"at most N entries (default {DEFAULT_RELATED}, at most {MAX_RELATED})",
    )


@command("related", "List the memories closest in meaning to one entry.")(_related_args)
def cmd_related(ctx: Context, args: argparse.Namespace) -> int:
    related = related_memories(ctx.service, ctx.caller, {"id": args.id, "limit": args.limit})
    text = "\n".join(format_result(r) for r in related.results)  # ends with its score
    # memory_related's result, key for key, as `ambry --json search` prints memory_search's.
    ctx.emit(related.to_dict(), text or "no related memories")
    return 0
