"""Importing a large ChatGPT export: dry-run time, import throughput and peak memory.

A ChatGPT-shaped ``conversations.json`` of about ``--mb`` megabytes is generated
(conversations of 10 to 40 messages with a system node, a hidden context node and a
regenerated answer on an abandoned branch, turns of 50 to 1,500 characters of
ordinary words), then a fresh process runs ``plan`` (the dry run, which screens every
turn as the write does) and ``run`` (its own checking pass, which does not, then the
write) on a new data directory and reports its own peak RSS. Turns are not embedded
here: the app embeds them in the background after the import (``ambry reindex`` from
the command line).

Usage: python bench/import.py [--mb 100]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import setup_path

setup_path()

WORDS = (
    "the a to of and in is it you that for on with as be this was are have not but at can "
    "your my we what if so do will just about there how more when one all would like some "
    "garden recipe trip budget code test deploy server meeting schedule train weather book "
    "starter bread bike route invoice draft email python function error build release "
    "because which then than into over after before while should could might really"
).split()


def _text(rng: random.Random) -> str:
    n = rng.choice((8, 20, 40, 80, 150, 250))
    return " ".join(rng.choices(WORDS, k=n)).capitalize() + "."


def _node(nid: str, parent: str | None, role: str, text: str, t: float, **meta: Any) -> Any:
    message = {
        "id": nid,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": t,
        "update_time": None,
        "content": {"content_type": "text", "parts": [text]},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": meta,
        "recipient": "all",
    }
    return {"id": nid, "message": message, "parent": parent, "children": []}


def _conversation(i: int, rng: random.Random) -> tuple[dict[str, Any], int]:
    start = 1_650_000_000 + i * 3600.0
    mapping: dict[str, Any] = {
        f"c{i}-root": {"id": f"c{i}-root", "message": None, "parent": None, "children": []}
    }
    parent = f"c{i}-root"

    def add(nid: str, node: Any) -> None:
        nonlocal parent
        mapping[parent]["children"].append(nid)
        mapping[nid] = node
        parent = nid

    add(
        f"c{i}-sys",
        _node(f"c{i}-sys", parent, "system", "", start, is_visually_hidden_from_conversation=True),
    )
    kept = 0
    for m in range(rng.randint(5, 20)):
        t = start + m * 60
        q = f"c{i}-q{m}"
        add(q, _node(q, parent, "user", _text(rng), t))
        if m == 1:  # a regenerated answer: the first one is on an abandoned branch
            dead = f"c{i}-dead"
            mapping[parent]["children"].append(dead)
            mapping[dead] = _node(dead, parent, "assistant", _text(rng), t + 5, model_slug="gpt-4o")
        a = f"c{i}-a{m}"
        add(a, _node(a, parent, "assistant", _text(rng), t + 10, model_slug="gpt-4o"))
        kept += 2
    conv = {
        "title": f"Conversation {i}: " + " ".join(rng.choices(WORDS, k=4)),
        "create_time": start,
        "update_time": start + 3000,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": f"conv-{i:08d}",
        "id": f"conv-{i:08d}",
    }
    return conv, kept


def generate(path: Path, target_bytes: int) -> dict[str, int]:
    rng = random.Random(16)
    turns = conversations = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        size = 1
        while size < target_bytes:
            conv, kept = _conversation(conversations, rng)
            chunk = ("," if conversations else "") + json.dumps(conv)
            out.write(chunk)
            size += len(chunk)
            conversations += 1
            turns += kept
        out.write("]")
    return {"bytes": path.stat().st_size, "conversations": conversations, "turns": turns}


def child(path: str) -> None:
    """In a fresh process: dry run, then import; print timings and peak RSS."""
    from core.model.config import Config
    from core.model.entries import Actor
    from core.portability.history import SourceKind
    from core.portability.history_import import plan, run
    from core.service import MemoryService
    from core.storage.paths import DataDir

    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(Path(tmp) / "data")
        data.ensure()
        service = MemoryService(data, Config())
        caller = service.open_session("main", Actor.OPERATOR, "bench")
        phases: dict[str, float] = {}

        def progress(phase: str, done: int, total: int) -> None:
            phases.setdefault(phase, time.perf_counter())

        t0 = time.perf_counter()
        dry = plan(service, caller, SourceKind.CHATGPT, Path(path))
        t1 = time.perf_counter()
        done = run(service, caller, SourceKind.CHATGPT, Path(path), progress=progress)
        t2 = time.perf_counter()
        write_s = t2 - phases["write"]
        stored = service.store_for("main").execute("SELECT count(*) FROM exchanges").fetchone()[0]
        service.close()
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "dry_run_s": round(t1 - t0, 2),
                "dry_run_turns_per_s": round(dry.turns_new / (t1 - t0)),
                "import_s": round(t2 - t1, 2),
                "import_turns_per_s": round(done.turns_new / (t2 - t1)),
                "write_pass_s": round(write_s, 2),
                "write_pass_turns_per_s": round(done.turns_new / write_s),
                "turns_imported": done.turns_new,
                "turns_stored": stored,
                "threads": done.threads_new,
                "peak_rss_mb": round(rss_kib / 1024, 1),
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "conversations.json"
        made = generate(path, int(args.mb * 1_000_000))
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
    result: dict[str, Any] = {
        "benchmark": "import",
        "machine": f"{platform.system()} {platform.machine()}, python {platform.python_version()}",
        "file_mb": round(made["bytes"] / 1_000_000, 1),
        "conversations": made["conversations"],
        "turns_in_current_branches": made["turns"],
        **json.loads(out.stdout),
        "targets": {"turns_per_s_before_embedding": 5000, "peak_rss_mb": 200},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
