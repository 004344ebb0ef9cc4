"""Secrets through the agent protocol: what an agent sends is screened in every
field, and no reply ever carries the agent token."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.model.errors import Forbidden, Refused
from core.service import MemoryService
from core.storage.paths import DataDir

GITLAB = "glpat-Hx4nPq7RtW2zLm9KvB3c"
TWILIO = "SK0d8c6b4a2f9e7d5c3b1a0f8e6d4c2b9a"


def call(conn: Connection, method: str, params: dict[str, Any]) -> dict[str, Any]:
    frame = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = conn.handle_line(json.dumps(frame).encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


@pytest.fixture
def token(data_dir: DataDir) -> str:
    return load_or_create_token(data_dir.token_file)


@pytest.fixture
def conn(service: MemoryService, token: str) -> Connection:
    c = agent_dispatcher(service).connect()
    reply = call(c, "hello", {"token": token, "group": "main", "client": f"cli {GITLAB}"})
    assert "result" in reply, reply
    return c


def _stored_text(service: MemoryService) -> str:
    store = service.store_for("main")
    out = []
    for table in ("sessions", "audit_log", "memory_entries", "exchanges", "attachment_receipts"):
        out += [json.dumps(list(r)) for r in store.execute(f"SELECT * FROM {table}")]
    return "\n".join(out)


def test_hello_client_and_turn_ids_are_screened(
    service: MemoryService, conn: Connection, token: str
) -> None:
    reply = call(conn, "exchange_log", {"speaker": "user", "text": "hi", "turn": f"t-{TWILIO}"})
    assert "result" in reply, reply
    stored = _stored_text(service)
    assert GITLAB not in stored and TWILIO not in stored


def test_a_tag_stating_a_credential_is_refused(service: MemoryService, conn: Connection) -> None:
    args = {"type": "fact", "content": "Backups run at 2am.", "tags": ["my password is Zq8!kd0"]}
    reply = call(conn, "memory_store", args)
    assert reply["error"]["code"] == Refused.rpc_code
    assert "tags.0" in reply["error"]["message"]
    assert "Zq8!kd0" not in _stored_text(service)


def test_the_token_file_cannot_be_attached_and_the_token_never_comes_back(
    service: MemoryService, conn: Connection, data_dir: DataDir, token: str, tmp_path: Path
) -> None:
    reply = call(conn, "attachment_receipt", {"path": str(data_dir.token_file)})
    assert reply["error"]["code"] == Forbidden.rpc_code
    assert token not in json.dumps(reply)

    copy = tmp_path / "notes.txt"
    copy.write_text(f"the socket token: {token}\n")
    reply = call(conn, "attachment_receipt", {"path": str(copy)})
    assert "result" in reply, reply
    assert token not in json.dumps(reply)
    listed = call(conn, "attachment_list", {})
    assert token not in json.dumps(listed)
    assert token not in _stored_text(service)
