"""Attachment receipts: hashing throughput on a 15 MiB file, and verifying 1,000 receipts.

Files are freshly written, so they are read from the OS page cache: the figures
are the CPU cost of hashing and bookkeeping, not the speed of a cold disk.

Usage: python bench/receipts.py [--receipts 1000] [--runs 5]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, setup_path

setup_path()

MIB = 1024 * 1024


def _rate(size: int, seconds: list[float]) -> dict[str, float]:
    """Median and best throughput in MiB/s over the runs."""
    return {
        "median_mib_s": round(size / MIB / statistics.median(seconds), 1),
        "best_mib_s": round(size / MIB / min(seconds), 1),
    }


def _timed(fn: object, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - t)
    return out


def hashing(root: Path, runs: int) -> dict[str, object]:
    from core.attachments import attach as att
    from core.attachments import verification
    from core.attachments.receipts import SourceState
    from core.attachments.verification import SourceCheck

    size = att.MAX_ATTACHMENT_BYTES
    data = os.urandom(size)
    binary = root / "random.bin"
    binary.write_bytes(data)
    words = b"The quarterly report lists three risks and two mitigations.\n"
    text = root / "long.txt"
    text.write_bytes((words * (size // len(words) + 1))[:size])
    sha = hashlib.sha256(data).hexdigest()
    check = SourceCheck("att_bench", str(binary), sha, size, SourceState.VERIFIED)
    assert verification.check_source(check).state is SourceState.VERIFIED
    return {
        "file_bytes": size,
        # The ceiling: SHA-256 over bytes already in memory.
        "sha256_in_memory": _rate(size, _timed(lambda: hashlib.sha256(data).digest(), runs)),
        # Verification: stat, open, chunked read and hash.
        "verify_one_file": _rate(size, _timed(lambda: verification.check_source(check), runs)),
        # Attaching a binary file: the same plus type sniffing.
        "inspect_binary": _rate(size, _timed(lambda: att.inspect_file(str(binary)), runs)),
        # A text file also pays for decoding, redaction and the excerpt (first 200,000 chars).
        "inspect_text": _rate(size, _timed(lambda: att.inspect_file(str(text)), runs)),
    }


def verifying(root: Path, n: int) -> dict[str, object]:
    from core.attachments import attach as att
    from core.attachments import receipts, verification
    from core.model.entries import Actor
    from core.service import MemoryService
    from core.storage.paths import DataDir

    sizes = [1024, 8 * 1024, 64 * 1024, 256 * 1024]
    folder = root / "sources"
    folder.mkdir()
    paths = []
    for i in range(n):
        path = folder / f"file-{i:04d}.txt"
        size = sizes[i % len(sizes)]
        line = f"receipt {i} " * 8 + "\n"
        path.write_text((line * (size // len(line) + 1))[:size], encoding="utf-8")
        paths.append(path)
    total_bytes = sum(p.stat().st_size for p in paths)

    svc = MemoryService(DataDir(root / "data"))
    try:
        caller = svc.open_session("bench", Actor.OPERATOR, "bench")
        attach_times = []
        for path in paths:
            t = time.perf_counter()
            att.attach(svc, caller, str(path))
            attach_times.append(time.perf_counter() - t)

        # 70 % untouched, 20 % changed (half keep their size), 10 % missing.
        for i, path in enumerate(paths):
            match i % 10:
                case 0 | 1:
                    data = path.read_bytes()
                    path.write_bytes(b"X" + data[1:] if i % 20 == 0 else data + b"more")
                case 2:
                    path.unlink()
                case _:
                    pass

        store = svc.store_for("bench")
        t = time.perf_counter()
        checks = verification.pending_checks(store)
        plan_s = time.perf_counter() - t
        t = time.perf_counter()
        results = verification.check_sources(checks)
        check_s = time.perf_counter() - t
        t = time.perf_counter()
        verification.record_checks(svc, caller, results)
        record_s = time.perf_counter() - t

        t = time.perf_counter()
        again = att.verify_all(svc, caller)
        verify_all_s = time.perf_counter() - t

        t = time.perf_counter()
        receipts.receipt_brief_section(store, None)
        brief_s = time.perf_counter() - t
        t = time.perf_counter()
        receipts.list_receipts(store, limit=n)
        list_s = time.perf_counter() - t
    finally:
        svc.close()

    states: dict[str, int] = {}
    for r in again:
        states[r.state.value] = states.get(r.state.value, 0) + 1
    return {
        "receipts": n,
        "source_bytes": total_bytes,
        "states": states,
        "attach_each": ms(attach_times),
        "verify_all_s": round(verify_all_s, 4),
        "verify_per_receipt_ms": round(verify_all_s / n * 1000, 4),
        "phases_s": {
            "pending_checks": round(plan_s, 4),
            "check_sources": round(check_s, 4),
            "record_checks": round(record_s, 4),
        },
        "brief_section_ms": round(brief_s * 1000, 3),
        "list_all_ms": round(list_s * 1000, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--receipts", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        result = {
            "benchmark": "receipts",
            "python": platform.python_version(),
            "machine": platform.machine(),
            "page_cache": "warm",
            "hashing": hashing(root, args.runs),
            "verify": verifying(root, args.receipts),
        }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
