"""A person's text file as text: UTF-8 with or without a BOM, UTF-16 with one, else refused."""

from __future__ import annotations

import codecs
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.model.decoding import decode, utf8_stream
from core.model.errors import InvalidParams

TEXT = "Zoë Müller\nlikes café au lait\n東京 🍵\n"


@pytest.mark.parametrize(
    "raw",
    [
        TEXT.encode("utf-8"),
        TEXT.encode("utf-8-sig"),
        TEXT.encode("utf-16"),
        codecs.BOM_UTF16_BE + TEXT.encode("utf-16-be"),
    ],
    ids=["utf-8", "utf-8 with a BOM", "utf-16", "utf-16 big-endian"],
)
def test_utf8_and_marked_utf16_read_as_their_text(raw: bytes) -> None:
    assert decode(raw, "notes.md") == TEXT


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"one\ntwo\nLikes caf\xe9\n", "notes.md is not UTF-8 text (byte 0xE9 at line 3)"),
        (b"Zo\xeb\n", "notes.md is not UTF-8 text (byte 0xEB at line 1)"),
        (b"cut short \xe2\x82", "notes.md is not UTF-8 text (byte 0xE2 at line 1)"),
        (
            "one\ntwo".encode("utf-16-le"),
            "notes.md is not UTF-8 text (byte 0x00 at line 1; it looks like UTF-16 "
            "without a byte-order mark)",
        ),
        (b"\xff\xfe\x00\xd8", "notes.md is marked as UTF-16 but is not valid UTF-16"),
    ],
)
def test_anything_else_is_refused_with_the_byte_and_its_line(raw: bytes, says: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        decode(raw, "notes.md")
    assert caught.value.message.startswith(says)
    assert caught.value.message.endswith("; save the file as UTF-8")
    assert caught.value.field == "file" and caught.value.data["rule"] == "unicode"


def test_a_stream_is_checked_as_it_is_read_across_chunk_boundaries() -> None:
    # A character cut by a 64 KiB chunk boundary is joined; a bad byte far in is
    # named with its line.
    body = ("é" * 40_000 + "\n") * 3
    assert utf8_stream(io.BytesIO(body.encode()), "big.json").read() == body.encode()
    bad = body.encode() + b"x\xe9"
    with pytest.raises(InvalidParams, match=r"byte 0xE9 at line 4\)"):
        utf8_stream(io.BytesIO(bad), "big.json").read()
    utf16 = body.encode("utf-16")
    assert utf8_stream(io.BytesIO(utf16), "big.json").read() == body.encode()


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")),
    st.sampled_from(["utf-8", "utf-8-sig", "utf-16"]),
)
def test_any_text_comes_back_as_it_was(text: str, encoding: str) -> None:
    if encoding == "utf-8" and text.startswith("\ufeff"):
        text = text[1:]  # a leading U+FEFF is a byte-order mark to every reader
    assert decode(text.encode(encoding), "t.txt") == text
