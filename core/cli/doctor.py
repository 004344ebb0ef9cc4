"""``ambry doctor``: is this installation healthy, and if not, what to do.

Each check prints one line, ``ok``, ``warn`` or ``fail``, with what it found and,
when it is not ok, the fix. A settings file that stops every other command
(a bad value, a file that cannot be read) is reported as one check, and the
others still run. Nothing here writes to the data dir: databases are
opened read-only, and the MCP start-up is timed on a temporary data dir. Exits 1
if any check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import apsw

from core import __version__
from core.cli.context import Context, command
from core.cli.doctor_storage import (
    Finding,
    Status,
    check_config,
    check_data_dir,
    check_free_space,
    check_schemas,
    readable,
)
from core.cli.installation import reinstall_command
from core.cli.logfile import log_file, log_problem
from core.cli.qtlibs import check_qt_libraries, report
from core.model.errors import AmbryError, InvalidParams
from core.storage.crypto import (
    KeyUnavailable,
    describe_key_entry,
    key_present,
    remember_key_name,
)
from core.storage.db import open_database
from core.storage.file_safety import peer_uid, socket_path_too_long
from core.storage.keyrings import keyring_verdict, os_keyring_fix
from core.storage.paths import (
    DataDir,
    LocatedDataDir,
    creatable,
    default_socket_path,
    socket_origin,
)
from core.storage.workspace import SEALED_SQL

MCP_OK_S = 1.0
MCP_TIMEOUT_S = 30.0


def check_install() -> Finding:
    where = Path(__file__).resolve().parents[2]
    return Finding("ambry", Status.OK, f"{__version__} on Python {sys.version.split()[0]}, {where}")


def _sealed_groups(data_dir: DataDir) -> list[str]:
    sealed = []
    for group in data_dir.groups():
        try:
            conn = open_database(data_dir.group_db(group), read_only=True)
        except AmbryError:
            continue  # reported by the schema check
        try:
            if conn.execute(SEALED_SQL).fetchone() is not None:
                sealed.append(group)
        except apsw.Error:
            pass  # an older schema, upgraded when next opened; checked then
        finally:
            conn.close()
    return sealed


def check_data_key(data_dir: DataDir) -> Finding | None:
    """Whether the key that sealed the private memories is in the keyring (after a move, say)."""
    sealed = _sealed_groups(data_dir)
    if not sealed:
        return None
    try:
        present = key_present(data_dir.root)
    except KeyUnavailable:
        return None  # the keyring check says why
    if present:
        # A data dir an earlier version made names its key's entry from now on.
        remember_key_name(data_dir.root)
        return Finding("data key", Status.OK, f"in the keyring for group {', '.join(sealed)}")
    return Finding(
        "data key",
        Status.FAIL,
        f"the private and secret memories of group {', '.join(sealed)} cannot be read: "
        f"their key is not in the OS keyring ({describe_key_entry(data_dir.root)})",
        "if the data dir was moved or renamed, move it back, run `ambry doctor` there once "
        "and move it again; from another machine or account, restore the key with the "
        "keyring's tools",
    )


def check_keyring() -> Finding:
    verdict = keyring_verdict()
    if verdict.problem is not None:
        return Finding(
            "keyring",
            Status.WARN,
            f"no OS keyring: {verdict.problem}; private and secret memories cannot be stored",
            os_keyring_fix(),
        )
    return Finding("keyring", Status.OK, verdict.name)


def check_socket() -> Finding:
    try:
        path = default_socket_path()
    except InvalidParams as exc:  # a relative AMBRY_SOCKET
        return Finding("socket", Status.FAIL, exc.message, "set AMBRY_SOCKET to an absolute path")
    too_long = socket_path_too_long(path, socket_origin())
    if too_long is not None:
        # Ambry would refuse to serve there; clients could not connect either.
        detail, _, fix = too_long.partition("; ")
        return Finding("socket", Status.FAIL, f"{detail}, so no Ambry can serve agents there", fix)
    if not path.exists():
        return Finding("socket", Status.OK, f"{path}: no server running (`ambry` or `ambry serve`)")
    if not stat.S_ISSOCK(path.stat().st_mode):
        return Finding(
            "socket",
            Status.FAIL,
            f"{path} exists but is not a socket",
            f"remove it (rm '{path}') or set AMBRY_SOCKET",
        )
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        try:
            sock.connect(str(path))
        except OSError:
            return Finding(
                "socket",
                Status.WARN,
                f"{path} is left over from a server that stopped",
                "the next `ambry serve` replaces it; or rm it",
            )
        owner = peer_uid(sock, path)
    if os.name == "posix" and owner is not None and owner != os.geteuid():
        return Finding(
            "socket",
            Status.FAIL,
            f"{path}: a program of another user (uid {owner}) listens there; agents "
            "will not send it their token",
            "set XDG_RUNTIME_DIR, or AMBRY_SOCKET to a path in a folder of your own",
        )
    if not _ambry_holds(path):
        return Finding(
            "socket",
            Status.WARN,
            f"{path}: another program (not an Ambry) listens there, so Ambry cannot serve "
            "agents on it",
            "stop that program, or set AMBRY_SOCKET to another path",
        )
    return Finding("socket", Status.OK, f"{path}: an Ambry server is listening")


def _ambry_holds(path: Path) -> bool:
    """Whether an Ambry server holds the lock every one takes beside its socket: the
    lock file names its pid, and that process is alive. (Not by taking the lock,
    even for a moment: a server starting then would find it taken.)"""
    if os.name != "posix":
        return True  # no lock file there: a listener is taken to be Ambry
    try:
        pid = int(path.with_name(path.name + ".lock").read_text(encoding="ascii").strip())
        os.kill(pid, 0)
    except PermissionError:
        return True  # alive, another user's: the socket check says whose
    except (OSError, ValueError):
        return False
    return True


def check_qt() -> Finding:
    result = check_qt_libraries()
    if not result.checked:
        return Finding(
            "qt", Status.WARN if "PySide6" in result.reason else Status.OK, result.reason
        )
    if result.ok:
        return Finding("qt", Status.OK, f"xcb platform libraries present ({result.plugin})")
    return Finding(
        "qt",
        Status.FAIL,
        "missing " + ", ".join(result.missing),
        " or ".join(result.install_commands()) or report(result),
    )


def check_model(model_dir: str = "") -> Finding:
    """The embedding model loads and its files have their pinned hashes."""
    from core.semantic.embedding import Embedder, EmbeddingUnavailable, model_files

    try:
        model = Embedder.load(model_files(model_dir))
    except EmbeddingUnavailable as exc:
        fix = (
            "name a folder with model.onnx and tokenizer.json (`ambry settings "
            "embedding_model_dir DIR`, or Settings → Search in the app), or go back to "
            "the model Ambry ships (`ambry settings embedding_model_dir --reset`)"
            if model_dir
            else f"reinstall Ambry ({reinstall_command()})"
        )
        return Finding("model", Status.FAIL, f"{exc}; search ranks by keywords only", fix)
    where = model_dir or "shipped with Ambry, hashes checked"
    return Finding(
        "model",
        Status.OK,
        f"{model.model_id} ({model.dimensions} dimensions, {where}), "
        f"loaded in {model.load_seconds:.2f} s",
    )


def _ambry_command() -> list[str]:
    """This installation's ``ambry``: the frozen executable, else this Python's ``-m ambry``."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "ambry"]


