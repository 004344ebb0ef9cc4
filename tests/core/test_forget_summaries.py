"""Forgotten turns take their layer summaries with them: no hook, point, quote or
keyword of a forgotten turn stays in a table, an index or any file of the data
dir, and recall, the layers view and a running session's brief stop showing it."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from core.cli.main import main
from core.continuity.context import enter_thread
from core.continuity.episodes import log_exchange
from core.layers.compression import compress, is_due
from core.layers.timeline import timeline
from core.layers.tools import recall_tool
from core.memory import forgetting
from core.memory.forgetting import Scope
from core.memory.trash import list_trash
from core.model.caller import Caller
from core.model.entries import Actor, iso, utc_now
from core.service import MemoryService
from core.storage.paths import DataDir
from core.storage.store import GroupStore

WORD = "penicillin"
#: FTS5 stores a term after the prefix it shares with the term before it.
TAIL = b"nicillin"

DAY = [
    ("user", "Remember that I am allergic to penicillin and my blood type is AB negative."),
    ("assistant", "Noted: allergic to penicillin, blood type AB negative."),
    ("user", "We moved the dentist appointment to Thursday afternoon."),
    ("assistant", "I will remind you about the dentist on Thursday afternoon."),
]


def _files_with_word(service: MemoryService) -> list[str]:
    """Every file of the data dir (databases, -wal, -shm, settings) holding the word."""
    root = Path(service.data_dir.root)
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and (WORD.encode() in (data := p.read_bytes()) or TAIL in data)
    )


def _health_session(service: MemoryService) -> Caller:
    agent = service.open_session("main", Actor.AGENT, "tests")
    return enter_thread(service, agent, "Health").caller


def _log(service: MemoryService, agent: Caller, days_ago: float) -> None:
    start = utc_now() - timedelta(days=days_ago)
    for i, (speaker, text) in enumerate(DAY):
        log_exchange(service, agent, speaker, text, at=iso(start + timedelta(minutes=i)))


def _summarised(service: MemoryService, *days_ago: float) -> tuple[Caller, GroupStore]:
    """An agent in the Health thread that said ``DAY`` that many days ago, each time,
    and the group after a compression pass summarised it."""
    agent = _health_session(service)
    for days in days_ago:
        _log(service, agent, days_ago=days)
    store = service.store_for("main")
    compress(store, utc_now())
    return agent, store


def _shown(service: MemoryService, agent: Caller) -> dict[str, str]:
    """What each front end shows the agent or the person about the thread."""
    store = service.store_for("main")
    recalled = recall_tool(service, agent, {"text": f"allergic to {WORD}?"}).to_dict()
    return {
        "recall": json.dumps(recalled["results"]),  # its "keywords" echo the question
        "layers": json.dumps(timeline(store, agent.thread_id, utc_now()).to_dict()),
        "brief": service.brief(agent).markdown,
    }


def test_forget_takes_the_summaries_of_forgotten_turns_off_the_disk(
    service: MemoryService, operator: Caller
) -> None:
    # Warm (3 days: summarised, shown in the brief) and Recent week 1 (10 days, in
    # another week's rollup).
    agent, store = _summarised(service, 3, 10)
    service.store(operator, {"type": "fact", "content": f"User is allergic to {WORD}"})
    assert all(WORD in text for text in _shown(service, agent).values())
    store.execute("PRAGMA wal_checkpoint(PASSIVE)")
    assert "memory/main.sqlite" in _files_with_word(service)

    plan = forgetting.plan_forget(service, "main", WORD)
    assert (len(plan.entries), len(plan.exchange_ids)) == (1, 4)
    service.forget(operator, plan)

    assert _files_with_word(service) == []
    # The same session, still running, and every view of the thread.
    for where, text in _shown(service, agent).items():
        assert WORD not in text, where
    assert not store.execute(
        "SELECT 1 FROM layer_vocab WHERE term = ? UNION ALL "
        "SELECT 1 FROM layer_fts WHERE layer_fts MATCH ?",
        (WORD, WORD),
    ).fetchall()

    # The next pass, due at once, draws the days again from the turns left.
    assert is_due(store, utc_now(), timedelta(hours=6))
    compress(store, utc_now())
    days = store.execute(
        "SELECT hook, turn_count FROM layer_summaries WHERE level = 'day' ORDER BY start_at"
    ).fetchall()
    assert [count for _, count in days] == [2, 2]
    assert all("dentist" in hook for hook, _ in days)
    assert store.execute("SELECT count(*) FROM layer_summaries WHERE level = 'week'").get == 2
    assert WORD not in _shown(service, agent)["layers"]
    store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert _files_with_word(service) == []


def test_clear_and_expiry_take_the_summaries_too(service: MemoryService, operator: Caller) -> None:
    agent, store = _summarised(service, 3)
    service.clear(operator, Scope.EPISODIC)
    assert _files_with_word(service) == []
    assert store.execute("SELECT count(*) FROM layer_summaries").get == 0

    _log(service, agent, days_ago=3)
    compress(store, utc_now())
    # Logged long ago: the TTL policy expires the turns when the store next opens.
    store.execute("UPDATE exchanges SET created_at = '2000-01-01T00:00:00.000Z'")
    service.close_store("main")
    store = service.store_for("main")
    assert store.execute("SELECT count(*) FROM exchanges").get == 0
    assert store.execute("SELECT count(*) FROM layer_summaries").get == 0
    assert _files_with_word(service) == []


def test_a_pass_or_a_rebuild_clears_summaries_left_by_turns_deleted_before(
    service: MemoryService,
) -> None:
    agent, store = _summarised(service, 3, 10)
    # As an earlier version forgot: the turns went, their summaries stayed.
    with store.transaction():
        store.execute("DELETE FROM exchanges WHERE text LIKE ?", (f"%{WORD}%",))
    store.execute("INSERT INTO exchanges_fts(exchanges_fts) VALUES ('optimize')")
    store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert _files_with_word(service) == ["memory/main.sqlite"]

    compress(store, utc_now())
    assert _files_with_word(service) == []
    assert WORD not in _shown(service, agent)["layers"]
    compress(store, utc_now(), rebuild=True)
    assert _files_with_word(service) == []


def test_planner_samples_of_forgotten_words_go_too(
    service: MemoryService, operator: Caller
) -> None:
    _, store = _summarised(service, 3)
    service.store(operator, {"type": "fact", "content": "Tagged note", "tags": [WORD]})
    store.execute("ANALYZE")  # what PRAGMA optimize does when a store closes
    assert store.execute(
        "SELECT count(*) FROM sqlite_stat4 WHERE instr(CAST(sample AS BLOB), ?)", (TAIL,)
    ).get
    service.forget(operator, forgetting.plan_forget(service, "main", WORD))
    assert _files_with_word(service) == []


def test_claims_drawn_from_forgotten_turns_go_with_them(
    service: MemoryService, operator: Caller
) -> None:
    _, store = _summarised(service, 3)
    assert service.extract_claims(operator).claim_ids
    plan = forgetting.plan_forget(service, "main", WORD)
    assert plan.claim_ids
    service.forget(operator, plan)
    assert _files_with_word(service) == []
    left = [r[0] for r in store.execute("SELECT text FROM claims")]
    assert left and all(WORD not in text for text in left)  # the dentist is still claimed


def test_forget_empties_the_trash_of_the_topic_too(
    service: MemoryService, operator: Caller
) -> None:
    # A memory an agent deleted waits in the trash, restorable; before, forget left
    # it there, word and all.
    agent = service.open_session("main", Actor.AGENT, "tests")
    gone = service.store(agent, {"type": "fact", "content": f"User is allergic to {WORD}"})
    kept = service.store(agent, {"type": "fact", "content": "User is allergic to cats"})
    tagged = service.store(
        agent, {"type": "fact", "content": "Ask before booking", "tags": [f"{WORD} allergy"]}
    )
    for outcome in (gone, kept, tagged):
        service.delete_tool(agent, {"id": outcome.entry.id})
    # Matched as the index matches: every word, stemmed ("allergies" is "allergy",
    # not "allergic"), a tag as well as the text.
    narrow = forgetting.plan_forget(service, "main", f"{WORD} allergies")
    assert narrow.trash_ids == (tagged.entry.id,)
    plan = forgetting.plan_forget(service, "main", WORD)
    assert sorted(plan.trash_ids) == sorted([gone.entry.id, tagged.entry.id])
    service.forget(operator, plan)
    assert [item.id for item in list_trash(service, "main")] == [kept.entry.id]
    assert _files_with_word(service) == []


def test_a_topic_of_no_indexed_word_leaves_the_trash_alone(
    service: MemoryService, operator: Caller
) -> None:
    # "_" is a word to the topic's parser and nothing to the index's tokenizer: it
    # matches no memory or turn, and took every trashed memory.
    agent = service.open_session("main", Actor.AGENT, "tests")
    trashed = service.store(agent, {"type": "fact", "content": f"User is allergic to {WORD}"})
    service.delete_tool(agent, {"id": trashed.entry.id})
    assert forgetting.plan_forget(service, "main", "_").empty


def test_the_cli_names_the_trashed_memories_it_will_forget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = DataDir(tmp_path / "data")
    data.ensure()
    service = MemoryService(data)
    try:
        agent = service.open_session("main", Actor.AGENT, "tests")
        trashed = service.store(agent, {"type": "fact", "content": f"{WORD} gives a rash"})
        service.delete_tool(agent, {"id": trashed.entry.id})
    finally:
        service.close()
    assert main(["--data-dir", str(data.root), "forget", WORD, "--yes"]) == 0
    out = capsys.readouterr().out
    assert "This will forget 1 memory in the trash:" in out
    assert f"{trashed.entry.id}  (in the trash) {WORD} gives a rash" in out
    assert out.rstrip().endswith("forgot 1 memory in the trash")


def test_a_forgotten_speaker_name_takes_the_summaries_that_quote_it(
    service: MemoryService, operator: Caller
) -> None:
    # The turn stays (its text does not hold the name); its summary's points read
    # "Zorblat: ...", so the summary goes, and the next pass draws it without the name.
    agent = _health_session(service)
    said = log_exchange(
        service, agent, "user", "The tomatoes go in the south bed this year.", name="Zorblat"
    ).exchange.id
    log_exchange(service, agent, "assistant", "Noted: tomatoes in the south bed.")
    store = service.store_for("main")
    compress(store, utc_now())
    drawn = "\n".join(
        r[0] + r[1] for r in store.execute("SELECT hook, points FROM layer_summaries")
    )
    assert "Zorblat" in drawn

    plan = forgetting.plan_forget(service, "main", "zorblat")
    assert plan.speaker_names == ("Zorblat",) and plan.exchange_ids == ()
    service.forget(operator, plan)

    assert store.execute("SELECT count(*) FROM layer_summaries").get == 0
    assert is_due(store, utc_now(), timedelta(hours=6))
    compress(store, utc_now())
    rows = store.execute("SELECT hook, points, turn_count FROM layer_summaries").fetchall()
    assert rows and all("Zorblat" not in r[0] + r[1] for r in rows)
    assert any("tomatoes" in r[0] + r[1] for r in rows)
    assert store.execute("SELECT 1 FROM exchanges WHERE seq = ?", (said,)).fetchone()
    service.close()
    for path in service.data_dir.root.rglob("*.sqlite*"):
        assert b"Zorblat" not in path.read_bytes(), path
