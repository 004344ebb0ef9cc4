"""``ambry claims``: the person's review, decisions, extraction, mode and diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.claims import modes
from core.cli.claims import parse_source
from core.cli.main import main
from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.continuity.handoffs import write_handoff
from core.model.entries import Actor
from core.model.errors import InvalidParams
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.claims_helpers import HANDOFF


@pytest.fixture
def root(data_dir: DataDir) -> Path:
    """A data dir holding one exchange turn (id 1) and a thread with a handoff."""
    svc = MemoryService(data_dir)
    try:
        agent = svc.open_session("main", Actor.AGENT, "cli-test")
        log_exchange(svc, agent, "user", "The staging database runs Postgres 16.")
    finally:
        svc.close()
    return data_dir.root


def run(root: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main(["--data-dir", str(root), "--json", "claims", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out) if code == 0 else out.err


def test_propose_review_accept_and_history(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, made = run(
        root,
        capsys,
        "propose",
        "The staging database runs Postgres 16",
        "--kind",
        "configuration",
        "--source",
        "exchange:1",
    )
    assert code == 0 and made["status"] == "candidate"
    cid = made["id"]
    code, listed = run(root, capsys, "list", "--status", "candidate")
    assert [c["id"] for c in listed["claims"]] == [cid]
    code, shown = run(root, capsys, "show", cid)
    assert shown["state"] == "source_exact_match" and shown["recommendation"] == "accept"
    code, message = run(root, capsys, "accept", cid)  # no terminal, no --yes: refused
    assert code != 0 and "--yes" in message
    code, done = run(root, capsys, "accept", cid, "--yes", "--note", "checked the turn")
    assert (code, done["status"], done["decision"]) == (0, "verified", "accept_verified")
    code, history = run(root, capsys, "history", cid)
    assert [(h["decision"], h["actor"], h["note"]) for h in history] == [
        ("accept_verified", "operator", "checked the turn")
    ]
    code, message = run(root, capsys, "reject", cid, "--yes")
    assert code != 0 and "applies to a candidate claim only" in message
    code, done = run(root, capsys, "retract", cid, "--yes")
    assert done["status"] == "retracted"


def test_propose_prints_the_claim_id_alone_and_its_note_on_stderr(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, stdout was "clm-…  candidate (existing; 1 source(s) added)": a script's
    # `cid=$(ambry claims propose …)` captured the status and the note with the id.
    argv = ["--data-dir", str(root), "claims", "propose", "Staging runs Postgres 16"]
    capsys.readouterr()
    assert main([*argv, "--kind", "fact", "--source", "exchange:1"]) == 0
    out, err = capsys.readouterr()
    cid = out.strip()
    assert (out, err) == (f"{cid}\n", "") and cid.startswith("clm")
    assert main(["--data-dir", str(root), "store", "Staging runs Postgres 16"]) == 0
    memory = f"memory:{capsys.readouterr().out.strip()}"
    assert main([*argv, "--kind", "fact", "--source", memory]) == 0
    assert tuple(capsys.readouterr()) == (
        f"{cid}\n",
        "note: the same claim exists (candidate); 1 source added to it\n",
    )


def test_human_output_shows_the_claim_beside_its_source(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, made = run(
        root,
        capsys,
        "propose",
        "The cache is cold on Mondays",
        "--kind",
        "fact",
        "--source",
        "exchange:1",
    )
    capsys.readouterr()
    assert main(["--data-dir", str(root), "claims", "verify", made["id"]]) == 0
    text = capsys.readouterr().out
    assert "claim: The cache is cold on Mondays" in text
    assert "cited: 'The staging database runs Postgres 16.'" in text
    assert "source_drifted" in text and "recommendation: reject" in text


def test_mode_plan_apply_rollback(
    root: Path, capsys: pytest.CaptureFixture[str], data_dir: DataDir
) -> None:
    code, plan = run(root, capsys, "mode", "plan", "enforce")
    assert (plan["current"], plan["target"], plan["applied"]) == ("observe", "enforce", False)
    code, message = run(root, capsys, "mode", "apply", "enforce")
    assert code != 0 and "--yes" in message
    code, applied = run(root, capsys, "mode", "apply", "enforce", "--yes")
    assert applied["applied"] and Path(applied["backup"]).is_file()
    code, shown = run(root, capsys, "mode")
    assert shown["mode"] == "enforce"
    code, back = run(root, capsys, "mode", "rollback", "--yes")
    assert back["target"] == "observe"
    svc = MemoryService(data_dir)
    try:
        assert modes.current_mode(svc.store_for("main")).value == "observe"
    finally:
        svc.close()
    code, message = run(root, capsys, "mode", "apply", "loud", "--yes")
    assert code != 0 and "observe, diagnostic, enforce" in message


def test_mode_apply_again_says_already_and_rollback_walks_back(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def text(*argv: str) -> tuple[int, str]:
        capsys.readouterr()
        code = main(["--data-dir", str(root), "claims", "mode", *argv])
        out = capsys.readouterr()
        return code, (out.out + out.err).splitlines()[0]

    assert text("apply", "diagnostic", "--yes") == (
        0,
        "claims mode of main: observe -> diagnostic (changed)",
    )
    assert text("apply", "enforce", "--yes")[0] == 0
    assert text("apply", "enforce", "--yes") == (
        0,
        "claims mode of main: enforce -> enforce (already)",
    )
    assert text("plan", "enforce") == (0, "claims mode of main: enforce -> enforce (already)")
    assert text("rollback", "--yes") == (0, "claims mode of main: enforce -> diagnostic (changed)")
    assert text("rollback", "--yes") == (0, "claims mode of main: diagnostic -> observe (changed)")
    code, said = text("rollback", "--yes")
    assert code != 0 and "nothing to roll back in group main: no change" in said
    assert "ambry claims mode apply MODE --yes" in said


def test_extract_and_diagnose(
    root: Path, capsys: pytest.CaptureFixture[str], data_dir: DataDir
) -> None:
    svc = MemoryService(data_dir)
    try:
        agent = enter_thread(
            svc, svc.open_session("main", Actor.AGENT, "cli-test"), "Project"
        ).caller
        assert agent.thread_id is not None
        write_handoff(svc, agent, agent.thread_id, HANDOFF, base_version=0)
    finally:
        svc.close()
    code, result = run(root, capsys, "extract")
    assert (result["handoffs"], result["created"]) == (1, 3)
    code, message = run(root, capsys, "diagnose")
    assert code != 0 and "mode plan diagnostic" in message
    run(root, capsys, "mode", "apply", "diagnostic", "--yes")
    code, report = run(root, capsys, "diagnose")
    assert code == 0 and len(report["ready"]) == 3 and report["read_only"] is True


def test_a_handoff_source_names_its_thread_by_title_too(
    root: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    d = ["--data-dir", str(root)]
    note = tmp_path / "handoff.md"
    for n in (1, 2):
        note.write_text(f"# Release\n- Step {n} is done.\n", encoding="utf-8")
        assert main([*d, "handoff", "write", "Release plan", str(note), "--create"]) == 0
    capsys.readouterr()
    argv = ["propose", "Step 1 is done", "--kind", "project"]
    code, made = run(root, capsys, *argv, "--source", "handoff:release PLAN@1")
    assert code == 0 and made["created"] is True
    code, shown = run(root, capsys, "show", made["id"])
    [source] = [s["source"] for s in shown["sources"]]
    # Version 1 as cited, of the thread the title names (by its id).
    assert main([*d, "--json", "threads"]) == 0
    [thread] = json.loads(capsys.readouterr().out)["threads"]
    assert source["ref"] == f"{thread['id']}@1" and "Step 1 is done" in source["quote"]
    code, message = run(root, capsys, *argv, "--source", "handoff:Release plans@1")
    error = json.loads(message)["error"]
    assert (code, error["field"]) == (1, "sources.0.thread")
    assert error["message"] == (
        "--source 'handoff:Release plans@1': no thread titled 'Release plans' in group main; "
        "name the thread by its id (thr-...) or its title, as thread_list shows them"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("exchange:12", {"kind": "exchange", "id": 12}),
        ("handoff:thr-abc@3", {"kind": "handoff", "thread": "thr-abc", "version": 3}),
        ("handoff:thr-abc", {"kind": "handoff", "thread": "thr-abc"}),
        ("handoff:Launch @ noon@2", {"kind": "handoff", "thread": "Launch @ noon", "version": 2}),
        (
            "attachment:att_0123#5-40",
            {"kind": "attachment", "id": "att_0123", "start": 5, "end": 40},
        ),
        ("memory:mem-1", {"kind": "memory", "id": "mem-1"}),
    ],
)
def test_source_syntax(text: str, expected: dict[str, Any]) -> None:
    assert parse_source(text) == expected


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("exchange", "KIND:REF"),
        ("exchange:abc", "is a number"),
        ("handoff:thr@x", "version is a number"),
        ("attachment:att#5", "#START-END"),
        ("email:1", "must be exchange, handoff, attachment or memory"),
    ],
)
def test_bad_source_syntax_says_what_to_write(text: str, says: str) -> None:
    with pytest.raises(InvalidParams, match=says):
        parse_source(text)


def test_search_json_carries_the_claims_the_text_lists(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(root)]
    assert main([*d, "store", "The staging database runs Postgres 16"]) == 0
    _, made = run(
        root,
        capsys,
        "propose",
        "The staging database runs Postgres 16",
        "--kind",
        "configuration",
        "--source",
        "exchange:1",
    )
    capsys.readouterr()
    assert main([*d, "search", "staging", "--mode", "keyword"]) == 0
    text = capsys.readouterr().out
    assert f"claims:\n{made['id']}  The staging database runs Postgres 16\n" in text
    assert main([*d, "--json", "search", "staging", "--mode", "keyword"]) == 0
    found = json.loads(capsys.readouterr().out)
    # memory_search's result: the memories, then the claims beside them, labelled.
    assert list(found) == ["results", "claims"]
    assert [r["content"] for r in found["results"]] == ["The staging database runs Postgres 16"]
    [claim] = found["claims"]
    assert (claim["id"], claim["status"]) == (made["id"], "candidate")
    assert claim["text"] == "The staging database runs Postgres 16"
    assert f"({claim['label']})" in text
    # A page with more after it says where the next starts, as the tool does.
    assert main([*d, "store", "The staging cache is Redis"]) == 0
    capsys.readouterr()
    assert main([*d, "--json", "search", "staging", "--limit", "1", "--mode", "keyword"]) == 0
    out = capsys.readouterr()
    paged = json.loads(out.out)
    assert (len(paged["results"]), paged["next_offset"], out.err) == (1, 1, "")


@pytest.mark.parametrize(
    ("source", "says", "field", "rule"),
    [
        (
            "handoff:thr-aaaaaaaaaaaa@0",
            "--source 'handoff:thr-aaaaaaaaaaaa@0': the version must be at least 1",
            "sources.0.version",
            "minimum",
        ),
        (
            "handoff:thr-aaaaaaaaaaaa@2147483648",
            "--source 'handoff:thr-aaaaaaaaaaaa@2147483648': the version must be at most "
            "2147483647",
            "sources.0.version",
            "maximum",
        ),
        (
            "exchange:9223372036854775808",
            "--source 'exchange:9223372036854775808': the exchange id must be at most "
            "9223372036854775807",
            "sources.0.id",
            "maximum",
        ),
    ],
)
def test_a_source_out_of_range_is_named_as_typed(
    root: Path, capsys: pytest.CaptureFixture[str], source: str, says: str, field: str, rule: str
) -> None:
    argv = ["propose", "Postgres 16", "--kind", "fact", "--source", "exchange:1"]
    code, message = run(root, capsys, *argv, "--source", source)
    # The second --source is the one refused: its index stays in `field`, as the tool's.
    error = json.loads(message)["error"]
    assert (code, error["message"], error["field"], error["rule"]) == (
        1,
        says,
        field.replace("sources.0", "sources.1"),
        rule,
    )
    capsys.readouterr()
    assert main(["--data-dir", str(root), "claims", *argv[:-2], "--source", source]) == 1
    assert capsys.readouterr().err == f"error: {says}\n"


def test_a_missing_source_and_too_many_say_which_option(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["propose", "Postgres 16", "--kind", "fact"]
    code, message = run(root, capsys, *argv, "--source", "exchange:1", "--source", "exchange:7")
    assert code == 1 and json.loads(message)["error"]["message"] == (
        "--source 'exchange:7': no exchange 7 in group main"
    )
    nine = [arg for i in range(1, 10) for arg in ("--source", f"exchange:{i}")]
    code, message = run(root, capsys, *argv, *nine)
    assert code == 1 and json.loads(message)["error"]["message"] == (
        "--source is given 9 times; a claim cites at most 8 sources, so split the claim"
    )
