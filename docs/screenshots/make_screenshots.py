"""Render every view of the app with example data to PNGs in this folder.

Usage: python docs/screenshots/make_screenshots.py  (works headless: offscreen Qt)

The data is the app's own "Load example memories" set plus a little agent
activity, in a throwaway data dir; nothing touches your real memories.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from core.model import Actor, EntryFilter
from core.paths import DataDir
from core.service import MemoryService
from desktop.app import app_icon, load_style
from desktop.empty_state import load_examples
from desktop.main_window import MainWindow, Nav
from desktop.ops import Executor
from desktop.watch import AppState

SIZE = (1360, 820)


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


def shoot(window: MainWindow, app: QApplication, name: str) -> None:
    settle(app)
    window.statusBar().clearMessage()
    path = HERE / f"{name}.png"
    window.grab().save(str(path))
    print(f"wrote {path}")


def main() -> int:
    app = QApplication(sys.argv[:1])
    app.setStyle("Fusion")
    app.setStyleSheet(load_style())
    app.setWindowIcon(app_icon())
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = DataDir(Path(tmp) / "data")
        data_dir.ensure()
        os.environ["XDG_RUNTIME_DIR"] = str(Path(tmp) / "runtime")
        service = MemoryService(data_dir)
        state = AppState(service, data_dir, "main")
        executor = Executor(data_dir, service.config, "screenshots")
        socket_path = Path("/run/user/1000/ambry/agent.sock")  # the usual Linux default
        window = MainWindow(state, executor, None, socket_path, "screenshot mode")
        window.resize(*SIZE)
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
        settle(app)
        browser.open_entry(browser.model.id_at(0))
        shoot(window, app, "memories")

        window.go(Nav.REVIEW)
        shoot(window, app, "review")
        window.go(Nav.BRIEF)
        shoot(window, app, "brief")
        window.go(Nav.AUDIT)
        shoot(window, app, "audit")
        window.go(Nav.SETTINGS)
        shoot(window, app, "settings")

        window.close()
        state.close()
        executor.close()
        service.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
