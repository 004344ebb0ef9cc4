"""Claim rows in a group database: insert, read, list, search, decision receipts, settings.

SQL only; the rules (who may decide, what a decision needs) are in
:mod:`core.claims.gate`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from core.claims.model import (
    Claim,
    ClaimKind,
    ClaimStatus,
    Decision,
    DecisionReceipt,
    Origin,
    SourceHandle,
    SourceKind,
)
from core.model.errors import InvalidParams, NotFound
from core.storage.fts import build_match
from core.storage.store import GroupStore

_COLUMNS = (
    "c.seq, c.id, c.text, c.kind, c.status, c.origin, c.recheck_days, c.session_id, "
    "c.thread_id, c.created_at, c.updated_at, c.deferred_at, c.verified_at, c.recheck_due_at"
)


def _sources(store: GroupStore, seqs: Sequence[int]) -> dict[int, list[SourceHandle]]:
    out: dict[int, list[SourceHandle]] = {s: [] for s in seqs}
    if not seqs:
        return out
    marks = ", ".join("?" * len(seqs))
    rows = store.execute(
        "SELECT claim_seq, kind, ref, span_start, span_end, quote, source_sha256 "
        f"FROM claim_sources WHERE claim_seq IN ({marks}) ORDER BY claim_seq, position",
        tuple(seqs),
    )
    for seq, kind, ref, a, b, quote, sha in rows:
        span = None if a is None else (int(a), int(b))
        out[int(seq)].append(SourceHandle(SourceKind(kind), ref, quote, sha, span))
    return out


def _claims(store: GroupStore, rows: list[Sequence[Any]]) -> list[Claim]:
    seqs = [int(r[0]) for r in rows]
    sources = _sources(store, seqs)
    return [
        Claim(
            id=r[1],
            text=r[2],
            kind=ClaimKind(r[3]),
            status=ClaimStatus(r[4]),
            origin=Origin(r[5]),
            recheck_days=int(r[6]),
            session_id=r[7],
            thread_id=r[8],
            created_at=r[9],
            updated_at=r[10],
            deferred_at=r[11],
            verified_at=r[12],
            recheck_due_at=r[13],
            sources=tuple(sources[int(r[0])]),
        )
        for r in rows
    ]


def insert_claim(store: GroupStore, claim: Claim, text_key: str) -> None:
    """Write a new claim and its sources (inside the caller's transaction)."""
    seq = store.execute(
        "INSERT INTO claims (id, text, kind, status, origin, text_key, recheck_days, "
        "session_id, thread_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
        (
            claim.id,
            claim.text,
            claim.kind.value,
            claim.status.value,
            claim.origin.value,
            text_key,
            claim.recheck_days,
            claim.session_id,
            claim.thread_id,
            claim.created_at,
            claim.updated_at,
        ),
    ).fetchone()[0]
    add_sources(store, int(seq), claim.sources, start=0)


def add_sources(
    store: GroupStore, seq: int, sources: Iterable[SourceHandle], *, start: int
) -> None:
    for position, s in enumerate(sources, start):
        store.execute(
            "INSERT INTO claim_sources (claim_seq, position, kind, ref, span_start, span_end, "
            "quote, source_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                seq,
                position,
                s.kind.value,
                s.ref,
                None if s.span is None else s.span[0],
                None if s.span is None else s.span[1],
                s.quote,
                s.source_sha256,
            ),
        )


def claim_seq(store: GroupStore, claim_id: str) -> int:
    row = store.execute("SELECT seq FROM claims WHERE id = ?", (claim_id,)).fetchone()
    if row is None:
        raise NotFound(
            f"no claim {claim_id} in group {store.group}; list them with claim_search",
            field="id",
        )
    return int(row[0])


def get_claim(store: GroupStore, claim_id: str) -> Claim:
    """One claim with its sources.

    Raises:
        InvalidParams: ``claim_id`` is empty or blank (rather than "no claim  in group").
        NotFound: no claim with that id in this group.
    """
    if not claim_id.strip():
        raise InvalidParams(
            "id must not be empty: give a claim id (clm-...)", field="id", rule="minLength"
        )
    row = store.execute(f"SELECT {_COLUMNS} FROM claims c WHERE c.id = ?", (claim_id,)).fetchone()
    if row is None:
        raise NotFound(
            f"no claim {claim_id} in group {store.group}; list them with claim_search",
            field="id",
        )
    return _claims(store, [row])[0]


