"""``ambry import --from …``: other apps' history and memories, checked, counted, then
written all or nothing.

Two passes over the file. The first (:func:`plan`, which is all a dry run does) reads
every record, stops at the first malformed one with its place and what is wrong, and
counts what would be added against what the group already holds; a dry run also
screens every text, so it counts the secrets the write will redact. It never makes
the group. The second (:func:`run`, given the first's counts or checking again) reads
the file again and writes everything in one transaction; a failure or a cancel rolls
it back, so nothing is half-written. Chat exports are streamed both times, one
conversation in memory at a time; progress (and a cancel) is heard per conversation,
and per :data:`MEMORY_BATCH` memories of a file of memories.

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

import os
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
from core.model.caller import Caller
from core.model.changes import Changes
from core.model.entries import Actor, Privacy, Source, SourceType, Trust, iso, utc_now
from core.model.errors import AmbryError, InvalidParams, Refused
from core.model.text import plural
from core.policy.field_screening import ONLY_A_SECRET, Screened, Statements, screen_field
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
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

#: ``progress(phase, done, total)``: phase ``check`` or ``write``, in bytes read.
Progress = Callable[[str, int, int], None]
#: Memories of one file checked or written between two progress reports (and two
#: questions whether to stop): a few tens of milliseconds' work.
MEMORY_BATCH = 200
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
            text = f"{plural(self.threads_new, 'new thread')}, {plural(self.turns_new, 'new turn')}"
            if self.threads_updated:
                text += f" (of them in {plural(self.threads_updated, 'thread')} already here)"
            parts.append(text + f", {plural(self.turns_present, 'turn')} already present")
        if (
            self.files
            or self.memories_new
            or self.memories_present
            or self.refused
            or self.secret_only
        ):
            parts.append(
                f"{plural(self.memories_new, 'memory', 'memories')} for review "
                f"({self.memories_present:,} already present), "
                f"{plural(self.receipts_new, 'file receipt')}"
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
            text += f"; {plural(self.redacted, 'secret')} " + (
                "would be redacted" if self.dry_run else "redacted"
            )
        return text


def plan(
    service: Workspace,
    caller: Caller,
    kind: SourceKind,
    path: Path,
    *,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    screen: bool = True,
) -> ImportCounts:
    """Check the whole file and count what importing it would add; nothing is written.

    A group that does not exist yet is not made: everything counts as new, and a file
    that fails its check leaves nothing behind. So ``caller`` may be :func:`planner`'s,
    which opens no session.

    Args:
        screen: also screen every text as the write will, so the counts include the
            secrets it redacts and the report matches the import's (a dry run). Without
            it the check is several times faster; :func:`run` checks that way.

    Raises:
        InvalidParams: a malformed record (named).
        Cancelled: ``should_stop`` said so.
    """
    require_operator(caller, "import")
    _check_path(path)
    counts = ImportCounts(kind.value, str(path))
    store = _store_if_any(service, caller.group)
    meter = _Meter(kind, path, "check", progress, should_stop)
    job = _Job(service, caller, store, kind, counts, meter, write=False, screen=screen)
    try:
        for record in READERS[kind](path, meter.reading):
            job.take(record)
    except InvalidParams as exc:
        raise _with_source_hint(exc, kind, path) from exc
    meter.finish()
    return counts


def planner(group: str) -> Caller:
    """The person, for a :func:`plan` alone: it records nothing, so it opens no session
    (which would make a group that does not exist yet)."""
    return Caller(group, Actor.OPERATOR, session_id="")


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
    planned: ImportCounts | None = None,
) -> ImportCounts:
    """Check the file (unless ``planned`` is its :func:`plan`), then write everything it
    holds in one transaction, or nothing.

    Progress is reported, and ``should_stop`` asked, as the file is read and every
    :data:`MEMORY_BATCH` memories of a file, so a cancel stops a large file promptly.

    Raises:
        InvalidParams: a malformed record (named); nothing was written.
        Cancelled: ``should_stop`` said so; nothing was written.
    """
    if planned is None:
        planned = plan(
            service,
            caller,
            kind,
            path,
            progress=progress,
            should_stop=should_stop,
            screen=False,
        )
    if not planned.adds_anything:
        return replace(planned, dry_run=False)
    store = service.store_for(caller.group)
    done = ImportCounts(kind.value, str(path), dry_run=False)
    meter = _Meter(kind, path, "write", progress, should_stop)
    job = _Job(service, caller, store, kind, done, meter, write=True, screen=True)
    with writing(service, store, caller):
        for record in READERS[kind](path, meter.reading):
            job.take(record)
        meter.finish()
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


def _store_if_any(service: Workspace, group: str) -> GroupStore | None:
    """``group``'s store, or None when it has no database yet (it is not made here)."""
    if group in service.open_groups() or service.data_dir.group_db(group).is_file():
        return service.store_for(group)
    return None


