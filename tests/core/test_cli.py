from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from core.cli.main import main
from core.continuity.episodes import log_exchange
from core.model.config import Config
from core.model.entries import Actor, iso, utc_now
from core.recall import search
from core.service import MemoryService
from core.storage.paths import DataDir


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_store_search_show_delete_round_trip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path)
    code, out, _ = run(
        capsys,
        "--data-dir",
        d,
        "store",
        "--type",
        "fact",
        "--tags",
        "pets,home",
        "User's dog is named Luna",
    )
    assert code == 0
    entry_id = out.strip()
    assert entry_id.startswith("mem-")

    # Global options are accepted after the command too.
    code, out, _ = run(capsys, "search", "luna", "--json", "--data-dir", d)
    results = json.loads(out)["results"]
    assert code == 0 and results[0]["id"] == entry_id
    assert set(results[0]) >= {
        "id",
        "type",
        "content",
        "behavioral",
        "tags",
        "created_at",
        "relevance_score",
    }

    code, out, _ = run(capsys, "--data-dir", d, "show", entry_id)
    assert "User's dog is named Luna" in out and "pets, home" in out

    code, out, _ = run(
        capsys,
        "--data-dir",
        d,
        "store",
        "--supersedes",
        entry_id,
        "User's dog is named Luna Belle",
        "--json",
    )
    new = json.loads(out)
    assert new["created"] is True
    code, out, _ = run(capsys, "--data-dir", d, "history", new["id"], "--json")
    assert [e["id"] for e in json.loads(out)] == [entry_id, new["id"]]

    # Deleting the new version makes the one it replaced current again, and says so.
    code, out, _ = run(capsys, "--data-dir", d, "delete", new["id"])
    assert code == 0 and out == (
        f"deleted {new['id']}\n{entry_id} is current again: User's dog is named Luna\n"
    )
    code, out, _ = run(capsys, "--data-dir", d, "search", "belle", "--mode", "keyword")
    assert out.strip() == "no matching memories"
    code, out, _ = run(capsys, "--data-dir", d, "list", "--json")
    assert [e["id"] for e in json.loads(out)] == [entry_id]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--group", "../x", "search", "a"], "invalid group name"),
        (["show", "mem-nope"], "no entry mem-nope"),
        (["store", "x" * 2001], "content must be at most 2000 characters"),
        (["store", "--supersedes", "mem-nope", "text"], "cannot supersede mem-nope"),
        (["search", "--limit", "500", "x"], "limit must be at most 100"),
    ],
)
def test_errors_are_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, _, err = run(capsys, "--data-dir", str(tmp_path), *argv)
    assert code == 1
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--data-dir", str(tmp_path), "store", "--type", "opinion", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ambry") and "error: argument --type" in err


def test_list_shows_private_entries_decrypted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], memory_keyring: object
) -> None:
    d = str(tmp_path)
    code, _, _ = run(
        capsys, "--data-dir", d, "store", "Sees a physio on Mondays", "--privacy", "private"
    )
    assert code == 0
    code, out, _ = run(capsys, "--data-dir", d, "list")
    assert code == 0 and "Sees a physio on Mondays" in out
    code, out, _ = run(capsys, "--data-dir", d, "list", "--json")
    assert [e["content"] for e in json.loads(out)] == ["Sees a physio on Mondays"]


def test_each_command_ends_the_session_it_opened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, every command that wrote or searched left an operator session open
    # for good: the sessions list grew by one "open" session per command run.
    d = ["--data-dir", str(tmp_path)]
    assert run(capsys, *d, "store", "--type", "fact", "The NAS is in the attic")[0] == 0
    assert run(capsys, *d, "search", "attic")[0] == 0
    with apsw.Connection(str(tmp_path / "memory" / "main.sqlite")) as db:
        states = [r[0] for r in db.execute("SELECT end_state FROM sessions")]
        ends = db.execute("SELECT count(*) FROM audit_log WHERE action = 'session_end'")
        assert states == ["ended", "ended"] and ends.fetchone()[0] == 2


