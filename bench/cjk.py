"""Words inside Chinese, Japanese and Korean text: the gram index against the
scan it replaced, printed as JSON.

Usage: python bench/cjk.py [--sizes 10000,100000] [--queries 50]

Each size runs in a fresh subprocess on a fresh data dir, through the real
service: that many memories and as many turns, a third of them in Chinese,
Japanese or Korean. It times keyword searches for words inside such text
("after", the gram index) against the query the previous schema ran
("before": each piece looked for with ``instr()`` in the newest 10,000 rows),
the cost of a write of CJK and of English text, what the grams add to the
file, and the schema step that fills the grams of an existing store.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _util import ms, per_size, setup_path

setup_path()

_ZH = (
    "水果 芒果 苹果 香蕉 北京 上海 出差 会议 项目 客户 "
    "咖啡 早餐 电影 音乐 旅行 周末 医生 学校 朋友 家人"
)
_JA = "ジョギング 会議 東京 大阪 出張 コーヒー 映画 音楽 旅行 週末 医者 学校 友達 家族 仕事 毎朝"
_KO = "책을 커피를 회의를 서울에 부산에 출장을 영화를 음악을 여행을 주말에 친구를 가족과 학교에"
#: The scan the gram index replaced (schema 10): each piece by instr() in the newest 10,000.
_SCAN = 10_000


def _sentence(rng: random.Random, n: int) -> str:
    zh, ja, ko = _ZH.split(), _JA.split(), _KO.split()
    match n % 9:
        case 0:
            return f"用户喜欢{rng.choice(zh)}和{rng.choice(zh)}，第{n}次提到{rng.choice(zh)}"
        case 1:
            return f"ユーザーは{rng.choice(ja)}と{rng.choice(ja)}が好きです（{n}）"
        case 2:
            return f"사용자는 {rng.choice(ko)} 좋아하고 {rng.choice(ko)} 갑니다 {n}"
        case _:
            return f"Routine note {n}: the team met about the deploy and the weather"


def _before(table: str, text: str, grams: list[str], want: int) -> str:
    held = " + ".join(["(instr(t, ?) > 0)"] * len(grams))
    newest = f"SELECT seq, {text} AS t FROM {table} ORDER BY seq DESC LIMIT {_SCAN}"
    return (
        f"SELECT seq, held FROM (SELECT seq, {held} AS held FROM ({newest})) "
        f"WHERE held > 0 ORDER BY held DESC, seq DESC LIMIT {want}"
    )


def _time(run: object, count: int) -> list[float]:
    assert callable(run)
    run()  # warm the page cache
    out = []
    for _ in range(count):
        t = time.perf_counter()
        run()
        out.append(time.perf_counter() - t)
    return out


def run_size(n: int, query_count: int) -> dict[str, object]:
    from core.continuity import threads
    from core.continuity.episodes import find_exchanges, log_exchange
    from core.continuity.exchange_candidates import _unspaced
    from core.continuity.imported_history import ScreenedTurn, insert_turns
    from core.memory.writing import StoreRequest
    from core.model.entries import Actor, EntryFilter, EntryType
    from core.semantic.hybrid import Mode
    from core.service import MemoryService
    from core.storage.fts import text_grams, unspaced_grams
    from core.storage.paths import DataDir

    rng = random.Random(7)
    figures: dict[str, object] = {"rows": n}
    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(Path(tmp))
        svc = MemoryService(data)
        op = svc.open_session("bench", Actor.OPERATOR, "bench")
        agent = svc.open_session("bench", Actor.AGENT, "bench")
        texts = [_sentence(rng, i) for i in range(n)]
        for start in range(0, n, 1000):
            batch = [StoreRequest(EntryType.FACT, t) for t in texts[start : start + 1000]]
            svc.store_entries(op, batch)
        store = svc.store_for("bench")
        logged = "2026-01-01T00:00:00.000Z"
        turns = [ScreenedTurn(f"t{i}", "user", t, None, logged, 0) for i, t in enumerate(texts)]
        thread, _ = threads.open_thread(svc, op, title="Bench")
        with store.transaction():
            insert_turns(store, agent, thread.id, turns, logged)

        flt = EntryFilter()
        questions = {
            "one word": "芒果",
            "nine-pair question": "我最喜欢的水果是什么，芒果还是香蕉？",
        }
        for name, query in questions.items():
            grams = unspaced_grams(query)
            asked = {"query": query, "mode": "keyword", "limit": 10}
            after = _time(lambda q=asked: svc.search(op, q), query_count)
            pieces = _time(lambda g=grams: store.unspaced_matches(flt, g, 60), query_count)
            old = _before("memory_entries", "search_text || char(10) || tags", grams, 60)
            before = _time(lambda s=old, g=grams: store.execute(s, g).fetchall(), query_count)
            turn_pieces = _time(lambda g=grams: _unspaced(store, g, 60, None), query_count)
            old_turns = _before("exchanges", "text", grams, 60)
            turns_before = _time(
                lambda s=old_turns, g=grams: store.execute(s, g).fetchall(), query_count
            )
            turn_search = _time(
                lambda q=query: find_exchanges(store, q, limit=10, mode=Mode.KEYWORD),
                query_count,
            )
            figures[name] = {
                "pieces": len(grams),
                "memory_search_keyword": ms(after),
                "memory_pieces_after": ms(pieces),
                "memory_pieces_before": ms(before),
                "turn_search_keyword": ms(turn_search),
                "turn_pieces_after": ms(turn_pieces),
                "turn_pieces_before": ms(turns_before),
            }

        for name, text in {
            "cjk": "用户下个月要去北京出差，顺便买芒果",
            "english": texts[3],
        }.items():
            grams_s = _time(lambda t=text: text_grams(t), 2000)
            writes = _stores(svc, op, text, "with")
            # The same write with the grams left out: what computing and indexing them costs.
            with_none = _stores(svc, op, text, "without", no_grams=True)
            logs = []
            for i in range(50):
                t = time.perf_counter()
                log_exchange(svc, agent, "user", f"{text} ({i})")
                logs.append(time.perf_counter() - t)
            figures[f"write_{name}"] = {
                "text_grams_us": round(sorted(grams_s)[len(grams_s) // 2] * 1e6, 2),
                "store": ms(writes),
                "store_without_grams": ms(with_none),
                "log_exchange": ms(logs),
            }

        store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        path = store.path
        figures["db_mb"] = round(path.stat().st_size / 1e6, 2)
        figures["grams_mb"] = {
            "memory_column": _mb(
                store, "SELECT sum(length(CAST(search_grams AS BLOB))) FROM memory_entries"
            ),
            "memory_index": _mb(store, "SELECT sum(length(block)) FROM memory_grams_data"),
            "turn_column": _mb(
                store, "SELECT sum(length(CAST(text_grams AS BLOB))) FROM exchanges"
            ),
            "turn_index": _mb(store, "SELECT sum(length(block)) FROM exchange_grams_data"),
            "text_of_both": _mb(
                store,
                "SELECT (SELECT sum(length(CAST(search_text AS BLOB))) "
                "FROM memory_entries) + (SELECT sum(length(CAST(text AS BLOB))) "
                "FROM exchanges)",
            ),
        }
        svc.close()
        figures["upgrade_s"] = _upgrade(path, Path(tmp))
    return figures


def _stores(svc: object, op: object, text: str, tag: str, *, no_grams: bool = False) -> list[float]:
    from core.storage import store as store_module

    made = getattr(store_module, "entry_grams")  # noqa: B009
    if no_grams:
        setattr(store_module, "entry_grams", lambda *_: "")  # noqa: B010
    try:
        out = []
        for i in range(50):
            t = time.perf_counter()
            svc.store(op, {"type": "fact", "content": f"{text} ({tag} {i})"})  # type: ignore[attr-defined]
            out.append(time.perf_counter() - t)
        return out
    finally:
        setattr(store_module, "entry_grams", made)  # noqa: B010


def _mb(store: object, sql: str) -> float:
    return round(float(store.execute(sql).get or 0) / 1e6, 2)  # type: ignore[attr-defined]


def _upgrade(path: Path, tmp: Path) -> float:
    """Seconds the upgrade from schema 10 takes (the gram step and those after it) on a
    copy of the store taken back to schema 10."""
    import apsw

    from core.storage import schema
    from core.storage.db import open_database
    from core.storage.migrations import grams

    copy = tmp / "upgrade.sqlite"
    shutil.copyfile(path, copy)
    version = schema.MIGRATIONS.index(grams.GRAMS)
    conn = apsw.Connection(str(copy))
    with conn:
        for name in (
            "memory_grams_ai",
            "memory_grams_ad",
            "memory_grams_au",
            "exchange_grams_ai",
            "exchange_grams_ad",
            # and what the later steps add, so the ladder can run again from schema 10
            "exchanges_deleted_up_to",
            "session_handoffs_deleted_up_to",
        ):
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DROP TABLE memory_grams; DROP TABLE exchange_grams")
        conn.execute("ALTER TABLE memory_entries DROP COLUMN search_grams")
        conn.execute("ALTER TABLE exchanges DROP COLUMN text_grams")
        conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("VACUUM")
    conn.close()
    t = time.perf_counter()
    open_database(copy).close()
    return round(time.perf_counter() - t, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--one", type=int)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_size(args.one, args.queries)))
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    per_size(__file__, sizes, ["--queries", str(args.queries)], "cjk")


if __name__ == "__main__":
    main()
