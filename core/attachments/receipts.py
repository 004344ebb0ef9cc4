"""Attachment receipts as stored: the value types, the reads, and how a receipt reads.

A receipt (seed 004 §1.6) records a file's SHA-256, size, type, where it came
from and, for text, what it said; every sighting of the same bytes adds a
:class:`Link`. This module reads them back and renders them for the brief,
search results and the front ends; :mod:`core.attachments.attach` writes them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final

from core.attachments.filetypes import Kind
from core.model.entries import parse_iso
from core.model.errors import InvalidParams, NotFound
from core.model.text import single_line
from core.policy.sanitize import neutralize

if TYPE_CHECKING:
    from core.storage.store import GroupStore

RECEIPT_ID = re.compile(r"\batt_[0-9a-f]{16}\b")


class SourceState(StrEnum):
    """What the last check found at the receipt's source path."""

    VERIFIED = "verified"  # same bytes as recorded
    CHANGED = "changed"  # a file is there, with other bytes
    MISSING = "missing"  # nothing is there
    UNREADABLE = "unreadable"  # something is there that cannot be read as a file

    @property
    def is_gap(self) -> bool:
        match self:
            case SourceState.VERIFIED:
                return False
            case SourceState.CHANGED | SourceState.MISSING | SourceState.UNREADABLE:
                return True


# -- receipts in the store ---------------------------------------------------------


@dataclass(frozen=True)
class Receipt:
    id: str
    sha256: str
    kind: Kind
    filename: str
    mime_type: str
    size: int
    source_path: str
    state: SourceState
    checked_at: str
    excerpt: str
    observation: str
    created_at: str
    #: When the file was last attached: the recorded facts describe it as of then.
    updated_at: str
    link_count: int
    last_linked_at: str | None

    @property
    def state_line(self) -> str:
        return state_line(self)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "state_line": self.state_line}


@dataclass(frozen=True)
class Link:
    """One sighting of a receipt's bytes."""

    id: int
    receipt_id: str
    thread_id: str | None
    session_id: str | None
    turn: str | None
    source_path: str
    observation: str
    linked_at: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_RECEIPT_SELECT = (
    "SELECT r.id, r.sha256, r.kind, r.filename, r.mime_type, r.size, r.source_path, "
    "r.source_status, r.checked_at, r.excerpt, r.observation, r.created_at, r.updated_at, "
    "(SELECT count(*) FROM attachment_receipt_turns t WHERE t.receipt_id = r.id), "
    "(SELECT max(linked_at) FROM attachment_receipt_turns t WHERE t.receipt_id = r.id) "
    "FROM attachment_receipts r"
)


def _receipt(row: Sequence[Any]) -> Receipt:
    (
        rid,
        sha,
        kind,
        name,
        mime,
        size,
        path,
        state,
        checked,
        excerpt,
        obs,
        created,
        updated,
        links,
        last,
    ) = row[:15]
    return Receipt(
        rid,
        sha,
        Kind(kind),
        name,
        mime,
        int(size),
        path,
        SourceState(state),
        checked,
        excerpt,
        obs,
        created,
        updated,
        int(links),
        last,
    )


def get_receipt(store: GroupStore, rid: str) -> Receipt:
    """One receipt.

    Raises:
        InvalidParams: ``rid`` is empty or blank (rather than "no attachment receipt  in").
        NotFound: no receipt ``rid`` in this group.
    """
    if not rid.strip():
        raise InvalidParams(
            "id must not be empty: give a receipt id (att_...)", field="id", rule="minLength"
        )
    row = store.execute(f"{_RECEIPT_SELECT} WHERE r.id = ?", (rid,)).fetchone()
    if row is None:
        raise NotFound(f"no attachment receipt {rid} in group {store.group}", field="id")
    return _receipt(row)


def get_receipts(store: GroupStore, ids: Iterable[str]) -> dict[str, Receipt]:
    """The receipts among ``ids`` that exist, by id."""
    ids = list(dict.fromkeys(ids))
    found: dict[str, Receipt] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in store.execute(f"{_RECEIPT_SELECT} WHERE r.id IN ({marks})", chunk):
            found[row[0]] = _receipt(row)
    return found


def list_receipts(
    store: GroupStore, thread_id: str | None = None, limit: int = 50, offset: int = 0
) -> list[Receipt]:
    """Receipts, most recently linked first; with ``thread_id``, those seen in that thread.

    The order comes from the links alone: reading a receipt's later columns
    walks past its extracted text, so only the rows on the page are read.

    Raises:
        NotFound: ``thread_id`` names no thread.
    """
    # Link ids grow with every insert, so they order sightings even within one millisecond.
    if thread_id is None:
        sql = (
            "SELECT r.id FROM attachment_receipts r "
            "LEFT JOIN attachment_receipt_turns t ON t.receipt_id = r.id "
            "GROUP BY r.id ORDER BY max(t.id) DESC, r.id LIMIT ? OFFSET ?"
        )
        params: tuple[Any, ...] = (limit, offset)
    else:
        check_thread(store, thread_id)
        sql = (
            "SELECT receipt_id FROM attachment_receipt_turns WHERE thread_id = ? "
            "GROUP BY receipt_id ORDER BY max(id) DESC LIMIT ? OFFSET ?"
        )
        params = (thread_id, limit, offset)
    ids = [row[0] for row in store.execute(sql, params)]
    found = get_receipts(store, ids)
    return [found[rid] for rid in ids if rid in found]