def check_mcp_startup() -> Finding:
    """Seconds from launching ``ambry mcp`` (temporary data dir) to its ``initialize`` answer."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "ambry-doctor", "version": __version__},
        },
    }
    with tempfile.TemporaryDirectory(prefix="ambry-doctor-") as tmp:
        env = {**os.environ, "AMBRY_DATA_DIR": tmp, "AMBRY_LOG_DIR": tmp}
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*_ambry_command(), "mcp", "--client", "doctor"],
            env=env,
            cwd=tmp,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = proc.communicate(json.dumps(init).encode() + b"\n", timeout=MCP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return Finding(
                "mcp", Status.FAIL, f"no answer within {MCP_TIMEOUT_S:g} s", "run `ambry mcp -v`"
            )
        seconds = time.perf_counter() - start
    first = out.split(b"\n", 1)[0]
    try:
        server = json.loads(first)["result"]["serverInfo"]
    except (ValueError, KeyError, TypeError):
        tail = err.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
        return Finding(
            "mcp",
            Status.FAIL,
            f"`ambry mcp` did not answer initialize: {tail[0]}",
            "run `ambry mcp -v` and see the log file",
        )
    detail = f"{server.get('name')} answered initialize in {seconds:.2f} s (whole start and exit)"
    if seconds > MCP_OK_S:
        return Finding(
            "mcp", Status.WARN, detail, "a slow disk or a busy machine; clients may time out"
        )
    return Finding("mcp", Status.OK, detail)


def check_log() -> Finding:
    path = log_file()
    exists = False
    try:
        os.stat(path)
        exists = True
        problem = log_problem(path)
    except FileNotFoundError:
        problem = log_problem(path)
    except OSError as exc:  # a folder on the way that cannot be searched, say
        problem = log_problem(path, exc)
    if problem is not None:
        return Finding(
            "log",
            Status.FAIL,
            f"{path} cannot be written: {problem.cause}; commands run on without a log file",
            problem.fix,
        )
    if exists:
        return Finding("log", Status.OK, str(path))
    why = creatable(path)
    if why is not None:
        return Finding(
            "log",
            Status.WARN,
            f"{path} cannot be created: {why}",
            "commands still run, without a log file; set AMBRY_LOG_DIR to a writable folder",
        )
    return Finding("log", Status.OK, f"{path} (created on first use)")


def run_checks(
    data_dir: DataDir, located: LocatedDataDir, *, mcp: bool, model_dir: str = ""
) -> list[Finding]:
    findings = [check_install(), check_data_dir(data_dir, located)]
    memory = data_dir.memory_dir
    if data_dir.root.is_dir() and readable(data_dir.root):
        space = check_free_space(data_dir.root)
        if space is not None:
            findings.append(space)
        findings.append(check_config(data_dir))
        if not memory.is_dir() or readable(memory):
            findings += check_schemas(data_dir)
            key = check_data_key(data_dir)
            if key is not None:
                findings.append(key)
    checks: list[Callable[[], Finding]] = [
        check_keyring,
        check_socket,
        check_qt,
        lambda: check_model(model_dir),
        check_log,
    ]
    if mcp:
        checks.append(check_mcp_startup)
    findings += [fn() for fn in checks]
    return findings


def _doctor_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-mcp", action="store_true", help="skip timing the MCP server's start-up (about 1 s)"
    )


@command(
    "doctor",
    "Check the data dir, databases, keyring, socket, Qt libraries, the embedding model, "
    "MCP start-up and log file.",
    opens_store=False,
)(_doctor_args)
def cmd_doctor(ctx: Context, args: argparse.Namespace) -> int:
    findings = run_checks(
        ctx.service.data_dir,
        args.located_data_dir,
        mcp=not args.no_mcp,
        model_dir=ctx.service.config.embedding_model_dir,
    )
    text = "\n".join(
        f"{f.status.value:<5} {f.check}: {f.detail}" + (f"\n      fix: {f.fix}" if f.fix else "")
        for f in findings
    )
    ctx.emit([asdict(f) for f in findings], text)
    return 1 if any(f.status is Status.FAIL for f in findings) else 0
