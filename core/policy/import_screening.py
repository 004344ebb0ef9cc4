"""Screening what an import brings in, field by field.

An export file is text anyone could have edited, so every string in it goes
through :func:`core.policy.field_screening.screen_field` before it is written, as if
an agent had sent it: entry content and tags, review reasons and provenance,
thread titles, handoffs, receipt file names, paths, text and observations.
An entry that states a credential is not imported, nor is one that is
nothing but a secret (the report lists both, each with its reason); in the
other records, which rows point at, the value is cut out instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from core.model.entries import Status
from core.model.errors import InvalidParams, Refused
from core.policy.field_screening import Statements, only_secrets, screen_field, screen_label


class Skip(StrEnum):
    """Why an imported entry is left out."""

    #: Its content or a tag states a credential ("my password is ...").
    CREDENTIAL_STATEMENT = "credential statement"
    #: Its content is nothing but a secret: only a placeholder would be left.
    ONLY_A_SECRET = "only a secret"


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
    #: Tags left out for being empty or only white space (an older or edited file).
    empty_tags: int = 0


#: Entry fields screened as labels: top-level ones, then provenance's.
_ENTRY_FIELDS = ("review_reason", "superseded_by", "superseded_at", "last_seen_at")
_PROVENANCE_FIELDS = ("session_id", "created_at", "updated_at")


def screen_entry(
    content: str, rec: Mapping[str, Any], known: tuple[str, ...]
) -> ScreenedEntry | Skip:
    """Screen one imported entry record (``content`` already decrypted if sealed).

    Returns:
        The screened fields, or why the entry must not be imported: its content
        or a tag states a credential, or its content is nothing but a secret (a
        direct write of it is refused; a placeholder alone says nothing).
    """
    try:
        body = screen_field(content, "content", known=known)
        tags = [screen_field(t, f"tags.{i}", known=known) for i, t in enumerate(rec["tags"])]
    except Refused:
        return Skip.CREDENTIAL_STATEMENT
    if only_secrets(body.text):
        return Skip.ONLY_A_SECRET
    redacted = len(body.redacted)
    possible = list(body.possible)
    kept: list[str] = []
    empty = 0
    for tag in tags:
        redacted += len(tag.redacted)
        possible += tag.possible
        if not tag.text.split():
            # A write refuses one, and the write path always dropped it: one in a
            # file is dropped too, and counted, so the import still goes through.
            empty += 1
        elif not tag.redacted:
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
    return ScreenedEntry(body.text, tuple(kept), fields, status, redacted, empty)


def screen_row(
    row: Mapping[str, Any], key: str, known: tuple[str, ...]
) -> tuple[dict[str, Any], int]:
    """Screen every string column of an imported row.

    Rows are never dropped, since other rows point at them (a thread's handoffs,
    a receipt's links): a credential statement or a secret in any column is cut
    out instead. A receipt path that held one then no longer verifies, which
    its state will say.

    Returns:
        The row to store and how many values were redacted.

    Raises:
        InvalidParams: the row's key itself holds a secret.
    """
    out: dict[str, Any] = {}
    redacted = 0
    for name, value in row.items():
        if not isinstance(value, str):
            out[name] = value
            continue
        screened = screen_field(value, name, statements=Statements.REDACT, known=known)
        if name == key and screened.changed:
            raise InvalidParams(
                f"a record's {key} holds what looks like a secret; fix the file and import again",
                field=key,
            )
        redacted += len(screened.redacted)
        out[name] = screened.text
    return out, redacted
