"""The export file format: a versioned JSON Lines file, read and checked record by record.

Line 1 is a header (format, version, group, time, counts, encryption). Each
following line is one record with a ``kind``: ``entry``, ``thread``,
``thread_handoff`` (with its ``author``), ``receipt`` or ``receipt_link``.
Conversation turns are not in it. Private and secret entries
are left out unless asked for, and then their content is sealed with a key
derived from a passphrase (scrypt, AES-256-GCM, the entry id as associated data),
so the file never holds them in clear. :mod:`core.portability.export` writes it;
:mod:`core.portability.importing` reads it, all or nothing.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from core.model.decoding import utf8_stream
from core.model.entries import (
    ENTRY_TYPES,
    Actor,
    Privacy,
    SourceType,
    Status,
    Trust,
    iso,
    utc_now,
)
from core.model.errors import InvalidParams
from core.model.times import EXPECTED, LATEST_AHEAD, store_form
from core.policy.manifest import describe_error, error_field

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator


#: ``progress(done, total)``, called every :data:`PROGRESS_EVERY` records and at the end.
Progress = Callable[[int, int], None]
PROGRESS_EVERY = 200
FORMAT = "ambry-export"
VERSION = 1
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
#: Tables copied row by row besides the entries, with their key column.
ROW_KINDS: dict[str, tuple[str, str]] = {
    "thread": ("threads", "id"),
    "thread_handoff": ("thread_handoffs", "id"),
    "receipt": ("attachment_receipts", "id"),
    "receipt_link": ("attachment_receipt_turns", "id"),
}

ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": [
        "kind",
        "id",
        "type",
        "tags",
        "status",
        "privacy",
        "source",
        "provenance",
        "confidence",
    ],
    "properties": {
        "kind": {"const": "entry"},
        "id": {"type": "string", "pattern": "^mem-[0-9a-f-]{36}$"},
        "type": {"enum": list(ENTRY_TYPES)},
        "content": {"type": "string", "maxLength": 2000},
        "sealed": {"type": "string"},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 50}},
        "status": {"enum": [s.value for s in Status]},
        "privacy": {"enum": [p.value for p in Privacy]},
        "superseded_by": {"type": ["string", "null"]},
        "superseded_at": {"type": ["string", "null"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "pinned": {"type": "boolean"},
        "review_reason": {"type": ["string", "null"]},
        "last_seen_at": {"type": ["string", "null"]},
        "source": {
            "type": "object",
            "required": ["type", "trust"],
            "properties": {
                "type": {"enum": [s.value for s in SourceType]},
                "trust": {"enum": [t.value for t in Trust]},
            },
        },
        "provenance": {
            "type": "object",
            "required": ["session_id", "group", "created_at", "updated_at"],
            "properties": {
                k: {"type": "string"} for k in ("session_id", "group", "created_at", "updated_at")
            },
        },
    },
    "oneOf": [{"required": ["content"]}, {"required": ["sealed"]}],
}
_ENTRY_ID = re.compile(ENTRY_SCHEMA["properties"]["id"]["pattern"])
ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["kind", "row"],
    "properties": {
        "kind": {"enum": list(ROW_KINDS)},
        "row": {"type": "object"},
        # A thread_handoff's author: the actor of the session that wrote it. Files
        # from before it have none; an older Ambry ignores it.
        "author": {"enum": [*(a.value for a in Actor), None]},
    },
}
HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version"],
    "properties": {"format": {"const": FORMAT}, "version": {"type": "integer"}},
}


SCHEMAS = {"entry": ENTRY_SCHEMA, "row": ROW_SCHEMA, "header": HEADER_SCHEMA}


def derive_key(passphrase: str, salt: bytes) -> bytes:
    return Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(
        passphrase.encode("utf-8")
    )


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror}", field="file") from exc
    with handle:
        # Lines end at \n only (a U+2028 in a string is part of it), read as they come.
        for number, raw in enumerate(utf8_stream(handle, path.name), 1):
            line = raw.decode("utf-8")
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidParams(f"{path.name} line {number}: not JSON ({exc.msg})") from exc
            if not isinstance(value, dict):
                raise InvalidParams(f"{path.name} line {number}: expected a JSON object")
            yield number, value


@functools.cache
def validator(record: str) -> Draft202012Validator:
    # Imported here: jsonschema takes 50 ms to import, which an import pays, not every command.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(SCHEMAS[record])


def check_record(record: str, value: Any, where: str) -> None:
    """Raise InvalidParams naming the first field of ``value`` that breaks ``record``'s schema.

    The message names the field and the rule, never the value: a refusal is shown and
    logged, and the value may be a memory's content.
    """
    error = next(iter(validator(record).iter_errors(value)), None)
    if error is None:
        return
    at = error_field(error).replace("(arguments)", "record")
    problem = describe_error(error)
    if error.validator == "maxLength" and isinstance(error.instance, str):
        problem += f" (it has {len(error.instance):,})"
    entry_id = value.get("id") if record == "entry" else None
    if isinstance(entry_id, str) and _ENTRY_ID.fullmatch(entry_id):
        where += f" (id {entry_id})"
    raise InvalidParams(f"{where}: {at} {problem}", field=at, rule=str(error.validator))


#: The time fields of an entry record: top-level, then under ``provenance``.
_ENTRY_TIMES = ("superseded_at", "last_seen_at")
_PROVENANCE_TIMES = ("created_at", "updated_at")


def check_times(record: dict[str, Any], where: str, now: datetime | None = None) -> None:
    """Put every time of a checked ``record`` in the store's form, in place.

    An entry's ``created_at``, ``updated_at``, ``superseded_at`` and ``last_seen_at``,
    and a row's ``*_at`` columns, may be any ISO 8601 time; one without an offset is
    UTC. The brief, search and decay compare times, so one that is not a time at all is
    refused here, before anything is written, and so is one more than
    :data:`~core.model.times.LATEST_AHEAD` after ``now`` (a memory dated 2999 would be
    "today" and the most recent for ever), as ``exchange_log`` refuses its ``at``.

    Raises:
        InvalidParams: the first field that is not a time, or is in the future, named
            with ``where``.
    """
    latest = iso((now or utc_now()) + LATEST_AHEAD)
    if record.get("kind") == "entry":
        places = [(record, name, name) for name in _ENTRY_TIMES]
        places += [(record["provenance"], name, f"provenance.{name}") for name in _PROVENANCE_TIMES]
    else:
        row = record["row"]
        places = [(row, name, f"row.{name}") for name in row if name.endswith("_at")]
    for holder, name, label in places:
        text = holder.get(name)
        if text is None:
            continue
        try:
            if not isinstance(text, str):
                raise ValueError(name)
            holder[name] = store_form(text)
        except ValueError:
            raise InvalidParams(
                f"{where}: {label} is not a time; give {EXPECTED}", field=label, rule="format"
            ) from None
        if holder[name] > latest:
            raise InvalidParams(
                f"{where}: {label} is more than a day in the future; give when it happened",
                field=label,
                rule="maximum",
            )
