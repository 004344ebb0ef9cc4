"""``ambry import --from …``: other apps' history and memories, checked, counted, then
written all or nothing.

Two passes over the file. The first (:func:`plan`, which is all a dry run does) reads
every record, stops at the first malformed one with its place and what is wrong, and
counts what would be added against what the group already holds. The second
(:func:`run`) reads the file again and writes everything in one transaction; a
failure or a cancel rolls it back, so nothing is half-written. Chat exports are
streamed both times, one conversation in memory at a time.

What lands where, through the same screening as an agent's write:

* a conversation is a thread (:mod:`core.continuity.imported_history`), its messages
  turns with their speaker, name and original time; secrets are redacted and a
  credential statement's value cut out;
* a memory goes through the write policy (:func:`core.memory.writing.prepare`) as
  low-trust tool output: injection markers made inert, a credential statement refused
  and a memory that is nothing but a secret skipped (each listed in the report, the
  rest imported), and it lands as a **candidate** for the
  person to review (the Review view and ``ambry review accept --all`` take them in bulk);
* a Markdown file gets a receipt (:mod:`core.attachments.attach`) with its SHA-256.

Re-importing adds nothing: turns are matched by the source's message id in the
conversation's thread, memories by their content hash (the write path's duplicate
key), files by their hash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.attachments.attach import inspect_file, write_receipt
from core.continuity.imported_history import (
    ensure_thread,
    imported_thread_id,
    insert_turns,
    known_turns,
    screen_title,
    screen_turn,
    thread_exists,
    turn_key,
)
from core.memory.curation import require_operator
from core.memory.writing import StoreRequest, prepare, write_entry, writing
from core.model.changes import Changes
from core.model.entries import Privacy, Source, SourceType, Trust, iso, utc_now
from core.model.errors import AmbryError, InvalidParams, Refused
from core.policy.field_screening import ONLY_A_SECRET, refuse_secret_name
from core.policy.own_files import known_secrets
from core.portability import chatgpt_export, claude_export, markdown_notes, mcp_memory
from core.portability.history import (
    SOURCE_NAMES,
    ByteProgress,
    Conversation,
    NoteFile,
    Record,
    SourceKind,
    looks_like,
    looks_like_ambry_export,
)
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.attachments.attach import FileFacts
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

#: ``progress(phase, done, total)``: phase ``check`` or ``write``, in bytes read.
Progress = Callable[[str, int, int], None]
READERS: dict[SourceKind, Callable[[Path, ByteProgress | None], Iterator[Record]]] = {
    SourceKind.CLAUDE: claude_export.read,
    SourceKind.CHATGPT: chatgpt_export.read,
    SourceKind.MCP_MEMORY: mcp_memory.read,
    SourceKind.MARKDOWN: markdown_notes.read,
}
IMPORTED = Source(SourceType.TOOL_OUTPUT, Trust.LOW)


class Cancelled(AmbryError):
    """The person stopped the import; nothing was written."""

    code = "cancelled"


def parse_kind(value: str) -> SourceKind:
    try:
        return SourceKind(value)
    except ValueError:
        raise InvalidParams(
            f"unknown source {value!r}; choose one of " + ", ".join(k.value for k in SourceKind),
            field="from",
        ) from None


@dataclass
class ImportCounts:
    """What an import adds (or, on a dry run, would add) and what it leaves."""

    source: str
    path: str
    dry_run: bool = True
    threads_new: int = 0
    threads_updated: int = 0
    turns_new: int = 0
    turns_present: int = 0
    memories_new: int = 0
    memories_present: int = 0
    files: int = 0
    receipts_new: int = 0
    redacted: int = 0
    #: Where each memory refused by the write policy was (a credential statement).
    refused: list[str] = field(default_factory=list)
    #: Where each memory that was nothing but a secret was (skipped: a placeholder
    #: alone says nothing).
    secret_only: list[str] = field(default_factory=list)

    @property
    def adds_anything(self) -> bool:
        return bool(self.threads_new or self.turns_new or self.memories_new or self.receipts_new)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "path": self.path,
            "dry_run": self.dry_run,
            "threads": {"new": self.threads_new, "updated": self.threads_updated},
            "turns": {"new": self.turns_new, "already_present": self.turns_present},
            "memories": {"new": self.memories_new, "already_present": self.memories_present},
            "files": {"read": self.files, "new_receipts": self.receipts_new},
            "redacted": self.redacted,
            "refused": self.refused,
            "secret_only": self.secret_only,
        }

    def summary(self) -> str:
        verb = "would add" if self.dry_run else "added"
        parts = []
        if self.threads_new or self.threads_updated or self.turns_new or self.turns_present:
            text = f"{self.threads_new} new threads, {self.turns_new} new turns"
            if self.threads_updated:
                text += f" (of them in {self.threads_updated} threads already here)"
            parts.append(text + f", {self.turns_present} turns already present")
        if (
            self.files
            or self.memories_new
            or self.memories_present
            or self.refused
            or self.secret_only
        ):
            parts.append(
                f"{self.memories_new} memories for review ({self.memories_present} already "
                f"present), {self.receipts_new} file receipts"
            )
        text = f"{verb} " + ("; ".join(parts) if parts else "nothing")
        if self.refused:
            text += f"; {len(self.refused)} refused (credential statements: first at " + (
                f"{self.refused[0]})"
            )
        if self.secret_only:
            text += (
                f"; {len(self.secret_only)} skipped (nothing but a secret: first at "
                f"{self.secret_only[0]})"
            )
        if self.redacted:
            text += f"; {self.redacted} secrets redacted"
        return text


def plan(
    service: Workspace,
    caller: Caller,
    kind: SourceKind,
    path: Path,
    *,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ImportCounts:
    """Check the whole file and count what importing it would add; nothing is written."""
    require_operator(caller, "import")
    _check_path(path)
    store = service.store_for(caller.group)
    counts = ImportCounts(kind.value, str(path))
    job = _Job(service, caller, store, kind, counts, write=False)
    try:
        for record in READERS[kind](path, _bytes(progress, "check", should_stop)):
            job.take(record)
    except InvalidParams as exc:
        raise _with_source_hint(exc, kind, path) from exc
    return counts


def _with_source_hint(exc: InvalidParams, kind: SourceKind, path: Path) -> InvalidParams:
    """``exc``, saying which import to use when ``path`` looks like another source's file."""
    if looks_like_ambry_export(path):
        hint = (
            "It looks like an Ambry export: import it without --from "
            "(in the app: Settings, Your data, Import…)"
        )
    elif (seen := looks_like(path)) is not None and seen is not kind:
        hint = (
            f"It looks like {SOURCE_NAMES[seen]}: import it with --from {seen.value} "
            "(in the app: choose that source)"
        )
    else:
        return exc
    return InvalidParams(f"{exc.message}. {hint}", field=exc.field, rule=exc.rule)


