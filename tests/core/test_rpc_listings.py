"""Paging ``thread_list``, ``attachment_list`` and ``claim_search`` over the dispatcher,
and the CLI listings that print the same results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.cli.main import main
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.claims_helpers import call, ok

#: Each tool, the key of its rows, and the arguments every page repeats.
TOOLS = (
    ("thread_list", "threads", {}),
    ("attachment_list", "receipts", {}),
    ("claim_search", "claims", {}),
    ("claim_search", "claims", {"query": "build"}),  # ranked: best match first
)


def connect(service: MemoryService, data_dir: DataDir) -> Connection:
    conn = agent_dispatcher(service).connect()
    token = load_or_create_token(data_dir.token_file)
    ok(conn, "hello", {"token": token, "group": "main", "client": "listings-test"})
    return conn


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir, tmp_path: Path) -> Connection:
    """A session in no thread, over a store with 7 threads, receipts and claims."""
    writer = connect(service, data_dir)
    for n in range(7):
        ok(writer, "thread_open", {"title": f"Plan {n}"})
        doc = tmp_path / f"notes-{n}.txt"
        doc.write_text(f"Notes number {n}\n", encoding="utf-8")
        ok(writer, "attachment_receipt", {"path": str(doc)})
        text = f"The build of part {n} takes {n + 2} minutes"
        seq = ok(writer, "exchange_log", {"speaker": "user", "text": text})["id"]
        ok(
            writer,
            "claim_propose",
            {"text": text, "kind": "fact", "sources": [{"kind": "exchange", "id": seq}]},
        )
    return connect(service, data_dir)


def pages(conn: Connection, tool: str, asked: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of ``tool`` at limit 3, following next_offset."""
    out = [ok(conn, tool, {**asked, "limit": 3})]
    while "next_offset" in out[-1]:
        out.append(ok(conn, tool, {**asked, "limit": 3, "offset": out[-1]["next_offset"]}))
        assert len(out) < 5, out
    return out


@pytest.mark.parametrize(("tool", "rows", "asked"), TOOLS)
def test_pages_follow_next_offset_without_repeats(
    conn: Connection, tool: str, rows: str, asked: dict[str, Any]
) -> None:
    # Before, these tools took no offset ("unknown argument(s): 'offset'") and said
    # nothing of the rows past their first page.
    read = pages(conn, tool, asked)
    assert [len(p[rows]) for p in read] == [3, 3, 1]
    assert [p.get("next_offset") for p in read] == [3, 6, None]
    assert not any("truncated" in p for p in read)
    ids = [row["id"] for p in read for row in p[rows]]
    assert len(set(ids)) == 7
    whole = ok(conn, tool, {**asked, "limit": 7})
    assert [row["id"] for row in whole[rows]] == ids and "next_offset" not in whole
    past = ok(conn, tool, {**asked, "offset": 7})
    assert past[rows] == [] and "next_offset" not in past


@pytest.mark.parametrize("tool", ["thread_list", "attachment_list", "claim_search"])
@pytest.mark.parametrize(
    ("offset", "says", "rule"),
    [
        (-1, "offset must be at least 0", "minimum"),
        (100_001, "offset must be at most 100000", "maximum"),
        ("x", "offset must be of type integer", "type"),
    ],
)
def test_a_bad_offset_is_refused_naming_it(
    conn: Connection, tool: str, offset: object, says: str, rule: str
) -> None:
    reply = call(conn, tool, {"offset": offset})
    error = reply["error"]
    assert error["code"] == -32602, reply
    assert error["message"] == f"{tool}: {says}"
    assert (error["data"]["field"], error["data"]["rule"]) == ("offset", rule)


def run(capsys: pytest.CaptureFixture[str], data_dir: DataDir, *argv: str) -> tuple[int, Any]:
    capsys.readouterr()
    code = main(["--data-dir", str(data_dir.root), "--json", *argv])
    out = capsys.readouterr()
    return code, json.loads(out.out) if code == 0 else out.err


@pytest.mark.parametrize(
    ("argv", "tool", "asked"),
    [
        (["threads"], "thread_list", {}),
        (["threads", "list"], "thread_list", {}),
        (["attachments"], "attachment_list", {}),
        (["claims", "list"], "claim_search", {}),
        (["claims", "list", "--query", "build"], "claim_search", {"query": "build"}),
    ],
)
def test_the_cli_prints_the_tools_result(
    conn: Connection,
    data_dir: DataDir,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    tool: str,
    asked: dict[str, Any],
) -> None:
    # Before, these printed a bare list, and the next page's offset only on stderr.
    for offset in (0, 3, 6, 7):
        code, printed = run(capsys, data_dir, *argv, "--limit", "3", "--offset", str(offset))
        assert code == 0
        assert printed == ok(conn, tool, {**asked, "limit": 3, "offset": offset}), offset


def test_the_cli_refuses_an_offset_the_tool_refuses(
    conn: Connection, data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["threads"], ["attachments"], ["claims", "list"]):
        code, err = run(capsys, data_dir, *argv, "--offset", "100001")
        error = json.loads(err)["error"]
        assert code == 1 and error["message"] == "--offset must be at most 100000", argv
        assert (error["field"], error["rule"]) == ("offset", "maximum"), argv
