"""Deletes never wear out a word index: the levels FTS5 leaves behind are kept in bounds."""

from __future__ import annotations

import apsw
import pytest

from core.cli.main import main
from core.continuity.episodes import log_exchange
from core.model.config import Config
from core.model.entries import Actor
from core.service import Caller, MemoryService
from core.storage import index_levels
from core.storage.paths import DataDir

#: Rowids far past any memory's, for index rows no entry owns.
SPARE = 1_000_000


def wear(path: str, table: str, merges: int) -> None:
    """Leave ``merges`` levels in ``table``, as that many deletes with their scrub do:
    a row deleted, then ``optimize``, on rows of the index no entry owns."""
    conn = apsw.Connection(path)
    try:
        with conn:
            for i in range(merges):
                conn.execute(
                    f"INSERT INTO {table}(rowid, content, tags) VALUES (?, 'x', '')", (SPARE + i,)
                )
        for i in range(merges):
            with conn:
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (SPARE + i,))
                conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    finally:
        conn.close()


def store_some(service: MemoryService, caller: Caller, n: int) -> list[str]:
    return [
        str(
            service.store(
                caller, {"type": "fact", "content": f"Bird number {i} is a heron"}
            ).entry.id
        )
        for i in range(n)
    ]


def opened(data_dir: DataDir) -> tuple[MemoryService, Caller]:
    service = MemoryService(data_dir, Config())
    return service, service.open_session("main", Actor.OPERATOR, "tests")


def test_the_levels_a_merge_leaves_are_read_from_the_structure(data_dir: DataDir) -> None:
    service, operator = opened(data_dir)
    store_some(service, operator, 3)
    before = index_levels.levels(service.store_for("main"), "memory_fts")
    assert before is not None and before < 5
    service.close()
    wear(str(data_dir.group_db("main")), "memory_fts", 40)
    service, _ = opened(data_dir)
    try:
        assert index_levels.levels(service.store_for("main"), "memory_fts") == before + 40
    finally:
        service.close()


def test_deletes_past_the_limit_rebuild_the_index_and_search_still_finds(
    data_dir: DataDir,
) -> None:
    service, operator = opened(data_dir)
    ids = store_some(service, operator, 30)
    service.close()
    # As 495 deletes would: the next few cross the limit.
    wear(str(data_dir.group_db("main")), "memory_fts", index_levels.MAX_LEVELS - 5)
    service, operator = opened(data_dir)
    try:
        for entry_id in ids[:10]:
            service.delete(operator, entry_id)
        store = service.store_for("main")
        held = index_levels.levels(store, "memory_fts")
        assert held is not None and held < 10
        store.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")
        hits = service.search(operator, {"query": "heron", "limit": 100, "mode": "keyword"})
        assert {r.id for r in hits} == set(ids[10:])
    finally:
        service.close()


def test_a_group_whose_index_stopped_reading_is_rebuilt_when_it_opens(
    data_dir: DataDir,
) -> None:
    service = MemoryService(data_dir, Config())
    operator = service.open_session("main", Actor.OPERATOR, "tests")
    ids = store_some(service, operator, 5)
    service.close()
    path = str(data_dir.group_db("main"))
    # Before: 2,000 deletes, each with its scrub, left a structure FTS5 refuses.
    with pytest.raises(apsw.CorruptError):
        wear(path, "memory_fts", 2001)
    service = MemoryService(data_dir, Config())
    try:
        operator = service.open_session("main", Actor.OPERATOR, "tests")
        found = [r.id for r in service.search(operator, {"query": "heron", "mode": "keyword"})]
        assert sorted(found) == sorted(ids)
        service.delete(operator, ids[0])  # a write of the index works again
        store = service.store_for("main")
        store.execute("INSERT INTO memory_fts(memory_fts) VALUES ('integrity-check')")
    finally:
        service.close()


@pytest.mark.parametrize("table", sorted(index_levels.REFILL))
def test_each_index_is_refilled_as_its_trigger_fills_it(
    service: MemoryService, operator: Caller, agent: Caller, table: str
) -> None:
    """The refill statement of every contentless index gives the index its trigger
    gave: the same rows, found by the same words."""
    store_some(service, operator, 3)
    service.store(operator, {"type": "fact", "content": "東京の天気は晴れです"})
    log_exchange(service, agent, "user", "The heron came back to the pond")
    log_exchange(service, agent, "assistant", "東京の天気は晴れです")
    store = service.store_for("main")

    def held() -> tuple[list[int], list[int]]:
        rows = sorted(int(r[0]) for r in store.execute(f"SELECT rowid FROM {table}"))
        if "grams" in table:  # pieces of unspaced text, not words to match
            return rows, []
        match = f"SELECT rowid FROM {table} WHERE {table} MATCH 'heron'"
        return rows, sorted(int(r[0]) for r in store.execute(match))

    before = held()
    assert before[0] or table == "claims_fts"
    with store.transaction():
        index_levels.refill(store, table)
    assert held() == before
    store.execute(f"INSERT INTO {table}({table}) VALUES ('integrity-check')")


def test_doctor_names_a_damaged_word_index_and_reindex_words_rebuilds_it(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--data-dir", str(data_dir.root), *argv])
        out, err = capsys.readouterr()
        return code, out, err

    code, heron, _ = run("store", "Herons fish at dawn")
    assert code == 0
    with pytest.raises(apsw.CorruptError):
        wear(str(data_dir.group_db("main")), "memory_fts", 2001)
    code, out, _ = run("doctor", "--no-mcp")
    # Before: "the file is damaged … move it aside (the group then starts empty)".
    assert code == 1
    assert "a word index of" in out and "move it aside" not in out
    assert "`ambry --group main reindex --words` builds the word indexes again" in out
    code, out, _ = run("reindex", "--words")
    assert code == 0 and out.startswith("rebuilt the word indexes of group main")
    code, out, _ = run("search", "heron")
    assert out.startswith(heron.strip())
    code, out, _ = run("doctor", "--no-mcp")
    assert "group main: schema" in out


def test_reindex_takes_words_or_rebuild_not_both(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["--data-dir", str(data_dir.root), "reindex", "--words", "--rebuild"])
    assert code == 2
    assert "give one" in capsys.readouterr().err


def test_reindex_words_writes_the_gram_columns_an_older_writer_left_empty(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    """An Ambry from before the gram columns, still running while this one upgraded
    the file, writes rows without grams; `reindex --words` writes them."""

    def run(*argv: str) -> tuple[int, str]:
        code = main(["--data-dir", str(data_dir.root), *argv])
        return code, capsys.readouterr().out

    code, mountain = run("store", "喜欢登山和滑雪")
    assert code == 0
    service, _ = opened(data_dir)
    agent = service.open_session("main", Actor.AGENT, "tests")
    log_exchange(service, agent, "user", "我住在大阪")
    store = service.store_for("main")
    with store.transaction():
        store.execute("UPDATE memory_entries SET search_grams = ''")
        store.execute("UPDATE exchanges SET text_grams = ''")
    service.close()
    assert run("search", "--mode", "keyword", "登山")[1].startswith("no matching")
    assert run("reindex", "--words")[0] == 0
    assert run("search", "--mode", "keyword", "登山")[1].startswith(mountain.strip())
    service, _ = opened(data_dir)
    store = service.store_for("main")
    assert store.execute("SELECT text_grams != '' FROM exchanges").get
    service.close()
