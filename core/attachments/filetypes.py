"""What a file is: read it safely, hash it in chunks, and tell its type and text.

Nothing here touches a database. :func:`digest` refuses anything but a regular
file, checked before and after opening, and stops reading past a size limit;
:func:`classify` names the MIME type and kind from magic bytes and the
extension, and decodes text.
"""

from __future__ import annotations

import codecs
import hashlib
import mimetypes
import os
import stat
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

#: Bytes hashed per read; big enough to amortise the syscall, small enough to stay cheap.
CHUNK_BYTES: Final = 1 << 20


_OPEN_FLAGS: Final = (
    os.O_RDONLY
    # A FIFO swapped in after the stat must not block the open.
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


class Kind(StrEnum):
    TEXT = "text"
    DOCUMENT = "document"
    IMAGE = "image"
    BINARY = "binary"


# -- reading files ---------------------------------------------------------------


class NotRegular(Exception):
    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class OverLimit(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.size = size


@dataclass(frozen=True)
class Digest:
    sha256: str
    size: int
    head: bytes


def _not_regular(mode: int) -> str | None:
    """None for a regular file, else what the path is instead."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def digest(path: str, limit: int, keep: int) -> Digest:
    """Hash ``path`` in chunks, keeping its first ``keep`` bytes.

    The type is checked with ``stat`` before opening (opening a FIFO or a
    device can block or have side effects) and again with ``fstat`` on the
    open descriptor, as the path may have been swapped in between.

    Raises:
        OSError: from the file system (missing, permission, I/O, loop).
        NotRegular: the path is a directory, FIFO, socket or device.
        OverLimit: the file holds more than ``limit`` bytes; reading stops
            one chunk past the limit, whatever the file's real size.
    """
    before = os.stat(path)
    if what := _not_regular(before.st_mode):
        raise NotRegular(what)
    if before.st_size > limit:
        raise OverLimit(before.st_size)
    fd = os.open(path, _OPEN_FLAGS)
    try:
        fh = open(fd, "rb", buffering=0, closefd=True)  # noqa: SIM115 (closed by the with below)
    except BaseException:
        os.close(fd)
        raise
    with fh:
        if what := _not_regular(os.fstat(fd).st_mode):
            raise NotRegular(what)
        sha = hashlib.sha256()
        head = bytearray()
        buf = bytearray(CHUNK_BYTES)
        view = memoryview(buf)
        total = 0
        while total <= limit:
            n = fh.readinto(buf)
            if not n:  # 0 at end of file; None cannot happen on a regular file
                break
            sha.update(view[:n])
            if len(head) < keep:
                head += view[: min(n, keep - len(head))]
            total += n
        view.release()
    if total > limit:
        raise OverLimit(total)
    return Digest(sha.hexdigest(), total, bytes(head))


# -- what a file is ----------------------------------------------------------------

_MAGIC: Final[tuple[tuple[bytes, str], ...]] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"PK\x05\x06", "application/zip"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "application/x-ole-storage"),
    (b"\x1f\x8b", "application/gzip"),
)

# Containers whose extension says which document they hold.
_ZIP_DOCUMENTS: Final = {
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".ods": "application/vnd.oasis.opendocument.spreadsheet",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".epub": "application/epub+zip",
}
_OLE_DOCUMENTS: Final = {
    ".doc": "application/msword",
    ".xls": "application/vnd.ms-excel",
    ".ppt": "application/vnd.ms-powerpoint",
}

# Extensions the platform's MIME tables miss or get wrong (".ts" is not a video here).
_TEXT_EXTENSIONS: Final = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".txt": "text/plain",
    ".log": "text/plain",
    ".ini": "text/plain",
    ".cfg": "text/plain",
    ".rst": "text/x-rst",
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".toml": "application/toml",
    ".xml": "application/xml",
    ".html": "text/html",
    ".css": "text/css",
    ".sql": "application/sql",
    ".py": "text/x-python",
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".jsx": "text/javascript",
    ".ts": "text/x-typescript",
    ".tsx": "text/x-typescript",
    ".rs": "text/x-rust",
    ".go": "text/x-go",
    ".java": "text/x-java",
    ".kt": "text/x-kotlin",
    ".swift": "text/x-swift",
    ".c": "text/x-c",
    ".h": "text/x-c",
    ".cc": "text/x-c++",
    ".cpp": "text/x-c++",
    ".hpp": "text/x-c++",
    ".cs": "text/x-csharp",
    ".rb": "text/x-ruby",
    ".php": "text/x-php",
    ".sh": "text/x-shellscript",
    ".bash": "text/x-shellscript",
    ".lua": "text/x-lua",
    ".tex": "text/x-tex",
}
_TEXT_APPLICATION: Final = frozenset(
    {"application/json", "application/jsonl", "application/yaml", "application/toml"}
    | {"application/xml", "application/sql", "application/javascript", "application/x-sh"}
)
_DOCUMENT_TYPES: Final = frozenset(
    {"application/pdf", "application/rtf", "application/epub+zip", "application/x-ole-storage"}
)
_DOCUMENT_PREFIXES: Final = (
    "application/vnd.openxmlformats-officedocument.",
    "application/vnd.oasis.opendocument.",
    "application/vnd.ms-",
    "application/msword",
)
# Every byte except the control characters that do not occur in text, for counting those.
_NOT_CONTROLS: Final = bytes(b for b in range(256) if b >= 0x20 or b in b"\t\n\r\f\b\x1b")


def _sniff(head: bytes, ext: str) -> str | None:
    """The MIME type magic bytes prove, refined by the extension for containers."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    for magic, mime in _MAGIC:
        if head.startswith(magic):
            if mime == "application/zip":
                return _ZIP_DOCUMENTS.get(ext, mime)
            if mime == "application/x-ole-storage":
                return _OLE_DOCUMENTS.get(ext, mime)
            return mime
    return None


def _is_text_type(mime: str) -> bool:
    return (
        mime.startswith("text/")
        or mime in _TEXT_APPLICATION
        or (mime.startswith("application/") and mime.endswith(("+json", "+xml")))
    )


def kind_of(mime: str) -> Kind:
    """The kind a MIME type belongs to."""
    if mime.startswith("image/"):
        return Kind.IMAGE
    if _is_text_type(mime):
        return Kind.TEXT
    if mime in _DOCUMENT_TYPES or mime.startswith(_DOCUMENT_PREFIXES):
        return Kind.DOCUMENT
    return Kind.BINARY


def _decode(head: bytes, complete: bool) -> str | None:
    """``head`` as text, or None when it does not look like text.

    UTF-8 (with or without a BOM) and BOM-marked UTF-16 are tried first; other
    bytes are taken as Windows-1252 (then Latin-1) when control characters are
    rare, which covers most legacy text. An incomplete character at the end of
    a cut-off ``head`` is dropped rather than counted as an error.
    """
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return codecs.getincrementaldecoder("utf-16")("replace").decode(head, complete)
    if b"\x00" in head:
        return None
    try:
        return codecs.getincrementaldecoder("utf-8-sig")().decode(head, complete)
    except UnicodeDecodeError:
        pass
    controls = len(head.translate(None, _NOT_CONTROLS))
    if controls > len(head) // 100:
        return None
    try:
        return head.decode("cp1252")
    except UnicodeDecodeError:  # the five bytes cp1252 leaves undefined
        return head.decode("latin-1")


def classify(filename: str, head: bytes, complete: bool) -> tuple[str, Kind, str | None]:
    """MIME type, kind and (for text) the decoded text of a file.

    Magic bytes win over the extension, so a PNG named ``.txt`` is an image;
    a file claiming a text type whose bytes are not text is binary.
    """
    ext = os.path.splitext(filename)[1].lower()
    mime = _sniff(head, ext)
    if mime is None:
        mime = _TEXT_EXTENSIONS.get(ext) or mimetypes.guess_type(filename, strict=False)[0]
        if mime is None or _is_text_type(mime):
            text = _decode(head, complete)
            if text is None:
                return "application/octet-stream", Kind.BINARY, None
            return mime or "text/plain", Kind.TEXT, text
    return mime, kind_of(mime), None