def test_opening_a_thread_and_attaching_say_what_they_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    d = ["--data-dir", str(tmp_path / "data")]
    token = "ghp_CliThrAb12Cd34Ef56Gh78Ij90KlMnOpQrSt"
    code, out, err = run(capsys, *d, "threads", "open", f"Deploy {token}")
    assert code == 0 and out.startswith("thr-")
    assert err == "note: 1 secret replaced by [SECRET_REDACTED]: github_token\n"
    tid = out.strip()
    plain = tmp_path / "plain.txt"
    plain.write_text("x\n")
    code, out, err = run(
        capsys, *d, "attach", str(plain), "--observation", f"token {token}", "--turn", f"t {token}"
    )
    assert code == 0 and token not in out + err
    assert err.splitlines()[-1] == "note: 2 secrets replaced by [SECRET_REDACTED]: github_token"
    # Renaming too: before, the title was stored redacted without a word.
    stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    code, out, err = run(capsys, *d, "threads", "rename", tid, f"Release {stripe}")
    assert (code, out) == (0, f"renamed {tid} to 'Release [SECRET_REDACTED]'\n")
    assert err == "note: 1 secret replaced by [SECRET_REDACTED]: stripe_live_key\n"
    assert run(capsys, *d, "threads", "rename", tid, "Release") == (
        0,
        f"renamed {tid} to 'Release'\n",
        "",
    )


def test_show_and_history_call_a_superseded_version_superseded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    old = run(capsys, *d, "store", "Lives in Lyon")[1].strip()
    new = run(capsys, *d, "store", "Lives in Paris", "--supersedes", old)[1].strip()
    shown = run(capsys, *d, "show", old)[1].splitlines()[0]
    assert shown == f"{old}  [fact] superseded by {new}"
    history = run(capsys, *d, "history", new)[1]
    assert f"{old}  [fact] superseded by {new}" in history
    assert f"{new}  [fact] active" in history and "active, superseded" not in history


def test_store_says_what_it_redacted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Before, the person saw only the id, as if the text had been kept as typed.
    d = ["--data-dir", str(tmp_path)]
    code, out, err = run(capsys, *d, "store", "AKIAQ3EGUZ7W4NXM2KFB is the access key id for CI")
    assert code == 0 and out.startswith("mem-") and len(out.split()) == 1
    assert err == "note: 1 secret replaced by [SECRET_REDACTED]: aws_access_key\n"
    code, out, _ = run(capsys, *d, "--json", "store", "AKIAQ3EGUZ7W4NXM2KFC belongs to staging")
    said = json.loads(out)
    assert said["redacted"] == 1 and said["redacted_kinds"] == {"aws_access_key": 1}
    assert said["content"] == "[SECRET_REDACTED] belongs to staging"


def test_store_prints_the_id_alone_and_its_notes_on_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, "mem-…  (awaiting review: low-trust source (operator))" on stdout:
    # `id=$(ambry store …)` captured the note with the id.
    d = ["--data-dir", str(tmp_path)]
    code, out, err = run(capsys, *d, "store", "Prefers tea", "--trust", "low")
    entry_id = out.strip()
    assert code == 0 and out == f"{entry_id}\n" and entry_id.startswith("mem-")
    assert err == (
        "note: awaiting review (low-trust source (operator)): "
        f"`ambry review accept {entry_id}` makes it active\n"
    )
    assert run(capsys, *d, "show", entry_id)[0] == 0
    code, out, err = run(capsys, *d, "store", "Likes green tea")
    again = run(capsys, *d, "store", "Likes green tea")
    assert again == (0, out, "note: already stored; the existing entry was kept\n")
    # --json keeps its keys, and stderr stays quiet: the JSON says it all.
    code, out, err = run(capsys, *d, "--json", "store", "Prefers coffee", "--trust", "low")
    said = json.loads(out)
    assert (code, err) == (0, "")
    assert said["status"] == "candidate" and said["review_reason"] == "low-trust source (operator)"


def test_store_names_the_memory_that_replaced_the_same_text_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    tea = run(capsys, *d, "store", "User likes tea", "--type", "preference")[1].strip()
    coffee = run(
        capsys, *d, "store", "User prefers coffee now", "--type", "preference", "--supersedes", tea
    )[1].strip()
    code, out, err = run(capsys, *d, "store", "User likes tea.", "--type", "preference")
    assert code == 0 and out.strip() not in (tea, coffee)
    assert err == (
        f"note: this text was stored before and replaced by {coffee}, which stays current: "
        "both are current now; to make this one replace it, store it again with "
        f"--supersedes {coffee}\n"
    )
    run(capsys, *d, "delete", out.strip())
    said = json.loads(
        run(capsys, *d, "--json", "store", "User likes tea", "--type", "preference")[1]
    )
    assert said["created"] is True and said["replaced_earlier_by"] == coffee


