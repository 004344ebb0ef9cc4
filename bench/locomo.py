"""Episodic recall on LoCoMo (development split): how often the evidence turns come back.

Each conversation's turns are logged as exchanges (``core.continuity.episodes``) in a fresh
group, with the speaker's name and the session's date, and embedded (the
backfill, timed); each question is searched with ``find_exchanges`` and scored
against its evidence turns: recall@5, recall@10, any-hit@10 and session-level
recall@10 (the evidence sessions among the top ten turns'), by category, beside the
reference lexical baseline in ../shared/data/README.md. Also at that README's session
granularity: the evidence sessions among the ten best sessions, each session ranked by
its best turn in a search for the most turns ``exchange_search`` returns (not timed).
Evaluation only: the data set is read from ../shared/data and never shipped. Skips
when it is absent.

Usage: python bench/locomo.py [--data PATH] [--mode auto|keyword|semantic] [--stores DIR]
                              [--one-store-turns N]

Query time is also taken in one store of at least 6,000 turns (every conversation
logged into one group, then again under new turn ids), the size the targets name.

``--stores DIR`` keeps each conversation's data dir under DIR and reuses it on
the next run, so a change to the ranking is measured in seconds rather than
re-logging and re-embedding every turn (the embedding rate is then not reported).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ROOT, pct, setup_path

setup_path()

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev.json"
BASELINE_TURN_CAT_1_4 = {"recall@5": 0.551, "recall@10": 0.622, "any_hit@10": 0.691}
#: The same baseline with each session indexed as one document (the README's "session"
#: granularity): the evidence sessions among the ten best sessions.
BASELINE_SESSION_CAT_1_4 = {"recall@5": 0.844, "recall@10": 0.921, "any_hit@10": 0.961}


def ranked_sessions(turns: list[str]) -> list[str]:
    """Sessions in the order of their best turn in a ranking ("D3:7" is session "D3")."""
    return list(dict.fromkeys(t.split(":")[0] for t in turns))


def evidence_ids(raw: list[str], known: set[str]) -> list[str]:
    """Split joined ids, repair the known syntax slips, drop ids that name no turn."""
    out: list[str] = []
    for item in raw:
        for part in re.split(r"[;\s]+", item.strip()):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part)
            if m:
                dia = f"D{int(m[1])}:{int(m[2])}"
                if dia in known and dia not in out:
                    out.append(dia)
    return out


def session_time(text: str) -> str:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601 (UTC)."""
    from datetime import UTC, datetime

    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).isoformat()


def session_keys(conv: dict[str, Any]) -> list[str]:
    """A conversation's ``session_N`` keys, in order."""
    keys = (k for k in conv if re.fullmatch(r"session_\d+", k))
    return sorted(keys, key=lambda k: int(k.split("_")[1]))


def log_session(
    svc: Any, caller: Any, conv: dict[str, Any], key: str, prefix: str = ""
) -> list[tuple[str, str]]:
    """Log one session's turns as exchanges, each with its speaker's name and the
    session's time (turn ids ``prefix`` + LoCoMo's); returns (turn id, text) of
    those stored. The write policy refuses what reads as a credential statement:
    those are left out."""
    from core.continuity.episodes import log_exchange
    from core.model.errors import Refused

    roles = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
    at = session_time(conv[f"{key}_date_time"])
    stored: list[tuple[str, str]] = []
    for turn in conv[key]:
        text = turn["text"]
        if turn.get("blip_caption"):
            text += f" [shares a photo of {turn['blip_caption']}]"
        try:
            log_exchange(
                svc,
                caller,
                roles.get(turn["speaker"], "user"),
                text,
                prefix + turn["dia_id"],
                name=turn["speaker"],
                at=at,
            )
        except Refused:
            continue
        stored.append((prefix + turn["dia_id"], text))
    return stored


def query_ms(latencies: list[float]) -> dict[str, float]:
    """Median and 95th percentile of query times in seconds, as milliseconds."""
    return {
        "p50": round(pct(latencies, 0.5) * 1000, 3),
        "p95": round(pct(latencies, 0.95) * 1000, 3),
    }


def one_store_latency(samples: list[dict[str, Any]], mode: str, min_turns: int) -> dict[str, Any]:
    """Query time in one store of at least ``min_turns`` turns: every conversation
    logged into the same group, again under new turn ids until there are enough,
    then every question asked once (latency only: the copies are distractors)."""
    from core.continuity.episodes import find_exchanges
    from core.model.entries import Actor
    from core.semantic import backfill
    from core.semantic.embedding import shared_embedder
    from core.semantic.hybrid import Mode
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)))
        turns, copy = 0, 0
        while turns < min_turns:
            copy += 1
            for sample in samples:
                conv = sample["conversation"]
                prefix = f"{sample['sample_id']}#{copy}/"
                for key in session_keys(conv):
                    if turns >= min_turns:
                        break
                    agent = svc.open_session("locomo", Actor.OPERATOR, "bench")
                    turns += len(log_session(svc, agent, conv, key, prefix))
        store = svc.store_for("locomo")
        embed_seconds = None
        model = shared_embedder() if mode != "keyword" else None
        if model is not None:
            t = time.perf_counter()
            backfill.reindex(store.conn, store.path, "locomo", model)
            embed_seconds = time.perf_counter() - t
        latencies: list[float] = []
        for sample in samples:
            for qa in sample["qa"]:
                t = time.perf_counter()
                find_exchanges(store, qa["question"][:500], limit=10, mode=Mode(mode))
                latencies.append(time.perf_counter() - t)
        svc.close()
    return {
        "turns": turns,
        "questions": len(latencies),
        "query_ms": query_ms(latencies),
        "query_p95_target_ms": 30.0,
        "embedding_turns_per_s": round(turns / embed_seconds, 1) if embed_seconds else None,
    }


