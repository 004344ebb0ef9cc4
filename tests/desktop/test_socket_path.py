"""The agent socket path: what is there and is not a socket is never deleted."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.model.errors import StorageError
from core.service import MemoryService
from core.storage.paths import DataDir
from desktop.server.agent_server import AgentServer

pytestmark = pytest.mark.skipif(os.name != "posix", reason="Unix sockets are files")


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    # Short, so the socket path fits in sun_path.
    path = Path(tempfile.mkdtemp(prefix="ambry-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_regular_file_at_the_socket_path_is_refused_and_kept(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> None:
    path = sock_dir / "agent.sock"
    path.write_text("notes someone keeps here\n")
    srv = AgentServer(service, data_dir, path)
    with pytest.raises(StorageError, match=r"is a regular file, not a socket.*AMBRY_SOCKET"):
        srv.start()
    assert not srv.is_listening
    assert path.read_text() == "notes someone keeps here\n"
    srv.stop()
    assert path.read_text() == "notes someone keeps here\n"


def test_a_folder_or_link_at_the_socket_path_is_refused(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> None:
    folder = sock_dir / "agent.sock"
    folder.mkdir()
    (folder / "inside.txt").write_text("kept")
    with pytest.raises(StorageError, match="is a folder"):
        AgentServer(service, data_dir, folder).start()
    assert (folder / "inside.txt").read_text() == "kept"

    target = sock_dir / "precious.txt"
    target.write_text("kept")
    link = sock_dir / "link.sock"
    link.symlink_to(target)
    with pytest.raises(StorageError, match="is a symbolic link"):
        AgentServer(service, data_dir, link).start()
    assert link.is_symlink() and target.read_text() == "kept"


def test_the_server_starts_again_after_a_refusal_once_the_file_is_moved(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> None:
    path = sock_dir / "agent.sock"
    path.write_text("x")
    srv = AgentServer(service, data_dir, path)
    with pytest.raises(StorageError):
        srv.start()
    path.rename(sock_dir / "moved.txt")
    srv.start()
    try:
        assert srv.is_listening
    finally:
        srv.stop()
    assert not path.exists()


def test_a_socket_another_program_listens_on_is_refused_and_kept(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> None:
    # Before, holding the lock was taken to mean the socket was left by a crash:
    # the other program's socket was deleted and taken over.
    path = sock_dir / "agent.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
        other.bind(str(path))
        other.listen()
        srv = AgentServer(service, data_dir, path)
        with pytest.raises(StorageError, match=r"another program, not an Ambry.*AMBRY_SOCKET"):
            srv.start()
        assert not srv.is_listening
        srv.stop()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(path))  # still the other program's
    # Once it has gone, its socket is stale and replaced.
    srv = AgentServer(service, data_dir, path)
    srv.start()
    assert srv.is_listening
    srv.stop()


#: A user id that is not the tests' own (nobody, on most systems).
OTHER_UID = 65534


def _as_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("making a folder or a listener of another user needs root")


def test_a_socket_folder_of_another_user_is_refused(
    qapp: Any, service: MemoryService, data_dir: DataDir, sock_dir: Path
) -> None:
    _as_root()
    # Without XDG_RUNTIME_DIR the folder is under /tmp: another user could make it first.
    theirs = sock_dir / "runtime"
    theirs.mkdir(mode=0o777)
    os.chown(theirs, OTHER_UID, OTHER_UID)
    srv = AgentServer(service, data_dir, theirs / "agent.sock")
    with pytest.raises(StorageError, match=r"belongs to another user .*XDG_RUNTIME_DIR"):
        srv.start()
    assert not srv.is_listening and not (theirs / "agent.sock").exists()
    srv.stop()
    # A shared folder with the sticky bit (/tmp itself) is fine: nobody can replace
    # another's file there.
    shared = sock_dir / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    os.chown(shared, OTHER_UID, OTHER_UID)
    srv = AgentServer(service, data_dir, shared / "agent.sock")
    srv.start()
    try:
        assert srv.is_listening
    finally:
        srv.stop()
    # A folder the person named (their home, say) is used as it is, never chmodded;
    # one Ambry makes is its own and private.
    home = sock_dir / "home"
    home.mkdir()
    home.chmod(0o755)
    made = home / "made"
    for path, mode in ((home / "agent.sock", 0o755), (made / "agent.sock", 0o700)):
        srv = AgentServer(service, data_dir, path)
        srv.start()
        try:
            assert srv.is_listening and stat.S_IMODE(path.parent.stat().st_mode) == mode
        finally:
            srv.stop()
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_the_client_sends_no_token_to_another_users_listener(sock_dir: Path) -> None:
    import subprocess
    import sys

    from core.agent.client import AmbryClient, ServerUnavailable

    _as_root()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("no setpriv to run a listener as another user")
    sock_dir.chmod(0o777)
    path = sock_dir / "agent.sock"
    listen = (
        "import socket, sys, time; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); "
        "s.listen(); print('ready', flush=True); time.sleep(30)"
    )
    other = subprocess.Popen(
        [
            setpriv,
            f"--reuid={OTHER_UID}",
            f"--regid={OTHER_UID}",
            "--clear-groups",
            "--",
            sys.executable,
            "-c",
            listen,
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout is not None and other.stdout.readline() == "ready\n"
        client = AmbryClient(socket_path=path, token="secret-token")
        with pytest.raises(ServerUnavailable, match=r"runs as another user .* not send it"):
            client.connect()
    finally:
        other.kill()
        other.communicate()


def test_doctor_tells_an_ambry_server_from_another_listener(
    qapp: Any,
    service: MemoryService,
    data_dir: DataDir,
    sock_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.cli.doctor import Status, check_socket

    path = sock_dir / "agent.sock"
    monkeypatch.setenv("AMBRY_SOCKET", str(path))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as other:
        other.bind(str(path))
        other.listen()
        found = check_socket()
        assert found.status is Status.WARN and "another program (not an Ambry)" in found.detail
    path.unlink()
    srv = AgentServer(service, data_dir, path)
    srv.start()
    try:
        found = check_socket()
        assert found.status is Status.OK and found.detail.endswith("an Ambry server is listening")
    finally:
        srv.stop()


def test_the_app_refuses_a_relative_socket_before_opening_anything(
    qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import argparse

    from core.model.errors import AmbryError
    from desktop.shell.app import launch

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AMBRY_SOCKET", "agent.sock")
    data = tmp_path / "data"
    args = argparse.Namespace(data_dir=str(data), group=None)
    with pytest.raises(AmbryError, match=r"AMBRY_SOCKET=agent\.sock is a relative path"):
        launch(args)
    assert not data.exists()