def test_search_reads_on_with_offset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for fruit in ("apples", "pears", "plums"):
        assert run(capsys, *d, "store", f"Buys {fruit} every week")[0] == 0
    code, out, _ = run(capsys, *d, "search", "week", "--limit", "2", "--mode", "keyword")
    assert code == 0 and out.splitlines()[-1] == "(more follow: add --offset 2)"
    first = [line.split()[0] for line in out.splitlines()[:2]]
    code, out, _ = run(
        capsys, *d, "search", "week", "--limit", "2", "--offset", "2", "--mode", "keyword"
    )
    rest = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and len(rest) == 1 and "more follow" not in out
    # Past the last page: said as such, not as if nothing matched.
    code, out, _ = run(capsys, *d, "search", "week", "--offset", "3", "--mode", "keyword")
    assert (code, out) == (0, "no matching memories at --offset 3 or beyond\n")
    # Far past it too, without suggesting that as many match.
    code, out, _ = run(capsys, *d, "search", "week", "--offset", "200", "--mode", "keyword")
    assert (code, out) == (0, "no matching memories at --offset 200 or beyond\n")
    assert len(set(first + rest)) == 3
    # --json says where the next page starts, as memory_search does.
    code, out, err = run(capsys, *d, "--json", "search", "week", "--limit", "2")
    page = json.loads(out)
    assert (code, len(page["results"]), page["next_offset"], err) == (0, 2, 2, "")
    code, out, err = run(capsys, *d, "--json", "search", "week", "--offset", "2")
    page = json.loads(out)
    assert (code, len(page["results"]), err) == (0, 1, "") and "next_offset" not in page


def test_the_deepest_page_says_more_match_under_json_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for fruit in ("apples", "pears", "plums"):
        assert run(capsys, *d, "store", f"Buys {fruit} every week")[0] == 0
    monkeypatch.setattr(search, "MAX_SEARCH_OFFSET", 1)
    argv = ["search", "week", "--limit", "1", "--offset", "1", "--mode", "keyword"]
    says = "(more match than paging reaches: narrow the search with more words, --type or --tags)"
    code, out, err = run(capsys, *d, *argv)
    assert (code, out.splitlines()[-1], err) == (0, says, "")
    code, out, err = run(capsys, *d, "--json", *argv)
    page = json.loads(out)
    assert (code, len(page["results"]), page["truncated"], err) == (0, 1, True, "")


def test_duplicates_lists_a_paraphrase_and_keeps_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    _, keep, _ = run(capsys, *d, "store", "--tags", "ui", "User prefers dark mode in the editor")
    _, other, _ = run(
        capsys, *d, "store", "--tags", "editor", "The user prefers dark mode in editors"
    )
    run(capsys, *d, "store", "User's dog is named Luna")
    run(capsys, *d, "store", "User's cat is named Luna")
    keep, other = keep.strip(), other.strip()

    code, out, _ = run(capsys, *d, "duplicates")  # embeds the new rows first
    assert code == 0
    assert out.startswith("1 cluster of near-duplicates among 4 memories compared")
    assert keep in out and other in out and "Luna" not in out
    code, out, _ = run(capsys, *d, "duplicates", "--json", "--threshold", "0.95")
    [cluster] = json.loads(out)["clusters"]
    assert [e["id"] for e in cluster["entries"]] == [keep, other]
    assert cluster["similarity"] >= 0.95

    # Without a terminal to ask on, nothing is deleted without --yes.
    code, _, err = run(capsys, *d, "duplicates", "keep", keep)
    assert code == 1 and "--yes" in err
    code, out, _ = run(capsys, *d, "duplicates", "keep", keep, "--yes", "--json")
    done = json.loads(out)
    assert code == 0 and done["deleted"] == [other] and done["tags_added"] == ["editor"]
    assert done["kept"]["tags"] == ["ui", "editor"]
    code, out, _ = run(capsys, *d, "duplicates")
    assert out.startswith("0 clusters of near-duplicates among 3 memories compared")
    code, _, err = run(capsys, *d, "duplicates", "keep", done["kept"]["id"], "--yes")
    assert code == 1 and "no near-duplicate" in err


def test_duplicates_keep_gives_the_kept_memory_the_pin_of_the_one_deleted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    _, fact, _ = run(capsys, *d, "store", "--tags", "diet", "User drinks oat milk")
    run(capsys, *d, "pin", fact.strip())
    _, pref, _ = run(capsys, *d, "store", "--type", "preference", "User drinks oat milk")
    code, out, _ = run(capsys, *d, "duplicates", "keep", pref.strip(), "--yes")
    # The tag makes a new version of the preference: that one is current, and pinned.
    assert code == 0 and out.startswith("kept mem-") and "which took their pin" in out
    kept_id = out.split()[1]
    code, out, _ = run(capsys, *d, "show", kept_id, "--json")
    kept = json.loads(out)
    assert (kept["type"], kept["pinned"], kept["tags"]) == ("preference", True, ["diet"])


