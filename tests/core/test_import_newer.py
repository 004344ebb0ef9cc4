"""Importing a newer export of records a group already holds: what it takes, what conflicts."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from core.cli.main import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _paths(tmp_path: Path) -> tuple[str, str, str]:
    """A data folder, and two export files beside it."""
    (tmp_path / "data").mkdir()
    return str(tmp_path / "data"), str(tmp_path / "e1.jsonl"), str(tmp_path / "e2.jsonl")


def _show(
    capsys: pytest.CaptureFixture[str], d: str, entry_id: str, group: str = "copy"
) -> dict[str, object]:
    """The entry as an export of ``group`` writes it (tags, times, confidence)."""
    code, out, _ = run(capsys, "--data-dir", d, "--group", group, "export", "-")
    assert code == 0
    (entry,) = [e for e in map(json.loads, out.splitlines()[1:]) if e.get("id") == entry_id]
    shown: dict[str, object] = entry
    return shown


def test_a_newer_export_adds_its_tags_and_reinforcement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, e1, e2 = _paths(tmp_path)
    code, out, _ = run(capsys, "--data-dir", d, "store", "Likes green tea")
    assert code == 0
    entry_id = out.strip()
    assert run(capsys, "--data-dir", d, "export", e1)[0] == 0
    assert run(capsys, "--data-dir", d, "--group", "copy", "import", e1)[0] == 0
    before = _show(capsys, d, entry_id)
    time.sleep(0.002)
    # Stored again with a tag: the same memory gains the tag and is seen again.
    assert run(capsys, "--data-dir", d, "store", "Likes green tea", "--tags", "drinks")[0] == 0
    assert run(capsys, "--data-dir", d, "export", e2)[0] == 0

    code, out, err = run(capsys, "--data-dir", d, "--group", "copy", "import", e2)
    assert (code, err) == (0, "")
    assert out == (
        "imported 0 entries and 0 other records; 0 duplicates skipped; "
        "1 updated (already present, newer in the file)\n"
    )
    after = _show(capsys, d, entry_id)
    source = _show(capsys, d, entry_id, "main")
    assert after["tags"] == ["drinks"]
    assert after["last_seen_at"] == source["last_seen_at"] != before["last_seen_at"]
    assert after["confidence"] == source["confidence"]
    assert after["content"] == "Likes green tea"
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "--json", "audit")
    updates = [r for r in json.loads(out) if r["action"] == "update"]
    assert updates and updates[0]["entry_ids"] == [entry_id]
    # The same file again adds nothing more: a duplicate now.
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "--json", "import", e2)
    report = json.loads(out)
    assert (report["updated"], report["duplicates"]) == ([], [entry_id])


def test_an_older_export_takes_nothing_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, e1, e2 = _paths(tmp_path)
    entry_id = run(capsys, "--data-dir", d, "store", "Likes green tea")[1].strip()
    assert run(capsys, "--data-dir", d, "export", e1)[0] == 0
    time.sleep(0.002)
    assert run(capsys, "--data-dir", d, "store", "Likes green tea", "--tags", "drinks")[0] == 0
    assert run(capsys, "--data-dir", d, "export", e2)[0] == 0
    assert run(capsys, "--data-dir", d, "--group", "copy", "import", e2)[0] == 0
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "--json", "import", e1)
    assert code == 0
    report = json.loads(out)
    assert (report["updated"], report["duplicates"]) == ([], [entry_id])
    assert _show(capsys, d, entry_id)["tags"] == ["drinks"]


def test_a_thread_used_since_the_last_export_takes_its_later_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, e1, e2 = _paths(tmp_path)
    state = tmp_path / "state.md"
    state.write_text("x\n")
    thread_id = run(capsys, "--data-dir", d, "threads", "open", "Ops")[1].strip()
    assert run(capsys, "--data-dir", d, "export", e1)[0] == 0
    assert run(capsys, "--data-dir", d, "--group", "copy", "import", e1)[0] == 0
    time.sleep(0.002)
    assert run(capsys, "--data-dir", d, "handoff", "write", "Ops", str(state))[0] == 0
    assert run(capsys, "--data-dir", d, "export", e2)[0] == 0

    code, out, err = run(capsys, "--data-dir", d, "--group", "copy", "--json", "import", e2)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["conflicts"] == [] and report["updated"] == [f"thread {thread_id}"]
    assert report["rows"] == {"thread_handoff": 1}
    threads = [json.loads(line) for line in Path(e2).read_text().splitlines()[1:]]
    (exported,) = [r["row"] for r in threads if r["kind"] == "thread"]
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "export", "-")
    (copied,) = [
        json.loads(line)["row"]
        for line in out.splitlines()[1:]
        if json.loads(line)["kind"] == "thread"
    ]
    assert copied["updated_at"] == exported["updated_at"]


def test_a_conflict_names_the_field_both_values_and_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, first, _ = _paths(tmp_path)
    e1 = Path(first)
    thread_id = run(capsys, "--data-dir", d, "threads", "open", "Ops")[1].strip()
    assert run(capsys, "--data-dir", d, "export", str(e1))[0] == 0
    assert run(capsys, "--data-dir", d, "--group", "copy", "import", str(e1))[0] == 0
    lines = e1.read_text().splitlines()
    renamed = []
    for line in lines:
        rec = json.loads(line)
        if rec.get("kind") == "thread":
            rec["row"]["title"] = "Ops review"
        renamed.append(json.dumps(rec))
    e1.write_text("\n".join(renamed) + "\n")

    code, out, err = run(capsys, "--data-dir", d, "--group", "copy", "import", str(e1))
    assert (code, out) != (0, "")
    assert (
        f"(first: thread {thread_id}: title is 'Ops' here and 'Ops review' in the file); "
        "make the file's record and the stored one agree"
    ) in err


def _renamed_at_the_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str, str]:
    """A thread "Ops" copied into group copy, then renamed "Ops review" in main and
    exported again: the data folder, the thread's id and the newer export."""
    d, e1, e2 = _paths(tmp_path)
    thread_id = run(capsys, "--data-dir", d, "threads", "open", "Ops")[1].strip()
    assert run(capsys, "--data-dir", d, "export", e1)[0] == 0
    assert run(capsys, "--data-dir", d, "--group", "copy", "import", e1)[0] == 0
    time.sleep(0.002)
    assert run(capsys, "--data-dir", d, "threads", "rename", thread_id, "Ops review")[0] == 0
    assert run(capsys, "--data-dir", d, "export", e2)[0] == 0
    return d, thread_id, e2


