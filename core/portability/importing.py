"""Import: an ``ambry-export`` file read back, checked first, then written all or nothing.

Everything imported passes the same screening as an agent's write.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core.memory.curation import require_operator
from core.model.changes import Changes
from core.model.entries import (
    MAX_CONTENT_CHARS,
    EntryType,
    MemoryEntry,
    Privacy,
    Provenance,
    Source,
    SourceType,
    Trust,
    iso,
    utc_now,
)
from core.model.errors import Conflict, InvalidParams
from core.model.text import plural
from core.policy.import_screening import Skip, screen_entry, screen_row
from core.policy.own_files import known_secrets
from core.policy.screening import strip_controls
from core.portability.history import SOURCE_NAMES, looks_like
from core.portability.merging import content_conflict, entry_update, row_difference, shown
from core.recall.briefing import recompute_decay
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace


from core.portability.format import (
    PROGRESS_EVERY,
    ROW_KINDS,
    VERSION,
    Progress,
    check_record,
    check_times,
    derive_key,
    read_records,
)


@dataclass
class ImportReport:
    entries: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    #: Records already present that a newer export brought up to date (added tags,
    #: a later re-observation, a thread's later activity; see core.portability.merging).
    updated: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    #: What differs in each conflict, in words, in the order of ``conflicts``.
    differences: list[str] = field(default_factory=list)
    redacted: int = 0
    #: Entries left out because their content or a tag states a credential.
    refused: list[str] = field(default_factory=list)
    #: Entries skipped because their content is nothing but a secret.
    secret_only: list[str] = field(default_factory=list)
    #: Older versions whose newer version was not imported (refused or skipped): each
    #: now names the newest version that was, or is current again if none was.
    relinked: list[str] = field(default_factory=list)
    #: Tags left out for being empty or only white space, which no write keeps.
    empty_tags: int = 0
    #: Entries skipped because their content is empty or only white space, which a
    #: write refuses (an older or edited file).
    empty: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "rows": self.rows,
            "duplicates": self.duplicates,
            "updated": self.updated,
            "conflicts": self.conflicts,
            "differences": self.differences,
            "redacted": self.redacted,
            "refused": self.refused,
            "secret_only": self.secret_only,
            "relinked": self.relinked,
            "empty_tags": self.empty_tags,
            "empty": self.empty,
        }


def _with_source_hint(exc: InvalidParams, path: Path) -> InvalidParams:
    """``exc``, saying which other app's import to use when ``path`` looks like its file."""
    kind = looks_like(path)
    if kind is None:
        return exc
    return InvalidParams(
        f"{exc.message}. It looks like {SOURCE_NAMES[kind]}, not an Ambry export: "
        f"import it with `ambry import --from {kind.value}` "
        "(in the app: Settings, Your data, Import from another app)",
        field="file",
    )


@dataclass(frozen=True)
class CheckedExport:
    """An export file read and checked whole (:func:`read_export`), ready to import."""

    path: Path
    #: Every record with its line number, the header first.
    records: list[tuple[int, dict[str, Any]]]
    #: The key of the file's sealed entries (None when it has none).
    file_key: bytes | None


