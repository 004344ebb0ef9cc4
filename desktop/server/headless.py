"""``ambry serve``: the agent socket without a window, under a QCoreApplication."""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QSocketNotifier

from core.agent.signals import STOP_SIGNALS
from core.service import MemoryService
from core.storage.paths import DataDir
from desktop.server.agent_server import AgentServer

log = logging.getLogger(__name__)


def serve_headless(
    service: MemoryService,
    data_dir: DataDir,
    socket_path: Path | None = None,
    named_by: str | None = None,
) -> int:
    """``ambry serve``: run an :class:`AgentServer` under a QCoreApplication until a signal.

    SIGINT, SIGTERM and SIGHUP stop it cleanly: open sessions end ungracefully,
    the audit rows of reads are written, the socket file is removed. ``named_by`` is
    the option that gave ``socket_path`` (``--socket``), for a refusal to name.

    Raises:
        StorageError: the socket is taken or cannot be created.
    """
    app = QCoreApplication.instance() or QCoreApplication([sys.argv[0]])
    server = AgentServer(service, data_dir, socket_path, named_by=named_by)
    server.start()
    print(f"serving agents on {server.path}", file=sys.stderr)
    print(f"agent token in {server.token_file}", file=sys.stderr, flush=True)
    try:
        with quit_on_signals(app):
            app.exec()
    finally:
        server.stop()
    log.info("stopped serving agents on %s", server.path)
    print("stopped", file=sys.stderr)
    return 0


@contextlib.contextmanager
def quit_on_signals(app: QCoreApplication) -> Iterator[None]:
    """Quit ``app`` on any of :data:`~core.agent.signals.STOP_SIGNALS`.

    Python runs signal handlers only between bytecodes, and Qt's event loop is
    C++, so the C-level handler also writes to a socket whose notifier wakes
    the loop and lets the Python handler run at once.
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)

    def drain() -> None:
        with contextlib.suppress(OSError):
            reader.recv(64)

    notifier.activated.connect(drain)
    previous_fd = signal.set_wakeup_fd(writer.fileno())

    def stop(signum: int, _frame: object) -> None:
        log.info("received %s; stopping", signal.Signals(signum).name)
        app.quit()

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        notifier.deleteLater()
        reader.close()
        writer.close()
