"""``ambry review``: accept in a terminal, and take the accept back with ``review return``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli.main import main
from core.model.config import Config
from core.model.entries import Status
from core.service import MemoryService
from core.storage.paths import DataDir


def run(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--data-dir", str(root), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def stored(capsys: pytest.CaptureFixture[str], root: Path, *argv: str) -> str:
    code, out, _ = run(capsys, root, "store", *argv)
    assert code == 0
    return out.split()[0]


def read(root: Path, entry_id: str) -> tuple[Status, str | None, str | None, str | None]:
    """The entry's status and review reason, its deferral and pending supersession."""
    service = MemoryService(DataDir(root), Config())
    try:
        entry = service.get("main", entry_id)
        row = service.store_for("main").execute(
            "SELECT deferred_at, pending_supersedes FROM memory_entries WHERE id = ?", (entry_id,)
        )
        deferred, pending = row.fetchone()
        return entry.status, entry.review_reason, deferred, pending
    finally:
        service.close()


def test_an_accept_in_a_terminal_is_taken_back_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = stored(capsys, tmp_path, "Bank is Acme Credit Union")
    bad = stored(capsys, tmp_path, "Bank is Evil Corp", "--supersedes", good, "--trust", "low")
    assert run(capsys, tmp_path, "review", "defer", bad)[0] == 0
    before = read(tmp_path, bad)
    assert before[0] is Status.CANDIDATE and before[2] is not None and before[3] == good

    assert run(capsys, tmp_path, "review", "accept", bad)[0] == 0
    assert "Evil Corp" in run(capsys, tmp_path, "brief")[1]
    code, out, err = run(capsys, tmp_path, "review", "return", bad)
    assert (code, out, err) == (0, f"returned {bad} to review\n", "")
    # Awaiting review again, deferred and with its pending replacement, as before the
    # accept; the memory it replaced is current again.
    assert read(tmp_path, bad) == before
    brief = run(capsys, tmp_path, "brief")[1]
    assert "Acme" in brief and "Evil Corp" not in brief
    code, out, _ = run(capsys, tmp_path, "review", "--json")
    assert [e["id"] for e in json.loads(out)] == [bad]
    code, out, _ = run(capsys, tmp_path, "audit", "--action", "review_undo", "--json")
    assert json.loads(out)[0]["entry_ids"] == [bad, good]

    # Decided anew, and taken back again.
    assert run(capsys, tmp_path, "review", "accept", bad)[0] == 0
    code, out, _ = run(capsys, tmp_path, "review", "return", bad, "--json")
    assert json.loads(out) == {"returned": [bad], "left": []}


def test_an_accept_recorded_without_its_undo_details_is_taken_back_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = stored(capsys, tmp_path, "Bank is Acme Credit Union")
    bad = stored(capsys, tmp_path, "Bank is Evil Corp", "--supersedes", good, "--trust", "low")
    assert run(capsys, tmp_path, "review", "accept", bad)[0] == 0
    service = MemoryService(DataDir(tmp_path), Config())
    try:  # as an earlier version wrote it: the reason alone
        service.store_for("main").execute(
            "UPDATE audit_log SET detail = json_object('reason', json_extract(detail, "
            "'$.reason')) WHERE action = 'review_accept'"
        )
    finally:
        service.close()
    assert run(capsys, tmp_path, "review", "return", bad)[0] == 0
    status, reason, deferred, pending = read(tmp_path, bad)
    assert status is Status.CANDIDATE and reason and deferred is None and pending == good
    assert "Acme" in run(capsys, tmp_path, "brief")[1]


def test_what_cannot_be_taken_back_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = stored(capsys, tmp_path, "Standup is at 9:30")
    held = stored(capsys, tmp_path, "Deploys go out on Tuesdays", "--trust", "low")
    code, _, err = run(capsys, tmp_path, "review", "return", mine)
    assert code == 1 and f"{mine} was never accepted from review" in err
    code, _, err = run(capsys, tmp_path, "review", "return", held)
    assert code == 1 and f"{held} awaits review already; nothing to take back" in err
    code, _, err = run(capsys, tmp_path, "review", "return", "mem-nope")
    assert code == 1 and "no entry mem-nope in group main" in err
    assert run(capsys, tmp_path, "review", "return", "--all")[0] == 2
    code, _, err = run(capsys, tmp_path, "review", "return")
    assert code == 2 and "needs at least one accepted memory's id" in err

    # Accepted, then edited: the new version stands, and the accept is not taken back.
    assert run(capsys, tmp_path, "review", "accept", held)[0] == 0
    stored(capsys, tmp_path, "Deploys go out on Wednesdays", "--supersedes", held)
    code, out, err = run(capsys, tmp_path, "review", "return", held)
    assert code == 1 and out == ""
    assert err == (
        f"error: not returned: {held} changed since the accept (edited, deleted, or replaced, "
        "or the memory it replaced was replaced again) and stays as it is\n"
    )
    assert read(tmp_path, held)[0] is Status.ACTIVE


