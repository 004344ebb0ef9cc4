"""``recall`` and ``dig`` over the protocol dispatcher, and ``ambry recall|dig|layers``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.protocol import agent_dispatcher
from core.cli.main import main
from core.continuity.episodes import log_exchange
from core.layers.compression import compress
from core.model.entries import Actor, iso, utc_now
from core.model.errors import InvalidParams, NotFound
from core.service import MemoryService
from core.storage.paths import DEFAULT_GROUP, DataDir


def call(conn: Connection, method: str, params: Any) -> dict[str, Any]:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = conn.handle_line(json.dumps(message).encode())
    assert reply.frame is not None
    decoded: dict[str, Any] = json.loads(reply.frame)
    return decoded


def seed(service: MemoryService, group: str = "main") -> None:
    now = utc_now()
    for days, text in [
        (45, "Please remember that the pottery class is on Thursdays at the Elm studio."),
        (9, "The tomato seedlings go into the north bed next week."),
    ]:
        agent = service.open_session(group, Actor.AGENT, "tests")
        log_exchange(service, agent, "user", text, at=iso(now - timedelta(days=days)))
    compress(service.store_for(group), now)


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    token = load_or_create_token(data_dir.token_file)
    seed(service)
    c = agent_dispatcher(service).connect()
    assert "result" in call(c, "hello", {"token": token, "group": "main", "client": "unit"})
    return c


def test_recall_and_dig_over_the_socket(conn: Connection) -> None:
    found = call(conn, "recall", {"text": "when is the pottery class?"})["result"]
    assert [r["layer"] for r in found["results"]] == ["archive"]
    summary = found["results"][0]["summary"]
    assert summary["id"].startswith("sum-") and summary["points"] == []
    assert "Thursdays" in found["results"][0]["turns"][0]["text"]
    dug = call(conn, "dig", {"id": summary["id"], "depth": 2})["result"]
    assert [n["level"] for n in dug["nodes"]] == ["day", "week", "month"]
    # The day is part of its week and of its month, the week of the month.
    day, week, month = (n["id"] for n in dug["nodes"])
    assert {(e["from"], e["to"]) for e in dug["edges"] if e["reason"] == "part_of"} == {
        (day, week),
        (day, month),
        (week, month),
    }


@pytest.mark.parametrize(
    ("method", "params", "code", "field"),
    [
        ("recall", {}, InvalidParams.rpc_code, "text"),
        ("recall", {"text": "x", "budget": 5}, InvalidParams.rpc_code, "budget"),
        ("recall", {"text": "x", "extra": 1}, InvalidParams.rpc_code, "extra"),
        ("dig", {"id": "sum-000000000000", "depth": 4}, InvalidParams.rpc_code, "depth"),
        ("dig", {"id": "sum-000000000000"}, NotFound.rpc_code, "id"),
    ],
)
def test_bad_params_are_refused_with_the_field(
    conn: Connection, method: str, params: dict[str, Any], code: int, field: str
) -> None:
    error = call(conn, method, params)["error"]
    assert error["code"] == code
    assert field in json.dumps(error)


def test_recall_is_audited_as_a_read(conn: Connection, service: MemoryService) -> None:
    call(conn, "recall", {"text": "tomato seedlings"})
    row = (
        service.store_for("main")
        .execute("SELECT action, count, detail FROM audit_log ORDER BY id DESC LIMIT 1")
        .fetchone()
    )
    assert row[0] == "search" and row[1] == 1 and json.loads(row[2])["scope"] == "layers"


def test_cli_recall_dig_and_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    service = MemoryService(DataDir(tmp_path))
    seed(service, "cli")
    service.close()
    base = ["--data-dir", str(tmp_path), "--group", "cli"]
    assert main([*base, "recall", "pottery class"]) == 0
    out = capsys.readouterr().out
    assert "[archive] sum-" in out and "Thursdays" in out
    assert main([*base, "--json", "recall", "tomato seedlings"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["results"][0]["layer"] == "recent-1"
    assert len(data["results"][0]["summary"]["points"]) <= 3
    sid = data["results"][0]["summary"]["id"]
    assert main([*base, "dig", sid, "--depth", "1"]) == 0
    assert "part_of" in capsys.readouterr().out
    assert main([*base, "layers", "--compress"]) == 0
    out = capsys.readouterr().out
    assert "compressed: 0 days" in out and "[recent-1]" in out and "[archive]" in out
    assert main([*base, "dig", "mem-missing-000", "--depth", "1"]) != 0


def test_layers_without_a_thread_points_to_the_threads_that_have_turns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["--data-dir", str(tmp_path), "--create"]
    assert main([*base, "layers"]) == 0
    assert "threads" not in capsys.readouterr().out.splitlines()[-1]  # none to point to
    assert main([*base, "threads", "open", "Trip planning"]) == 0
    capsys.readouterr()
    assert main([*base, "layers"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "no turns outside threads; a thread's layers: `ambry layers --thread TITLE` "
        "(1 thread, `ambry threads` lists them)"
    )
    # More threads than one page of the list: the real count, not the page's.
    service = MemoryService(DataDir(tmp_path))
    store = service.store_for(DEFAULT_GROUP)
    with store.transaction():
        for i in range(1500):
            store.execute(
                "INSERT INTO threads (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (f"thr-{i:012d}", f"Trip {i}", iso(utc_now()), iso(utc_now())),
            )
    service.close()
    assert main([*base, "layers"]) == 0
    assert "(1,501 threads," in capsys.readouterr().out.splitlines()[-1]
