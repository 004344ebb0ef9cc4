"""Screening what an import brings in, field by field.

An export file is text anyone could have edited, so every string in it goes
through :func:`core.field_screening.screen_field` before it is written, as if
an agent had sent it: entry content and tags, review reasons and provenance,
thread titles, handoffs, receipt file names, paths, text and observations.
A record that states a credential is not imported (the report lists it); a
receipt whose path holds a secret is not imported either, since a redacted
path would point nowhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.errors import Refused
from core.field_screening import Statements, refuse_secret_name, screen_field, screen_label
from core.model import Status

#: Row columns holding text from a file rather than prose someone wrote.
_FILE_TEXT = frozenset({"extracted_text", "excerpt"})
#: Row columns that must stay exact or not be stored at all.
_EXACT = frozenset({"source_path", "filename"})


@dataclass(frozen=True)
class ScreenedEntry:
    """An imported entry's text fields as they may be stored."""

    content: str
    tags: tuple[str, ...]
    #: The entry's other string fields (review reason, provenance, times), as labels.
    fields: dict[str, Any]
    #: The record's status, or ``candidate`` when a possible secret needs review.
    status: Status
    redacted: int


#: Entry fields screened as labels: top-level ones, then provenance's.
_ENTRY_FIELDS = ("review_reason", "superseded_by", "superseded_at", "last_seen_at")
_PROVENANCE_FIELDS = ("session_id", "created_at", "updated_at")


def screen_entry(
    content: str, rec: Mapping[str, Any], known: tuple[str, ...]
) -> ScreenedEntry | None:
    """Screen one imported entry record (``content`` already decrypted if sealed).

    Returns:
        The screened fields, or None when the entry must not be imported because
        its content or a tag states a credential.
    """
    try:
        body = screen_field(content, "content", known=known)
        tags = [screen_field(t, f"tags.{i}", known=known) for i, t in enumerate(rec["tags"])]
    except Refused:
        return None
    redacted = len(body.redacted)
    possible = list(body.possible)
    kept: list[str] = []
    for tag in tags:
        redacted += len(tag.redacted)
        possible += tag.possible
        if not tag.redacted:
            kept.append(tag.text)
    raw = {k: rec.get(k) for k in _ENTRY_FIELDS}
    raw |= {k: rec["provenance"][k] for k in _PROVENANCE_FIELDS}
    fields: dict[str, Any] = {}
    for name, value in raw.items():
        if isinstance(value, str):
            clean = screen_label(value, name, known=known)
            redacted += clean != value
            value = clean
        fields[name] = value
    status = Status(rec["status"])
    if possible and status is Status.ACTIVE:
        status = Status.CANDIDATE
        fields["review_reason"] = "possible secret (" + ", ".join(sorted(set(possible))) + ")"
    return ScreenedEntry(body.text, tuple(kept), fields, status, redacted)


def safe_ref(value: object, known: tuple[str, ...]) -> str:
    """A record's key as it may be shown in the import report."""
    return screen_label(str(value), "id", known=known)[:80]


def screen_row(
    row: Mapping[str, Any], key: str, known: tuple[str, ...]
) -> tuple[dict[str, Any], int] | None:
    """Screen every string column of an imported row.

    Returns:
        The row to store and how many values were redacted, or None when the row
        must not be imported (a credential statement, a secret in a path or a key).
    """
    out: dict[str, Any] = {}
    redacted = 0
    for name, value in row.items():
        if not isinstance(value, str):
            out[name] = value
            continue
        try:
            if name in _EXACT:
                refuse_secret_name(value, name, known=known)
                out[name] = value
                continue
            mode = Statements.REDACT if name in _FILE_TEXT else Statements.REFUSE
            screened = screen_field(value, name, statements=mode, known=known)
        except Refused:
            return None
        if name == key and screened.changed:
            return None  # an id that held a secret cannot be stored as anything else
        redacted += len(screened.redacted)
        out[name] = screened.text
    return out, redacted