def read_export(path: Path, passphrase: str | None = None) -> CheckedExport:
    """Read ``path`` and check every line, touching no store.

    Raises:
        InvalidParams: the first line that is not right, and what is wrong with it
            (``field="passphrase"`` when sealed entries need a passphrase).
    """
    try:
        records = list(read_records(path))
        if not records:
            raise InvalidParams(f"{path.name} is empty")
        number, header = records[0]
        check_record("header", header, f"{path.name} line {number} (header)")
    except InvalidParams as exc:
        raise _with_source_hint(exc, path) from exc
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
            check_record("entry", rec, where)
            check_times(rec, f"{where} (id {rec['id']})")
            if "sealed" in rec and file_key is None:
                if not encryption or not passphrase:
                    raise InvalidParams(
                        f"{where}: this file holds encrypted private entries; "
                        "give the passphrase it was exported with",
                        field="passphrase",
                    )
                file_key = derive_key(passphrase, base64.b64decode(encryption["salt"]))
        else:
            check_record("row", rec, where)
            check_times(rec, where)
    return CheckedExport(path, records, file_key)


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
    one a newer export only added to (tags, a later re-observation or activity
    time) is brought up to date and reported as updated; a record whose id
    exists with different content is a conflict, and any conflict stops the
    import before anything is written.
    """
    require_operator(caller, "import")
    return import_checked(service, caller, read_export(path, passphrase), progress=progress)


def import_checked(
    service: Workspace,
    caller: Caller,
    checked: CheckedExport,
    *,
    progress: Progress | None = None,
) -> ImportReport:
    """:func:`import_file` of a file :func:`read_export` already checked."""
    require_operator(caller, "import")
    path, records, file_key = checked.path, checked.records, checked.file_key
    # An entry another one in the file supersedes keeps its id, so the chain holds.
    targets = {rec["superseded_by"] for _, rec in records[1:] if rec.get("superseded_by")}
    store = service.store_for(caller.group)
    report = ImportReport()
    moment = utc_now()
    now = iso(moment)
    total = len(records) - 1
    with store.transaction():
        for done, (number, rec) in enumerate(records[1:], 1):
            if progress is not None and (done % PROGRESS_EVERY == 0 or done == total):
                progress(done, total)
            if rec["kind"] == "entry":
                _import_entry(
                    service, store, rec, file_key, report, f"{path.name} line {number}", targets
                )
            else:
                _import_row(store, rec, report, known_secrets(service.data_dir.root))
        _relink_chains(store, records, report)
        # Imported entries keep when they were last seen: decay them now, so one
        # last seen months ago is stale at once, not after the next hourly refresh.
        recompute_decay(store, service.config, moment)
        if report.conflicts:
            raise Conflict(
                f"nothing imported: {plural(len(report.conflicts), 'record')} "
                f"{'conflicts' if len(report.conflicts) == 1 else 'conflict'} with what is "
                f"stored (first: {report.conflicts[0]}: {report.differences[0]}); make the "
                "file's record and the stored one agree (edit the file, or change or delete "
                "the stored record), or import into another group with --group",
                count=len(report.conflicts),
                conflicts=report.conflicts[:20],
                differences=report.differences[:20],
            )
        if report.updated:
            audit.record(
                store,
                Action.UPDATE,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=[i for i in report.updated if i.startswith("mem-")],
                count=len(report.updated),
                reason="newer export imported",
            )
        audit.record(
            store,
            Action.IMPORT,
            caller.actor,
            session_id=caller.session_id,
            count=report.entries,
            duplicates=len(report.duplicates),
            updated=len(report.updated),
            redacted=report.redacted,
            refused=len(report.refused),
            secret_only=len(report.secret_only),
            empty=len(report.empty),
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
    targets: set[str],
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
    if not strip_controls(content).strip():
        # A write refuses it ("content must not be empty"); one in a file is skipped
        # and counted, so the rest of the file still comes in.
        report.empty.append(entry_id)
        return
    if len(content) > MAX_CONTENT_CHARS:  # sealed: the schema saw only its ciphertext
        raise InvalidParams(
            f"{where} (id {entry_id}): content must be at most {MAX_CONTENT_CHARS} characters "
            f"(it has {len(content):,})",
            field="content",
            rule="maxLength",
        )
    screened = screen_entry(content, rec, known_secrets(service.data_dir.root))
    match screened:
        case Skip.CREDENTIAL_STATEMENT:
            report.refused.append(entry_id)
            return
        case Skip.ONLY_A_SECRET:
            report.secret_only.append(entry_id)
            return
    report.redacted += screened.redacted
    content, got = screened.content, screened.fields
    existing = store.get(entry_id)
    if existing is not None:
        stored = service.readable(existing, reveal=True)
        if stored.content != content:
            report.conflicts.append(entry_id)
            report.differences.append(content_conflict(stored, content))
            return
        changes = entry_update(stored, screened.tags, got, float(rec["confidence"]))
        if not changes:
            report.duplicates.append(entry_id)
            return
        store.update_fields(entry_id, **changes)
        report.updated.append(entry_id)
        return
    entry_type, privacy = EntryType(rec["type"]), Privacy(rec["privacy"])
    # The same statement under another id (stored twice, or imported from notes in
    # each group) is a duplicate too, as it is for a write.
    if got["superseded_by"] is None and entry_id not in targets:
        keys = service.dedup_keys(privacy, content)
        if store.find_duplicate(keys, entry_type) is not None:
            report.duplicates.append(entry_id)
            return
    entry = MemoryEntry(
        id=entry_id,
        type=entry_type,
        content=content,
        tags=screened.tags,
        status=screened.status,
        superseded_by=got["superseded_by"],
        superseded_at=got["superseded_at"],
        confidence=float(rec["confidence"]),
        pinned=bool(rec.get("pinned", False)),
        privacy=privacy,
        source=Source(SourceType(rec["source"]["type"]), Trust(rec["source"]["trust"])),
        provenance=Provenance(got["session_id"], store.group, got["created_at"], got["updated_at"]),
        review_reason=got["review_reason"],
        last_seen_at=got["last_seen_at"],
    )
    store.insert(service.row_for(entry))
    report.entries += 1
    report.empty_tags += screened.empty_tags


def _relink_chains(store: Any, records: list[Any], report: ImportReport) -> None:
    """Keep every version chain whole when one of its entries was not imported.

    An entry names the version that replaced it (``superseded_by``). When that
    version was refused or skipped, the entry would point at nothing and stay
    hidden as superseded: the fact would vanish. It points instead at the next
    version along the file's chain that is stored, or, with none, is current again.
    """
    successor = {
        rec["id"]: rec.get("superseded_by") for _, rec in records[1:] if rec["kind"] == "entry"
    }
    dangling = store.execute(
        "SELECT id, superseded_by FROM memory_entries WHERE superseded_by IS NOT NULL "
        "AND superseded_by NOT IN (SELECT id FROM memory_entries)"
    ).fetchall()
    for entry_id, missing in dangling:
        if entry_id not in successor:
            continue  # not this import's entry
        seen = {entry_id}
        target = successor.get(missing)
        while target is not None and target not in seen and store.get(target) is None:
            seen.add(target)
            target = successor.get(target)
        if target is not None and store.get(target) is not None:
            store.execute(
                "UPDATE memory_entries SET superseded_by = ? WHERE id = ?", (target, entry_id)
            )
        else:
            store.execute(
                "UPDATE memory_entries SET superseded_by = NULL, superseded_at = NULL WHERE id = ?",
                (entry_id,),
            )
        report.relinked.append(entry_id)


#: Rows numbered per group (an INTEGER key): another group's number 1 is not this
#: group's, so they are matched by these columns and stored under a new number.
_NUMBERED: dict[str, tuple[str, ...]] = {
    "thread_handoff": ("thread_id", "version"),
    "receipt_link": ("receipt_id", "thread_id", "session_id", "turn", "source_path", "linked_at"),
}
#: The columns that make a matched row the same record (else all of them). A
#: receipt is named by its file's hash: one for the same bytes is the receipt
#: already held, as when the same file is attached again.
_SAME_WHEN: dict[str, tuple[str, ...]] = {"receipt": ("sha256",)}


def _import_row(
    store: Any, rec: dict[str, Any], report: ImportReport, known: tuple[str, ...]
) -> None:
    kind = rec["kind"]
    table, key = ROW_KINDS[kind]
    columns = [r[1] for r in store.execute(f"PRAGMA table_info({table})")]
    row = {k: v for k, v in rec["row"].items() if k in columns}
    if key not in row:
        raise InvalidParams(f"a {kind} record has no {key}")
    row, count = screen_row(row, key, known)
    report.redacted += count
    label = f"{kind} {row[key]}"
    match = _NUMBERED.get(kind, (key,))
    if kind in _NUMBERED:
        del row[key]
    where = " AND ".join(f"{c} IS ?" for c in match)
    cursor = store.execute(f"SELECT * FROM {table} WHERE {where}", [row.get(c) for c in match])
    existing = cursor.fetchone()
    if existing is not None:
        names = [d[0] for d in cursor.get_description()]
        stored = dict(zip(names, existing, strict=True))
        compared = _SAME_WHEN.get(kind, list(row))
        title = _title_change(store, stored, row) if kind == "thread" else _SAME
        if title in (_OLDER, _RENAMED):
            compared = [c for c in compared if c != "title"]
        later, difference = row_difference(kind, stored, row, compared)
        if title == _RENAMED and difference is None:
            later["title"] = row["title"]
        elif title not in (_SAME, _OLDER, _RENAMED) and difference is not None:
            difference = title  # the title is held by another thread: say which
        if difference is not None:
            report.conflicts.append(label)
            report.differences.append(difference)
        elif later:
            sets = ", ".join(f"{c} = ?" for c in later)
            store.execute(
                f"UPDATE {table} SET {sets} WHERE {key} = ?", (*later.values(), stored[key])
            )
            report.updated.append(label)
        else:
            report.duplicates.append(label)
        return
    marks = ", ".join("?" * len(row))
    store.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", tuple(row.values()))
    report.rows[kind] = report.rows.get(kind, 0) + 1
    if kind == "thread_handoff" and rec.get("author") and row.get("session_id"):
        _keep_author(store, str(row["session_id"]), str(rec["author"]), str(row["created_at"]))


#: What :func:`_title_change` says of a thread's title in the file, besides which
#: other thread already holds it.
_SAME, _OLDER, _RENAMED = "same", "older", "renamed"


def _title_change(store: Any, stored: dict[str, Any], row: dict[str, Any]) -> str:
    """How the file's thread title stands to the stored one: the same; from an older
    record (an export from before a rename here: kept as stored, not a conflict);
    renamed at the source since (another title, a later last activity, which a
    rename sets, and no other thread holding it); else, when another thread here
    holds that title (titles are unique, case aside), the conflict naming it.
    Otherwise (the same last activity) :data:`_SAME`, and the titles are compared."""
    title, when = row.get("title"), row.get("updated_at")
    if not isinstance(title, str) or title == stored["title"] or when is None:
        return _SAME
    if str(when) < str(stored["updated_at"]):
        return _OLDER
    if str(when) == str(stored["updated_at"]):
        return _SAME
    holder = store.execute(
        "SELECT id, title FROM threads WHERE title = ? COLLATE NOCASE AND id != ?",
        (title, stored["id"]),
    ).fetchone()
    if holder is None:
        return _RENAMED
    return (
        f"title is {shown(title)} in the file, but another thread here already holds "
        f"that title: {shown(holder[1])} ({holder[0]})"
    )


def _keep_author(store: Any, session_id: str, author: str, at: str) -> None:
    """Record the session that wrote an imported handoff, ended, so the handoff keeps
    its author (its session's actor); a session the group holds already is kept."""
    store.execute(
        "INSERT OR IGNORE INTO sessions (id, actor, client, started_at, ended_at, end_state) "
        "VALUES (?, ?, 'import', ?, ?, 'ended')",
        (session_id, author, at, at),
    )