def run(
    data_path: Path, mode: str, stores: Path | None = None, one_store_turns: int = 0
) -> dict[str, object]:
    from core.continuity.episodes import MAX_EXCHANGE_RESULTS, find_exchanges
    from core.model.entries import Actor
    from core.semantic import backfill
    from core.semantic.embedding import shared_embedder
    from core.semantic.hybrid import Mode
    from core.service import MemoryService
    from core.storage.paths import DataDir

    samples = json.loads(data_path.read_text(encoding="utf-8"))
    per_cat: dict[int, list[tuple[float, float, float, float, float]]] = defaultdict(list)
    latencies: list[float] = []
    turns_total = 0
    refused = 0
    embed_seconds = 0.0
    model = shared_embedder() if mode != "keyword" else None
    reused = 0
    with contextlib.ExitStack() as cleanup:
        base = stores or Path(cleanup.enter_context(tempfile.TemporaryDirectory()))
        for sample in samples:
            conv = sample["conversation"]
            root = base / sample["sample_id"]
            built = (root / "built").exists()
            if not built:
                shutil.rmtree(root, ignore_errors=True)  # a run stopped half-way
            svc = MemoryService(DataDir(root))
            if not built:
                for key in session_keys(conv):
                    # Each LoCoMo session is its own conversation, as it would be imported
                    # (by the person, so an agent's rate windows do not apply).
                    agent = svc.open_session("locomo", Actor.OPERATOR, "bench")
                    stored = log_session(svc, agent, conv, key)
                    refused += len(conv[key]) - len(stored)
            store = svc.store_for("locomo")
            known = {str(r[0]) for r in store.execute("SELECT turn FROM exchanges")}
            turns_total += len(known)
            if model is not None:
                t = time.perf_counter()
                backfill.reindex(store.conn, store.path, "locomo", model)
                if not built:
                    embed_seconds += time.perf_counter() - t
            (root / "built").touch()
            reused += built
            for qa in sample["qa"]:
                gold = evidence_ids(qa.get("evidence", []), known)
                if not gold:
                    continue
                t = time.perf_counter()
                hits = find_exchanges(store, qa["question"][:500], limit=10, mode=Mode(mode))
                latencies.append(time.perf_counter() - t)
                got = [h.exchange.turn for h in hits]
                r5 = len(set(got[:5]) & set(gold)) / len(gold)
                r10 = len(set(got[:10]) & set(gold)) / len(gold)
                gold_sessions = {g.split(":")[0] for g in gold}
                got_sessions = {str(g).split(":")[0] for g in got[:10]}
                s10 = len(gold_sessions & got_sessions) / len(gold_sessions)
                longer = find_exchanges(
                    store, qa["question"][:500], limit=MAX_EXCHANGE_RESULTS, mode=Mode(mode)
                )
                best = ranked_sessions([str(h.exchange.turn) for h in longer])[:10]
                ranked10 = len(gold_sessions & set(best)) / len(gold_sessions)
                per_cat[int(qa["category"])].append(
                    (r5, r10, float(bool(set(got) & set(gold))), s10, ranked10)
                )
            svc.close()

    def summary(cats: list[int]) -> dict[str, float | int]:
        rows = [r for c in cats for r in per_cat.get(c, [])]
        return {
            "items": len(rows),
            "recall@5": round(statistics.mean(r[0] for r in rows), 3),
            "recall@10": round(statistics.mean(r[1] for r in rows), 3),
            "any_hit@10": round(statistics.mean(r[2] for r in rows), 3),
            "session_recall@10": round(statistics.mean(r[3] for r in rows), 3),
            "ten_best_sessions_recall": round(statistics.mean(r[4] for r in rows), 3),
        }

    return {
        "benchmark": "locomo_episodic_recall",
        "mode": mode,
        "conversations": len(samples),
        "turns": turns_total,
        "turns_refused_by_policy": refused,
        "conversations_reused": reused,
        "turn_cat_1_4": summary([1, 2, 3, 4]),
        "turn_cat_1_5": summary([1, 2, 3, 4, 5]),
        "recall@10_by_category": {str(c): summary([c])["recall@10"] for c in sorted(per_cat)},
        "targets_cat_1_4": {"recall@10": 0.80, "session_recall@10": 0.95},
        "baseline_turn_cat_1_4_full_file": BASELINE_TURN_CAT_1_4,
        "baseline_session_cat_1_4_full_file": BASELINE_SESSION_CAT_1_4,
        "embedding_turns_per_s": (
            round(turns_total / embed_seconds, 1) if embed_seconds and not reused else None
        ),
        "query_ms": query_ms(latencies),
        "one_store": one_store_latency(samples, mode, one_store_turns) if one_store_turns else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--mode", choices=("auto", "keyword", "semantic"), default="auto")
    parser.add_argument("--stores", type=Path, help="keep the built data dirs here and reuse them")
    parser.add_argument(
        "--one-store-turns",
        type=int,
        default=6000,
        help="also time every question in one store of at least this many turns (0: skip)",
    )
    args = parser.parse_args()
    if not args.data.exists():
        print(json.dumps({"benchmark": "locomo_episodic_recall", "skipped": str(args.data)}))
        return 0
    print(json.dumps(run(args.data, args.mode, args.stores, args.one_store_turns), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
