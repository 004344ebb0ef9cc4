"""Export and import: a versioned JSON Lines file, imported all or nothing.

Line 1 is a header (format, version, group, time, counts, encryption). Each
following line is one record with a ``kind``: ``entry``, ``thread``,
``thread_handoff``, ``receipt`` or ``receipt_link``. Private and secret entries
are left out unless asked for, and then their content is sealed with a key
derived from a passphrase (scrypt, AES-256-GCM, the entry id as associated data),
so the file never holds them in clear.
"""

from __future__ import annotations

import base64
import functools
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from core.memory.curation import require_operator
from core.model.changes import Changes
from core.model.entries import (
    ENTRY_TYPES,
    EntryType,
    MemoryEntry,
    Privacy,
    Provenance,
    Source,
    SourceType,
    Status,
    Trust,
    iso,
    utc_now,
)
from core.model.errors import Conflict, InvalidParams
from core.policy.import_screening import screen_entry, screen_row
from core.policy.own_files import known_secrets
from core.storage import audit
from core.storage.audit import Action
from core.storage.best_effort import best_effort
from core.storage.crypto import KeyUnavailable
from core.storage.pending_files import write_whole

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

    from core.model.caller import Caller
    from core.storage.workspace import Workspace

#: ``progress(done, total)``, called every :data:`PROGRESS_EVERY` records and at the end.
Progress = Callable[[int, int], None]
PROGRESS_EVERY = 200
FORMAT = "ambry-export"
VERSION = 1
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1
#: Tables copied row by row besides the entries, with their key column.
_ROW_KINDS: dict[str, tuple[str, str]] = {
    "thread": ("threads", "id"),
    "thread_handoff": ("thread_handoffs", "id"),
    "receipt": ("attachment_receipts", "id"),
    "receipt_link": ("attachment_receipt_turns", "id"),
}

_ENTRY_SCHEMA: dict[str, Any] = {
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
_ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["kind", "row"],
    "properties": {"kind": {"enum": list(_ROW_KINDS)}, "row": {"type": "object"}},
}
_HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version"],
    "properties": {"format": {"const": FORMAT}, "version": {"type": "integer"}},
}


_SCHEMAS = {"entry": _ENTRY_SCHEMA, "row": _ROW_SCHEMA, "header": _HEADER_SCHEMA}


def _kdf(passphrase: str, salt: bytes) -> bytes:
    return Scrypt(salt=salt, length=32, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P).derive(
        passphrase.encode("utf-8")
    )


@dataclass
class ExportSummary:
    path: str
    entries: int = 0
    skipped_private: int = 0
    rows: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "entries": self.entries,
            "skipped_private": self.skipped_private,
            "rows": self.rows,
        }


def _entry_record(entry: MemoryEntry) -> dict[str, Any]:
    d = entry.to_dict()
    return {
        "kind": "entry",
        "id": d["id"],
        "type": d["type"],
        "content": d["content"],
        "tags": d["tags"],
        "status": d["status"],
        "privacy": d["privacy"],
        "superseded_by": entry.superseded_by,
        "superseded_at": entry.superseded_at,
        "confidence": entry.confidence,
        "pinned": entry.pinned,
        "review_reason": entry.review_reason,
        "last_seen_at": entry.last_seen_at,
        "source": d["source"],
        "provenance": d["provenance"],
    }


