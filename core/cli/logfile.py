"""Where Ambry logs: a rotating file under the platform's log dir, and stderr.

The app has no terminal, and an MCP client usually hides a server's stderr, so
every entry point writes what happened to ``<user log dir>/ambry.log``
(``platformdirs.user_log_dir("Ambry")``, or ``AMBRY_LOG_DIR``): Ambry's own
records from INFO up, other libraries' from WARNING up, and the traceback of
any bug. The file is owner-only, rotates at 1 MiB and keeps three old ones. Only the
composition root (:func:`core.cli.main.main`) installs the handlers, and it
removes them again when the command returns.
"""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import platformdirs

from core.model.file_errors import Diagnosis, access_problem, explain
from core.policy.secrets import redact
from core.storage.paths import path_from_env

LOG_DIR_ENV = "AMBRY_LOG_DIR"
LOG_FILE_NAME = "ambry.log"
MAX_BYTES = 1024 * 1024
BACKUPS = 3
OWN_LOGGERS = ("core", "desktop", "ambry", "__main__")
FILE_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"
#: stderr with ``--verbose``: which module said it, too.
CONSOLE_VERBOSE = "%(levelname)s %(name)s: %(message)s"


def log_dir() -> Path:
    """``AMBRY_LOG_DIR``, else the platform's user log dir for Ambry.

    Raises:
        InvalidParams: ``AMBRY_LOG_DIR`` holds a relative path (refused as a relative
            ``AMBRY_DATA_DIR`` is: each process would log in another folder).
    """
    named = path_from_env(LOG_DIR_ENV, "folder")
    return named or Path(platformdirs.user_log_dir("Ambry", appauthor=False))


def log_file() -> Path:
    return log_dir() / LOG_FILE_NAME


def log_problem(path: Path, exc: OSError | None = None) -> Diagnosis | None:
    """What stops Ambry logging to ``path`` (``exc``: the failure met, if any), and the
    fix; None when nothing does. ``ambry doctor`` and the warnings of every command say it.
    """
    folder = path.parent
    try:
        a_file = not stat.S_ISDIR(os.stat(folder).st_mode)
    except OSError:
        a_file = False
    if a_file:
        if os.environ.get(LOG_DIR_ENV):
            return Diagnosis(
                f"{LOG_DIR_ENV}={folder} names a file, but must name a folder",
                f"set {LOG_DIR_ENV} to a folder (or unset it for the platform's own)",
            )
        return Diagnosis(f"{folder} is a file, but must be a folder", "move the file away")
    if exc is None:
        return access_problem(path, write=True)
    return explain(exc, Path(exc.filename) if isinstance(exc.filename, str) else path, write=True)


def _cannot(what: str, path: Path, exc: OSError) -> str:
    return f"warning: cannot {what} {path}: {log_problem(path, exc)} (commands run on without it)"


