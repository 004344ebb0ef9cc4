"""Figures for the policy an agent cannot get around.

* the existence oracle: an agent's private store when the same sealed text is
  kept versus when it is not (p50/p95 each; they should match);
* the rate-limit check per counted write, with a full day's window behind it;
* the nesting check of a typical frame and the MCP line check.

Usage: python bench/agent_policy.py
"""

from __future__ import annotations

import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, setup_path, unlimited_config

setup_path()


def oracle(rounds: int = 300) -> dict[str, object]:
    """Agent private stores of text the person keeps sealed, and of text nobody keeps."""
    import keyring

    from core.model.entries import Actor
    from core.service import MemoryService
    from core.storage.paths import DataDir
    from tests.keyring_backend import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())
    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)), unlimited_config())
        person = svc.open_session("main", Actor.OPERATOR, "bench")
        agent = svc.open_session("main", Actor.AGENT, "bench")
        kept = [f"Sees specialist number {i} about the knee" for i in range(rounds)]
        for text in kept:
            svc.store(person, {"type": "fact", "content": text, "privacy": "private"})
        matching: list[float] = []
        fresh: list[float] = []
        created = 0
        for i, text in enumerate(kept):
            # Interleaved, so drift in the machine's load hits both series alike.
            for series, content in ((matching, text), (fresh, f"Unrelated private note {i}")):
                t = time.perf_counter()
                out = svc.store(agent, {"type": "fact", "content": content, "privacy": "private"})
                series.append(time.perf_counter() - t)
                created += out.created
        svc.close()
    return {
        "matching_sealed_entry": ms(matching),
        "no_matching_entry": ms(fresh),
        "p50_ratio": round(sorted(matching)[rounds // 2] / sorted(fresh)[rounds // 2], 3),
        "all_created": created == 2 * rounds,
    }


def rate_check(events: int = 5000, rounds: int = 2000) -> dict[str, object]:
    """``charge`` with ``events`` already in the day's window (the exchanges default)."""
    from core.model.entries import Actor
    from core.policy.ratelimit import RateAction, agent_key, charge
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)), unlimited_config())
        caller = svc.open_session("main", Actor.AGENT, "bench", agent_key=agent_key("t", "b"))
        store = svc.store_for("main")
        now = time.time()
        with store.transaction():
            for i in range(events):
                charge(store, caller, RateAction.EXCHANGE, svc.config, now=now - 80_000 + i)
        times: list[float] = []
        for _ in range(rounds):
            with store.transaction():
                t = time.perf_counter()
                charge(store, caller, RateAction.EXCHANGE, svc.config)
                times.append(time.perf_counter() - t)
        svc.close()
    return {"events_in_window": events + rounds, **ms(times)}


def checks(rounds: int = 20_000) -> dict[str, object]:
    """The nesting check on a typical store frame, and a whole frame's parse with it."""
    from core.agent.framing import nesting_depth, parse_request

    frame = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "memory_store",
                "arguments": {
                    "type": "preference",
                    "content": "Prefers short answers with code first " * 10,
                    "tags": ["style", "answers", "code"],
                    "source": {"type": "user_message"},
                },
            },
        }
    ).encode()
    obj = json.loads(frame)
    out: dict[str, object] = {}
    for name, fn in (
        ("nesting_depth_us", lambda: nesting_depth(obj)),
        ("parse_request_us", lambda: parse_request(frame)),
    ):
        t = time.perf_counter()
        for _ in range(rounds):
            fn()
        out[name] = round((time.perf_counter() - t) / rounds * 1e6, 2)
    deep = b"[" * (1 << 20)
    t = time.perf_counter()
    with contextlib.suppress(Exception):
        parse_request(deep)
    out["parse_request_1MiB_of_brackets_ms"] = round((time.perf_counter() - t) * 1000, 2)
    return out


def main() -> None:
    print(
        json.dumps(
            {
                "benchmark": "agent_policy",
                "existence_oracle_private_store": oracle(),
                "rate_check_typical": rate_check(events=100, rounds=200),
                "rate_check_full_day_of_exchanges": rate_check(events=5000),
                "frame_checks": checks(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