def _titles(capsys: pytest.CaptureFixture[str], d: str) -> dict[str, str]:
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "--json", "threads")
    assert code == 0
    return {t["id"]: t["title"] for t in json.loads(out)["threads"]}


def test_a_thread_renamed_at_the_source_takes_its_new_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, thread_id, e2 = _renamed_at_the_source(tmp_path, capsys)
    code, out, err = run(capsys, "--data-dir", d, "--group", "copy", "import", e2)
    # Before: a conflict, "title is 'Ops' here and 'Ops review' in the file".
    assert (code, err) == (0, "")
    assert out == (
        "imported 0 entries and 0 other records; 0 duplicates skipped; "
        "1 updated (already present, newer in the file)\n"
    )
    assert _titles(capsys, d) == {thread_id: "Ops review"}
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "--json", "audit")
    updates = [r for r in json.loads(out) if r["action"] == "update"]
    assert [u["count"] for u in updates] == [1]
    # The same file again: nothing more to take.
    code, out, _ = run(capsys, "--data-dir", d, "--group", "copy", "--json", "import", e2)
    report = json.loads(out)
    assert (report["updated"], report["duplicates"]) == ([], [f"thread {thread_id}"])


def test_a_new_title_another_thread_holds_stays_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d, thread_id, e2 = _renamed_at_the_source(tmp_path, capsys)
    other = run(capsys, "--data-dir", d, "--group", "copy", "threads", "open", "OPS Review")
    assert other[0] == 0
    other_id = other[1].strip()
    code, out, err = run(capsys, "--data-dir", d, "--group", "copy", "import", e2)
    assert code != 0 and out == ""
    # Before: "1 record(s) conflict ... title is 'Ops' here and 'Ops review' in the file".
    assert (
        f"nothing imported: 1 record conflicts with what is stored (first: thread "
        f"{thread_id}: title is 'Ops review' in the file, but another thread here already "
        f"holds that title: 'OPS Review' ({other_id})); make the file's record"
    ) in err
    assert _titles(capsys, d)[thread_id] == "Ops"


def test_an_export_from_before_a_rename_is_skipped_not_a_conflict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exported, renamed, exported again; then the two files imported oldest first,
    and the older one again."""
    d, thread_id, e2 = _renamed_at_the_source(tmp_path, capsys)
    e1 = str(tmp_path / "e1.jsonl")
    assert run(capsys, "--data-dir", d, "--group", "copy", "import", e2)[0] == 0
    code, out, err = run(capsys, "--data-dir", d, "--group", "copy", "--json", "import", e1)
    # Before: "nothing imported: 1 record(s) conflict ... title is 'Ops review' here and
    # 'Ops' in the file".
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert (report["updated"], report["duplicates"]) == ([], [f"thread {thread_id}"])
    assert _titles(capsys, d) == {thread_id: "Ops review"}
