"""``ambry tag add|remove TAG ID...``: the app's bulk tag change from a terminal."""

from __future__ import annotations

import json

import pytest

from core.cli.main import main
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir
from tests.core.test_tagging import current, kept, three


def test_tag_add_and_remove_many_keep_all_but_the_tags(
    service: MemoryService,
    operator: Caller,
    agent: Caller,
    data_dir: DataDir,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ids = list(three(service, operator, agent).values())
    before = service.store_for("main").get_many(ids)
    base = ["--data-dir", str(data_dir.root)]
    assert main([*base, "tag", "add", "checked", *ids]) == 0
    out = capsys.readouterr().out.splitlines()
    new = [current(service, i) for i in ids]
    assert out == [f"{i} → {n.id}" for i, n in zip(ids, new, strict=True)]
    for old, n in zip(ids, new, strict=True):
        assert n.tags == ("checked",) and kept(n) == kept(before[old])
    plain = service.store(operator, {"type": "fact", "content": "Untagged"}).entry.id
    assert main([*base, "--json", "tag", "remove", "CHECKED", plain, *(n.id for n in new)]) == 0
    done = json.loads(capsys.readouterr().out)
    assert [v["old"] for v in done["versions"]] == [n.id for n in new]
    assert done["unchanged"] == [plain]
    assert all(current(service, n.id).tags == () for n in new)
    assert len(service.history("main", plain)) == 1
    rows = audit.recent(service.store_for("main"), actions=["update"], limit=2)
    assert [r.count for r in rows] == [3, 3]
    # A memory without the tag is named, and nothing is written for it.
    assert main([*base, "tag", "remove", "checked", plain]) == 0
    err = capsys.readouterr().err
    assert f"note: one did not have the tag 'checked', left as it was: {plain}" in err
    assert len(audit.recent(service.store_for("main"), actions=["update"])) == 2


def test_tag_refuses_an_unknown_id_or_an_earlier_version(
    service: MemoryService, operator: Caller, data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = service.store(operator, {"type": "fact", "content": "Note"}).entry.id
    base = ["--data-dir", str(data_dir.root), "tag", "add", "x"]
    assert main([*base, entry]) == 0
    capsys.readouterr()
    assert main([*base, "mem-nope"]) != 0
    assert "no entry mem-nope" in capsys.readouterr().err
    assert main([*base, entry]) != 0
    err = capsys.readouterr().err
    assert f"{entry} is an earlier version" in err and "ambry history" in err


def test_a_tag_holding_a_comma_is_refused_as_filters_could_never_find_it(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(data_dir.root)]
    assert main([*d, "store", "Bins go out on Monday"]) == 0
    entry_id = capsys.readouterr().out.strip()
    assert main([*d, "tag", "add", "home,chores", entry_id]) == 1
    err = capsys.readouterr().err
    assert "cannot hold a comma" in err and "'-' or '/'" in err
    assert main([*d, "show", entry_id]) == 0
    assert "home,chores" not in capsys.readouterr().out