class _Meter:
    """Progress in bytes of the source, and a cancel asked for at every report.

    A chat export's reader reports its bytes as it reads, one conversation at a time. A
    file of memories (an MCP memory file, a Markdown file) is read whole before its
    memories are checked and written, which takes far longer, so its bytes are reported
    per :data:`MEMORY_BATCH` memories instead, spread over the file's share of the total.
    """

    def __init__(
        self,
        kind: SourceKind,
        path: Path,
        phase: str,
        progress: Progress | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        self.phase, self.progress, self.should_stop = phase, progress, should_stop
        self.by_memory = kind in (SourceKind.MCP_MEMORY, SourceKind.MARKDOWN)
        #: For files of memories: their bytes in all, and those of the files done.
        self.total = _note_bytes(kind, path) if self.by_memory else 0
        self.done = 0

    def reading(self, done: int, total: int) -> None:
        """The reader's report (a :data:`ByteProgress`)."""
        self.check()
        if not self.by_memory and self.progress is not None:
            self.progress(self.phase, done, total)

    def within(self, size: int, step: int, steps: int) -> None:
        """``step`` of ``steps`` through the memories of a file of ``size`` bytes."""
        self.check()
        if self.progress is not None and self.total:
            at = self.done + (size * step // steps if steps else size)
            self.progress(self.phase, min(at, self.total), self.total)

    def file_done(self, size: int) -> None:
        self.done += size

    def finish(self) -> None:
        if self.by_memory and self.progress is not None:
            self.progress(self.phase, self.total, self.total)

    def check(self) -> None:
        if self.should_stop is not None and self.should_stop():
            raise Cancelled("import cancelled; nothing was written")


def _note_bytes(kind: SourceKind, path: Path) -> int:
    files = markdown_notes.files_of(path) if kind is SourceKind.MARKDOWN else [path]
    return sum(f.stat().st_size for f in files)


class _Job:
    """One pass over the records: counting, and writing when ``write`` is set."""

    def __init__(
        self,
        service: Workspace,
        caller: Caller,
        store: GroupStore | None,
        kind: SourceKind,
        counts: ImportCounts,
        meter: _Meter,
        *,
        write: bool,
        screen: bool,
    ) -> None:
        # No store: the group does not exist yet, so nothing in the file is there.
        self.service, self.caller, self.store, self.meter = service, caller, store, meter
        self.kind, self.counts, self.write, self.screen = kind, counts, write, screen
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
        stored = self.store is not None and thread_exists(self.store, thread_id)
        existed = seen is not None or stored
        if seen is None:
            seen = known_turns(self.store, thread_id) if stored and self.store else set()
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
        if not self.screen:
            return
        first = next((t.at for t in conv.turns if t.at), None)
        created = conv.created_at or first or self.now
        updated = conv.updated_at or (fresh[-1].at if fresh else None) or created
        fallback = f"Imported {self.kind.value} conversation {created[:10]}"
        title, cut = screen_title(conv.title, fallback, self.known)
        screened = [
            part
            for t in fresh
            for part in screen_turn(
                turn_key(t.key), t.speaker, t.text, t.name, t.at or created, self.known
            )
        ]
        # Counted the same whether written or not: a dry run reports what the import will.
        self.counts.redacted += cut + sum(s.redacted for s in screened)
        if not self.write:
            return
        assert self.store is not None, "a write has its group's store"
        ensure_thread(self.store, self.caller, thread_id, title, created, updated)
        insert_turns(self.store, self.caller, thread_id, screened, self.now)

    def _refuse_secret_path(self, file: Path) -> None:
        """Refuse the import if ``file``'s path holds a secret, in the check and the write
        alike, so a dry run says what the import will. Its receipt keeps the path exactly
        (a path with the secret replaced would point nowhere), so the file must be renamed.
        The file is named by its place in the import and its path with the secret replaced.

        Raises:
            Refused: the file's name, or a folder's on its path, holds a secret.
        """

        def screened(text: str) -> Screened:
            return screen_field(text, "path", statements=Statements.REDACT, known=self.known)

        resolved = os.path.realpath(os.path.abspath(file))
        found = screened(resolved).redacted
        if not found:
            return
        # Named within the folder imported when the secret is there, else by its whole path.
        where = screened(str(file)).text
        root = Path(self.counts.path)
        if root.is_dir() and file.is_relative_to(root):
            inside = screened(str(file.relative_to(root)))
            if inside.changed:
                where = f"file {self.counts.files} in the folder ({inside.text})"
        if screened(os.path.basename(resolved)).changed:
            what, fix = "the file's name holds", "rename the file"
        else:
            what, fix = "the name of a folder on its path holds", "rename that folder"
        raise Refused(
            f"not imported: {where}: {what} what looks like a secret "
            f"({', '.join(sorted(set(found)))}), and a file's receipt keeps its path as it is; "
            f"{fix} and import again. Nothing was imported",
            reason="secret in path",
            field="path",
        )

    def _linked(self, facts: FileFacts) -> bool:
        assert self.store is not None, "a write has its group's store"
        row = self.store.execute(
            "SELECT 1 FROM attachment_receipt_turns WHERE receipt_id = ? AND source_path = ? "
            "LIMIT 1",
            (facts.receipt_id, facts.path),
        ).fetchone()
        return row is not None

    def _note_file(self, note_file: NoteFile) -> None:
        self.counts.files += 1
        if note_file.receipt:
            self._refuse_secret_path(note_file.path)
        fresh: list[StoreRequest] = []
        size, count = note_file.path.stat().st_size, len(note_file.notes)
        # Checking the memories is the first half of a write's work on them, all of a check's.
        steps = count * (2 if self.write else 1)
        for number, note in enumerate(note_file.notes):
            if number % MEMORY_BATCH == 0:
                self.meter.within(size, number, steps)
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
            stored = self.store is not None and self.store.find_duplicate(keys, note.entry_type)
            if key in self.memories_seen or stored:
                self.counts.memories_present += 1
                continue
            self.memories_seen.add(key)
            reason = f"imported from {note.where}"
            if prepared.review_reason and "possible secret" in prepared.review_reason:
                reason += "; possible secret" + prepared.review_reason.split("possible secret")[1]
            fresh.append(replace(prepared, review_reason=reason))
        self.counts.memories_new += len(fresh)
        facts = None
        has_receipt = False
        if note_file.receipt:
            facts = inspect_file(str(note_file.path), data_root=self.service.data_dir.root)
            if facts.sha256 in self.receipts_seen:
                has_receipt = True
            elif self.store is not None:
                has_receipt = bool(
                    self.store.execute(
                        "SELECT 1 FROM attachment_receipts WHERE sha256 = ?", (facts.sha256,)
                    ).fetchone()
                )
            self.receipts_seen.add(facts.sha256)
            self.counts.receipts_new += not has_receipt
        if not self.write:
            self.counts.redacted += sum(len(request.redacted) for request in fresh)
            self.meter.file_done(size)
            return
        assert self.store is not None, "a write has its group's store"
        for number, request in enumerate(fresh):
            if number % MEMORY_BATCH == 0:
                self.meter.within(size, count + number * count // len(fresh), steps)
            outcome = write_entry(self.service, self.store, self.caller, request, self.now)
            self.counts.redacted += len(outcome.redacted)
        self.meter.file_done(size)
        # Each file is linked to its receipt once, from its own path: a second file
        # with the same bytes gets a link of its own, a file imported again none.
        if facts is not None and (fresh or not has_receipt or not self._linked(facts)):
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