def test_reject_all_asks_first_and_ids_typed_one_by_one_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, `review reject --all` deleted every memory awaiting review at once.
    held = [
        stored(capsys, tmp_path, f"Deploys go out on day {n}", "--trust", "low") for n in (1, 2)
    ]
    code, out, err = run(capsys, tmp_path, "review", "reject", "--all")  # stdin: no terminal
    assert (code, out) == (1, "")
    assert err == (
        "error: rejecting every memory awaiting review deletes them and needs "
        "confirmation: run it in a terminal or pass --yes\n"
    )
    code, _, err = run(capsys, tmp_path, "--json", "review", "reject", "--all")
    assert (code, json.loads(err)["error"]["field"]) == (1, "yes")
    assert [read(tmp_path, i)[0] for i in held] == [Status.CANDIDATE] * 2
    # accept and defer --all are not asked about: an accept is taken back with return.
    assert run(capsys, tmp_path, "review", "defer", "--all")[0] == 0
    # One id names what goes, as `ambry delete ID` does.
    code, out, _ = run(capsys, tmp_path, "review", "reject", held[0])
    assert (code, out) == (0, f"rejected {held[0]}\n")
    code, out, _ = run(capsys, tmp_path, "review", "reject", "--all", "--yes")
    assert (code, out) == (0, f"rejected {held[1]}\n")
    assert run(capsys, tmp_path, "review")[1] == "nothing awaits review\n"


def test_an_accept_says_what_it_replaces_even_when_that_changed_while_it_waited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pixel = stored(capsys, tmp_path, "User's phone is a Pixel 7")
    code, iphone, err = run(
        capsys,
        tmp_path,
        "store",
        "User's phone is an iPhone 15",
        "--supersedes",
        pixel,
        "--trust",
        "low",
    )
    iphone = iphone.strip()
    assert code == 0 and (
        f"`ambry review accept {iphone}` makes it active and replaces {pixel}" in err
    )
    galaxy = stored(capsys, tmp_path, "User's phone is a Galaxy S24", "--supersedes", pixel)
    code, out, _ = run(capsys, tmp_path, "review", "accept", iphone)
    assert (code, out) == (
        0,
        f"accepted {iphone}; it replaces {galaxy}, which replaced {pixel} since\n",
    )
    brief = run(capsys, tmp_path, "brief")[1]
    assert "iPhone 15" in brief and "Galaxy" not in brief and "Pixel" not in brief

    # Taken back, and accepted again under --json: the same, in keys.
    assert run(capsys, tmp_path, "review", "return", iphone)[0] == 0
    assert "Galaxy" in run(capsys, tmp_path, "brief")[1]
    code, out, _ = run(capsys, tmp_path, "--json", "review", "accept", iphone)
    assert json.loads(out)["accepted"] == [
        {"id": iphone, "superseded": galaxy, "written_to_supersede": pixel}
    ]
    # A candidate whose memory was deleted while it waited replaces nothing, and says so.
    lone = stored(capsys, tmp_path, "Office is in Berlin")
    moved = stored(capsys, tmp_path, "Office is in Munich", "--supersedes", lone, "--trust", "low")
    assert run(capsys, tmp_path, "delete", lone)[0] == 0
    code, out, _ = run(capsys, tmp_path, "review", "accept", moved)
    assert out == (
        f"accepted {moved}; it replaces nothing: {lone}, which it was written to replace, "
        "was deleted since\n"
    )


def test_storing_a_candidates_text_yourself_makes_it_active(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    held = stored(capsys, tmp_path, "User's sister lives in Oslo", "--trust", "low")
    # A write that would itself await review leaves it waiting.
    code, out, err = run(capsys, tmp_path, "store", "User's sister lives in Oslo", "--trust", "low")
    assert out.strip() == held and "awaiting review" in err
    code, out, err = run(capsys, tmp_path, "store", "User's sister lives in Oslo")
    assert (code, out.strip()) == (0, held)
    assert "awaiting review (" not in err
    assert (
        "it awaited review (low-trust source (operator)); this store made it active "
        f"(`ambry review return {held}` takes that back)"
    ) in err
    assert read(tmp_path, held)[0] is Status.ACTIVE
    assert "sister lives in Oslo" in run(capsys, tmp_path, "brief")[1]
    assert run(capsys, tmp_path, "review", "return", held)[0] == 0
    assert read(tmp_path, held)[0] is Status.CANDIDATE