def find_by_key(store: GroupStore, text_key: str) -> list[Claim]:
    rows = store.execute(
        f"SELECT {_COLUMNS} FROM claims c WHERE c.text_key = ? ORDER BY c.seq", (text_key,)
    ).fetchall()
    return _claims(store, rows)


def list_claims(
    store: GroupStore,
    *,
    query: str = "",
    statuses: Sequence[ClaimStatus] = (),
    kinds: Sequence[ClaimKind] = (),
    limit: int = 50,
    offset: int = 0,
) -> list[Claim]:
    """Claims matching a full-text ``query`` (best first) or the newest first, from the
    ``offset``-th on."""
    clauses: list[str] = []
    params: list[Any] = []
    if statuses:
        clauses.append(f"c.status IN ({', '.join('?' * len(statuses))})")
        params.extend(s.value for s in statuses)
    if kinds:
        clauses.append(f"c.kind IN ({', '.join('?' * len(kinds))})")
        params.extend(k.value for k in kinds)
    where = " AND ".join(clauses) or "1"
    expression = build_match(query)
    if query.strip() and not expression:
        # Punctuation or pictographs alone ("?", "🍣"): no word of a claim to match.
        return []
    if expression:
        sql = (
            f"SELECT {_COLUMNS} FROM (SELECT rowid, rank FROM claims_fts WHERE claims_fts "
            "MATCH ?) AS f JOIN claims c ON c.seq = f.rowid "
            f"WHERE {where} ORDER BY f.rank, c.seq DESC LIMIT ? OFFSET ?"
        )
        rows = store.execute(sql, (expression, *params, limit, offset)).fetchall()
    else:
        sql = (
            f"SELECT {_COLUMNS} FROM claims c WHERE {where} "
            "ORDER BY c.updated_at DESC, c.seq DESC LIMIT ? OFFSET ?"
        )
        rows = store.execute(sql, (*params, limit, offset)).fetchall()
    return _claims(store, rows)


def fresh_verified(store: GroupStore, now: str, limit: int) -> list[Claim]:
    """Verified claims not yet due for a re-check, most recently verified first."""
    rows = store.execute(
        # The partial index walks the newest verified claims in order; the planner would
        # otherwise pick the status index and sort every verified claim.
        f"SELECT {_COLUMNS} FROM claims c INDEXED BY idx_claims_fresh "
        "WHERE c.status = 'verified' AND c.recheck_due_at > ? "
        "ORDER BY c.verified_at DESC, c.seq DESC LIMIT ?",
        (now, limit),
    ).fetchall()
    return _claims(store, rows)


def counts(store: GroupStore) -> dict[str, int]:
    rows = store.execute("SELECT status, count(*) FROM claims GROUP BY status")
    out = {s.value: 0 for s in ClaimStatus}
    out.update({status: int(n) for status, n in rows})
    return out


def set_status(store: GroupStore, claim_id: str, **fields: Any) -> None:
    """Update the named columns of one claim (names are this module's callers', never input)."""
    names = ", ".join(f"{k} = ?" for k in fields)
    store.execute(f"UPDATE claims SET {names} WHERE id = ?", (*fields.values(), claim_id))


# -- decision receipts -------------------------------------------------------------------


def insert_decision(
    store: GroupStore,
    claim_id: str,
    decision: Decision,
    actor: str,
    session_id: str | None,
    at: str,
    confirmed_text: str,
    source_states: list[dict[str, Any]],
    note: str,
) -> int:
    row = store.execute(
        "INSERT INTO claim_decisions (claim_id, decision, actor, session_id, at, confirmed_text, "
        "source_states, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (
            claim_id,
            decision.value,
            actor,
            session_id,
            at,
            confirmed_text,
            json.dumps(source_states, sort_keys=True),
            note,
        ),
    ).fetchone()
    return int(row[0])


def decisions(store: GroupStore, claim_id: str) -> list[DecisionReceipt]:
    """Every decision on a claim, oldest first."""
    rows = store.execute(
        "SELECT id, claim_id, decision, actor, session_id, at, confirmed_text, source_states, "
        "note FROM claim_decisions WHERE claim_id = ? ORDER BY id",
        (claim_id,),
    )
    return [
        DecisionReceipt(
            int(r[0]), r[1], Decision(r[2]), r[3], r[4], r[5], r[6], json.loads(r[7]), r[8]
        )
        for r in rows
    ]


# -- settings ----------------------------------------------------------------------------


def read_setting(store: GroupStore, key: str) -> str | None:
    row = store.execute("SELECT value FROM claim_settings WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def write_setting(store: GroupStore, key: str, value: str) -> None:
    store.execute(
        "INSERT INTO claim_settings (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
