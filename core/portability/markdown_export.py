"""``ambry export --format markdown DIR``: the group as Markdown a person can read and grep.

The folder gets:

* ``memories.md``: every current memory (superseded ones left out), grouped by type,
  one list item each, with its tags, status, trust and id;
* ``threads/<date>-<title>-<id>.md``: one file per thread, its current handoff and
  then its turns in the order they were said, each under a line with the speaker,
  name and time; turns filed under no thread go to ``threads/unfiled.md``.

Only public memories are written: Markdown cannot be sealed, and private and secret
entries stay encrypted in Ambry (their count is reported). Each file is written whole
(a temporary file, synced, then renamed), so an interrupted export never leaves half a
file; files from an earlier export of the same threads are replaced.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.continuity.handoffs import current_handoff
from core.memory.curation import require_operator
from core.model.entries import EntryType, MemoryEntry, Privacy, Status
from core.model.errors import InvalidParams
from core.storage import audit
from core.storage.audit import Action
from core.storage.best_effort import best_effort
from core.storage.pending_files import write_whole

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

_SECTIONS = {
    EntryType.PREFERENCE: "Preferences",
    EntryType.INSTRUCTION: "Instructions",
    EntryType.CORRECTION: "Corrections",
    EntryType.FACT: "Facts",
    EntryType.CONTEXT: "Context",
}
_UNSAFE = re.compile(r"[^\w-]+")


@dataclass
class MarkdownExport:
    directory: str
    memories: int = 0
    skipped_private: int = 0
    threads: int = 0
    turns: int = 0
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "memories": self.memories,
            "skipped_private": self.skipped_private,
            "threads": self.threads,
            "turns": self.turns,
            "files": self.files,
        }


def export_markdown(
    service: Workspace,
    caller: Caller,
    directory: Path,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> MarkdownExport:
    require_operator(caller, "export")
    if directory.exists() and not directory.is_dir():
        raise InvalidParams(f"{directory} is a file; give a folder to write into", field="dir")
    store = service.store_for(caller.group)
    summary = MarkdownExport(str(directory))
    pending = service.data_dir.pending_dir
    threads = store.execute(
        "SELECT id, title, created_at, updated_at FROM threads ORDER BY created_at, id"
    ).fetchall()
    unfiled = store.execute("SELECT 1 FROM exchanges WHERE thread_id IS NULL LIMIT 1").fetchone()
    total = len(threads) + 1 + bool(unfiled)
    try:
        _write(pending, directory / "memories.md", _memories(service, store, summary), summary)
        for done, (thread_id, title, created, updated) in enumerate(threads, 2):
            name = f"{created[:10]}-{_slug(title)}-{thread_id[4:]}.md"
            span = f"{_when(created)} to {_when(updated)}"
            head = f"# {_inline(title)}\n\nThread `{thread_id}`, {span}.\n"
            handoff = current_handoff(store, thread_id)
            if handoff is not None:
                head += (
                    f"\n## Handoff (version {handoff.version}, {_when(handoff.created_at)})\n\n"
                    f"{_fenced(handoff.markdown)}\n"
                )
            body = _turns(store, thread_id, summary)
            _write(pending, directory / "threads" / name, head + body, summary)
            summary.threads += 1
            if progress is not None:
                progress(done, total)
        if unfiled:
            body = "# Turns filed under no thread\n" + _turns(store, None, summary)
            _write(pending, directory / "threads" / "unfiled.md", body, summary)
    except OSError as exc:
        raise InvalidParams(
            f"cannot write into {directory}: {exc.strerror or exc}", field="dir"
        ) from exc
    if progress is not None:
        progress(total, total)
    with best_effort(store, "the export's audit row"), store.transaction():
        audit.record(
            store,
            Action.EXPORT,
            caller.actor,
            session_id=caller.session_id,
            count=summary.memories,
            skipped_private=summary.skipped_private,
            format="markdown",
            threads=summary.threads,
            turns=summary.turns,
        )
    return summary


def _write(pending: Path, path: Path, text: str, summary: MarkdownExport) -> None:
    write_whole(pending, path, text.encode("utf-8"))
    summary.files.append(str(path))


def _memories(service: Workspace, store: GroupStore, summary: MarkdownExport) -> str:
    ids = [
        r[0]
        for r in store.execute(
            "SELECT id FROM memory_entries WHERE superseded_by IS NULL ORDER BY created_at, seq"
        )
    ]
    by_type: dict[EntryType, list[MemoryEntry]] = {t: [] for t in _SECTIONS}
    for entry_id in ids:
        entry = store.get(entry_id)
        assert entry is not None
        if entry.privacy is not Privacy.PUBLIC:
            summary.skipped_private += 1
            continue
        by_type[entry.type].append(entry)
    lines = [f"# Memories of group {store.group}", ""]
    for entry_type, title in _SECTIONS.items():
        entries = by_type[entry_type]
        if not entries:
            continue
        lines += [f"## {title} ({len(entries)})", ""]
        for e in entries:
            body = e.content.replace("\n", "\n  ")
            lines.append(f"- {body}")
            notes = [f"`{e.id}`", f"{e.source.type}, {e.source.trust} trust"]
            if e.status is Status.CANDIDATE:
                notes.insert(0, "**awaiting review**")
            if e.tags:
                notes.append("tags: " + ", ".join(e.tags))
            lines.append("  *" + "; ".join(notes) + "*")
            summary.memories += 1
        lines.append("")
    if not summary.memories:
        lines.append("No public memories.")
    return "\n".join(lines) + "\n"


def _turns(store: GroupStore, thread_id: str | None, summary: MarkdownExport) -> str:
    scope = "thread_id IS NULL" if thread_id is None else "thread_id = ?"
    rows = store.execute(
        f"SELECT speaker, name, said_at, text FROM exchanges WHERE {scope} ORDER BY said_at, seq",
        () if thread_id is None else (thread_id,),
    )
    out = ["", "## Conversation", ""]
    count = 0
    for speaker, name, said_at, text in rows:
        who = f"{speaker} ({_inline(name)})" if name else speaker
        out += [f"**{who}**, {_when(said_at)}:", "", _quoted(text), ""]
        count += 1
    summary.turns += count
    if not count:
        out.append("No turns.")
    return "\n".join(out) + "\n"


def _when(stamp: str | None) -> str:
    return "unknown time" if not stamp else stamp[:16].replace("T", " ") + " UTC"


def _slug(title: str) -> str:
    return _UNSAFE.sub("-", title.lower()).strip("-")[:60] or "thread"


def _inline(text: str) -> str:
    return " ".join(text.split())


def _quoted(text: str) -> str:
    """A turn as a block quote, so its own headings and rules stay inside it."""
    return "\n".join("> " + line if line else ">" for line in text.split("\n"))


def _fenced(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}markdown\n{text}\n{fence}"
