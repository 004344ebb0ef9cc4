"""Episodic recall on LoCoMo (development split): how often the evidence turns come back.

Each conversation's turns are logged as exchanges (``core.continuity.episodes``) in a fresh
group; each question is searched with ``find_exchanges`` and scored against its
evidence turns: recall@5, recall@10 and any-hit@10, by category, beside the
reference lexical baseline in ../shared/data/README.md. Evaluation only: the
data set is read from ../shared/data and never shipped. Skips when it is absent.

Usage: python bench/locomo.py [--data PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ROOT, pct, setup_path

setup_path()

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo-dev.json"
BASELINE_TURN_CAT_1_4 = {"recall@5": 0.551, "recall@10": 0.622, "any_hit@10": 0.691}


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


def run(data_path: Path) -> dict[str, object]:
    from core.continuity.episodes import find_exchanges, log_exchange
    from core.model.entries import Actor
    from core.service import MemoryService
    from core.storage.paths import DataDir

    samples = json.loads(data_path.read_text(encoding="utf-8"))
    per_cat: dict[int, list[tuple[float, float, float]]] = defaultdict(list)
    latencies: list[float] = []
    turns_total = 0
    for sample in samples:
        conv = sample["conversation"]
        with tempfile.TemporaryDirectory() as tmp:
            svc = MemoryService(DataDir(Path(tmp)))
            agent = svc.open_session("locomo", Actor.AGENT, "bench")
            known: set[str] = set()
            names = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
            keys = sorted(
                (k for k in conv if re.fullmatch(r"session_\d+", k)),
                key=lambda k: int(k.split("_")[1]),
            )
            for key in keys:
                for turn in conv[key]:
                    text = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        text += f" [shares a photo of {turn['blip_caption']}]"
                    log_exchange(
                        svc, agent, names.get(turn["speaker"], "user"), text, turn["dia_id"]
                    )
                    known.add(turn["dia_id"])
            turns_total += len(known)
            store = svc.store_for("locomo")
            for qa in sample["qa"]:
                gold = evidence_ids(qa.get("evidence", []), known)
                if not gold:
                    continue
                t = time.perf_counter()
                hits = find_exchanges(store, qa["question"][:500], limit=10)
                latencies.append(time.perf_counter() - t)
                got = [h.exchange.turn for h in hits]
                r5 = len(set(got[:5]) & set(gold)) / len(gold)
                r10 = len(set(got[:10]) & set(gold)) / len(gold)
                per_cat[int(qa["category"])].append((r5, r10, float(bool(set(got) & set(gold)))))
            svc.close()

    def summary(cats: list[int]) -> dict[str, float | int]:
        rows = [r for c in cats for r in per_cat.get(c, [])]
        return {
            "items": len(rows),
            "recall@5": round(statistics.mean(r[0] for r in rows), 3),
            "recall@10": round(statistics.mean(r[1] for r in rows), 3),
            "any_hit@10": round(statistics.mean(r[2] for r in rows), 3),
        }

    return {
        "benchmark": "locomo_episodic_recall",
        "conversations": len(samples),
        "turns": turns_total,
        "turn_cat_1_4": summary([1, 2, 3, 4]),
        "turn_cat_1_5": summary([1, 2, 3, 4, 5]),
        "recall@10_by_category": {str(c): summary([c])["recall@10"] for c in sorted(per_cat)},
        "baseline_turn_cat_1_4_full_file": BASELINE_TURN_CAT_1_4,
        "query_ms": {
            "p50": round(pct(latencies, 0.5) * 1000, 3),
            "p95": round(pct(latencies, 0.95) * 1000, 3),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    if not args.data.exists():
        print(json.dumps({"benchmark": "locomo_episodic_recall", "skipped": str(args.data)}))
        return 0
    print(json.dumps(run(args.data), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
