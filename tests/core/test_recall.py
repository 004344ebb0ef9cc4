"""The brief, decay and markers, through the real service and store."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from core.cli.main import main
from core.model.config import Config
from core.model.entries import Actor, iso, utc_now
from core.model.errors import Forbidden
from core.recall.briefing import refresh_decay
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir


def _age(service: MemoryService, entry_id: str, days: int) -> None:
    when = iso(utc_now() - timedelta(days=days))
    service.store_for("main").execute(
        "UPDATE memory_entries SET last_seen_at = ?, created_at = ? WHERE id = ?",
        (when, when, entry_id),
    )


def test_brief_shows_only_current_active_entries(service: MemoryService, agent: Caller) -> None:
    pref = service.store(agent, {"type": "preference", "content": "Prefers short answers"})
    old = service.store(agent, {"type": "fact", "content": "Lives in Paris"}).entry.id
    service.store(agent, {"type": "fact", "content": "Lives in Lyon", "supersedes": old})
    brief = service.brief(agent)
    md = brief.markdown
    assert "Prefers short answers" in md and "Lives in Lyon" in md
    assert "Paris" not in md
    assert brief.brief_count == 2 and brief.entry_count == 2
    assert md.index("Behavioral preferences") < md.index("Known facts")
    assert brief.to_dict()["entries"][0]["id"] == pref.entry.id
    assert audit.recent(service.store_for("main"), actions=["brief"])[0].count == 2


def test_brief_respects_the_entry_limit(data_dir: DataDir) -> None:
    svc = MemoryService(data_dir, Config(max_brief_entries=3))
    op = svc.open_session("main", Actor.OPERATOR)
    for i in range(10):
        svc.store(op, {"type": "fact", "content": f"fact number {i}"})
    brief = svc.brief(op)
    assert brief.brief_count == 3 and brief.entry_count == 10
    assert brief.truncated_by == "max_brief_entries"
    svc.close()


def test_stale_entries_leave_the_brief_and_come_back_when_reinforced(
    service: MemoryService, agent: Caller
) -> None:
    entry = service.store(agent, {"type": "fact", "content": "Uses a ThinkPad"}).entry
    pinned = service.store(agent, {"type": "fact", "content": "Birthday is in May"}).entry
    op = service.open_session("main", Actor.OPERATOR)
    service.set_pinned(op, pinned.id, True)
    _age(service, entry.id, 30 + 7 * 5)  # medium trust 0.7 - 5 weeks x 0.1 = 0.2 < 0.3
    _age(service, pinned.id, 400)
    assert service.refresh_decay("main", force=True) >= 1
    stored = service.get("main", entry.id)
    assert stored.stale and stored.effective_confidence == pytest.approx(0.2)
    assert stored.confidence == pytest.approx(0.7)  # the base value is kept: reversible
    md = service.brief(agent).markdown
    assert "ThinkPad" not in md and "Birthday" in md
    # Still searchable, and seeing it again brings it back.
    assert service.search(agent, {"query": "thinkpad"})[0].id == entry.id
    service.store(agent, {"type": "fact", "content": "uses a thinkpad"})
    again = service.get("main", entry.id)
    assert not again.stale and again.confidence == pytest.approx(0.3)
    assert "ThinkPad" in service.brief(agent).markdown


def test_decay_refresh_is_idempotent(service: MemoryService, agent: Caller) -> None:
    e = service.store(agent, {"type": "fact", "content": "Drives a Volvo"}).entry
    _age(service, e.id, 50)
    store = service.store_for("main")
    assert refresh_decay(store, service.config, utc_now(), force=True) == 1
    assert refresh_decay(store, service.config, utc_now(), force=True) == 0
    assert service.get("main", e.id).effective_confidence == pytest.approx(0.5)  # 2 weeks


def test_agents_cannot_pin(service: MemoryService, agent: Caller) -> None:
    e = service.store(agent, {"type": "fact", "content": "x"}).entry
    with pytest.raises(Forbidden):
        service.set_pinned(agent, e.id, True)


def test_markers_store_reinforce_and_keep_distinct_observations(
    service: MemoryService, agent: Caller
) -> None:
    text = "\n".join(
        [
            "Deploy went fine.",
            "[MEMORY:timing:nginx] nginx reloads take about 30 seconds",
            "- [MEMORY:dependency:api] the api needs redis running first",
            "[MEMORY:bogus:nginx] unknown category",
            "[MEMORY:timing:nginx]",
            "[MEMORY:behavior] the user reviews diffs before merging",
        ]
    )
    first = service.ingest_text(agent, text)
    assert first.markers == 3 and len(first.stored) == 3 and first.malformed == 2
    nginx = service.get("main", first.stored[0])
    assert set(nginx.tags) == {"marker", "category:timing", "service:nginx"}
    assert nginx.type == "context"

    second = service.ingest_text(
        agent,
        "\n".join(
            [
                "[MEMORY:timing:nginx] nginx reloads take about 30 seconds.",
                "[MEMORY:timing:nginx] nginx restarts take about 2 minutes after upgrades",
                "[MEMORY:timing:postgres] nginx reloads take about 30 seconds",
            ]
        ),
    )
    assert second.reinforced == (nginx.id,)
    assert len(second.stored) == 2  # different observation; different service
    assert service.get("main", nginx.id).confidence == pytest.approx(0.8)
    assert "### Service: nginx" in service.brief(agent).markdown


def test_cli_brief_and_ingest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path)
    assert main(["--data-dir", d, "store", "--type", "instruction", "Run tests first"]) == 0
    notes = tmp_path / "notes.txt"
    notes.write_text("[MEMORY:maintenance:db] vacuum weekly\n", encoding="utf-8")
    assert main(["--data-dir", d, "ingest", str(notes)]) == 0
    capsys.readouterr()
    assert main(["--data-dir", d, "brief"]) == 0
    md = capsys.readouterr().out
    assert "- [instruction] Run tests first (today)" in md and "vacuum weekly" in md
    assert main(["--data-dir", d, "brief", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["brief_count"] == 2 and "markdown" in data
    assert main(["--data-dir", d, "ingest", str(tmp_path / "missing.txt")]) == 1
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_ingest_reads_a_file_with_a_bom_or_in_utf16(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str
) -> None:
    d = str(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("[MEMORY:timing:cafe] le café ouvre à 8h\n", encoding=encoding)
    assert main(["--data-dir", d, "--json", "ingest", str(notes)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["markers"], len(result["stored"]), result["malformed"]) == (1, 1, 0)
    assert main(["--data-dir", d, "--json", "list"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert entry["content"] == "le café ouvre à 8h"


def test_ingest_refuses_a_file_that_is_not_utf8_and_stores_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path)
    notes = tmp_path / "notes.txt"
    notes.write_text("[MEMORY:timing:cafe] le café ouvre à 8h\n", encoding="latin-1")
    assert main(["--data-dir", d, "--create", "ingest", str(notes)]) == 1
    assert capsys.readouterr().err == (
        "error: notes.txt is not UTF-8 text (byte 0xE9 at line 1); save the file as UTF-8\n"
    )
    assert main(["--data-dir", d, "--json", "list"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_brief_past_its_time_budget_is_a_timeout_error(
    service: MemoryService, agent: Caller, operator: Caller
) -> None:
    from core.model.errors import Timeout
    from core.recall.briefing import build_group_brief

    for i in range(50):
        service.store(operator, {"type": "fact", "content": f"fact {i}"})
    with pytest.raises(Timeout, match="longer than"):
        build_group_brief(service.store_for("main"), service.config, utc_now(), budget_seconds=0)
    # The store works normally afterwards.
    assert service.brief(agent).brief_count == 50
