"""Desktop app figures at 100K entries, printed as JSON.

Usage: python bench/gui.py [--entries 100000] [--queries 40] [--idle 10] [--data DIR]

- ``first_rows_s``: from launching a fresh Python process (interpreter start,
  imports, store open, window, id query) to the first paint of table rows.
- ``filter``: search as you type. Queries are typed into the real search box at
  60 ms per key (most keys fall inside the debounce) and again at 200 ms per key
  (every prefix runs, single letters included). Latency is from the moment the
  search is sent (debounce over) to the first paint of its rows; ``settle_ms``
  adds the debounce: last key to rows painted.
- ``ranking_by_meaning``: the fused ranking whose matches by meaning merge into
  the list once typing pauses, per query.
- ``peak_rss_mb``: the GUI process's peak resident set size.
- ``idle``: CPU seconds the window with its agent socket open uses while idle.

The data dir is built once through the real service (about a minute for 100K);
``--data DIR`` keeps and reuses it.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ROOT, ms, setup_path, unlimited_config

setup_path()


def build_data(root: Path, entries: int) -> None:
    from _corpus import memories
    from _util import fill

    from core.model.entries import Actor
    from core.service import MemoryService
    from core.storage.paths import DataDir

    marker = root / f".bench-{entries}"
    if marker.exists():
        return
    data_dir = DataDir(root)
    data_dir.ensure()
    service = MemoryService(data_dir, unlimited_config())
    try:
        caller = service.open_session("main", Actor.OPERATOR, "bench")
        fill(service, caller, entries, memories)
    finally:
        service.close()
    marker.touch()


def measure(
    launched: float, data: Path, query_count: int, idle_seconds: float
) -> dict[str, object]:
    """Runs in the fresh process: launch the app, time it, type, then sit idle."""
    from _corpus import queries
    from PySide6.QtCore import QEvent, QObject, QTimer
    from PySide6.QtTest import QTest

    from desktop.memories.meaning import fused
    from desktop.memories.state import BrowserQuery
    from desktop.shell.app import launch, make_app

    app = make_app()
    running = launch(argparse.Namespace(data_dir=str(data), group="main", verbose=False))
    browser = running.window.browser

    class Clock(QObject):
        """Times each search from its sending to the paint of its rows."""

        def __init__(self) -> None:
            super().__init__()
            self.first_paint: float | None = None
            self.sent: float | None = None
            self.listed = False
            self.done = 0.0
            self.latencies: list[float] = []

        def on_sent(self, _query: object) -> None:
            self.sent, self.listed = time.monotonic(), False

        def on_listed(self, _elapsed: float) -> None:
            self.listed = self.sent is not None

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                now = time.monotonic()
                if self.first_paint is None and browser.model.rowCount() > 0:
                    self.first_paint = now
                if self.listed and self.sent is not None:
                    self.latencies.append(now - self.sent)
                    self.sent, self.listed, self.done = None, False, now
            return False

    clock = Clock()
    browser.table.viewport().installEventFilter(clock)
    browser.filters.changed.connect(clock.on_sent)
    browser.listed.connect(clock.on_listed)

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.0005)

    def settle() -> None:
        end = time.monotonic() + 10
        while (browser.runner.busy or clock.sent is not None) and time.monotonic() < end:
            pump(0.001)

    while clock.first_paint is None:
        pump(0.001)
    first_rows = clock.first_paint - launched
    # The first rows come from the first ids alone; the whole list follows.
    settle()
    entries = browser.model.total

    def run_round(key_ms: int, texts: list[str]) -> dict[str, object]:
        clock.latencies.clear()
        settles: list[float] = []
        search = browser.filters.search
        for text in texts:
            search.setFocus()
            search.selectAll()
            last_key = time.monotonic()
            for char in text:
                QTest.keyClicks(search, char)
                last_key = time.monotonic()
                pump(key_ms / 1000)
            pump(0.15)  # past the debounce
            settle()
            settles.append(clock.done - last_key)
        return {"searches": len(clock.latencies), **ms(clock.latencies), "settle": ms(settles)}

    texts = [q for q in queries(query_count * 2) if q.strip()][:query_count]
    fast = run_round(60, texts)
    slow = run_round(200, texts[: max(4, query_count // 4)])
    # The ranking by meaning that runs once typing pauses, on the query thread as
    # the list runs it (a key typed meanwhile waits for it at most this long).
    meaning: list[float] = []
    for text in texts:
        started = time.perf_counter()
        answered: list[float] = []
        running.executor.submit(
            "main",
            # The loop waits for the answer, so text and answered are still this round's.
            lambda service: fused("main", BrowserQuery(text=text), service),  # noqa: B023
            lambda _ranked: answered.append(time.perf_counter()),  # noqa: B023
        )
        while not answered:
            pump(0.001)
        meaning.append(answered[0] - started)

    pump(2.0)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    QTimer.singleShot(int(idle_seconds * 1000), app.quit)
    app.exec()
    after = resource.getrusage(resource.RUSAGE_SELF)
    idle_wall = time.monotonic() - start
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    listening = running.server.is_listening
    rss_mb = after.ru_maxrss / 1024
    running.window.close()
    running.close()
    return {
        "entries": entries,
        "first_rows_s": round(first_rows, 3),
        "filter_60ms_keys": fast,
        "filter_200ms_keys": slow,
        "ranking_by_meaning": ms(meaning),
        "peak_rss_mb": round(rss_mb, 1),
        "idle": {
            "seconds": round(idle_wall, 2),
            "cpu_seconds": round(cpu, 4),
            "cpu_percent": round(100 * cpu / idle_wall, 3),
            "socket_listening": listening,
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--data", help="data dir to build once and reuse")
    parser.add_argument("--child", nargs=2, metavar=("LAUNCHED", "DATA"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.child:
        result = measure(float(args.child[0]), Path(args.child[1]), args.queries, args.idle)
        print(json.dumps(result))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "data"
        t = time.monotonic()
        build_data(data, args.entries)
        built = time.monotonic() - t
        env = {**os.environ, "XDG_RUNTIME_DIR": str(Path(tmp) / "runtime")}
        # As installed: pip writes the bytecode at install time, so a launch never
        # compiles Ambry's sources (PYTHONDONTWRITEBYTECODE would leave them stale).
        compileall.compile_dir(str(ROOT / "core"), quiet=1)
        compileall.compile_dir(str(ROOT / "desktop"), quiet=1)
        launched = time.monotonic()
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child",
                str(launched),
                str(data),
                "--queries",
                str(args.queries),
                "--idle",
                str(args.idle),
            ],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
    targets = {"first_rows_s": 1.0, "filter_p95_ms": 50}
    print(
        json.dumps(
            {"benchmark": "gui", "build_s": round(built, 1), "targets": targets, **result},
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
