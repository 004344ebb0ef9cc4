"""The GUI's composition root: ``ambry`` with no command lands in :func:`run`.

It builds, once, everything the window shares (data dir, settings, service,
background executor, agent socket) and tears it down in reverse order.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from dataclasses import dataclass
from importlib import resources
from types import TracebackType

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QIcon
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from core import __version__
from core.model.config import load_config
from core.model.errors import AmbryError
from core.service import MemoryService
from core.storage.paths import DEFAULT_GROUP, DataDir, default_socket_path, resolve_data_dir
from desktop.server.agent_server import AgentServer
from desktop.server.headless import quit_on_signals
from desktop.settings.appearance import theme_choice
from desktop.shell.main_window import MainWindow
from desktop.shell.single_instance import InstanceServer, raise_running
from desktop.shell.tray import Tray
from desktop.shell.window_state import remembered_group
from desktop.widgets import messages
from desktop.widgets.embedding_status import show_in
from desktop.widgets.ops import Executor
from desktop.widgets.theme import light_sheet, theme_manager
from desktop.widgets.watch import AppState

log = logging.getLogger(__name__)

NO_DISPLAY = "error: no display available; run `ambry serve` for the headless agent socket"


#: Seconds before the embedding worker starts on a backlog, so the window draws first.
EMBEDDING_START_DELAY_S = 3.0


def has_display() -> bool:
    """Whether Qt can open a window here (X11 and Wayland need a display)."""
    if sys.platform in ("win32", "darwin") or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def load_style() -> str:
    """The light stylesheet (tests and benchmarks style their app with it)."""
    return light_sheet()


def app_icon() -> QIcon:
    with resources.as_file(resources.files("resources") / "icons" / "ambry.svg") as path:
        return QIcon(str(path))


class CrashHandler:
    """The excepthook: an error a person can act on becomes a message, a bug a dialog.

    Attributes:
        parent: the window the dialog belongs to (None until it exists).
    """

    def __init__(self) -> None:
        self.parent: QWidget | None = None
        self._showing = False

    def __call__(
        self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        if issubclass(kind, KeyboardInterrupt):
            QApplication.quit()
            return
        if isinstance(exc, AmbryError):
            messages.report(exc)
            return
        details = "".join(traceback.format_exception(kind, exc, tb))
        log.error("unhandled exception\n%s", details)
        if self._showing:
            return  # one dialog at a time; the rest are in the log
        self._showing = True
        try:
            box = QMessageBox(self.parent)
            box.setIcon(QMessageBox.Icon.Critical)
            box.setWindowTitle("Ambry hit a bug")
            box.setText(
                "Something went wrong inside Ambry. Your memories are safe: every write "
                "is a transaction, so nothing half-done was saved."
            )
            box.setInformativeText(f"{kind.__name__}: {exc}")
            box.setDetailedText(f"Ambry {__version__}\n\n{details}")
            box.addButton("Keep going", QMessageBox.ButtonRole.AcceptRole)
            quit_button = box.addButton("Quit", QMessageBox.ButtonRole.DestructiveRole)
            box.exec()
            if box.clickedButton() is quit_button:
                QApplication.exit(1)
        finally:
            self._showing = False


def make_app() -> QApplication:
    """The QApplication, styled (reused if one exists, as in tests and benchmarks)."""
    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)
    app.setApplicationName("Ambry")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("ambry")
    app.setStyle("Fusion")
    theme_manager()  # the light theme until the window applies the person's choice
    app.setWindowIcon(app_icon())
    return app


@dataclass
class Running:
    """Everything :func:`launch` built, for :meth:`close` to take down in reverse order."""

    window: MainWindow
    state: AppState
    executor: Executor
    server: AgentServer
    service: MemoryService
    instance: InstanceServer

    def close(self) -> None:
        self.instance.close()
        if self.window.tray is not None:
            self.window.tray.hide()
        self.server.stop()
        self.state.close()
        self.executor.close()
        self.service.close()


def first_group(args: argparse.Namespace, data_dir: DataDir) -> str:
    """``--group``, else the group shown when the window last closed (if it still exists)."""
    asked = getattr(args, "group", None)
    if asked:
        return str(asked)
    last = remembered_group(data_dir)
    return last if last and last in data_dir.groups() else DEFAULT_GROUP


def add_tray(window: MainWindow, server: AgentServer) -> None:
    """Give ``window`` a tray icon where the platform has one, so closing it keeps agents served."""
    if not Tray.available():
        return
    tray = Tray(app_icon(), window)

    def status(count: int) -> None:
        tray.set_status("No agents connected" if count == 0 else f"{count} agent(s) connected")

    server.clients_changed.connect(status)
    status(server.client_count)
    tray.show()
    window.set_tray(tray)
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    app.setQuitOnLastWindowClosed(False)


def launch(args: argparse.Namespace, instance: InstanceServer | None = None) -> Running:
    """Build the service, the executor and the agent socket, and show the window.

    Raises:
        AmbryError: the data dir or its settings cannot be used, or ``AMBRY_SOCKET``
            is a relative path.
    """
    data_dir = DataDir(resolve_data_dir(getattr(args, "data_dir", None)))
    # A relative AMBRY_SOCKET is refused before anything is opened that would need closing.
    socket_path = default_socket_path()
    data_dir.ensure()
    if instance is None:
        instance = InstanceServer(data_dir)
        instance.listen()
    theme_manager().apply(theme_choice(data_dir))
    service = MemoryService(data_dir, load_config(data_dir.config_file))
    try:
        state = AppState(service, data_dir, first_group(args, data_dir))
        service.store_for(state.group)
        # Embedding runs in its own thread with its own connection, after each write;
        # a backlog waits until the window has drawn its first rows.
        service.start_embedding(delay=EMBEDDING_START_DELAY_S)
    except BaseException:
        service.close()
        raise
    executor = Executor(data_dir, service.config, "ambry-query")
    state.config_changed.connect(executor.set_config)
    server = AgentServer(service, data_dir, socket_path)
    socket_error: str | None = None
    try:
        server.start()
    except AmbryError as exc:
        socket_error = exc.message
    window = MainWindow(state, executor, server, server.path, socket_error)
    if service.embedding is not None:
        show_in(window, service.embedding, state.config_changed)
    instance.raise_requested.connect(window.bring_to_front)
    add_tray(window, server)
    window.show()
    window.start()
    if socket_error:
        messages.warning(f"Agents cannot connect: {socket_error}")
    return Running(window, state, executor, server, service, instance)


def run(args: argparse.Namespace) -> int:
    """Open the main window on the data dir, serving agents on the socket; returns the exit code."""
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    app = make_app()
    data_dir = DataDir(resolve_data_dir(getattr(args, "data_dir", None)))
    if raise_running(data_dir):
        print(f"Ambry is already open on {data_dir.root}; its window was brought forward.")
        return 0
    instance = InstanceServer(data_dir)
    instance.listen()
    crash = CrashHandler()
    previous_hook = sys.excepthook
    sys.excepthook = crash
    try:
        try:
            running = launch(args, instance)
        except AmbryError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            QMessageBox.critical(None, "Ambry cannot start", exc.message)
            return 1
        crash.parent = running.window
        try:
            # A logout or `kill` (SIGTERM, SIGHUP) closes the app as its Quit does: the
            # agents' sessions end and the last reads are audited.
            with quit_on_signals(app):
                return app.exec()
        finally:
            running.close()
    finally:
        sys.excepthook = previous_hook
