"""Claims: the overlap measure, proposing, read-only verification and the person's gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.claims import gate, modes, records
from core.claims.extract import extract
from core.claims.model import ClaimKind, ClaimStatus, Decision, Mode, SourceState
from core.claims.overlap import Match, measure
from core.claims.statements import statements
from core.model.entries import Actor
from core.model.errors import Conflict, Forbidden, InvalidParams, NotFound
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from tests.core.claims_helpers import HANDOFF, err, ok

# -- the overlap measure, on hand-made cases ---------------------------------------------


@pytest.mark.parametrize(
    ("claim", "source", "expected"),
    [
        # Word for word, whatever the case, punctuation and spacing.
        ("The build uses Python 3.12", "Note: the build  uses PYTHON 3.12, and uv.", Match.EXACT),
        # Plural folding: "deploys" and "deploy" are one word.
        ("Deploys go through staging", "deploy go through staging", Match.EXACT),
        # Part of the claim: four of six content words.
        (
            "The person prefers dark mode and short answers",
            "The person prefers dark mode.",
            Match.PARTIAL,
        ),
        # A changed number is never partial, however much else is shared.
        ("Staging runs on port 8080", "Staging runs on port 9090.", Match.NONE),
        # A negation on one side only is never partial.
        ("The tests are not flaky on CI", "The tests are flaky on CI.", Match.NONE),
        ("The tests aren't flaky on CI", "The tests are flaky on CI.", Match.NONE),
        # Too little in common.
        ("The cache is cold on Mondays", "Lunch is at noon.", Match.NONE),
        ("Anything", "", Match.NONE),
    ],
)
def test_overlap_measure_on_hand_made_cases(claim: str, source: str, expected: Match) -> None:
    assert measure(claim, source).match is expected


def test_overlap_reports_the_span_that_matched_and_what_is_missing() -> None:
    source = "Intro line.\nThe person prefers dark mode.\nOther."
    found = measure("The person prefers dark mode and short answers", source)
    assert found.span is not None
    assert source[found.span[0] : found.span[1]] == "The person prefers dark mode"
    assert found.missing == ("short", "answer")
    assert found.coverage == pytest.approx(4 / 6)  # person, prefer, dark, mode of six
    exact = measure("dark mode", source)
    assert exact.span is not None and source[exact.span[0] : exact.span[1]] == "dark mode"


def test_the_passage_that_supports_wins_over_one_sharing_more_words() -> None:
    source = "Port 9090 serves staging traffic today.\nStaging serves port 8080."
    assert measure("Staging serves traffic on port 8080", source).match is Match.PARTIAL


# -- a real connection and real sources ----------------------------------------------------


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


def test_an_agent_proposal_is_a_labelled_candidate(conn: Connection) -> None:
    seq = _exchange(conn, "Our staging database is Postgres 16.")
    result = ok(
        conn,
        "claim_propose",
        {
            "text": "Staging database is Postgres 16",
            "kind": "configuration",
            "sources": [{"kind": "exchange", "id": seq}],
        },
    )
    assert (result["status"], result["created"], result["sources"]) == ("candidate", True, 1)
    assert result["label"] == "candidate: not verified, do not treat as fact"
    found = ok(conn, "claim_search", {"query": "postgres"})
    assert found["mode"] == "observe"
    [claim] = found["claims"]
    assert claim["id"] == result["id"] and claim["status"] == "candidate"
    assert "not verified" in claim["label"]
    assert claim["sources"][0]["quote"] == "Our staging database is Postgres 16."


@pytest.mark.parametrize("query", ["🍣", "?", "%", "(", "_"])
def test_a_query_with_no_word_of_a_claim_finds_none(conn: Connection, query: str) -> None:
    # Before, a query with no word to match listed every claim.
    seq = _exchange(conn, "Our staging database is Postgres 16.")
    _propose(conn, "Staging database is Postgres 16", [{"kind": "exchange", "id": seq}])
    assert ok(conn, "claim_search", {"query": query})["claims"] == []
    assert len(ok(conn, "claim_search", {"query": "  "})["claims"]) == 1


def test_the_same_statement_again_adds_its_source(conn: Connection) -> None:
    first = _exchange(conn, "We deploy on Fridays.")
    second = _exchange(conn, "Reminder: we deploy on Fridays.")
    cid = _propose(conn, "We deploy on Fridays", [{"kind": "exchange", "id": first}])
    again = ok(
        conn,
        "claim_propose",
        {
            "text": "we  deploy on fridays",
            "kind": "fact",
            "sources": [{"kind": "exchange", "id": second}],
        },
    )
    assert (again["id"], again["created"], again["added_sources"], again["sources"]) == (
        cid,
        False,
        1,
        2,
    )


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"text": "x y z", "kind": "fact", "sources": [], "status": "verified"}, None),
        ({"text": "x y z", "kind": "opinion", "sources": [{"kind": "exchange", "id": 1}]}, "kind"),
        ({"text": "x y z", "kind": "fact", "sources": []}, "sources"),
        ({"text": "x y z", "kind": "fact", "sources": [{"kind": "email", "id": 1}]}, "sources"),
        (
            {"text": "x y z", "kind": "fact", "sources": [{"kind": "exchange", "id": "a"}]},
            "sources",
        ),
        ({"text": "x" * 501, "kind": "fact", "sources": [{"kind": "exchange", "id": 1}]}, "text"),
    ],
)
def test_bad_proposals_name_the_field(
    conn: Connection, params: dict[str, Any], field: str | None
) -> None:
    _exchange(conn, "something")
    error = err(conn, "claim_propose", params)
    assert error["code"] == -32602
    if field is not None:
        assert error["data"]["field"].startswith(field), error


def test_a_missing_source_or_a_bad_span_is_refused_precisely(conn: Connection) -> None:
    error = err(
        conn,
        "claim_propose",
        {"text": "a b c", "kind": "fact", "sources": [{"kind": "exchange", "id": 999}]},
    )
    assert error["code"] == -32002 and error["data"]["field"] == "sources.0.id"
    seq = _exchange(conn, "short text")
    error = err(
        conn,
        "claim_propose",
        {
            "text": "a b c",
            "kind": "fact",
            "sources": [{"kind": "exchange", "id": seq, "start": 3, "end": 99}],
        },
    )
    assert error["code"] == -32602 and "start < end <= length" in error["message"]


def test_a_handoff_source_names_its_thread_by_id_or_by_title(conn: Connection) -> None:
    thread = ok(conn, "thread_open", {"title": "Handoff test"})["thread"]["id"]
    for n in (1, 2, 3):
        ok(conn, "handoff_write", {"markdown": f"# State\n- Step {n} is done."})
    by_title = {"kind": "handoff", "thread": "handoff TEST", "version": 1}
    cid = _propose(conn, "Step 1 is done", [by_title])
    [source] = ok(conn, "claim_search", {"query": "step"})["claims"][0]["sources"]
    # The handle keeps the thread's id, whatever named it.
    assert source["ref"] == f"{thread}@1" and source["quote"] == "# State\n- Step 1 is done."
    again = ok(
        conn,
        "claim_propose",
        {"text": "step 1 is done", "kind": "fact", "sources": [{**by_title, "thread": thread}]},
    )
    assert (again["id"], again["added_sources"]) == (cid, 0)
    # Neither an id nor a title: said precisely, for the field that named it.
    for ref, named in (
        ("No such project", "titled 'No such project'"),
        ("thr-aaaaaaaaaaaa", "with the id thr-aaaaaaaaaaaa"),
    ):
        error = err(
            conn,
            "claim_propose",
            {"text": "a b c", "kind": "fact", "sources": [{"kind": "handoff", "thread": ref}]},
        )
        assert (error["code"], error["data"]["field"]) == (-32002, "sources.0.thread")
        assert f"no thread {named} in group main" in error["message"]
    error = err(
        conn,
        "claim_propose",
        {"text": "a b c", "kind": "fact", "sources": [{**by_title, "version": 9}]},
    )
    assert (error["code"], error["data"]["field"]) == (-32002, "sources.0.version")
    assert error["message"] == (
        f"sources[0]: thread 'Handoff test' ({thread}) has no handoff version 9; "
        "its current version is 3"
    )


@pytest.mark.parametrize(
    ("source", "field", "most"),
    [
        ({"kind": "exchange", "id": 2**63}, "sources.0.id", 2**63 - 1),
        ({"kind": "handoff", "thread": "thr-0", "version": 2**31}, "sources.0.version", 2**31 - 1),
    ],
)
def test_a_number_past_what_the_store_holds_is_refused_not_a_crash(
    conn: Connection, source: dict[str, Any], field: str, most: int
) -> None:
    error = err(conn, "claim_propose", {"text": "a b c", "kind": "fact", "sources": [source]})
    assert (error["code"], error["data"]["field"], error["data"]["rule"]) == (
        -32602,
        field,
        "maximum",
    )
    assert error["message"].endswith(f"must be at most {most}")


def test_a_private_memory_cannot_be_cited(conn: Connection, memory_keyring: object) -> None:
    mem = ok(
        conn, "memory_store", {"type": "fact", "content": "Lives in Lyon", "privacy": "private"}
    )
    error = err(
        conn,
        "claim_propose",
        {
            "text": "Lives in Lyon",
            "kind": "identity",
            "sources": [{"kind": "memory", "id": mem["id"]}],
        },
    )
    assert error["data"]["rule"] == "privacy" and "public memory" in error["message"]


# -- the gate -------------------------------------------------------------------------------


def test_no_agent_method_can_decide_or_change_the_mode(
    conn: Connection, service: MemoryService
) -> None:
    names = set(agent_dispatcher(service).method_names)
    assert {n for n in names if n.startswith("claim")} == {
        "claim_propose",
        "claim_search",
        "claim_verify",
    }
    for method in (
        "claim_accept",
        "claim_reject",
        "claim_retract",
        "claim_defer",
        "claims_mode",
        "claim_decide",
        "claim_set_status",
    ):
        assert err(conn, method, {"id": "x"})["code"] == -32601
    # Nothing an agent sends makes a proposal verified.
    seq = _exchange(conn, "The API is versioned v2")
    for extra in ({"status": "verified"}, {"verified": True}, {"decision": "accept_verified"}):
        params = {
            "text": "The API is versioned v2",
            "kind": "fact",
            "sources": [{"kind": "exchange", "id": seq}],
            **extra,
        }
        assert err(conn, "claim_propose", params)["code"] == -32602


@pytest.mark.parametrize("decision", list(Decision))
def test_every_decision_refuses_the_agent(
    service: MemoryService, agent: Caller, operator: Caller, decision: Decision, conn: Connection
) -> None:
    seq = _exchange(conn, "The cache is cold on Mondays.")
    cid = _propose(conn, "The cache is cold on Mondays", [{"kind": "exchange", "id": seq}])
    if decision is Decision.RETRACT:
        gate.decide(
            service, operator, cid, Decision.ACCEPT, confirmed_text="The cache is cold on Mondays"
        )
    store = service.store_for("main")
    before, receipts = records.get_claim(store, cid), records.decisions(store, cid)
    with pytest.raises(Forbidden, match="by the person only"):
        gate.decide(service, agent, cid, decision, confirmed_text=before.text)
    system = Caller("main", Actor.SYSTEM, agent.session_id)
    with pytest.raises(Forbidden):
        gate.decide(service, system, cid, decision, confirmed_text=before.text)
    assert records.get_claim(store, cid) == before
    assert records.decisions(store, cid) == receipts


def test_mode_and_extraction_refuse_the_agent(service: MemoryService, agent: Caller) -> None:
    with pytest.raises(Forbidden):
        modes.apply(service, agent, "enforce", yes=True)
    with pytest.raises(Forbidden):
        modes.rollback(service, agent, yes=True)
    with pytest.raises(Forbidden):
        extract(service, agent)
    assert modes.current_mode(service.store_for("main")) is Mode.OBSERVE


def test_accept_writes_a_receipt_and_retract_reverses_it(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    seq = _exchange(conn, "The cache is cold on Mondays.")
    text = "The cache is cold on Mondays"
    cid = _propose(conn, text, [{"kind": "exchange", "id": seq}])
    with pytest.raises(Conflict, match="exact text") as changed:
        gate.decide(service, operator, cid, Decision.ACCEPT, confirmed_text="the cache is cold")
    # The text is in the data, not in the message a log line repeats.
    assert text not in changed.value.message
    assert changed.value.data["current_text"] == text
    with pytest.raises(Conflict, match="changed since the review"):
        gate.decide(
            service,
            operator,
            cid,
            Decision.ACCEPT,
            confirmed_text=text,
            confirmed_state=SourceState.PARTIAL,
        )
    done = gate.decide(
        service,
        operator,
        cid,
        Decision.ACCEPT,
        confirmed_text=text,
        confirmed_state=SourceState.EXACT,
        note="checked",
    )
    assert done.claim.status is ClaimStatus.VERIFIED and done.claim.recheck_due_at
    with pytest.raises(Conflict, match="applies to a candidate claim only"):
        gate.decide(service, operator, cid, Decision.REJECT)
    gate.decide(service, operator, cid, Decision.RETRACT, confirmed_text=text)
    store = service.store_for("main")
    assert records.get_claim(store, cid).status is ClaimStatus.RETRACTED
    history = records.decisions(store, cid)
    assert [d.decision for d in history] == [Decision.ACCEPT, Decision.RETRACT]
    first = history[0]
    assert (first.actor, first.session_id, first.confirmed_text, first.note) == (
        "operator",
        operator.session_id,
        text,
        "checked",
    )
    assert first.source_states[0]["state"] == "source_exact_match"
    rows = store.execute("SELECT detail FROM audit_log WHERE action = 'claim_decide'").fetchall()
    assert [json.loads(r[0])["decision"] for r in rows] == ["accept_verified", "retract"]
    # The audit row holds no claim text.
    assert all("cache" not in r[0] for r in rows)


def test_an_unsupported_claim_cannot_be_accepted(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    seq = _exchange(conn, "Lunch is at noon.")
    cid = _propose(conn, "The cache is cold on Mondays", [{"kind": "exchange", "id": seq}])
    with pytest.raises(Conflict, match="no source supports"):
        gate.decide(
            service, operator, cid, Decision.ACCEPT, confirmed_text="The cache is cold on Mondays"
        )
    gate.decide(service, operator, cid, Decision.DEFER)
    assert records.get_claim(service.store_for("main"), cid).deferred_at is not None
    gate.decide(service, operator, cid, Decision.REJECT)
    assert records.get_claim(service.store_for("main"), cid).status is ClaimStatus.REJECTED


# -- extraction from handoffs ---------------------------------------------------------------


def test_extraction_is_deterministic_and_never_modifies_the_handoff(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    found = statements(HANDOFF)
    assert [(f.text, f.kind) for f in found] == [
        ("The staging database runs Postgres 16 on port 5433.", ClaimKind.CONFIGURATION),
        ("Deploys go through the staging cluster first.", ClaimKind.CONFIGURATION),
        ("The person wants short answers without preambles.", ClaimKind.PREFERENCE),
    ]
    assert all(HANDOFF[f.span[0] : f.span[1]] == f.text for f in found)
    ok(conn, "thread_open", {"title": "Project"})
    ok(conn, "handoff_write", {"markdown": HANDOFF, "base_version": 0})
    store = service.store_for("main")
    before = store.execute("SELECT * FROM thread_handoffs").fetchall()
    first = extract(service, operator)
    assert (first.handoffs, first.statements, first.created) == (1, 3, 3)
    again = extract(service, operator)
    assert (again.created, again.recurring) == (0, 0)  # same version: nothing new
    # Under "Next steps" a new line is not a statement; under "Configuration" it is.
    v2 = HANDOFF.replace("## Preferences", "- The gateway listens on port 443.\n\n## Preferences")
    ok(
        conn,
        "handoff_write",
        {"markdown": v2 + "- The billing service is down.\n", "base_version": 1},
    )
    third = extract(service, operator)
    assert (third.created, third.recurring) == (1, 3)  # the three recur in v2
    assert store.execute("SELECT * FROM thread_handoffs").fetchall()[: len(before)] == before
    claim = records.get_claim(store, first.claim_ids[0])
    assert [s.label.split()[-1] for s in claim.sources] == ["v1", "v2"]
    assert all(c.status is ClaimStatus.CANDIDATE for c in records.list_claims(store))
    assert ok(conn, "claim_verify", {"id": claim.id})["state"] == "source_exact_match"


# -- modes: plan, apply with a backup, rollback -----------------------------------------------


def test_mode_changes_need_confirmation_back_up_and_roll_back(
    service: MemoryService, operator: Caller
) -> None:
    store = service.store_for("main")
    plan = modes.plan(service, "main", "enforce")
    assert (plan.current, plan.target, plan.changes, plan.applied) == (
        Mode.OBSERVE,
        Mode.ENFORCE,
        True,
        False,
    )
    assert modes.current_mode(store) is Mode.OBSERVE
    with pytest.raises(InvalidParams, match="--yes"):
        modes.apply(service, operator, "enforce", yes=False)
    with pytest.raises(InvalidParams, match="observe, diagnostic, enforce"):
        modes.apply(service, operator, "loud", yes=True)
    with pytest.raises(Exception, match="nothing to roll back"):
        modes.rollback(service, operator, yes=True)
    done = modes.apply(service, operator, "enforce", yes=True)
    assert modes.current_mode(store) is Mode.ENFORCE
    assert done.backup is not None
    assert json.loads(Path(done.backup).read_text())["settings"] == {"mode": "observe"}
    modes.apply(service, operator, "diagnostic", yes=True)
    back = modes.rollback(service, operator, yes=True)
    assert (back.current, back.target) == (Mode.DIAGNOSTIC, Mode.ENFORCE)
    assert len(modes.backups(service, "main")) == 3
    rows = store.execute("SELECT detail FROM audit_log WHERE action = 'claim_mode'").fetchall()
    assert [json.loads(r[0])["how"] for r in rows] == ["apply", "apply", "rollback"]


def test_an_apply_that_changes_nothing_writes_nothing(
    service: MemoryService, operator: Caller
) -> None:
    store = service.store_for("main")
    modes.apply(service, operator, "enforce", yes=True)
    again = modes.apply(service, operator, "enforce", yes=True)
    assert (again.current, again.target, again.changes, again.applied) == (
        Mode.ENFORCE,
        Mode.ENFORCE,
        False,
        False,
    )
    assert again.backup is None and len(modes.backups(service, "main")) == 1
    rows = store.execute("SELECT count(*) FROM audit_log WHERE action = 'claim_mode'").fetchone()
    assert rows == (1,)


def test_rollbacks_walk_back_through_the_changes_then_say_nothing_is_left(
    service: MemoryService, operator: Caller
) -> None:
    store = service.store_for("main")
    modes.apply(service, operator, "diagnostic", yes=True)
    modes.apply(service, operator, "enforce", yes=True)
    modes.apply(service, operator, "enforce", yes=True)  # changes nothing
    assert modes.history(service, "main") == [Mode.OBSERVE, Mode.DIAGNOSTIC]
    steps = []
    for _ in range(2):
        back = modes.rollback(service, operator, yes=True)
        steps.append((back.current, back.target, back.applied))
    assert steps == [
        (Mode.ENFORCE, Mode.DIAGNOSTIC, True),
        (Mode.DIAGNOSTIC, Mode.OBSERVE, True),
    ]
    assert modes.current_mode(store) is Mode.OBSERVE
    assert modes.rollback_target(service, "main") is None
    with pytest.raises(NotFound, match="nothing to roll back in group main: no change"):
        modes.rollback(service, operator, yes=True)
    assert modes.current_mode(store) is Mode.OBSERVE
    # A change after the rollbacks is the one the next rollback undoes.
    modes.apply(service, operator, "enforce", yes=True)
    assert modes.rollback(service, operator, yes=True).target is Mode.OBSERVE


def test_a_no_op_backup_of_an_older_ambry_does_not_block_a_rollback(
    service: MemoryService, operator: Caller
) -> None:
    modes.apply(service, operator, "diagnostic", yes=True)
    modes.apply(service, operator, "enforce", yes=True)
    folder = modes.backup_dir(service)
    # An older Ambry backed up "enforce" before applying enforce, and a rollback to it.
    for n, how in enumerate(("apply", "rollback"), 1):
        (folder / f"main-29990101T00000000000{n}Z.json").write_text(
            json.dumps({"settings": {"mode": "enforce"}, "reason": f"before {how} to enforce"})
        )
    assert modes.rollback(service, operator, yes=True).target is Mode.DIAGNOSTIC


def test_a_backup_that_cannot_be_read_is_named(service: MemoryService, operator: Caller) -> None:
    modes.apply(service, operator, "enforce", yes=True)
    (modes.backup_dir(service) / "main-29990101T000000000000Z.json").write_text("{not json")
    with pytest.raises(InvalidParams, match=r"main-29990101T000000000000Z.json cannot be read"):
        modes.rollback(service, operator, yes=True)


def test_memory_search_shows_claims_labelled_never_as_memories(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    seq = _exchange(conn, "The cache is cold on Mondays.")
    text = "The cache is cold on Mondays"
    cid = _propose(conn, text, [{"kind": "exchange", "id": seq}])
    found = ok(conn, "memory_search", {"query": "cache mondays"})
    assert found["results"] == []  # a claim is not a memory
    [claim] = found["claims"]
    assert claim["id"] == cid and claim["status"] == "candidate"
    assert "unverified" in claim["label"] and "not" in claim["label"]
    gate.decide(
        service,
        operator,
        cid,
        Decision.ACCEPT,
        confirmed_text=text,
        confirmed_state=SourceState.EXACT,
    )
    [claim] = ok(conn, "memory_search", {"query": "cache mondays"})["claims"]
    assert claim["status"] == "verified" and claim["label"].startswith("verified claim")
    gate.decide(service, operator, cid, Decision.RETRACT, confirmed_text=text)
    assert ok(conn, "memory_search", {"query": "cache mondays"})["claims"] == []
    assert ok(conn, "memory_search", {"query": ""})["claims"] == []
