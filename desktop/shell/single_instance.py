"""One Ambry per data folder: a second launch raises the running window and exits.

The running app listens on a local socket named after the data folder (a hash
of its path, so two data folders run side by side). A new launch first tries to
connect: if someone answers, it asks that window to come forward and stops.
"""

from __future__ import annotations

import getpass
import hashlib

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from core.storage.paths import DataDir

#: How long a launch waits for a running Ambry to answer.
PING_MS = 500
RAISE = b"raise\n"


def instance_name(data_dir: DataDir) -> str:
    """The local socket name of the Ambry on ``data_dir`` (per user, per folder)."""
    key = f"{getpass.getuser()}\0{data_dir.root.resolve()}".encode()
    return "ambry-window-" + hashlib.sha256(key).hexdigest()[:16]


def raise_running(data_dir: DataDir) -> bool:
    """Ask the Ambry running on ``data_dir`` to show its window; whether one answered."""
    socket = QLocalSocket()
    socket.connectToServer(instance_name(data_dir))
    if not socket.waitForConnected(PING_MS):
        return False
    socket.write(RAISE)
    socket.flush()
    socket.waitForBytesWritten(PING_MS)
    socket.disconnectFromServer()
    return True


class InstanceServer(QObject):
    """Listens for later launches on the same data folder.

    Args:
        data_dir: the data folder this app serves.
        parent: the owning QObject.

    Signals:
        raise_requested(): another launch asked for the window.
    """

    raise_requested = Signal()

    def __init__(self, data_dir: DataDir, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = instance_name(data_dir)
        self._server = QLocalServer(self)
        self._sockets: list[QLocalSocket] = []
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_connection)

    def listen(self) -> bool:
        """Start listening; a name left by a crashed run is taken over."""
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    def close(self) -> None:
        self._server.close()
        for socket in self._sockets:
            socket.abort()
        self._sockets.clear()

    def _on_connection(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            self._sockets.append(socket)
            socket.readyRead.connect(self._read_all)
            socket.disconnected.connect(self._read_all)

    def _read_all(self) -> None:
        """Read what every caller sent; forget those that hung up."""
        for socket in list(self._sockets):
            if socket.bytesAvailable() and bytes(socket.readAll().data()).startswith(RAISE.strip()):
                self.raise_requested.emit()
            if socket.state() == QLocalSocket.LocalSocketState.UnconnectedState:
                self._sockets.remove(socket)
                socket.deleteLater()
