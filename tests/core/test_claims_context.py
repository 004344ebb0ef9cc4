"""The context-injection gate: only verified, fresh, supported claims, only in enforce mode.

Every path that builds an agent's context is driven here: ``memory_brief`` on
the socket, the MCP tool, prompt and resource, and ``ambry brief``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.agent.auth import load_or_create_token
from core.agent.dispatch import Connection
from core.agent.mcp_bridge import McpSession
from core.agent.protocol import agent_dispatcher
from core.claims import gate, modes
from core.claims.context import BRIEF_CLAIMS, SECTION_TITLE
from core.claims.model import Decision
from core.cli.main import main
from core.model.config import Config
from core.model.entries import Actor
from core.service import Caller, MemoryService
from core.storage.paths import DataDir
from tests.core.claims_helpers import ok

VERIFIED = "The staging database runs Postgres 16"
CANDIDATE = "The production database runs Oracle 9"
STALE = "The build server is named hopper"
DRIFTED = "The office is at 44 Elm Street"
RETRACTED = "The team standup is at nine"


@pytest.fixture
def conn(service: MemoryService, data_dir: DataDir) -> Connection:
    token = load_or_create_token(data_dir.token_file)
    c = agent_dispatcher(service).connect()
    ok(c, "hello", {"token": token, "group": "main", "client": "gate-test"})
    return c


def _claim(conn: Connection, text: str, kind: str = "fact") -> str:
    seq = ok(conn, "exchange_log", {"speaker": "user", "text": text + "."})["id"]
    cid: str = ok(
        conn,
        "claim_propose",
        {"text": text, "kind": kind, "sources": [{"kind": "exchange", "id": seq}]},
    )["id"]
    return cid


def _accept(service: MemoryService, operator: Caller, cid: str, text: str) -> None:
    gate.decide(service, operator, cid, Decision.ACCEPT, confirmed_text=text)


@pytest.fixture
def world(service: MemoryService, operator: Caller, conn: Connection) -> dict[str, str]:
    """One claim in each condition the gate must tell apart."""
    ids = {text: _claim(conn, text) for text in (VERIFIED, CANDIDATE, STALE, DRIFTED, RETRACTED)}
    for text in (VERIFIED, STALE, DRIFTED, RETRACTED):
        _accept(service, operator, ids[text], text)
    gate.decide(service, operator, ids[RETRACTED], Decision.RETRACT, confirmed_text=RETRACTED)
    store = service.store_for("main")
    # Due for a re-check: verified, but no longer fresh.
    store.execute(
        "UPDATE claims SET recheck_due_at = '2000-01-01T00:00:00Z' WHERE id = ?", (ids[STALE],)
    )
    # Its source turn is gone (an expired or cleared exchange).
    store.execute(
        "DELETE FROM exchanges WHERE seq = (SELECT CAST(ref AS INTEGER) FROM claim_sources "
        "JOIN claims ON claims.seq = claim_seq WHERE claims.id = ?)",
        (ids[DRIFTED],),
    )
    return ids


def _only_verified(markdown: str) -> None:
    assert f"## {SECTION_TITLE}" in markdown
    assert VERIFIED in markdown
    for text in (CANDIDATE, STALE, DRIFTED, RETRACTED):
        assert text not in markdown, text


def _mcp(service: MemoryService) -> McpSession:
    session = McpSession(service, "main", client="gate-test")
    session.handle(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "gate-test", "version": "1"},
        },
    )
    return session


def _mcp_texts(session: McpSession) -> list[str]:
    tool = session.handle("tools/call", {"name": "memory_brief", "arguments": {}})
    prompt = session.handle("prompts/get", {"name": "memory_brief"})
    resource = session.handle("resources/read", {"uri": "ambry://brief/main"})
    return [
        tool["content"][0]["text"],
        prompt["messages"][0]["content"]["text"],
        resource["contents"][0]["text"],
    ]


def _cli_brief(data_dir: DataDir, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(["--data-dir", str(data_dir.root), "--group", "main", "brief"]) == 0
    return capsys.readouterr().out


def test_observe_and_diagnostic_modes_inject_nothing(
    service: MemoryService,
    operator: Caller,
    conn: Connection,
    world: dict[str, str],
    data_dir: DataDir,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for mode in (None, "diagnostic"):
        if mode is not None:
            modes.apply(service, operator, mode, yes=True)
        texts = [ok(conn, "memory_brief", {})["markdown"], *_mcp_texts(_mcp(service))]
        texts.append(_cli_brief(data_dir, capsys))
        for text in texts:
            assert SECTION_TITLE not in text and VERIFIED not in text


def test_enforce_injects_only_verified_fresh_supported_claims_on_every_path(
    service: MemoryService,
    operator: Caller,
    conn: Connection,
    world: dict[str, str],
    data_dir: DataDir,
    capsys: pytest.CaptureFixture[str],
) -> None:
    modes.apply(service, operator, "enforce", yes=True)
    _only_verified(ok(conn, "memory_brief", {})["markdown"])
    for text in _mcp_texts(_mcp(service)):
        _only_verified(text)
    _only_verified(_cli_brief(data_dir, capsys))
    # Retracting takes it out at once, on the next brief.
    gate.decide(service, operator, world[VERIFIED], Decision.RETRACT, confirmed_text=VERIFIED)
    assert VERIFIED not in ok(conn, "memory_brief", {})["markdown"]


def test_a_candidate_never_reaches_the_brief_however_it_is_sourced(
    service: MemoryService, operator: Caller, conn: Connection
) -> None:
    modes.apply(service, operator, "enforce", yes=True)
    for i in range(5):
        _claim(conn, f"Candidate statement number {i} is repeated")
        _claim(conn, f"Candidate statement number {i} is repeated")
    brief = ok(conn, "memory_brief", {})
    assert "Candidate statement" not in json.dumps(brief)


def test_the_section_respects_the_brief_limits(
    data_dir: DataDir, operator: Caller, service: MemoryService, conn: Connection
) -> None:
    texts = [f"Verified fact number {i} holds for the project" for i in range(BRIEF_CLAIMS + 5)]
    for text in texts:
        _accept(service, operator, _claim(conn, text), text)
    modes.apply(service, operator, "enforce", yes=True)
    markdown = ok(conn, "memory_brief", {})["markdown"]
    assert sum(t in markdown for t in texts) == BRIEF_CLAIMS
    small = MemoryService(data_dir, Config(max_brief_chars=600, brief_token_budget=150))
    try:
        agent = small.open_session("main", Actor.AGENT, "small")
        brief = small.brief(agent)
        assert brief.char_count <= 600
    finally:
        small.close()


DEPLOY = "Deploy window: Tuesdays 10:00"


def _brief_in(service: MemoryService, data_dir: DataDir, thread: str) -> list[str]:
    """The brief of a session in ``thread``, as a socket client, MCP and the CLI get it."""
    token = load_or_create_token(data_dir.token_file)
    conn = agent_dispatcher(service).connect()
    ok(conn, "hello", {"token": token, "group": "main", "client": "drift-test"})
    ok(conn, "thread_open", {"title": thread})
    session = McpSession(service, "main", client="drift-test", thread=thread)
    session.handle(
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "drift-test", "version": "1"},
        },
    )
    return [ok(conn, "memory_brief", {})["markdown"], _mcp_texts(session)[0]]


def test_a_claim_leaves_every_brief_as_soon_as_its_file_changes(
    service: MemoryService,
    operator: Caller,
    data_dir: DataDir,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The brief trusted the receipt's recorded state, which only a brief in the
    # file's own thread refreshed, and only after the claims section was built.
    path = tmp_path / "deploy.txt"
    path.write_text(DEPLOY + "\n")
    token = load_or_create_token(data_dir.token_file)
    ops = agent_dispatcher(service).connect()
    ok(ops, "hello", {"token": token, "group": "main", "client": "drift-test"})
    ok(ops, "thread_open", {"title": "Ops"})
    ok(ops, "thread_open", {"title": "Big"})  # so that a session can be opened in it
    ok(ops, "thread_open", {"title": "Ops"})
    rid = ok(ops, "attachment_receipt", {"path": str(path)})["receipt"]["id"]
    source = [{"kind": "attachment", "id": rid}]
    cid = ok(ops, "claim_propose", {"text": DEPLOY, "kind": "project", "sources": source})["id"]
    _accept(service, operator, cid, DEPLOY)
    modes.apply(service, operator, "enforce", yes=True)

    def cli(thread: str) -> str:
        capsys.readouterr()
        args = ["--data-dir", str(data_dir.root), "--group", "main", "brief", "--thread", thread]
        assert main(args) == 0
        return capsys.readouterr().out

    assert all(DEPLOY in text for text in _brief_in(service, data_dir, "Big"))
    assert DEPLOY in cli("Big")
    # The same size, other words: only the bytes tell.
    path.write_text("Deploy window: Fridays 16:00!\n")
    for text in _brief_in(service, data_dir, "Big"):
        assert DEPLOY not in text
    assert DEPLOY not in cli("Big")
    own = ok(ops, "memory_brief", {})["markdown"]
    # The file's own thread lists the receipt as a gap, and no longer states the claim.
    assert f"] {DEPLOY} (verified" not in own, own
    assert "verification gap: source changed" in own
    # Put back as it was, the file says the claim again.
    path.write_text(DEPLOY + "\n")
    assert all(DEPLOY in text for text in _brief_in(service, data_dir, "Big"))
