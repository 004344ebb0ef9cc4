"""Claims: verifying 1,000 claims with mixed source states, and the brief with 10K claims.

Usage: python bench/claims.py [--verify 1000] [--context 10000] [--files 300] [--file-kib 256]

Prints JSON. The verification part builds claims whose sources end up in a
known state (exact, partial, drifted in three ways, missing in two), checks
them all with ``verify_claim`` (files hashed again) and reports the time and
whether every state came out as expected. The context part records N verified
claims (set up in bulk, not through the gate), switches the group to enforce
and times the agent's brief, which must stay within the brief's budget. The
files part does the same with claims that each cite a file of their own, as
the brief checks every such file before it shows the claim: the first brief
of a process hashes them, later ones hash only a file whose size, times or
inode moved.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, setup_path

setup_path()

# (label, expected state) of each kind of claim, in round-robin order.
CASES = (
    ("exchange exact", "source_exact_match"),
    ("exchange partial", "source_partially_overlaps_claim"),
    ("attachment changed", "source_drifted"),
    ("memory superseded", "source_drifted"),
    ("handoff rewritten", "source_drifted"),
    ("exchange deleted", "source_missing"),
    ("attachment file gone", "source_missing"),
)


def verification(n: int) -> dict[str, object]:
    from core.attachments.attach import attach
    from core.claims import gate, records
    from core.claims.verify import verify_claim
    from core.continuity.context import enter_thread
    from core.continuity.episodes import log_exchange
    from core.continuity.handoffs import write_handoff
    from core.model.entries import Actor
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        svc = MemoryService(DataDir(root / "data"))
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        op = enter_thread(svc, op, "Bench").caller
        assert op.thread_id is not None
        lines = [f"- Service {i} listens on port {9000 + i}." for i in range(n)]
        markdown = "\n".join(lines)
        write_handoff(svc, op, op.thread_id, markdown, base_version=0)
        expected: dict[str, str] = {}
        to_delete: list[int] = []
        files: list[tuple[Path, str]] = []
        superseded: list[str] = []
        t0 = time.perf_counter()
        for i in range(n):
            label, state = CASES[i % len(CASES)]
            text = f"Service {i} listens on port {9000 + i}"
            match label:
                case "exchange exact" | "exchange partial" | "exchange deleted":
                    said = f"Note: service {i} listens on port {9000 + i}."
                    if label == "exchange partial":
                        text = f"Service {i} listens on port {9000 + i} behind the proxy gateway"
                    seq = log_exchange(svc, op, "user", said).exchange.id
                    source: dict[str, object] = {"kind": "exchange", "id": seq}
                    if label == "exchange deleted":
                        to_delete.append(seq)
                case "attachment changed" | "attachment file gone":
                    path = root / f"doc{i}.txt"
                    path.write_text(f"Service {i} listens on port {9000 + i}.\n", encoding="utf-8")
                    rid = attach(svc, op, str(path)).receipt.id
                    source = {"kind": "attachment", "id": rid}
                    files.append((path, label))
                case "memory superseded":
                    mem = svc.store(op, {"type": "fact", "content": text + "."})
                    source = {"kind": "memory", "id": mem.entry.id}
                    superseded.append(mem.entry.id)
                case _:
                    at = markdown.index(lines[i][2:])  # cite the item's line, not the handoff
                    span = {"start": at, "end": at + len(lines[i]) - 2}
                    source = {"kind": "handoff", "thread": op.thread_id, "version": 1, **span}
            args = {"text": text, "kind": "configuration", "sources": [source]}
            expected[gate.propose(svc, op, args).claim.id] = state
        setup_s = time.perf_counter() - t0
        # The world moves on.
        store = svc.store_for("bench")
        with store.transaction():
            for seq in to_delete:
                store.execute("DELETE FROM exchanges WHERE seq = ?", (seq,))
        for path, label in files:
            if label == "attachment changed":
                path.write_text("Rewritten.\n", encoding="utf-8")
            else:
                path.unlink()
        for mid in superseded:
            svc.store(op, {"type": "fact", "content": f"Moved {mid}", "supersedes": mid})
        write_handoff(svc, op, op.thread_id, "- Everything moved to port 80.", base_version=1)

        claims = [records.get_claim(store, cid) for cid in expected]
        times: list[float] = []
        found: dict[str, str] = {}
        start = time.perf_counter()
        for claim in claims:
            t = time.perf_counter()
            found[claim.id] = verify_claim(store, claim).state.value
            times.append(time.perf_counter() - t)
        total_s = time.perf_counter() - start
        wrong = [cid for cid, state in expected.items() if found[cid] != state]
        svc.close()
    return {
        "claims": n,
        "setup_s": round(setup_s, 2),
        "verify_total_s": round(total_s, 3),
        "verify_per_claim": ms(times),
        "expected_states": dict(Counter(expected.values())),
        "reported_states": dict(Counter(found.values())),
        "all_correct": not wrong,
        "wrong": len(wrong),
    }


def context(n: int) -> dict[str, object]:
    from core.claims import modes, records
    from core.claims.context import SECTION_TITLE, brief_claims
    from core.claims.gate import record_claim
    from core.claims.model import ClaimKind, Origin
    from core.claims.sources import cite
    from core.continuity.episodes import log_exchange
    from core.model.entries import Actor, iso, utc_now
    from core.recall.briefing import BRIEF_BUDGET_SECONDS
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        svc = MemoryService(DataDir(Path(tmp)))
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        store = svc.store_for("bench")
        seqs = [
            log_exchange(svc, op, "user", f"Host {i} runs build agent {i % 97}.").exchange.id
            for i in range(n)
        ]
        t0 = time.perf_counter()
        now = iso(utc_now())
        with store.transaction():
            for i, seq in enumerate(seqs):
                handle = cite(store, {"kind": "exchange", "id": seq}, 0)
                text = f"Host {i} runs build agent {i % 97}"
                claim = record_claim(
                    store, op, text, ClaimKind.FACT, (handle,), 90, Origin.AGENT
                ).claim
                if i % 2 == 0:  # half verified (bulk set-up, not the gate), half candidates
                    records.set_status(
                        store,
                        claim.id,
                        status="verified",
                        verified_at=now,
                        recheck_due_at="2999-01-01T00:00:00Z",
                    )
        setup_s = time.perf_counter() - t0
        modes.apply(svc, op, "enforce", yes=True)
        agent = svc.open_session("bench", Actor.AGENT, "bench")
        section, briefs = [], []
        for _ in range(30):
            t = time.perf_counter()
            chosen = brief_claims(store, iso(utc_now()))
            section.append(time.perf_counter() - t)
        for _ in range(30):
            t = time.perf_counter()
            brief = svc.brief(agent)
            briefs.append(time.perf_counter() - t)
        result = {
            "claims": n,
            "verified": (n + 1) // 2,
            "setup_s": round(setup_s, 2),
            "claims_section": ms(section),
            "agent_brief": ms(briefs),
            "brief_budget_s": BRIEF_BUDGET_SECONDS,
            "within_budget": max(briefs) < BRIEF_BUDGET_SECONDS,
            "claims_in_brief": len(chosen),
            "section_present": f"## {SECTION_TITLE}" in brief.markdown,
            "brief_chars": brief.char_count,
            "max_brief_chars": svc.config.max_brief_chars,
        }
        svc.close()
    return result


def files_context(n: int, kib: int) -> dict[str, object]:
    from core.attachments.attach import attach
    from core.claims import modes, records
    from core.claims.context import brief_claims
    from core.claims.gate import record_claim
    from core.claims.model import ClaimKind, Origin
    from core.claims.sources import cite
    from core.model.entries import Actor, iso, utc_now
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        svc = MemoryService(DataDir(root / "data"))
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        store = svc.store_for("bench")
        filler = ("Background notes that say nothing of hosts. " * (kib * 24))[: kib * 1024]
        now = iso(utc_now())
        for i in range(n):
            path = root / f"host{i}.txt"
            path.write_text(f"Host {i} runs build agent {i % 97}.\n{filler}", encoding="utf-8")
            rid = attach(svc, op, str(path)).receipt.id
            handle = cite(store, {"kind": "attachment", "id": rid, "start": 0, "end": 40}, 0)
            text = f"Host {i} runs build agent {i % 97}"
            claim = record_claim(store, op, text, ClaimKind.FACT, (handle,), 90, Origin.AGENT)
            records.set_status(
                store,
                claim.claim.id,
                status="verified",
                verified_at=now,
                recheck_due_at="2999-01-01T00:00:00Z",
            )
        modes.apply(svc, op, "enforce", yes=True)
        agent = svc.open_session("bench", Actor.AGENT, "bench")
        # Files written within the last three seconds are hashed on every brief (their
        # timestamps cannot vouch for their bytes yet): time the files as a person has them.
        time.sleep(3.1)
        t = time.perf_counter()
        first = brief_claims(store, iso(utc_now()))
        first_s = time.perf_counter() - t
        section, briefs = [], []
        for _ in range(30):
            t = time.perf_counter()
            chosen = brief_claims(store, iso(utc_now()))
            section.append(time.perf_counter() - t)
        for _ in range(30):
            t = time.perf_counter()
            svc.brief(agent)
            briefs.append(time.perf_counter() - t)
        result = {
            "claims": n,
            "file_kib": kib,
            "first_claims_section_ms": round(first_s * 1000, 3),
            "claims_section": ms(section),
            "agent_brief": ms(briefs),
            "claims_in_brief": len(chosen),
            "claims_in_first": len(first),
        }
        svc.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--verify", type=int, default=1000, help="claims to verify")
    parser.add_argument("--context", type=int, default=10_000, help="claims for the brief")
    parser.add_argument("--files", type=int, default=300, help="claims citing a file each")
    parser.add_argument("--file-kib", type=int, default=256, help="size of each cited file")
    args = parser.parse_args()
    out = {
        "benchmark": "claims",
        "verification": verification(args.verify),
        "context": context(args.context),
        "files_context": files_context(args.files, args.file_kib),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
