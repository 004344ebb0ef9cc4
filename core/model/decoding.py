"""A person's text file (or standard input) as text: UTF-8, or refused with the place.

Every reader of such bytes decodes them here (the imports of other apps' files and of
Ambry's own export, ``ambry ingest``, standard input), so all accept the same files
and refuse the rest with the same message:

* UTF-8, with or without a byte-order mark;
* UTF-16 with its byte-order mark, as Windows Notepad's "Unicode" and Windows
  PowerShell's ``>`` write it, read as the text it holds;
* anything else is refused, with the byte and the line where it stops being UTF-8 and
  what to do, rather than guessed at: a Latin-1 or Windows-1252 file would be stored
  as "caf�". A NUL byte is refused too: text has none, and UTF-16 without its mark
  (a NUL in every other byte of English text) is otherwise valid UTF-8.

:func:`decode` takes the whole of the bytes; :func:`utf8_stream` reads a stream a
piece at a time, for files too large to hold (a chat export of hundreds of megabytes),
and gives UTF-8 bytes whatever the file's encoding.
"""

from __future__ import annotations

import codecs
import io
from typing import IO

from core.model.errors import InvalidParams

SAVE_AS_UTF8 = "save the file as UTF-8"
_CHUNK = 1 << 16
_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def decode(raw: bytes, name: str, *, fix: str = SAVE_AS_UTF8, field: str = "file") -> str:
    """``raw`` as text; ``name`` (a file's name, "standard input") and ``fix`` word the refusal.

    Raises:
        InvalidParams: not UTF-8 (nor UTF-16 with its mark), naming the byte and its line.
    """
    return utf8_stream(io.BytesIO(raw), name, fix=fix, field=field).read().decode("utf-8")


def utf8_stream(
    stream: IO[bytes], name: str, *, fix: str = SAVE_AS_UTF8, field: str = "file"
) -> io.BufferedReader:
    """``stream`` read as UTF-8 bytes, less any byte-order mark; UTF-16 is converted.

    Bytes are checked as they are read: a read raises InvalidParams at the first
    that is not UTF-8 (or, in a UTF-16 file, at a broken pair), naming it and its line.
    """
    return io.BufferedReader(_Utf8Reader(stream, name, fix, field), buffer_size=_CHUNK)


class _Utf8Reader(io.RawIOBase):
    def __init__(self, stream: IO[bytes], name: str, fix: str, field: str) -> None:
        self._stream = stream
        self._name, self._fix, self._field = name, fix, field
        self._started = False
        self._utf16 = False
        self._decoder: codecs.IncrementalDecoder = codecs.getincrementaldecoder("utf-8")()
        self._pending = b""
        self._lines = 1  # the line the next byte read is on
        self._done = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        while not self._pending and not self._done:
            self._pending = self._next()
        n = min(len(buffer), len(self._pending))
        memoryview(buffer)[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def _next(self) -> bytes:
        chunk = self._stream.read(_CHUNK)
        if not self._started:
            self._started = True
            while len(chunk) < 3 and (more := self._stream.read(3 - len(chunk))):
                chunk += more
            if chunk.startswith(codecs.BOM_UTF8):
                chunk = chunk[3:]
            elif chunk.startswith(_BOMS):
                self._utf16 = True
                self._decoder = codecs.getincrementaldecoder("utf-16")()
        final = not chunk
        self._done = final
        if self._utf16:
            return self._from_utf16(chunk, final)
        nul = chunk.find(b"\x00")
        try:
            self._decoder.decode(chunk, final)
        except UnicodeDecodeError as exc:
            # exc.object is the decoder's held-back bytes (part of a character, never
            # a newline or a NUL) and then the chunk.
            at = exc.start - (len(exc.object) - len(chunk))
            if nul < 0 or at < nul:
                self._refuse(exc.object[exc.start], self._lines + chunk.count(b"\n", 0, max(at, 0)))
        if nul >= 0:
            self._refuse(0, self._lines + chunk.count(b"\n", 0, nul))
        self._lines += chunk.count(b"\n")
        return chunk

    def _from_utf16(self, chunk: bytes, final: bool) -> bytes:
        try:
            text = self._decoder.decode(chunk, final)
        except UnicodeDecodeError:
            raise InvalidParams(
                f"{self._name} is marked as UTF-16 but is not valid UTF-16 (a broken "
                f"character after line {self._lines}); {self._fix}",
                field=self._field,
                rule="unicode",
            ) from None
        self._lines += text.count("\n")
        return text.encode("utf-8")

    def _refuse(self, byte: int, line: int) -> None:
        why = "; it looks like UTF-16 without a byte-order mark" if byte == 0 else ""
        raise InvalidParams(
            f"{self._name} is not UTF-8 text (byte 0x{byte:02X} at line {line}{why}); {self._fix}",
            field=self._field,
            rule="unicode",
        )
