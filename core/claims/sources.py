"""Source handles: parsing what a caller cites, and resolving a handle to its text now.

Everything here reads; nothing writes. A source is resolved from the tables its
capability owns (exchanges, thread handoffs, attachment receipts, memory
entries) and, for a receipt, by hashing the file again without recording the
result, so checking a claim never changes a receipt's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from core.attachments.receipts import get_receipt
from core.attachments.verification import SourceCheck, check_source, quick_check
from core.claims.model import MAX_SOURCES, SourceHandle, SourceKind
from core.continuity.handoffs import current_handoff
from core.continuity.threads import Thread, as_thread_id, resolve_thread
from core.model.entries import Privacy
from core.model.errors import InvalidParams, NotFound
from core.model.text import sha256_text
from core.policy.secrets import redact
from core.storage.store import GroupStore

#: The longest passage one source handle may quote: cite the passage, not the file.
MAX_QUOTE_CHARS: Final = 4000


class FileCheck(StrEnum):
    """How resolving a receipt source looks at the file behind it."""

    #: The receipt's last recorded state; no file is touched (lists of many claims).
    RECORDED = "recorded"
    #: The file now, hashed again only when its size, times or inode moved (the brief).
    STAT = "stat"
    #: The file now, hashed again (``claim_verify``, a claim's detail).
    HASH = "hash"


@dataclass(frozen=True)
class Resolved:
    """A source as it is now. ``text`` is None when the source is gone."""

    text: str | None
    #: Hash of the whole source now (a receipt's: the recorded file hash).
    sha256: str | None
    #: Why the source is gone, or what changed around it, in plain words.
    note: str | None = None
    #: The file behind a receipt has other bytes now (or cannot be read).
    file_changed: bool = False
    #: The file behind a receipt is no longer there.
    file_missing: bool = False
    #: For a handoff: the thread's current version, when newer than the cited one.
    newer_version: int | None = None
    newer_text: str | None = None


def _bad(index: int, message: str, field: str, rule: str) -> InvalidParams:
    return InvalidParams(
        f"sources[{index}]: {message}", field=f"sources.{index}.{field}", rule=rule
    )


def _int(arg: dict[str, Any], name: str, index: int) -> int | None:
    value = arg.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _bad(index, f"{name} must be a non-negative integer", name, "type")
    return value


def _span(arg: dict[str, Any], index: int, length: int) -> tuple[int, int] | None:
    start, end = _int(arg, "start", index), _int(arg, "end", index)
    if start is None and end is None:
        return None
    if start is None or end is None:
        raise _bad(index, "give both start and end, or neither", "start", "span")
    if not start < end <= length:
        raise _bad(
            index,
            f"span {start}:{end} is not inside the source's {length} characters "
            "(need start < end <= length)",
            "end",
            "span",
        )
    return start, end


def _cited(text: str, span: tuple[int, int] | None, index: int) -> str:
    quote = text if span is None else text[span[0] : span[1]]
    if len(quote) > MAX_QUOTE_CHARS:
        raise _bad(
            index,
            f"the cited passage has {len(quote)} characters, more than {MAX_QUOTE_CHARS}; "
            "give start and end to cite only the passage that says the claim",
            "end",
            "span",
        )
    return quote


def cite(store: GroupStore, arg: object, index: int) -> SourceHandle:
    """Turn one cited source (a JSON object) into a handle with its quote and hash.

    Raises:
        InvalidParams: the object is malformed; the message names the field.
        NotFound: the source does not exist.
    """
    if not isinstance(arg, dict):
        raise _bad(index, "must be an object with a kind", "kind", "type")
    raw_kind = arg.get("kind")
    try:
        kind = SourceKind(str(raw_kind))
    except ValueError:
        choices = ", ".join(k.value for k in SourceKind)
        raise _bad(index, f"kind must be one of {choices}", "kind", "enum") from None
    match kind:
        case SourceKind.EXCHANGE:
            seq = _int(arg, "id", index)
            if seq is None:
                raise _bad(
                    index, "an exchange source needs its id (from exchange_log)", "id", "required"
                )
            row = store.execute("SELECT text FROM exchanges WHERE seq = ?", (seq,)).fetchone()
            if row is None:
                raise NotFound(
                    f"sources[{index}]: no exchange {seq} in group {store.group}",
                    field=f"sources.{index}.id",
                )
            text, ref = str(row[0]), str(seq)
        case SourceKind.HANDOFF:
            thread = _handoff_thread(store, arg.get("thread"), index)
            version = _int(arg, "version", index)
            current = current_handoff(store, thread.id)
            if current is None:
                raise NotFound(
                    f"sources[{index}]: thread {thread.title!r} ({thread.id}) has no handoff yet",
                    field=f"sources.{index}.thread",
                )
            version = current.version if version is None else version
            row = store.execute(
                "SELECT markdown FROM thread_handoffs WHERE thread_id = ? AND version = ?",
                (thread.id, version),
            ).fetchone()
            if row is None:
                raise NotFound(
                    f"sources[{index}]: thread {thread.title!r} ({thread.id}) has no handoff "
                    f"version {version}; its current version is {current.version}",
                    field=f"sources.{index}.version",
                )
            text, ref = str(row[0]), f"{thread.id}@{version}"
        case SourceKind.ATTACHMENT:
            rid = arg.get("id")
            if not isinstance(rid, str) or not rid:
                raise _bad(
                    index, "an attachment source needs the receipt id (att_...)", "id", "required"
                )
            receipt = get_receipt(store, rid)
            text = _receipt_text(store, rid) or receipt.excerpt
            span = _span(arg, index, len(text))
            quote = _cited(text, span, index)
            return SourceHandle(kind, rid, quote, receipt.sha256, span)
        case SourceKind.MEMORY:
            mid = arg.get("id")
            if not isinstance(mid, str) or not mid:
                raise _bad(index, "a memory source needs the entry id (mem-...)", "id", "required")
            entry = store.get(mid)
            if entry is None:
                raise NotFound(
                    f"sources[{index}]: no memory {mid} in group {store.group}",
                    field=f"sources.{index}.id",
                )
            if entry.privacy is not Privacy.PUBLIC:
                raise _bad(
                    index,
                    f"memory {mid} is {entry.privacy.value}; a claim would copy its sealed "
                    "content into plain text, so cite a public memory or another source",
                    "id",
                    "privacy",
                )
            text, ref = entry.content, mid
    span = _span(arg, index, len(text))
    return SourceHandle(kind, ref, _cited(text, span, index), sha256_text(text), span)


def _handoff_thread(store: GroupStore, ref: object, index: int) -> Thread:
    """The thread a handoff source names, by id or by title as every ``thread`` param."""
    if not isinstance(ref, str) or not ref.strip():
        raise _bad(
            index,
            "a handoff source needs its thread: its id (thr-...) or its title",
            "thread",
            "required",
        )
    try:
        return resolve_thread(store, ref)
    except NotFound:
        # The title as looked up: a secret typed into it is not echoed.
        name = redact(ref.strip()).text
        named = f"with the id {name}" if as_thread_id(name) else f"titled {name!r}"
        raise NotFound(
            f"sources[{index}]: no thread {named} in group {store.group}; name the thread by "
            "its id (thr-...) or its title, as thread_list shows them",
            field=f"sources.{index}.thread",
        ) from None
    except InvalidParams as exc:
        message = exc.message.removeprefix("thread ")
        raise _bad(index, f"the thread {message}", "thread", exc.rule or "pattern") from None


def cite_all(store: GroupStore, args: object) -> tuple[SourceHandle, ...]:
    if not isinstance(args, list) or not args:
        raise InvalidParams(
            "sources must be a non-empty list: cite at least one exchange, handoff, "
            "attachment or memory",
            field="sources",
            rule="minItems",
        )
    if len(args) > MAX_SOURCES:
        raise InvalidParams(
            f"sources may cite at most {MAX_SOURCES} sources; split the claim",
            field="sources",
            rule="maxItems",
        )
    handles = tuple(cite(store, a, i) for i, a in enumerate(args))
    return tuple(dict.fromkeys(handles))


def _receipt_text(store: GroupStore, rid: str) -> str | None:
    row = store.execute(
        "SELECT extracted_text FROM attachment_receipts WHERE id = ?", (rid,)
    ).fetchone()
    return None if row is None else row[0]


def resolve(
    store: GroupStore, handle: SourceHandle, *, files: FileCheck = FileCheck.HASH
) -> Resolved:
    """What ``handle`` points at now, read-only."""
    match handle.kind:
        case SourceKind.EXCHANGE:
            row = store.execute(
                "SELECT text FROM exchanges WHERE seq = ?", (int(handle.ref),)
            ).fetchone()
            if row is None:
                return Resolved(None, None, f"exchange {handle.ref} was deleted or expired")
            return Resolved(row[0], sha256_text(row[0]))
        case SourceKind.HANDOFF:
            thread, _, version = handle.ref.partition("@")
            row = store.execute(
                "SELECT markdown FROM thread_handoffs WHERE thread_id = ? AND version = ?",
                (thread, int(version)),
            ).fetchone()
            if row is None:
                return Resolved(
                    None,
                    None,
                    f"handoff version {version} of thread {thread} was pruned, "
                    "or the thread was deleted",
                )
            current = current_handoff(store, thread)
            newer = current if current is not None and current.version > int(version) else None
            return Resolved(
                row[0],
                sha256_text(row[0]),
                newer_version=None if newer is None else newer.version,
                newer_text=None if newer is None else newer.markdown,
            )
        case SourceKind.ATTACHMENT:
            try:
                receipt = get_receipt(store, handle.ref)
            except NotFound:
                return Resolved(None, None, f"receipt {handle.ref} was deleted")
            text = _receipt_text(store, handle.ref) or receipt.excerpt
            check = SourceCheck(
                receipt.id, receipt.source_path, receipt.sha256, receipt.size, receipt.state
            )
            match files:
                case FileCheck.RECORDED:
                    state = receipt.state.value
                case FileCheck.STAT:
                    state = quick_check(check).value
                case FileCheck.HASH:
                    state = check_source(check).state.value
            changed = state in ("changed", "unreadable")
            missing = state == "missing"
            note = None
            if missing:
                note = f"the file is no longer at {receipt.source_path}"
            elif changed:
                note = (
                    f"the file at {receipt.source_path} is {state} now "
                    f"(recorded sha256 {receipt.sha256[:12]}…)"
                )
            return Resolved(text, receipt.sha256, note, changed, missing)
        case SourceKind.MEMORY:
            entry = store.get(handle.ref)
            if entry is None:
                return Resolved(None, None, f"memory {handle.ref} was deleted")
            if entry.privacy is not Privacy.PUBLIC:
                return Resolved(None, None, f"memory {handle.ref} is {entry.privacy.value} now")
            note = None if entry.superseded_by is None else f"superseded by {entry.superseded_by}"
            return Resolved(entry.content, sha256_text(entry.content), note)
