"""The attachment methods of the agent protocol, through a real Dispatcher."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection, Dispatcher
from core.agent.protocol import agent_dispatcher
from core.model.errors import InvalidParams, NotFound, TooLarge, Unauthorized
from core.service import MemoryService
from core.storage.paths import DataDir


def call(conn: Connection, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        message["params"] = params
    reply = conn.handle_line(json.dumps(message).encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


def result(reply: dict[str, Any]) -> Any:
    assert "result" in reply, reply
    return reply["result"]


def error(reply: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    assert "error" in reply, reply
    return reply["error"]["code"], reply["error"].get("data") or {}


@pytest.fixture
def dispatcher(service: MemoryService, data_dir: DataDir) -> Dispatcher:
    load_or_create_token(data_dir.token_file)
    return agent_dispatcher(service)  # registers the attachment methods itself


@pytest.fixture
def conn(dispatcher: Dispatcher, data_dir: DataDir) -> Connection:
    c = dispatcher.connect()
    token = load_or_create_token(data_dir.token_file)
    result(call(c, "hello", {"token": token, "group": "main", "client": "rpc-test"}))
    return c


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "brief.md"
    path.write_text("# Findings\nThe cache is cold on Mondays.\n", encoding="utf-8")
    return path


def test_methods_are_registered_and_need_a_session(dispatcher: Dispatcher, doc: Path) -> None:
    names = {"attachment_receipt", "attachment_verify", "attachment_list"}
    assert names <= set(dispatcher.method_names)
    anonymous = dispatcher.connect()
    code, data = error(call(anonymous, "attachment_receipt", {"path": str(doc)}))
    assert (code, data["code"]) == (Unauthorized.rpc_code, "unauthorized")


def test_receipt_verify_list_round_trip(conn: Connection, doc: Path) -> None:
    first = result(
        call(
            conn,
            "attachment_receipt",
            {"path": str(doc), "turn": "turn-1", "observation": "cold cache on Mondays"},
        )
    )
    receipt = first["receipt"]
    assert first["created"] is True and first["turn"] == "turn-1"
    assert receipt["id"].startswith("att_") and len(receipt["id"]) == 20
    assert receipt["kind"] == "text" and receipt["state"] == "verified"
    assert receipt["observation"] == "cold cache on Mondays"
    assert "extracted_text" not in receipt  # the excerpt is enough on the wire

    again = result(call(conn, "attachment_receipt", {"path": str(doc)}))
    assert again["created"] is False and again["receipt"]["link_count"] == 2

    verified = result(call(conn, "attachment_verify", {"id": receipt["id"]}))
    assert verified["state"] == "verified" and verified["state_line"].startswith("source verified")

    doc.write_text("rewritten", encoding="utf-8")
    changed = result(call(conn, "attachment_verify", {"id": receipt["id"]}))
    assert (changed["state"], changed["previous_state"]) == ("changed", "verified")
    assert "excerpt may be stale" in changed["state_line"]
    # What to do about it, for an agent that never read the docs.
    assert changed["state_line"].endswith("attach it anew to record what it holds now")

    listed = result(call(conn, "attachment_list"))["receipts"]
    assert [r["id"] for r in listed] == [receipt["id"]] and listed[0]["state"] == "changed"


def test_the_session_is_the_provenance(conn: Connection, service: MemoryService, doc: Path) -> None:
    out = result(call(conn, "attachment_receipt", {"path": str(doc)}))
    row = service.store_for("main").execute(
        "SELECT session_id FROM attachment_receipt_turns WHERE id = ?", (out["link_id"],)
    )
    assert row.get == conn.caller.session_id
    code, data = error(
        call(conn, "attachment_receipt", {"path": str(doc), "session": "sess-forged"})
    )
    assert (code, data["field"]) == (InvalidParams.rpc_code, "session")


@pytest.mark.parametrize(
    ("params", "field", "rule"),
    [
        ({}, "path", "required"),
        ({"path": 3}, "path", "type"),
        ({"path": "relative/file.txt"}, "path", "absolute"),
        ({"path": "/x" * 3000}, "path", "maxLength"),
        ({"path": "/tmp/x", "turn": "t" * 201}, "turn", "maxLength"),
    ],
)
def test_bad_receipt_params_name_the_field(
    conn: Connection, params: dict[str, Any], field: str, rule: str
) -> None:
    code, data = error(call(conn, "attachment_receipt", params))
    assert (code, data["field"], data["rule"]) == (InvalidParams.rpc_code, field, rule)


def test_file_errors_map_to_their_codes(conn: Connection, tmp_path: Path) -> None:
    code, data = error(call(conn, "attachment_receipt", {"path": str(tmp_path / "nope")}))
    assert (code, data["code"]) == (NotFound.rpc_code, "not_found")
    code, data = error(call(conn, "attachment_receipt", {"path": str(tmp_path)}))
    assert (code, data["rule"]) == (InvalidParams.rpc_code, "not_a_file")
    big = tmp_path / "big.bin"
    with big.open("wb") as fh:
        fh.truncate(15 * 1024 * 1024 + 1)
    code, data = error(call(conn, "attachment_receipt", {"path": str(big)}))
    assert (code, data["code"], data["limit"]) == (TooLarge.rpc_code, "too_large", 15728640)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    code, data = error(call(conn, "attachment_receipt", {"path": str(loop)}))
    assert data["rule"] == "symlink_loop"


def test_verify_and_list_errors(conn: Connection) -> None:
    code, data = error(call(conn, "attachment_verify", {"id": "att_0123456789abcdef"}))
    assert (code, data["field"]) == (NotFound.rpc_code, "id")
    code, data = error(call(conn, "attachment_verify", {}))
    assert data["rule"] == "required"
    code, data = error(call(conn, "attachment_list", {"thread": "thr-missing"}))
    assert (code, data["field"]) == (NotFound.rpc_code, "thread")
    for bad in (0, 101, "5", True):
        code, data = error(call(conn, "attachment_list", {"limit": bad}))
        assert (code, data["field"]) == (InvalidParams.rpc_code, "limit")
    code, data = error(call(conn, "attachment_list", {"group": "other"}))
    assert data["rule"] == "additionalProperties"


def test_list_limit(conn: Connection, tmp_path: Path) -> None:
    for n in range(3):
        path = tmp_path / f"{n}.txt"
        path.write_text(f"file {n}", encoding="utf-8")
        result(call(conn, "attachment_receipt", {"path": str(path)}))
    listed = result(call(conn, "attachment_list", {"limit": 2}))["receipts"]
    assert [r["filename"] for r in listed] == ["2.txt", "1.txt"]


def test_list_names_the_thread_by_id_or_title(conn: Connection, doc: Path) -> None:
    # Every other thread argument takes a title too; this one took only the id.
    thread = result(call(conn, "thread_open", {"title": "Cache study"}))["thread"]
    receipt = result(call(conn, "attachment_receipt", {"path": str(doc)}))["receipt"]
    result(call(conn, "thread_open", {"title": "Other work"}))
    for ref in (thread["id"], "Cache study", "cache STUDY"):
        listed = result(call(conn, "attachment_list", {"thread": ref}))["receipts"]
        assert [r["id"] for r in listed] == [receipt["id"]], ref
    assert result(call(conn, "attachment_list", {"thread": "Other work"}))["receipts"] == []
    code, data = error(call(conn, "attachment_list", {"thread": "No such work"}))
    assert (code, data["field"]) == (NotFound.rpc_code, "thread")
