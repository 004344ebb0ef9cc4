"""Receipts as the brief and search show them: the verification state in plain words."""

from __future__ import annotations

from pathlib import Path

from core.agent.protocol import agent_dispatcher
from core.attachments import attach as attachments
from core.service import Caller, MemoryService


def test_brief_and_search_state_a_changed_source_as_a_gap(
    service: MemoryService, agent: Caller, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("# Plan\nShip the importer on Friday.\n", encoding="utf-8")
    receipt = attachments.attach(service, agent, str(notes)).receipt
    service.store(
        agent, {"type": "context", "content": f"The release plan is in {receipt.id} (notes.md)"}
    )
    brief = service.brief(agent).markdown
    assert receipt.id in brief and "verified" in brief

    notes.write_text("# Plan\nShip the importer next month.\n", encoding="utf-8")
    brief = service.brief(agent).markdown
    assert "source changed since" in brief and "may be stale" in brief
    found = service.search(agent, {"query": "release plan"})[0]
    assert found.receipts is not None and "changed" in found.receipts[receipt.id]
    assert "receipts" in found.to_dict()

    notes.unlink()
    assert "missing" in service.brief(agent).markdown


def test_the_dispatcher_serves_attachment_methods(service: MemoryService) -> None:
    names = agent_dispatcher(service).method_names
    assert {"attachment_receipt", "attachment_verify", "attachment_list"} <= set(names)
