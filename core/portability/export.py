"""Export: a group written to an ``ambry-export`` file (:mod:`core.portability.format`)."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core.memory.curation import require_operator
from core.model.entries import (
    MemoryEntry,
    Privacy,
    iso,
    utc_now,
)
from core.model.errors import InvalidParams
from core.storage import audit
from core.storage.audit import Action
from core.storage.best_effort import best_effort
from core.storage.crypto import KeyUnavailable
from core.storage.file_safety import file_target
from core.storage.pending_files import write_whole

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace


from core.portability.format import (
    FORMAT,
    PROGRESS_EVERY,
    ROW_KINDS,
    SCRYPT_N,
    SCRYPT_P,
    SCRYPT_R,
    VERSION,
    Progress,
    derive_key,
)


@dataclass
class ExportSummary:
    path: str
    entries: int = 0
    skipped_private: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    #: The conversation turns the group holds: the format carries none.
    skipped_turns: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "entries": self.entries,
            "skipped_private": self.skipped_private,
            "skipped_turns": self.skipped_turns,
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


def _check_target(path: Path) -> None:
    """Refuse to replace a file that is not an earlier export (or empty).

    Writing a new export over the last one is how a backup is kept fresh; a
    mistyped name must not cost the person a document.
    """
    try:
        with path.open("rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return  # absent, a folder, or unreadable: the write says so itself
    try:
        header = json.loads(first.decode("utf-8-sig")) if first.strip() else {"format": FORMAT}
    except (UnicodeDecodeError, ValueError):
        header = None
    if not (isinstance(header, dict) and header.get("format") == FORMAT):
        raise InvalidParams(
            f"{path} exists and is not an Ambry export; nothing was exported "
            "(choose another name, or move that file away first)",
            field="file",
        )


#: What to give instead of a device, a pipe or a folder, when no front end says.
CHOOSE_A_FILE = "choose a file to write the export to"


def export(
    service: Workspace,
    caller: Caller,
    target: Path | IO[bytes],
    *,
    include_private: bool = False,
    passphrase: str | None = None,
    progress: Progress | None = None,
    instead: str = CHOOSE_A_FILE,
) -> ExportSummary:
    """Write the group to the file ``target`` atomically, or to the stream ``target``.

    A file path must name a regular file (an earlier export, or an empty file) or
    none yet, in a folder that exists; a symbolic link is written through, to the
    file it points to. ``instead`` ends the refusal of a device, a pipe or a folder
    with what to give in its place.

    Raises:
        InvalidParams: the path is refused, or cannot be written (nothing was).
    """
    require_operator(caller, "export")
    if include_private and not passphrase:
        raise InvalidParams(
            "exporting private and secret entries needs a passphrase to encrypt them",
            field="passphrase",
        )
    path: Path | None = None
    if isinstance(target, Path):
        path = file_target(target, field="file", example="ambry-export.jsonl", instead=instead)
        _check_target(path)
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
    summary = ExportSummary("-" if path is None else str(target))
    salt = os.urandom(16)
    file_key = derive_key(passphrase, salt) if include_private and passphrase else None
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
    # A handoff's author is its session's actor, and sessions are not exported:
    # each handoff record names it, so the group it is imported into knows it too.
    authors = dict(
        store.execute(
            "SELECT id, actor FROM sessions WHERE id IN (SELECT session_id FROM thread_handoffs)"
        )
    )
    for kind, (table, key) in ROW_KINDS.items():
        cursor = store.execute(f"SELECT * FROM {table} ORDER BY {key}")
        count = 0
        for row in cursor:
            names = [d[0] for d in cursor.get_description()]
            kept: dict[str, Any] = {"kind": kind, "row": dict(zip(names, row, strict=True))}
            if kind == "thread_handoff":
                kept["author"] = authors.get(kept["row"]["session_id"])
            lines.append(json.dumps(kept, ensure_ascii=False))
            count += 1
        summary.rows[kind] = count
    # Turns are the episodic log, kept for a while (episodic_ttl_days): the format
    # has no record for them, so the summary says how many stay behind.
    summary.skipped_turns = int(store.execute("SELECT count(*) FROM exchanges").fetchone()[0])
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
    body = ("\n".join([json.dumps(header), *lines]) + "\n").encode("utf-8")
    if path is None:
        assert not isinstance(target, Path)
        target.write(body)
        target.flush()
    else:
        try:
            write_whole(service.data_dir.pending_dir, path, body)
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
