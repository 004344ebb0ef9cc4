"""The Qt models on their own: Qt's model tester, lazy paging, and live diffs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt
from pytestqt.modeltest import ModelTester
from pytestqt.qtbot import QtBot

from core.memory.writing import StoreRequest
from core.model.entries import EntryFilter, EntryType, MemoryEntry
from core.service import Caller, MemoryService
from desktop.audit.view import AuditModel
from desktop.memories.model import ID_ROLE, IdListModel
from desktop.memories.values import CANDIDATE_COLUMNS, age_label, info_text
from desktop.widgets.times import short_time


def fill(service: MemoryService, caller: Caller, count: int) -> list[str]:
    requests = [StoreRequest(EntryType.FACT, f"memory number {i}", ("n",)) for i in range(count)]
    service.store_entries(caller, requests)
    return service.list_ids("main", EntryFilter())


def loader(service: MemoryService) -> object:
    def load(ids: list[str]) -> dict[str, MemoryEntry]:
        return service.store_for("main").get_many(ids)

    return load


def test_id_list_model_passes_qt_model_tester(
    qtmodeltester: ModelTester, service: MemoryService, operator: Caller
) -> None:
    model = IdListModel(loader(service))  # type: ignore[arg-type]
    model.reset(fill(service, operator, 30))
    qtmodeltester.check(model)
    assert model.index(0, 1).data() == "memory number 29"
    assert model.index(0, 0).data(ID_ROLE) == model.id_at(0)


def test_a_time_an_older_import_kept_shows_as_unknown(
    qtmodeltester: ModelTester, service: MemoryService, operator: Caller
) -> None:
    ids = fill(service, operator, 3)
    store = service.store_for("main")
    # As an older Ambry imported them: one without an offset, one that is no time.
    with store.transaction():
        store.execute(
            "UPDATE memory_entries SET created_at = '2024-05-01 09:30:00' WHERE id = ?", (ids[0],)
        )
        store.execute(
            "UPDATE memory_entries SET created_at = 'yesterday', last_seen_at = 'soon' "
            "WHERE id = ?",
            (ids[1],),
        )
    model = IdListModel(loader(service))  # type: ignore[arg-type]
    model.reset(ids)
    qtmodeltester.check(model)
    age = next(i for i, c in enumerate(model.columns) if c.key == "age")
    assert model.index(0, age).data().endswith(("d", "mo", "y"))
    assert model.index(1, age).data() == "?"
    entry = store.get(ids[1])
    assert entry is not None
    assert "Created unknown, last seen unknown" in info_text(entry)
    assert short_time("yesterday") == "unknown"


def test_candidate_model_passes_qt_model_tester(
    qtmodeltester: ModelTester, service: MemoryService, operator: Caller
) -> None:
    model = IdListModel(loader(service), CANDIDATE_COLUMNS)  # type: ignore[arg-type]
    model.reset(fill(service, operator, 3))
    qtmodeltester.check(model)


def test_rows_come_in_pages(service: MemoryService, operator: Caller) -> None:
    loads: list[int] = []
    inner = loader(service)

    def counting(ids: list[str]) -> dict[str, MemoryEntry]:
        loads.append(len(ids))
        return inner(ids)  # type: ignore[operator, no-any-return]

    model = IdListModel(counting)
    model.PAGE = 10
    model.reset(fill(service, operator, 25))
    assert (model.rowCount(), model.total, loads) == (10, 25, [])
    assert model.canFetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    model.fetchMore(QModelIndex())
    assert model.rowCount() == 25 and not model.canFetchMore(QModelIndex())
    model.index(3, 1).data()
    model.index(4, 1).data()
    assert loads == [25]  # one read for the chunk, then from the cache


def test_update_inserts_and_removes_without_losing_selection(
    qtbot: QtBot, service: MemoryService, operator: Caller
) -> None:
    ids = fill(service, operator, 6)
    model = IdListModel(loader(service))  # type: ignore[arg-type]
    model.reset(ids)
    selection = QItemSelectionModel(model)
    selection.select(
        model.index(3, 0),
        QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows,
    )
    inserted: list[tuple[int, int]] = []
    removed: list[tuple[int, int]] = []
    model.rowsInserted.connect(lambda _p, a, b: inserted.append((a, b)))
    model.rowsRemoved.connect(lambda _p, a, b: removed.append((a, b)))
    resets: list[bool] = []
    model.modelReset.connect(lambda: resets.append(True))

    chosen = ids[3]
    new_ids = ["mem-new-1", "mem-new-2", *ids[:1], *ids[2:]]  # two new on top, one gone
    assert model.update(new_ids)
    assert model.ids() == new_ids and model.rowCount() == 7
    assert (inserted, removed, resets) == ([(0, 1)], [(1, 1)], [])
    rows = [i.row() for i in selection.selectedRows()]
    assert [model.id_at(r) for r in rows] == [chosen]
    assert model.index(0, 1).data() == "(deleted)"  # unknown to the store


def test_update_refuses_reorders(service: MemoryService, operator: Caller) -> None:
    ids = fill(service, operator, 3)
    model = IdListModel(loader(service))  # type: ignore[arg-type]
    model.reset(ids)
    assert not model.update(list(reversed(ids)))
    assert list(model.ids()) == ids


def test_update_beyond_the_shown_rows_stays_hidden(
    service: MemoryService, operator: Caller
) -> None:
    ids = fill(service, operator, 12)
    model = IdListModel(loader(service))  # type: ignore[arg-type]
    model.PAGE = 5
    model.reset(ids)
    assert model.update([*ids[:8], "mem-x", *ids[9:]])
    assert (model.rowCount(), model.total) == (5, 12)


def test_audit_model_passes_qt_model_tester(
    qtmodeltester: ModelTester, service: MemoryService, operator: Caller
) -> None:
    fill(service, operator, 5)
    model = AuditModel()
    model.PAGE = 2
    model.load(service, "main", [], None)
    assert model.rowCount() == 2 and model.canFetchMore(QModelIndex())
    qtmodeltester.check(model)
    while model.canFetchMore(QModelIndex()):
        model.fetchMore(QModelIndex())
    said = [model.index(r, 1).data() for r in range(model.rowCount())]
    assert said[-1] == "You started a session" and "You stored a fact (15 chars)" in said
    # Qt's tester fetches more inside modelReset, so filters are checked on a fresh model.
    filtered = AuditModel()
    filtered.load(service, "main", ["store"], "operator")
    assert {filtered.record_at(r).action for r in range(filtered.rowCount())} == {"store"}
    assert filtered.index(0, 0).data(Qt.ItemDataRole.DisplayRole)


@pytest.mark.parametrize(
    ("created", "label"),
    [
        ("2025-11-25T09:00:00Z", "1y"),  # before, 365 days read "11mo"
        ("2024-12-25T09:00:00Z", "1y"),  # 700 days: before, "22mo"
        ("2024-11-25T09:00:00Z", "2y"),
        ("2025-11-26T09:00:00Z", "11mo"),
        ("2026-09-24T09:00:00Z", "2mo"),
        ("2026-09-26T09:00:00Z", "1mo"),
        ("2026-09-27T09:00:00Z", "59d"),
        ("2026-11-24T10:00:00Z", "23h"),
    ],
)
def test_the_age_column_counts_calendar_months_and_years(
    local_zone: Callable[[str], None], created: str, label: str
) -> None:
    local_zone("America/New_York")
    now = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
    assert age_label(created, now) == label