def export(
    service: Workspace,
    caller: Caller,
    path: Path,
    *,
    include_private: bool = False,
    passphrase: str | None = None,
    progress: Progress | None = None,
) -> ExportSummary:
    """Write the group to ``path`` atomically."""
    require_operator(caller, "export")
    if include_private and not passphrase:
        raise InvalidParams(
            "exporting private and secret entries needs a passphrase to encrypt them",
            field="passphrase",
        )
    store = service.store_for(caller.group)
    if include_private and service.data_key(create=False) is None:
        has_private = store.execute(
            "SELECT 1 FROM memory_entries WHERE privacy != 'public' LIMIT 1"
        ).fetchone()
        if has_private:
            raise KeyUnavailable(
                "the key that decrypts private entries is not in the OS keyring on this "
                "machine; nothing was exported"
            )
    summary = ExportSummary(str(path))
    salt = os.urandom(16)
    file_key = _kdf(passphrase, salt) if include_private and passphrase else None
    lines: list[str] = []
    ids = [r[0] for r in store.execute("SELECT id FROM memory_entries ORDER BY seq")]
    for done, entry_id in enumerate(ids, 1):
        if progress is not None and (done % PROGRESS_EVERY == 0 or done == len(ids)):
            progress(done, len(ids))
        raw = store.get(entry_id)
        assert raw is not None
        if raw.privacy is not Privacy.PUBLIC:
            if file_key is None:
                summary.skipped_private += 1
                continue
            clear = service.readable(raw, reveal=True)
            record = _entry_record(clear)
            nonce = os.urandom(12)
            sealed = AESGCM(file_key).encrypt(nonce, clear.content.encode(), raw.id.encode())
            del record["content"]
            record["sealed"] = base64.b64encode(nonce + sealed).decode()
        else:
            record = _entry_record(raw)
        lines.append(json.dumps(record, ensure_ascii=False))
        summary.entries += 1
    for kind, (table, key) in _ROW_KINDS.items():
        cursor = store.execute(f"SELECT * FROM {table} ORDER BY {key}")
        count = 0
        for row in cursor:
            names = [d[0] for d in cursor.get_description()]
            lines.append(
                json.dumps(
                    {"kind": kind, "row": dict(zip(names, row, strict=True))}, ensure_ascii=False
                )
            )
            count += 1
        summary.rows[kind] = count
    header = {
        "format": FORMAT,
        "version": VERSION,
        "group": caller.group,
        "exported_at": iso(utc_now()),
        "entries": summary.entries,
        "rows": summary.rows,
        "encryption": None
        if file_key is None
        else {
            "kdf": "scrypt",
            "n": SCRYPT_N,
            "r": SCRYPT_R,
            "p": SCRYPT_P,
            "salt": base64.b64encode(salt).decode(),
            "cipher": "AES-256-GCM",
        },
    }
    body = "\n".join([json.dumps(header), *lines]) + "\n"
    try:
        write_whole(service.data_dir.pending_dir, path, body.encode("utf-8"))
    except OSError as exc:
        raise InvalidParams(
            f"cannot write {path}: {exc.strerror}; nothing was exported", field="file"
        ) from exc
    # An export is a read: it must work on a read-only or full disk.
    with best_effort(store, "the export's audit row"), store.transaction():
        audit.record(
            store,
            Action.EXPORT,
            caller.actor,
            session_id=caller.session_id,
            count=summary.entries,
            skipped_private=summary.skipped_private,
            include_private=include_private,
        )
    return summary


@dataclass
class ImportReport:
    entries: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    redacted: int = 0
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "rows": self.rows,
            "duplicates": self.duplicates,
            "conflicts": self.conflicts,
            "redacted": self.redacted,
            "refused": self.refused,
        }


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror}", field="file") from exc
    with handle:
        for number, line in enumerate(handle, 1):
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
def _validator(record: str) -> Draft202012Validator:
    # Imported here: jsonschema takes 50 ms to import, which an import pays, not every command.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_SCHEMAS[record])


def _check(record: str, value: Any, where: str) -> None:
    """Raise InvalidParams naming the first field of ``value`` that breaks ``record``'s schema."""
    error = next(iter(_validator(record).iter_errors(value)), None)
    if error is not None:
        at = ".".join(str(p) for p in error.absolute_path) or "record"
        raise InvalidParams(f"{where}: {at}: {error.message}")