class _OwnOrWarning(logging.Filter):
    """Ambry's records from INFO up; others' (the MCP SDK logs each request) from WARNING."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            return True
        return record.name.split(".", 1)[0] in OWN_LOGGERS


class _Console(logging.Formatter):
    """``warning: …`` on stderr, as the command's own warnings and errors read; the
    module that logged it is for ``--verbose`` and the log file."""

    def format(self, record: logging.LogRecord) -> str:
        text = f"{record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


class _Redacting(logging.Formatter):
    """A record as the file keeps it: secrets redacted like any stored text.

    A refusal's message may quote what was typed (a setting's value, an id),
    and the file is on disk for as long as it rotates.
    """

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record)).text


class _LogFile(logging.handlers.RotatingFileHandler):
    """The log file, which gives up quietly on a full or read-only disk.

    A failed write says so once on stderr and stops the file handler, instead of
    the logging module's traceback for every record: the command itself goes on.

    Several processes write the same file (the app or ``ambry serve``, ``ambry mcp``,
    each CLI command), and any of them may rotate it. So before each record the
    handler checks that ``ambry.log`` is still the file it holds open, and reopens it
    when another process has rotated it away: a long-running server would otherwise
    go on writing into ``ambry.log.1`` and push that past the size limit. A rotation
    runs under a lock file and first checks that no other process rotated the file
    meanwhile, so two processes never rotate the same file twice.
    """

    failed = False
    #: (device, inode) of the open file, to notice another process's rotation.
    _identity: tuple[int, int] | None = None

    def _open(self) -> Any:
        # Owner-only, as the rest of Ambry's files: it names groups, paths and refusals.
        # A file an older version made readable to others is tightened.
        # (Not through file_safety.tighten: it logs, and this runs inside a log call.)
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            if os.name == "posix":
                with contextlib.suppress(OSError):  # another owner's file: written as it is
                    os.fchmod(fd, 0o600)
            info = os.fstat(fd)
            self._identity = (info.st_dev, info.st_ino)
            return open(fd, self.mode, encoding=self.encoding, errors=self.errors)
        except BaseException:
            os.close(fd)
            raise

    def _follow_rotation(self) -> None:
        """Close the open file if ``ambry.log`` is no longer it (the next write reopens)."""
        if self.stream is None:
            return
        try:
            info = os.stat(self.baseFilename)
            current: tuple[int, int] | None = (info.st_dev, info.st_ino)
        except OSError:
            current = None
        if current != self._identity:
            stream, self.stream = self.stream, None
            with contextlib.suppress(OSError):
                stream.close()

    def shouldRollover(self, record: logging.LogRecord) -> bool:
        self._follow_rotation()
        return bool(super().shouldRollover(record))

    def doRollover(self) -> None:
        with _rotation_lock(self.baseFilename):
            # Another process may have rotated while this one waited: then the file
            # on disk is a fresh one, and this process only has to move over to it.
            self._follow_rotation()
            if self.stream is None:
                return
            try:
                super().doRollover()
            except OSError:
                # Windows cannot rename a file another process holds open: the log
                # goes on in the same file, reopened on the next record.
                return
            # Old files keep the log's own mode, also ones an older version left readable.
            if os.name == "posix":
                for n in range(1, self.backupCount + 1):
                    with contextlib.suppress(OSError):
                        os.chmod(f"{self.baseFilename}.{n}", 0o600)

    def handleError(self, record: logging.LogRecord) -> None:
        if self.failed:
            return
        self.failed = True
        exc = sys.exc_info()[1]
        path = Path(self.baseFilename)
        if isinstance(exc, OSError):
            print(_cannot("write the log file", path, exc), file=sys.stderr)
        else:
            print(f"warning: cannot write the log file {path}: {exc}", file=sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        if not self.failed:
            super().emit(record)

    def close(self) -> None:
        try:
            super().close()
        except OSError as exc:
            # The buffered tail could not be written: the same full disk, said once.
            if not self.failed:
                self.failed = True
                print(_cannot("write the log file", Path(self.baseFilename), exc), file=sys.stderr)


@contextmanager
def _rotation_lock(log_path: str) -> Iterator[None]:
    """Hold ``ambry.log.lock`` (POSIX ``flock``) while rotating; elsewhere, no lock."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    try:
        fd = os.open(log_path + ".lock", os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _file_handler(path: Path) -> logging.Handler | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handler = _LogFile(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True
        )
    except OSError as exc:
        # A read-only home must not stop the command; say so once, on stderr.
        print(_cannot("log to", path, exc), file=sys.stderr)
        return None
    handler.setLevel(logging.INFO)
    handler.addFilter(_OwnOrWarning())
    handler.setFormatter(_Redacting(FILE_FORMAT))
    return handler


@contextmanager
def logging_to_file(*, verbose: bool, path: Path | None = None) -> Iterator[Path]:
    """Log to stderr (WARNING, or INFO with ``verbose``) and to the log file (``path``,
    by default :func:`log_file`) while inside."""
    root = logging.getLogger()
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setLevel(logging.INFO if verbose else logging.WARNING)
    stderr.setFormatter(logging.Formatter(CONSOLE_VERBOSE) if verbose else _Console())
    path = log_file() if path is None else path
    handlers = [h for h in (stderr, _file_handler(path)) if h is not None]
    previous_level = root.level
    root.setLevel(logging.INFO)
    for handler in handlers:
        root.addHandler(handler)
    try:
        yield path
    finally:
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()
        root.setLevel(previous_level)
