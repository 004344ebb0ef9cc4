"""``ambry --self-test``: prove an installation works, source tree or frozen build.

It runs in a temporary data dir and socket, never the person's, and checks: the
files Ambry ships (manifest, icons, stylesheet, skill text), store, search,
brief, the socket server starting and stopping, and one call round-tripped
through it by the bundled client. It prints one line per check and exits 0 only
if all pass.
"""

from __future__ import annotations

import re
import sys
import tempfile
import threading
import time
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib import resources as package_files
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer
from PySide6.QtGui import QImage

from core.agent.auth import load_or_create_token
from core.agent.client import AmbryClient
from core.model.config import Config
from core.model.entries import Actor
from core.policy.manifest import load_manifest
from core.semantic import backfill
from core.semantic.embedding import shared_embedder, unavailable_reason
from core.service import MemoryService
from core.storage.paths import DataDir
from desktop.server.agent_server import AgentServer

ROUND_TRIP_TIMEOUT_S = 20.0
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def check_icons() -> str:
    """Every PNG size decodes to a square of that size; the SVG is an <svg> document."""
    icons = package_files.files("resources") / "icons"
    for size in ICON_SIZES:
        data = (icons / f"ambry-{size}.png").read_bytes()
        image = QImage.fromData(data)
        square = (image.width(), image.height()) == (size, size)
        if not data.startswith(b"\x89PNG\r\n\x1a\n") or image.isNull() or not square:
            raise AssertionError(f"icons/ambry-{size}.png is not a {size}x{size} PNG")
    root = ET.fromstring((icons / "ambry.svg").read_bytes())
    if not root.tag.endswith("svg") or "viewBox" not in root.attrib:
        raise AssertionError("icons/ambry.svg is not an SVG document with a viewBox")
    return f"{len(ICON_SIZES)} PNG sizes and the SVG"


def check_stylesheet() -> str:
    """The Qt stylesheet is there, and every rule block closes."""
    text = (package_files.files("resources") / "style.qss").read_text(encoding="utf-8")
    body = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    depth = 0
    for char in body:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth not in (0, 1):
            raise AssertionError("style.qss has an unbalanced or nested '{'/'}'")
    rules = body.count("{")
    if depth or not rules:
        raise AssertionError("style.qss has an unclosed rule, or none")
    return f"{rules} rules"


def check_skill(tools: set[str]) -> str:
    """The agent skill text names only tools the manifest has."""
    text = (package_files.files("resources") / "skill" / "memory.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(memory_[a-z_]+)`", text))
    if not text.startswith("# ") or not named:
        raise AssertionError("skill/memory.md has no title or names no tool")
    unknown = named - tools
    if unknown:
        raise AssertionError(f"skill/memory.md names tools the manifest lacks: {sorted(unknown)}")
    return f"{len(text.split())} words, names {len(named)} tools"


def _in_thread_while_serving(fn: Callable[[], Any]) -> Any:
    """Run blocking ``fn`` in a thread while the Qt event loop serves the socket."""
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # reported by the caller, on the main thread
            box["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    loop = QEventLoop()
    deadline = time.monotonic() + ROUND_TRIP_TIMEOUT_S
    poll = QTimer()
    poll.setInterval(5)
    poll.timeout.connect(lambda: loop.quit() if not worker.is_alive() else None)
    poll.start()
    while worker.is_alive() and time.monotonic() < deadline:
        loop.exec()
    poll.stop()
    if worker.is_alive():
        raise TimeoutError(f"no reply through the socket within {ROUND_TRIP_TIMEOUT_S:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def run_self_test(out: Any = None) -> int:
    """Run every check, print PASS/FAIL lines, return the exit status."""
    out = out or sys.stdout
    app = QCoreApplication.instance() or QCoreApplication([sys.argv[0]])
    failures = 0
    with tempfile.TemporaryDirectory(prefix="ambry-selftest-") as tmp:
        root = Path(tmp)
        data_dir = DataDir(root / "data")
        service = MemoryService(data_dir, Config())
        server: AgentServer | None = None
        state: dict[str, Any] = {}

        def check(name: str, fn: Callable[[], str]) -> None:
            nonlocal failures
            try:
                detail = fn()
                print(f"PASS  {name}: {detail}", file=out)
            except Exception as exc:
                failures += 1
                print(f"FAIL  {name}: {type(exc).__name__}: {exc}", file=out)
                traceback.print_exc(file=sys.stderr)

        def resources() -> str:
            return f"manifest with {len(load_manifest())} tools"

        def store() -> str:
            op = service.open_session("selftest", Actor.OPERATOR, "self-test")
            state["op"] = op
            out_ = service.store(
                op, {"type": "preference", "content": "Self-test prefers tea", "tags": ["selftest"]}
            )
            return out_.entry.id

        def search() -> str:
            hits = service.search(state["op"], {"query": "tea"})
            if not hits or hits[0].content != "Self-test prefers tea":
                raise AssertionError(f"expected the stored entry, got {hits!r}")
            return f"{len(hits)} hit"

        def semantic() -> str:
            # The shipped model, checked against its pinned hash, finds a paraphrase.
            model = shared_embedder()
            if model is None:
                raise AssertionError(unavailable_reason() or "the embedding model did not load")
            store = service.store_for("selftest")
            backfill.reindex(store.conn, store.path, "selftest", model)
            hits = service.search(state["op"], {"query": "favourite hot drink", "mode": "semantic"})
            if not hits or hits[0].content != "Self-test prefers tea":
                raise AssertionError(f"a paraphrase did not find the stored entry: {hits!r}")
            return f"{model.model_id}, loaded in {model.load_seconds:.2f} s"

        def brief() -> str:
            b = service.build_brief("selftest")
            if "Self-test prefers tea" not in b.markdown:
                raise AssertionError("the stored preference is missing from the brief")
            return f"{b.brief_count} of {b.entry_count} entries, {b.char_count} chars"

        def start() -> str:
            nonlocal server
            server = AgentServer(service, data_dir, root / "agent.sock")
            server.start()
            return str(server.path)

        def round_trip() -> str:
            token = load_or_create_token(data_dir.token_file)
            assert server is not None

            def call() -> list[dict[str, Any]]:
                with AmbryClient(server.path, token=token) as client:
                    client.hello("selftest", "self-test")
                    client.store("fact", "Round trip through the socket works")
                    found = client.search("round trip")
                    client.end_session()
                    return found

            found = _in_thread_while_serving(call)
            if not found:
                raise AssertionError("the entry stored through the socket was not found")
            return f"stored and found {found[0]['id']}"

        def stop() -> str:
            assert server is not None
            server.stop()
            if server.path.exists():
                raise AssertionError("the socket file was left behind")
            return "socket removed"

        for name, fn in (
            ("resources", resources),
            ("icons", check_icons),
            ("stylesheet", check_stylesheet),
            ("skill text", lambda: check_skill(set(load_manifest()))),
            ("store", store),
            ("search", search),
            ("semantic search", semantic),
            ("brief", brief),
            ("socket start", start),
            ("socket round trip", round_trip),
            ("socket stop", stop),
        ):
            check(name, fn)
            if failures and name == "socket start":
                break
        if server is not None and server.is_listening:
            server.stop()
        service.close()
    del app
    print("self-test passed" if not failures else f"self-test FAILED ({failures})", file=out)
    return 0 if not failures else 1