def import_file(
    service: Workspace,
    caller: Caller,
    path: Path,
    *,
    passphrase: str | None = None,
    progress: Progress | None = None,
) -> ImportReport:
    """Validate every line, then import everything in one transaction, or nothing.

    Records already present unchanged are duplicates (skipped and reported);
    a record whose id exists with different content is a conflict, and any
    conflict stops the import before anything is written.
    """
    require_operator(caller, "import")
    records = list(_records(path))
    if not records:
        raise InvalidParams(f"{path.name} is empty")
    number, header = records[0]
    _check("header", header, f"{path.name} line {number} (header)")
    if header["version"] > VERSION:
        raise InvalidParams(
            f"{path.name} was written by a newer Ambry (format v{header['version']}); "
            "upgrade Ambry to import it"
        )
    file_key: bytes | None = None
    encryption = header.get("encryption")
    for number, rec in records[1:]:
        where = f"{path.name} line {number}"
        if rec.get("kind") == "entry":
            _check("entry", rec, where)
            if "sealed" in rec and file_key is None:
                if not encryption or not passphrase:
                    raise InvalidParams(
                        f"{where}: this file holds encrypted private entries; "
                        "give the passphrase it was exported with",
                        field="passphrase",
                    )
                file_key = _kdf(passphrase, base64.b64decode(encryption["salt"]))
        else:
            _check("row", rec, where)

    store = service.store_for(caller.group)
    report = ImportReport()
    now = iso(utc_now())
    total = len(records) - 1
    with store.transaction():
        for done, (number, rec) in enumerate(records[1:], 1):
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
            if rec["kind"] == "entry":
                _import_entry(service, store, rec, file_key, report, f"line {number}")
            else:
                _import_row(store, rec, report, known_secrets(service.data_dir.root))
        if report.conflicts:
            raise Conflict(
                f"nothing imported: {len(report.conflicts)} record(s) conflict with what is "
                f"stored (first: {report.conflicts[0]}); resolve them or import into another "
                "group with --group",
                count=len(report.conflicts),
                conflicts=report.conflicts[:20],
            )
        audit.record(
            store,
            Action.IMPORT,
            caller.actor,
            session_id=caller.session_id,
            count=report.entries,
            duplicates=len(report.duplicates),
            redacted=report.redacted,
            refused=len(report.refused),
            at=now,
        )
    service.emit(
        Changes(
            group=store.group, entries=True, review=True, audit=True, threads=True, attachments=True
        )
    )
    return report


def _import_entry(
    service: Workspace,
    store: Any,
    rec: dict[str, Any],
    file_key: bytes | None,
    report: ImportReport,
    where: str,
) -> None:

    entry_id = rec["id"]
    if "sealed" in rec:
        assert file_key is not None
        raw = base64.b64decode(rec["sealed"])
        try:
            content = AESGCM(file_key).decrypt(raw[:12], raw[12:], entry_id.encode()).decode()
        except InvalidTag as exc:
            raise InvalidParams(f"{where}: wrong passphrase, or the file was altered") from exc
    else:
        content = rec["content"]
    screened = screen_entry(content, rec, known_secrets(service.data_dir.root))
    if screened is None:
        report.refused.append(entry_id)
        return
    report.redacted += screened.redacted
    content, got = screened.content, screened.fields
    existing = store.get(entry_id)
    if existing is not None:
        current = service.readable(existing, reveal=True).content
        (report.duplicates if current == content else report.conflicts).append(entry_id)
        return
    entry = MemoryEntry(
        id=entry_id,
        type=EntryType(rec["type"]),
        content=content,
        tags=screened.tags,
        status=screened.status,
        superseded_by=got["superseded_by"],
        superseded_at=got["superseded_at"],
        confidence=float(rec["confidence"]),
        pinned=bool(rec.get("pinned", False)),
        privacy=Privacy(rec["privacy"]),
        source=Source(SourceType(rec["source"]["type"]), Trust(rec["source"]["trust"])),
        provenance=Provenance(got["session_id"], store.group, got["created_at"], got["updated_at"]),
        review_reason=got["review_reason"],
        last_seen_at=got["last_seen_at"],
    )
    store.insert(service.row_for(entry))
    report.entries += 1


def _import_row(
    store: Any, rec: dict[str, Any], report: ImportReport, known: tuple[str, ...]
) -> None:
    table, key = _ROW_KINDS[rec["kind"]]
    columns = [r[1] for r in store.execute(f"PRAGMA table_info({table})")]
    row = {k: v for k, v in rec["row"].items() if k in columns}
    if key not in row:
        raise InvalidParams(f"a {rec['kind']} record has no {key}")
    row, count = screen_row(row, key, known)
    report.redacted += count
    cursor = store.execute(f"SELECT * FROM {table} WHERE {key} = ?", (row[key],))
    existing = cursor.fetchone()
    if existing is not None:
        names = [d[0] for d in cursor.get_description()]
        same = all(dict(zip(names, existing, strict=True)).get(k) == v for k, v in row.items())
        (report.duplicates if same else report.conflicts).append(f"{rec['kind']} {row[key]}")
        return
    marks = ", ".join("?" * len(row))
    store.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", tuple(row.values()))
    report.rows[rec["kind"]] = report.rows.get(rec["kind"], 0) + 1