def run(
    service: Workspace,
    caller: Caller,
    kind: SourceKind,
    path: Path,
    *,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> ImportCounts:
    """:func:`plan`, then write everything it counted in one transaction, or nothing.

    Raises:
        InvalidParams: a malformed record (named); nothing was written.
        Cancelled: ``should_stop`` said so; nothing was written.
    """
    counts = plan(service, caller, kind, path, progress=progress, should_stop=should_stop)
    if not counts.adds_anything:
        return replace(counts, dry_run=False)
    store = service.store_for(caller.group)
    done = ImportCounts(kind.value, str(path), dry_run=False)
    job = _Job(service, caller, store, kind, done, write=True)
    with writing(service, store, caller):
        for record in READERS[kind](path, _bytes(progress, "write", should_stop)):
            job.take(record)
        audit.record(
            store,
            Action.IMPORT,
            caller.actor,
            session_id=caller.session_id,
            count=done.memories_new + done.turns_new,
            source=kind.value,
            threads=done.threads_new,
            turns=done.turns_new,
            memories=done.memories_new,
            receipts=done.receipts_new,
            duplicates=done.turns_present + done.memories_present,
            redacted=done.redacted,
            refused=len(done.refused),
            secret_only=len(done.secret_only),
        )
    service.emit(
        Changes(
            group=store.group,
            entries=bool(done.memories_new),
            review=bool(done.memories_new),
            threads=bool(done.threads_new or done.turns_new),
            attachments=bool(done.receipts_new or done.files),
            audit=True,
        )
    )
    return done


def _check_path(path: Path) -> None:
    if not path.exists():
        raise InvalidParams(f"no file or folder at {path}", field="file")


def _bytes(
    progress: Progress | None, phase: str, should_stop: Callable[[], bool] | None
) -> ByteProgress:
    def report(done: int, total: int) -> None:
        if should_stop is not None and should_stop():
            raise Cancelled("import cancelled; nothing was written")
        if progress is not None:
            progress(phase, done, total)

    return report


class _Job:
    """One pass over the records: counting, and writing when ``write`` is set."""

    def __init__(
        self,
        service: Workspace,
        caller: Caller,
        store: GroupStore,
        kind: SourceKind,
        counts: ImportCounts,
        *,
        write: bool,
    ) -> None:
        self.service, self.caller, self.store = service, caller, store
        self.kind, self.counts, self.write = kind, counts, write
        self.known = known_secrets(service.data_dir.root)
        self.now = iso(utc_now())
        self.turns_seen: dict[str, set[str]] = {}
        self.memories_seen: set[tuple[str, str]] = set()
        #: The files' hashes read so far: two files with the same bytes are one receipt.
        self.receipts_seen: set[str] = set()

    def take(self, record: Record) -> None:
        if isinstance(record, Conversation):
            self._conversation(record)
        else:
            self._note_file(record)

    def _conversation(self, conv: Conversation) -> None:
        thread_id = imported_thread_id(self.kind.value, conv.source_id)
        seen = self.turns_seen.get(thread_id)
        existed = seen is not None or thread_exists(self.store, thread_id)
        if seen is None:
            seen = known_turns(self.store, thread_id) if existed else set()
            self.turns_seen[thread_id] = seen
        fresh = [t for t in conv.turns if turn_key(t.key) not in seen]
        self.counts.turns_present += len(conv.turns) - len(fresh)
        if not fresh and existed:
            return
        if not existed:
            self.counts.threads_new += 1
        elif fresh:
            self.counts.threads_updated += 1
        self.counts.turns_new += len(fresh)
        seen.update(turn_key(t.key) for t in fresh)
        if not self.write:
            return
        first = next((t.at for t in conv.turns if t.at), None)
        created = conv.created_at or first or self.now
        updated = conv.updated_at or (fresh[-1].at if fresh else None) or created
        fallback = f"Imported {self.kind.value} conversation {created[:10]}"
        title, cut = screen_title(conv.title, fallback, self.known)
        self.counts.redacted += cut
        ensure_thread(self.store, self.caller, thread_id, title, created, updated)
        screened = [
            part
            for t in fresh
            for part in screen_turn(
                turn_key(t.key), t.speaker, t.text, t.name, t.at or created, self.known
            )
        ]
        self.counts.redacted += sum(s.redacted for s in screened)
        insert_turns(self.store, self.caller, thread_id, screened, self.now)

    def _linked(self, facts: FileFacts) -> bool:
        row = self.store.execute(
            "SELECT 1 FROM attachment_receipt_turns WHERE receipt_id = ? AND source_path = ? "
            "LIMIT 1",
            (facts.receipt_id, facts.path),
        ).fetchone()
        return row is not None

    def _note_file(self, note_file: NoteFile) -> None:
        self.counts.files += 1
        fresh: list[StoreRequest] = []
        for note in note_file.notes:
            request = StoreRequest(note.entry_type, note.content, note.tags, source=IMPORTED)
            try:
                prepared = prepare(self.service, self.caller, request)
            except Refused as exc:
                skipped = exc.data.get("reason") == ONLY_A_SECRET
                (self.counts.secret_only if skipped else self.counts.refused).append(note.where)
                continue
            except InvalidParams as exc:
                raise InvalidParams(f"{note.where}: {exc.message}", field=exc.field) from None
            keys = self.service.dedup_keys(Privacy.PUBLIC, prepared.content)
            key = (keys[0], note.entry_type.value)
            if key in self.memories_seen or self.store.find_duplicate(keys, note.entry_type):
                self.counts.memories_present += 1
                continue
            self.memories_seen.add(key)
            reason = f"imported from {note.where}"
            if prepared.review_reason and "possible secret" in prepared.review_reason:
                reason += "; possible secret" + prepared.review_reason.split("possible secret")[1]
            fresh.append(replace(prepared, review_reason=reason))
        self.counts.memories_new += len(fresh)
        facts = None
        if note_file.receipt:
            facts = inspect_file(str(note_file.path), data_root=self.service.data_dir.root)
            has_receipt = (
                facts.sha256 in self.receipts_seen
                or self.store.execute(
                    "SELECT 1 FROM attachment_receipts WHERE sha256 = ?", (facts.sha256,)
                ).fetchone()
                is not None
            )
            self.receipts_seen.add(facts.sha256)
            self.counts.receipts_new += not has_receipt
        if not self.write:
            return
        for request in fresh:
            outcome = write_entry(self.service, self.store, self.caller, request, self.now)
            self.counts.redacted += len(outcome.redacted)
        # Each file is linked to its receipt once, from its own path: a second file
        # with the same bytes gets a link of its own, a file imported again none.
        if facts is not None and (fresh or not has_receipt or not self._linked(facts)):
            refuse_secret_name(facts.path, "path")
            write_receipt(
                self.store,
                self.caller,
                facts,
                thread=None,
                turn=None,
                observation=f"imported {len(fresh)} memories from this file",
                now=self.now,
                screened=(facts.redacted, facts.neutralized),
            )
