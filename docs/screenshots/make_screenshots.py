"""Render every view of the app with example data to PNGs in this folder.

Usage: python docs/screenshots/make_screenshots.py  (works headless: offscreen Qt)

The data is the app's own "Load example memories" set plus a little agent
activity, in a throwaway data dir; nothing touches your real memories.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
#: Where the throwaway data lives while the screenshots are drawn.
DEMO_DIR = Path("/tmp/ambry-demo")
sys.path.insert(0, str(HERE.parents[1]))

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from core.attachments import attach as attachments
from core.claims import gate as claims_gate
from core.claims import modes as claims_modes
from core.claims import records as claims_records
from core.claims.model import Decision as ClaimDecision
from core.claims.model import SourceState as ClaimSourceState
from core.cli import setup
from core.continuity import context as continuity
from core.continuity import episodes, handoffs, session_handoffs
from core.model.entries import Actor, EntryFilter
from core.semantic import backfill
from core.semantic.embedding import shared_embedder
from core.service import MemoryService
from core.storage.paths import DataDir
from desktop.memories.empty_state import load_examples
from desktop.server.agent_server import AgentServer
from desktop.shell.app import app_icon
from desktop.shell.main_window import MainWindow, Nav
from desktop.threads.view import Tab
from desktop.widgets.ops import Executor
from desktop.widgets.theme import Theme, theme_manager
from desktop.widgets.watch import AppState

#: Each view at a large and a small laptop screen: name suffix, size.
SIZES = (("", (1600, 1000)), ("-1366", (1366, 768)))


def settle(app: QApplication, ms: int = 400) -> None:
    """Let queued queries, refreshes and paints finish."""
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    app.processEvents()


def agent_activity(service: MemoryService) -> None:
    agent = service.open_session("main", Actor.AGENT, "claude-code")
    service.store(agent, {"type": "fact", "content": "Deploys go out on Tuesdays after standup."})
    service.store(
        agent,
        {"type": "preference", "content": "Wants commit messages in the imperative mood."},
    )
    service.search(agent, {"query": "deploy schedule", "limit": 5})
    service.brief(agent)
    service.end_session(agent)


HANDOFF_V1 = """# Website redesign

Status: the new header is built; nothing is deployed yet.

## Next steps
- move the blog templates to the new layout
- [ ] ask Dana about the font licence
"""

HANDOFF_V2 = """# Website redesign

Status: the new header is live on **staging**; the blog templates are half moved.

## Done
- [x] header and navigation on the new grid
- [x] colour tokens agreed with Dana

## Next steps
- finish moving the blog templates (`templates/blog/*.html`)
- [ ] ask Dana about the font licence before launch
- I will run the Lighthouse audit on staging once the images are compressed.