def test_storing_a_text_again_adds_its_new_tags_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path)]
    _, first, _ = run(capsys, *d, "store", "--tags", "home", "User lives in Lisbon")
    code, out, err = run(capsys, *d, "store", "--tags", "city", "User lives in Lisbon")
    assert (code, out) == (0, first)
    assert (
        err == "note: already stored; the existing entry was kept\nnote: it took the tag 'city'\n"
    )
    code, out, _ = run(capsys, *d, "show", first.strip(), "--json")
    assert json.loads(out)["tags"] == ["home", "city"]
    # A write held for review (low trust) does not change the active memory's tags.
    code, out, err = run(
        capsys, *d, "store", "--tags", "porto", "--trust", "low", "User lives in Lisbon"
    )
    assert code == 0 and "tag 'porto' not added: a write held for review" in err
    assert f"--supersedes {first.strip()}" in err


def test_list_says_when_more_follow_and_when_it_read_past_the_end(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, a full page ended as if it were the last, and an offset past the last
    # entry said "no memories", as an empty store does.
    d = ["--data-dir", str(tmp_path), "--create"]
    assert run(capsys, *d, "list") == (0, "no memories\n", "")
    for n in range(5):
        assert run(capsys, *d, "store", f"Fact number {n}")[0] == 0
    code, out, _ = run(capsys, *d, "list", "--limit", "3")
    assert code == 0 and out.count("\nmem-") + out.startswith("mem-") == 3
    assert out.endswith("\n(more follow: add --offset 3)\n") and "Fact number 2" in out
    code, out, _ = run(capsys, *d, "list", "--limit", "3", "--offset", "3")
    assert "Fact number 1" in out and "Fact number 0" in out and "more follow" not in out
    code, out, _ = run(capsys, *d, "list", "--limit", "5")
    assert "more follow" not in out
    assert run(capsys, *d, "list", "--offset", "1500") == (
        0,
        "no memories at --offset 1500 or beyond\n",
        "",
    )
    # --json: stdout keeps the list of entries, the line goes to stderr.
    code, out, err = run(capsys, *d, "--json", "list", "--limit", "3")
    assert [e["content"] for e in json.loads(out)] == [f"Fact number {n}" for n in (4, 3, 2)]
    assert err == "(more follow: add --offset 3)\n"
    assert run(capsys, *d, "--json", "list", "--offset", "1500") == (0, "[]\n", "")


def test_a_passphrase_that_cannot_be_asked_for_names_how_to_give_it(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    memory_keyring: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Under pytest standard input is not a terminal, as with `</dev/null`.
    data = ("--data-dir", str(tmp_path / "data"), "--create")
    assert run(capsys, *data, "store", "--privacy", "private", "Sees Dr Ames")[0] == 0
    out = tmp_path / "all.jsonl"
    code, _, err = run(capsys, *data, "export", str(out), "--include-private")
    assert code == 1 and not out.exists()
    assert "needs a passphrase to encrypt them" in err
    assert "run it in a terminal" in err and "--passphrase-env VAR" in err
    code, _, err = run(capsys, *data, "--json", "export", str(out), "--include-private")
    assert code == 1 and json.loads(err)["error"]["field"] == "passphrase_env"
    monkeypatch.setenv("AMBRY_PASS", "correct horse")
    assert (
        run(
            capsys, *data, "export", str(out), "--include-private", "--passphrase-env", "AMBRY_PASS"
        )[0]
        == 0
    )
    other = ("--data-dir", str(tmp_path / "other"), "--create")
    code, _, err = run(capsys, *other, "import", str(out))
    assert code == 1 and "the passphrase it was exported with" in err
    assert "run it in a terminal" in err and "--passphrase-env VAR" in err
    assert run(capsys, *other, "import", str(out), "--passphrase-env", "AMBRY_PASS")[0] == 0


def test_layers_and_recall_print_turn_times_in_utc_with_a_z(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, "#1 2026-11-25T12:35": UTC, but unmarked, while `exchanges` adds the Z.
    data = DataDir(tmp_path)
    data.ensure()
    service = MemoryService(data, Config())
    try:
        agent = service.open_session("main", Actor.AGENT, "tests")
        said = utc_now() - timedelta(hours=1)
        turn = log_exchange(
            service, agent, "user", "The lighthouse keeper retires in May.", at=iso(said)
        )
    finally:
        service.close()
    stamp = f"#{turn.exchange.id} {said:%Y-%m-%dT%H:%M}Z "
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "layers")
    assert code == 0 and f"[flash] {stamp}" in out
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "recall", "lighthouse keeper")
    assert code == 0 and stamp in out
