"""Shared set-up for the claims tests: a real dispatcher connection and real sources."""

from __future__ import annotations

import json
from typing import Any

from core.agent.dispatch import Connection


def call(conn: Connection, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    reply = conn.handle_line(json.dumps(message).encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


def ok(conn: Connection, method: str, params: dict[str, Any] | None = None) -> Any:
    reply = call(conn, method, params)
    assert "result" in reply, reply
    return reply["result"]


def err(conn: Connection, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    reply = call(conn, method, params)
    assert "error" in reply, reply
    error: dict[str, Any] = reply["error"]
    return error


HANDOFF = """# Project state

## Configuration
- The staging database runs Postgres 16 on port 5433.
- Deploys go through the staging cluster first.

## Preferences
- The person wants short answers without preambles.

## Next steps
- I will migrate the billing tables tomorrow.
- [ ] Write the release notes for version 2.
"""
