"""The audit log's text search and the client names of sessions."""

from __future__ import annotations

from core.continuity.sessions import session_clients
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType
from core.service import Caller, MemoryService
from core.storage import audit


def test_text_finds_ids_clients_and_details_only(service: MemoryService, operator: Caller) -> None:
    agent = service.open_session("main", Actor.AGENT, "Claude Code")
    stored = service.store_entries(agent, [StoreRequest(EntryType.FACT, "Lives in Lyon", ())])
    entry_id = stored[0].entry.id
    store = service.store_for("main")
    by_id = audit.recent(store, text=entry_id[4:16])
    assert [r.action for r in by_id] == ["store"]
    by_client = {r.action for r in audit.recent(store, text="claude code")}
    assert by_client == {"session_start", "store"}
    assert audit.recent(store, text="fact")[0].entry_ids == [entry_id]  # detail: type
    assert audit.recent(store, text="Lyon") == []  # content never reaches the log
    assert audit.recent(store, text="%") == []  # a wildcard is a plain character
    assert {r.action for r in audit.recent(store, text="n_s")} == {"session_start"}
    worded = audit.recent(store, text="nothing like it", text_actions=["store"])
    assert [r.action for r in worded] == ["store"]
    only_you = audit.recent(store, text="session", actor="operator")
    assert {r.actor for r in only_you} == {"operator"}


def test_session_clients_names_each_session(service: MemoryService, operator: Caller) -> None:
    agent = service.open_session("main", Actor.AGENT, "Cursor")
    assert agent.session_id is not None and operator.session_id is not None
    found = session_clients(service, "main", [agent.session_id, operator.session_id, "sess-x"])
    assert found[agent.session_id] == "Cursor"
    assert "sess-x" not in found and session_clients(service, "main", []) == {}
