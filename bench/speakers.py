"""Exchange search for questions that name a speaker, at 1K/10K/100K turns, as JSON.

Usage: python bench/speakers.py [--sizes 1000,10000,100000] [--queries 60]

Turns are logged through the service by three speakers: two who say nine
tenths of them and one who says the rest, each turn said seven minutes after
the one before. A question that names a speaker makes that speaker's latest
turns candidates: the figures time that lookup alone (the names the question
mentions, then their latest turns) and whole keyword-mode searches (no model
needed, so the figures are the ranking's own), beside questions that name no one.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, setup_path

setup_path()

SPEAKERS = ("Alice Moreno", "Bob Stein", "Carol")
WORDS = (
    "garden river music train coffee paint laptop moon bridge kiln invoice ledger "
    "camping recipe guitar tomato marathon budget sprint deadline puppy museum"
).split()
QUESTIONS = {
    "one_frequent": "What did Alice say about the {w}?",
    "two_frequent": "What did Alice and Bob Stein say about {w}?",
    "rare": "what did carol say about the {w}",
    "no_one": "Anything about the {w} and {v}?",
}


def run(n: int, queries: int) -> dict[str, object]:
    from core.continuity import exchange_candidates, speaker_names
    from core.continuity.episodes import find_exchanges, log_exchange
    from core.model.entries import Actor
    from core.semantic.hybrid import Mode
    from core.service import MemoryService
    from core.storage.paths import DataDir

    rng = random.Random(n)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)))
        try:
            agent = svc.open_session("bench", Actor.OPERATOR, "bench")  # no agent rate limit
            t0 = time.perf_counter()
            for i in range(n):
                name = SPEAKERS[2] if i % 10 == 0 else SPEAKERS[i % 2]
                text = " ".join(rng.choices(WORDS, k=10))
                at = (start + timedelta(minutes=7 * i)).isoformat()
                log_exchange(svc, agent, "user", text, name=name, at=at)
            log_s = time.perf_counter() - t0
            store = svc.store_for("bench")
            out: dict[str, object] = {"turns": n, "log_per_s": round(n / log_s)}
            for kind, form in QUESTIONS.items():
                asked = [
                    form.format(w=rng.choice(WORDS), v=rng.choice(WORDS)) for _ in range(queries)
                ]
                for q in asked[:5]:  # warm the page cache and statement cache
                    find_exchanges(store, q, limit=10, mode=Mode.KEYWORD)
                lookup, search = [], []
                for q in asked:
                    t = time.perf_counter()
                    names = speaker_names.speakers_named(store, q)
                    exchange_candidates._said_by(store, names, 100, None)
                    lookup.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    find_exchanges(store, q, limit=10, mode=Mode.KEYWORD)
                    search.append(time.perf_counter() - t)
                out[kind] = {"speaker_lookup": ms(lookup), "search": ms(search)}
            return out
        finally:
            svc.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    results = [run(int(n), args.queries) for n in args.sizes.split(",")]
    print(json.dumps({"benchmark": "exchange_speakers", "sizes": results}, indent=2))


if __name__ == "__main__":
    main()