def links(store: GroupStore, rid: str) -> list[Link]:
    """Every sighting of a receipt, oldest first."""
    rows = store.execute(
        "SELECT id, receipt_id, thread_id, session_id, turn, source_path, observation, "
        "linked_at FROM attachment_receipt_turns WHERE receipt_id = ? ORDER BY linked_at, id",
        (rid,),
    )
    return [Link(*row) for row in rows]


def extracted_text(store: GroupStore, rid: str) -> str | None:
    """The full extracted text of a text receipt (None for other kinds)."""
    row = store.execute(
        "SELECT extracted_text FROM attachment_receipts WHERE id = ?", (rid,)
    ).fetchone()
    if row is None:
        raise NotFound(f"no attachment receipt {rid} in group {store.group}", field="id")
    text: str | None = row[0]
    return text


def check_thread(store: GroupStore, thread_id: str) -> None:
    if store.execute("SELECT 1 FROM threads WHERE id = ?", (thread_id,)).fetchone() is None:
        raise NotFound(f"no thread {thread_id} in group {store.group}", field="thread")


# -- how a receipt reads in the brief and in search --------------------------------


def _day(stamp: str) -> str:
    return parse_iso(stamp).strftime("%Y-%m-%d")


def _minute(stamp: str) -> str:
    return parse_iso(stamp).strftime("%Y-%m-%d %H:%M UTC")


def human_size(size: int) -> str:
    """``size`` in binary units, as file managers show it ("1.5 KiB")."""
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / (1024 * 1024):.1f} MiB"


def state_line(receipt: Receipt) -> str:
    """The receipt's verification state in plain words; a gap says what may be stale."""
    checked = _minute(receipt.checked_at)
    what = "excerpt" if receipt.excerpt else "observation" if receipt.observation else "receipt"
    match receipt.state:
        case SourceState.VERIFIED:
            return f"source verified {checked}"
        case SourceState.CHANGED:
            return (
                f"verification gap: source changed since {_day(receipt.updated_at)} "
                f"— {what} may be stale (checked {checked}); read the file again and "
                "attach it anew to record what it holds now"
            )
        case SourceState.MISSING:
            return (
                f"verification gap: source missing since {_day(receipt.updated_at)} "
                f"(moved or deleted) — {what} may be stale (checked {checked}); if it "
                "moved, attach it again from where it is now"
            )
        case SourceState.UNREADABLE:
            return (
                f"verification gap: source unreadable (checked {checked}) "
                f"— {what} cannot be confirmed"
            )


def receipt_states(store: GroupStore, ids: Iterable[str]) -> dict[str, str]:
    """The state line of each receipt among ``ids`` that exists (for search results)."""
    return {rid: r.state_line for rid, r in get_receipts(store, ids).items()}


def cited_ids(text: str) -> list[str]:
    """The receipt ids a text mentions (``att_`` and 16 hex digits), in order, once each."""
    if "att_" not in text:  # most texts cite nothing; skip the regex
        return []
    return list(dict.fromkeys(RECEIPT_ID.findall(text)))


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip() + "…"


_BRIEF_EXCERPT_CHARS: Final = 200


def receipt_brief_section(
    store: GroupStore, thread_id: str | None, limit: int = 5
) -> tuple[str, str] | None:
    """The brief's "Attachments" section: recent receipts and their verification state.

    Lists the receipts seen in ``thread_id`` (or anywhere, when None), most
    recent first. States are as last recorded; verify first for fresh ones.

    Returns:
        ``("Attachments", markdown)``, or None when there is nothing to list.
    """
    try:
        receipts = list_receipts(store, thread_id, limit)
    except NotFound:  # a thread deleted since the session began
        receipts = []
    if not receipts:
        return None
    lines = [
        "Files seen in earlier turns, kept as receipts (hash and excerpt), not copies. "
        "Re-read a file before relying on its details."
    ]
    for r in receipts:
        state = r.state_line
        mark = "⚠ " if r.state.is_gap else ""
        name, _ = neutralize(single_line(r.filename))
        lines.append(f"- `{r.id}` {name} ({r.kind}, {human_size(r.size)}) — {mark}{state}")
        if r.excerpt:
            lines.append(f'  - excerpt: "{clip(r.excerpt, _BRIEF_EXCERPT_CHARS)}"')
        if r.observation:
            lines.append(f'  - last observation: "{clip(r.observation, _BRIEF_EXCERPT_CHARS)}"')
    return "Attachments", "\n".join(lines)
