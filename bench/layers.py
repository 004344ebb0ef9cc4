"""Layers on LoCoMo (development split): context size, triggered recall, compression speed.

Each conversation is replayed session by session, dated as in the file, into a
fresh group (one Ambry agent session per LoCoMo session, as an import would).
Before each session from the second on, a compression pass runs (timed: turns/s)
and the session-start context the layers add to the brief (Flash and Warm, at
their default budgets) is measured against loading the whole history so far
(tokens estimated as the brief's are: core.model.text.estimate_tokens). After
the last session, ``recall`` is asked every question whose evidence lies in
sessions more than a week old; recall@10 is the share of evidence turns among
the first ten turns it returns (in its order:
Flash, Warm, Recent, Archive). Evaluation only: the data is read from
../shared/data and never shipped. Skips when it is absent.

Usage: python bench/layers.py [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import pct, setup_path
from locomo import DEFAULT_DATA, evidence_ids, log_session, session_keys, session_time

setup_path()


def run(data_path: Path) -> dict[str, object]:
    from core.layers.compression import compress
    from core.layers.context import layer_brief_sections
    from core.layers.recall import recall
    from core.model.config import Config
    from core.model.entries import Actor
    from core.model.text import estimate_tokens, quarters_to_tokens, token_quarters
    from core.service import MemoryService
    from core.storage.paths import DataDir

    config = Config()
    samples = json.loads(data_path.read_text(encoding="utf-8"))
    ratios: list[float] = []
    context_tokens: list[int] = []
    history_tokens: list[int] = []
    compress_turns = 0
    compress_seconds = 0.0
    recalls: list[float] = []
    any_hits: list[float] = []
    latencies: list[float] = []
    for sample in samples:
        conv = sample["conversation"]
        keys = session_keys(conv)
        with tempfile.TemporaryDirectory() as tmp:
            # Old dates must not expire before the replay reaches them.
            svc = MemoryService(DataDir(Path(tmp)), config.with_changes(episodic_ttl_days=365))
            store = svc.store_for("locomo")
            history_quarters = 0
            session_at: dict[str, datetime] = {}
            known: set[str] = set()
            for key in keys:
                at = session_time(conv[f"{key}_date_time"])
                start = datetime.fromisoformat(at)
                session_at[key.split("_")[1]] = start
                if history_quarters:
                    t = time.perf_counter()
                    result = compress(store, start)
                    compress_seconds += time.perf_counter() - t
                    compress_turns += result.turns
                    sections = layer_brief_sections(
                        store,
                        None,
                        start,
                        flash_budget=config.flash_token_budget,
                        warm_budget=config.warm_token_budget,
                    )
                    tokens = estimate_tokens("".join(f"### {t}\n\n{b}\n\n" for t, b in sections))
                    context_tokens.append(tokens)
                    history_tokens.append(quarters_to_tokens(history_quarters))
                    ratios.append(1 - tokens / (history_quarters / 4))
                agent = svc.open_session("locomo", Actor.AGENT, "bench")
                speaker = {t["dia_id"]: t["speaker"] for t in conv[key]}
                for turn, text in log_session(svc, agent, conv, key):
                    known.add(turn)
                    history_quarters += token_quarters(f"{speaker[turn]}: {text}\n")
            last = max(session_at.values())
            now = last + timedelta(hours=1)
            t = time.perf_counter()
            result = compress(store, now)
            compress_seconds += time.perf_counter() - t
            compress_turns += result.turns
            for qa in sample["qa"]:
                gold = evidence_ids(qa.get("evidence", []), known)
                if not gold:
                    continue
                sessions = {g.split(":")[0][1:] for g in gold}
                if any(now - session_at[s] <= timedelta(days=7) for s in sessions):
                    continue
                t = time.perf_counter()
                found = recall(store, qa["question"][:4000], now)
                latencies.append(time.perf_counter() - t)
                got = [turn["turn"] for item in found.items for turn in item.turns][:10]
                recalls.append(len(set(got) & set(gold)) / len(gold))
                any_hits.append(float(bool(set(got) & set(gold))))
            svc.close()
    return {
        "benchmark": "layers_locomo",
        "conversations": len(samples),
        "session_start_context": {
            "sessions_measured": len(ratios),
            "mean_context_tokens": round(statistics.mean(context_tokens), 1),
            "mean_full_history_tokens": round(statistics.mean(history_tokens), 1),
            "mean_reduction": round(statistics.mean(ratios), 3),
            "min_reduction": round(min(ratios), 3),
            "target_reduction": "0.30-0.40 (seed 003)",
        },
        "recall_older_than_a_week": {
            "questions": len(recalls),
            "recall@10": round(statistics.mean(recalls), 3),
            "any_hit@10": round(statistics.mean(any_hits), 3),
        },
        "compression_turns_per_s": round(compress_turns / compress_seconds, 1),
        "recall_ms": {
            "p50": round(pct(latencies, 0.5) * 1000, 2),
            "p95": round(pct(latencies, 0.95) * 1000, 2),
            "target_p95": 50,
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if not args.data.exists():
        print(json.dumps({"benchmark": "layers_locomo", "skipped": str(args.data)}))
        return 0
    print(json.dumps(run(args.data), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