## Notes
The old `/news` URLs must redirect to `/blog`; see `redirects.csv`.
"""

SESSION_NOTE = """Stopped halfway through `templates/blog/list.html`: the pagination partial
still uses the old grid classes. TODO: rerun the visual diff after fixing it."""


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def thread_activity(service: MemoryService) -> str:
    """Two threads; one with three handoff versions, turns and a session note."""
    agent = service.open_session("main", Actor.AGENT, "claude-code")
    entry = continuity.enter_thread(service, agent, "Tax return 2026")
    handoffs.write_handoff(
        service, entry.caller, entry.thread.id, "# Tax return 2026\n\n- [ ] find the 2025 receipts"
    )
    episodes.log_exchange(
        service, entry.caller, "user", "The 2025 receipts are in the blue folder in the study."
    )
    service.end_session(agent)
    agent = service.open_session("main", Actor.AGENT, "claude-code")
    entry = continuity.enter_thread(service, agent, "Website redesign")
    caller, thread_id = entry.caller, entry.thread.id
    handoffs.write_handoff(service, caller, thread_id, HANDOFF_V1)
    turns = [
        ("user", "Can you move the blog list page to the new grid?"),
        ("assistant", "Moved the list page; the pagination partial still needs the new classes."),
        ("tool", "visual-diff: 3 pages changed, 1 above threshold (blog/list)"),
        ("user", "Leave the pagination for tomorrow and write down where you stopped."),
    ]
    for i, (speaker, text) in enumerate(turns):
        episodes.log_exchange(service, caller, speaker, text, f"t{i // 2 + 1}")
    handoffs.write_handoff(service, caller, thread_id, HANDOFF_V2.replace("**staging**", "staging"))
    session_handoffs.end_session_with_handoff(service, caller, SESSION_NOTE)
    person = service.open_session("main", Actor.OPERATOR, "desktop")
    handoffs.write_handoff(service, person, thread_id, HANDOFF_V2)
    service.end_session(person)
    return thread_id


def attachment_activity(service: MemoryService, home: Path, thread_id: str) -> None:
    """Receipts of every kind and state: verified, changed and missing."""
    docs = home / "Documents" / "website"
    plan = write(docs / "launch-plan.md", "# Launch plan\n\nShip the redesign on 14 May.\n")
    brand = write(docs / "brand-guide.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 700)
    shot = write(
        home / "Pictures" / "header-staging.png",
        b"\x89PNG\r\n\x1a\n" + bytes(200) + bytes(range(256)) * 300,
    )
    redirects = write(
        docs / "redirects.csv", "from,to\n/news,/blog\n/news/2024,/blog/2024\n/about-us,/about\n"
    )
    notes = write(home / "Downloads" / "meeting-notes.txt", "Dana: font licence pending.\n")
    agent = service.open_session("main", Actor.AGENT, "claude-code")
    caller = continuity.enter_thread(service, agent, thread_id).caller
    seen = [
        (notes, "Dana still has to confirm the font licence."),
        (shot, "Header renders correctly on staging at 1440 px."),
        (brand, "Primary colour is amber #C27C0E; headings use the serif face."),
        (redirects, "Three redirects; /news goes to /blog."),
        (plan, "Launch is planned for 14 May."),
    ]
    for path, observation in seen:
        attachments.attach(service, caller, str(path), observation=observation)
    service.end_session(agent)
    plan.write_text("# Launch plan\n\nShip the redesign on 21 May.\n", encoding="utf-8")
    notes.unlink()
    attachments.verify_all(service, service.open_session("main", Actor.OPERATOR, "desktop"))


def shoot(window: MainWindow, app: QApplication, name: str) -> None:
    """``name`` at each size, light (``name.png``) and dark (``name-dark.png``)."""
    themes = theme_manager()
    for theme, tag in ((Theme.LIGHT, ""), (Theme.DARK, "-dark")):
        themes.apply(theme)
        for suffix, size in SIZES:
            window.resize(*size)
            settle(app)
            window.statusBar().clearMessage()
            path = HERE / f"{name}{suffix}{tag}.png"
            window.grab().save(str(path))
            print(f"wrote {path}")
    themes.apply(Theme.LIGHT)


def shoot_dialog(dialog: QWidget, app: QApplication, name: str) -> None:
    """A dialog on its own, light and dark."""
    themes = theme_manager()
    for theme, tag in ((Theme.LIGHT, ""), (Theme.DARK, "-dark")):
        themes.apply(theme)
        settle(app)
        path = HERE / f"{name}{tag}.png"
        dialog.grab().save(str(path))
        print(f"wrote {path}")
    themes.apply(Theme.LIGHT)


def claims_activity(service: MemoryService) -> None:
    """Claims an agent proposed from what was said: exact, partial and drifted ones."""
    agent = service.open_session("main", Actor.AGENT, "claude-code")
    said = [
        ("The staging database runs Postgres 16.", "The staging database runs Postgres 16"),
        ("Deploys go out on Tuesdays after standup.", "Deploys go out on Tuesdays and Thursdays"),
        ("Lunch is at noon.", "The office door code changed last week"),
        ("The redesign launches on 14 May.", "The redesign launches on 14 May"),
    ]
    for text, claim in said:
        seq = episodes.log_exchange(service, agent, "user", text).exchange.id
        args = {"text": claim, "kind": "project", "sources": [{"kind": "exchange", "id": seq}]}
        claims_gate.propose(service, agent, args)
    service.end_session(agent)
    person = service.open_session("main", Actor.OPERATOR, "desktop")
    claims_modes.apply(service, person, "enforce", yes=True)
    store = service.store_for("main")
    [launch] = claims_records.list_claims(store, query="redesign launches")
    claims_gate.decide(
        service,
        person,
        launch.id,
        ClaimDecision.ACCEPT,
        confirmed_text=launch.text,
        confirmed_state=ClaimSourceState.EXACT,
    )
    service.end_session(person)


def main() -> int:
    # Show the command as a person who installed Ambry has it, not this checkout's path.
    setup.ambry_command = lambda: ["/home/ana/.local/bin/ambry"]
    # Client config paths on the Connect page read as a person's, not this machine's.
    os.environ["HOME"] = "/home/ana"
    os.environ.pop("XDG_CONFIG_HOME", None)
    os.environ.pop("CODEX_HOME", None)
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    theme_manager().apply(Theme.LIGHT)
    app.setWindowIcon(app_icon())
    # One fixed, short folder rather than a random temporary one: the Connect page and
    # the status bar show its paths, and they read the same on every machine.
    tmp = DEMO_DIR
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(mode=0o700)
    try:
        data_dir = DataDir(Path(tmp) / "data")
        data_dir.ensure()
        os.environ["XDG_RUNTIME_DIR"] = str(Path(tmp) / "runtime")
        service = MemoryService(data_dir)
        state = AppState(service, data_dir, "main")
        executor = Executor(data_dir, service.config, "screenshots")
        # A real server on a short temporary path, as the app runs one.
        server = AgentServer(service, data_dir, Path(tmp) / "agent.sock")
        server.start()
        window = MainWindow(state, executor, server, server.path)
        window.resize(*SIZES[0][1])
        window.show()
        window.start()
        shoot(window, app, "empty")

        load_examples(state)
        agent_activity(service)
        settle(app)
        browser = window.browser
        browser.open_entry(service.list_ids("main", EntryFilter(), "Luna")[0])
        browser.editor.content.setPlainText(
            "Has a dog named Luna who needs a walk at 6 pm and again before bed."
        )
        browser.editor.save_button.click()
        settle(app)
        pinned = service.list_ids("main", EntryFilter(), "concise answers")[0]
        service.set_pinned(state.operator(), pinned, True)
        # Vectors for the examples, as the app's background worker makes them.
        store = service.store_for("main")
        embedder = shared_embedder(service.config.embedding_model_dir)
        if embedder is not None:
            backfill.reindex(store.conn, store.path, "main", embedder)
        settle(app)
        browser.open_entry(browser.model.id_at(0))
        settle(app)
        shoot(window, app, "memories")
        luna = service.list_ids("main", EntryFilter(), "Luna")[0]
        browser.open_entry(luna)
        browser.show_history(luna)
        history = browser.history_dialog
        history.select_version(1)
        history.compare_box.setCurrentIndex(1)
        shoot_dialog(history, app, "history")
        history.close()
        browser.filters.search.setText("zebra crossing")
        shoot(window, app, "no-results")
        browser.filters.search.setText("which animal lives with me")
        for _ in range(20):  # the word matches first, then those by meaning
            settle(app)
            if browser.model.by_meaning:
                break
        shoot(window, app, "search-meaning")
        browser.filters.clear_all()
        settle(app)
        browser.open_entry(browser.model.id_at(0))

        window.go(Nav.REVIEW)
        shoot(window, app, "review")
        window.go(Nav.BRIEF)
        shoot(window, app, "brief")
        window.go(Nav.AUDIT)
        shoot(window, app, "audit")
        window.go(Nav.SETTINGS)
        shoot(window, app, "settings")
        window.go(Nav.CONNECT)
        shoot(window, app, "connect")
        window.go(Nav.TRASH)
        shoot(window, app, "trash")

        # Added last, so the brief and audit above show the memories alone.
        thread_id = thread_activity(service)
        attachment_activity(service, Path(tmp) / "ana", thread_id)
        window.go(Nav.ATTACHMENTS)
        window.attachments.select(
            [r.id for r in window.attachments.model.records() if r.filename == "launch-plan.md"]
        )
        shoot(window, app, "attachments")
        window.go(Nav.THREADS)
        window.threads.select(thread_id)
        shoot(window, app, "threads")
        window.threads.tabs.setCurrentIndex(Tab.HISTORY)
        window.threads.history.table.selectRow(1)
        shoot(window, app, "handoff-history")
        # Turns of both threads, embedded as the app's worker would.
        backfill.reindex(store.conn, store.path, "main", embedder) if embedder else None
        window.threads.tabs.setCurrentIndex(Tab.EXCHANGES)
        pane = window.threads.exchange_pane
        pane.search.setText("where did I put the paperwork")
        for _ in range(20):
            settle(app)
            if pane.hits.rowCount():
                break
        shoot(window, app, "exchange-search")
        pane.search.clear()
        window.threads.tabs.setCurrentIndex(Tab.HANDOFF)
        claims_activity(service)
        window.go(Nav.CLAIMS)
        settle(app)
        window.claims.table.selectRow(0)
        shoot(window, app, "claims")
        # Last: two memories about a colleague, whom the handoffs name too, to forget.
        person = state.operator()
        for text in (
            "Dana designs the website; she prefers Figma links to screenshots.",
            "Dana's last day at Northwind is 30 June.",
        ):
            service.store(person, {"type": "fact", "content": text, "tags": ["people"]})
        forget = window.settings.data_panel.forget_topic()
        forget.topic.setText("Dana")
        forget.look()
        settle(app)
        shoot_dialog(forget, app, "forget")
        forget.close()

        window.close()
        server.stop()
        state.close()
        executor.close()
        service.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
