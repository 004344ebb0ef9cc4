"""Read-only source verification: every state with its evidence, and no write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.claims import gate
from core.claims.model import Decision
from core.memory.forgetting import Scope
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from tests.core.claims_helpers import err, ok


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    token = load_or_create_token(data_dir.token_file)
    c = agent_dispatcher(service).connect()
    ok(c, "hello", {"token": token, "group": "main", "client": "claims-test"})
    return c


def _exchange(conn: Connection, text: str) -> int:
    result: int = ok(conn, "exchange_log", {"speaker": "user", "text": text})["id"]
    return result


def _propose(conn: Connection, text: str, sources: list[dict[str, Any]], kind: str = "fact") -> str:
    result: str = ok(conn, "claim_propose", {"text": text, "kind": kind, "sources": sources})["id"]
    return result


# -- read-only verification: each state, with its evidence --------------------------------


def _snapshot(service: MemoryService) -> list[Any]:
    store = service.store_for("main")
    return [
        store.execute(f"SELECT * FROM {t}").fetchall()
        for t in (
            "claims",
            "claim_sources",
            "claim_decisions",
            "attachment_receipts",
            "exchanges",
            "thread_handoffs",
            "memory_entries",
        )
    ]


def test_verify_reports_every_state_and_changes_nothing(
    service: MemoryService, operator: Caller, conn: Connection, tmp_path: Path
) -> None:
    exact = _propose(
        conn,
        "The cache is cold on Mondays",
        [{"kind": "exchange", "id": _exchange(conn, "FYI the cache is cold on Mondays.")}],
    )
    partial = _propose(
        conn,
        "The person prefers dark mode and short answers",
        [{"kind": "exchange", "id": _exchange(conn, "The person prefers dark mode.")}],
    )
    doc = tmp_path / "notes.txt"
    doc.write_text("Intro.\nThe release ships on Friday.\n", encoding="utf-8")
    rid = ok(conn, "attachment_receipt", {"path": str(doc)})["receipt"]["id"]
    filed = _propose(
        conn,
        "The release ships on Friday",
        [{"kind": "attachment", "id": rid, "start": 7, "end": 35}],
    )
    gone = _propose(
        conn,
        "The door code changed",
        [{"kind": "exchange", "id": _exchange(conn, "The door code changed.")}],
    )
    ok(conn, "thread_open", {"title": "Plans"})
    ok(
        conn,
        "handoff_write",
        {"markdown": "- The staging database runs Postgres 16.", "base_version": 0},
    )
    thread = ok(conn, "thread_list", {})["threads"][0]["id"]
    handed = _propose(
        conn, "The staging database runs Postgres 16", [{"kind": "handoff", "thread": thread}]
    )
    states = {
        c: ok(conn, "claim_verify", {"id": c})["state"]
        for c in (exact, partial, filed, gone, handed)
    }
    assert states == {
        exact: "source_exact_match",
        partial: "source_partially_overlaps_claim",
        filed: "source_exact_match",
        gone: "source_exact_match",
        handed: "source_exact_match",
    }
    # Now the world moves: the file changes, the turns are cleared, the handoff is rewritten.
    doc.write_text("Intro.\nThe release slipped to Monday.\n", encoding="utf-8")
    service.clear(operator, Scope.EPISODIC)
    ok(
        conn,
        "handoff_write",
        {"markdown": "- The staging database moved to MySQL.", "base_version": 1},
    )
    before = _snapshot(service)
    reports = {
        c: ok(conn, "claim_verify", {"id": c}) for c in (exact, partial, filed, gone, handed)
    }
    assert _snapshot(service) == before  # read-only: not even the receipt's state moved
    assert reports[filed]["state"] == "source_drifted"
    assert "changed now" in reports[filed]["sources"][0]["evidence"]
    assert reports[filed]["recommendation"] == "reject"
    assert reports[gone]["state"] == "source_missing"
    assert "deleted or expired" in reports[gone]["sources"][0]["evidence"]
    assert reports[handed]["state"] == "source_drifted"
    assert "rewritten (v2) without this passage" in reports[handed]["sources"][0]["evidence"]
    assert reports[partial]["state"] == "source_missing"


def test_verify_shows_the_matching_span_and_recommendations(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    seq = _exchange(conn, "Intro. The person prefers dark mode. Bye.")
    partial = _propose(
        conn, "The person prefers dark mode and short answers", [{"kind": "exchange", "id": seq}]
    )
    report = ok(conn, "claim_verify", {"id": partial})
    source = report["sources"][0]
    assert source["matched_text"] == "The person prefers dark mode"
    assert source["span"] == [7, 35] and report["recommendation"] == "narrow"
    assert "missing: short, answer" in source["evidence"]
    exact = _propose(conn, "The person prefers dark mode", [{"kind": "exchange", "id": seq}])
    assert ok(conn, "claim_verify", {"id": exact})["recommendation"] == "accept"
    gate.decide(
        service, operator, exact, Decision.ACCEPT, confirmed_text="The person prefers dark mode"
    )
    assert ok(conn, "claim_verify", {"id": exact})["recommendation"] == "none"
    assert err(conn, "claim_verify", {"id": "clm-nope"})["code"] == -32002


@pytest.mark.parametrize(
    ("source", "claim", "why"),
    [
        ("Use pnpm, not npm, in this repo", "The repo uses npm", "the passage is negated ('not')"),
        ("The repo uses npm", "The repo does not use npm", "the claim is negated ('not')"),
        ("The server listens on port 9090", "It listens on port 8080", "a number in the claim"),
    ],
)
def test_a_source_sharing_the_words_says_why_it_does_not_support_the_claim(
    conn: Connection, source: str, claim: str, why: str
) -> None:
    # Before, the evidence read "does not say the claim: 100% of the claim's
    # words" and left the reader to guess that a "not" made the difference.
    cid = _propose(conn, claim, [{"kind": "exchange", "id": _exchange(conn, source)}])
    report = ok(conn, "claim_verify", {"id": cid})
    [checked] = report["sources"]
    assert checked["state"] == "source_drifted" and why in checked["evidence"]


def test_a_superseded_memory_source_has_drifted(conn: Connection) -> None:
    mem = ok(conn, "memory_store", {"type": "fact", "content": "The office is in Lyon"})
    cid = _propose(conn, "The office is in Lyon", [{"kind": "memory", "id": mem["id"]}])
    ok(
        conn,
        "memory_store",
        {"type": "fact", "content": "The office moved to Paris", "supersedes": mem["id"]},
    )
    report = ok(conn, "claim_verify", {"id": cid})
    assert (
        report["state"] == "source_drifted" and "superseded by" in report["sources"][0]["evidence"]
    )
