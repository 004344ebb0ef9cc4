"""What people expect of a command line: no silent new stores, refused bad names,
JSON errors under --json, a log file, and shell completion from the parser."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import logging.handlers
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from core.cli.logfile import log_file
from core.cli.main import build_parser, main
from core.storage.paths import DataDir

AMBRY = Path(sys.executable).with_name("ambry")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_mistyped_data_dir_is_refused_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "dta"
    code, _, err = run(capsys, "--data-dir", str(typo), "store", "Likes tea")
    assert code == 1
    assert f"data dir {typo} does not exist" in err and "--create" in err
    assert not typo.exists()


def test_an_empty_or_uncreatable_data_dir_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An unset variable ("--data-dir $DIR") must not open the default store.
    code, out, err = run(capsys, "--data-dir", "", "search", "dog")
    assert (code, out) == (1, "") and err == (
        "error: --data-dir is empty; give a directory (or leave the option out)\n"
    )
    assert not any(Path(os.environ["AMBRY_DATA_DIR"]).iterdir())
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, _, err = run(capsys, "--data-dir", str(blocker / "sub"), "--create", "search", "dog")
    assert code == 1 and err.startswith("error: cannot create data dir") and "Traceback" not in err
    assert err.count("\n") == 1


def test_a_data_dir_whose_name_is_not_utf8_is_refused_before_it_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = os.fsdecode(bytes(tmp_path) + b"/data-\xff")
    code, out, err = run(capsys, "--data-dir", odd, "--create", "store", "Likes tea")
    assert (code, out) == (1, "") and err.count("\n") == 1
    assert "is not UTF-8 text" in err and "rename the folder" in err
    assert not Path(odd).exists()


def test_a_number_too_large_for_the_store_is_a_usage_error_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for argv in (
        ["list", "--limit", "1" + "0" * 20],
        ["list", "--offset", "9" * 30],
        ["audit", "--limit", "1e3"],
        ["exchanges", "--offset", "1.5"],
    ):
        code, out, err = run(capsys, *d, *argv)
        assert (code, out) == (2, ""), argv
        assert "Traceback" not in err and ("too large" in err or "not a whole number" in err)


def test_a_mistyped_group_is_refused_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    assert run(capsys, *d, "--group", "work", "store", "Standup at nine")[0] == 0
    for argv in (["search", "standup"], ["list"], ["exchanges"], ["brief"]):
        code, out, err = run(capsys, *d, "--group", "wrok", *argv)
        assert (code, out) == (1, ""), argv
        assert err.startswith("error: no group 'wrok'") and "groups: work" in err
    code, out, err = run(capsys, *d, "--group", "wrok", "--json", "list")
    refused = json.loads(err)["error"]
    assert code == 1 and (refused["code"], refused["field"], refused["rule"]) == (
        "invalid_group",
        "group",
        "exists",
    )
    assert DataDir(tmp_path).groups() == ["work"]
    # Storing into a new group starts it; the default group needs no name.
    assert run(capsys, *d, "--group", "home", "store", "Bins go out on Monday")[0] == 0
    assert DataDir(tmp_path).groups() == ["home", "work"]
    assert run(capsys, *d, "search", "bins")[0] == 0


def test_blank_arguments_are_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for argv, says in (
        (["show", ""], "id must not be empty"),
        (["delete", "  "], "id must not be empty"),
        (["ingest", ""], "give a file to read, or - for standard input"),
        # An empty --supersedes was dropped: a new entry, the old one left current.
        (["store", "--supersedes", "", "Lives in Lyon"], "--supersedes must not be empty"),
        (["store", "--supersedes", " ", "Lives in Lyon"], "--supersedes must not be empty"),
        (["claims", "show", ""], "id must not be empty: give a claim id (clm-...)"),
        (["claims", "verify", " "], "id must not be empty: give a claim id (clm-...)"),
    ):
        code, _, err = run(capsys, *d, *argv)
        assert code == 1 and err.startswith(f"error: {says}") and err.count("\n") == 1, argv
    assert run(capsys, *d, "list")[1] == "no memories\n"  # nothing was stored
    code, _, err = run(capsys, *d, "--json", "search", "--limit", "0", "dog")
    assert json.loads(err)["error"]["message"] == "--limit must be at least 1"


def test_ingest_of_a_file_too_long_names_the_file_and_says_to_split_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    notes = tmp_path / "notes.txt"
    notes.write_text("[MEMORY:preference] Likes tea\n" + "x" * 100_000, encoding="utf-8")
    code, _, err = run(capsys, *d, "ingest", str(notes))
    assert (code, err) == (
        1,
        f"error: {notes} holds 100,030 characters and ingest reads at most 100,000 at a "
        "time; split it into smaller files and ingest each\n",
    )
    assert run(capsys, *d, "list")[1] == "no memories\n"


@pytest.mark.parametrize(
    ("argv", "says", "field"),
    [
        (
            ["store", "Works on billing", "--tags", "work,"],
            "--tags 'work,': tag 2 is empty; take out the extra comma",
            "tags.1",
        ),
        (
            ["store", "Works on billing", "--tags", "work, ,home"],
            "--tags 'work, ,home': tag 2 is empty; take out the extra comma",
            "tags.1",
        ),
        (
            ["store", "Works on billing", "--tags", ""],
            "--tags is empty; give tags separated by commas, or leave the option out",
            "tags",
        ),
        (
            ["search", "billing", "--tags", ",work"],
            "--tags ',work': tag 1 is empty; take out the extra comma",
            "tags.0",
        ),
        (  # an unset shell variable: never a search of every tag
            ["search", "billing", "--tags", ""],
            "--tags is empty; give tags separated by commas, or leave the option out",
            "tags",
        ),
    ],
)
def test_an_empty_tag_is_refused_not_dropped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str, field: str
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    code, out, err = run(capsys, *d, *argv)
    assert (code, out, err) == (1, "", f"error: {says}\n")
    code, _, err = run(capsys, *d, "--json", *argv)
    error = json.loads(err)["error"]
    assert (code, error["message"], error["field"], error["rule"]) == (1, says, field, "minLength")
    assert DataDir(tmp_path).groups() == []  # nothing stored, no group started


def test_errors_name_options_not_agent_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for command in ("search", "exchanges"):
        code, _, err = run(capsys, *d, command, "--limit", "0", "dog")
        assert (code, err) == (1, "error: --limit must be at least 1\n"), command
        code, _, err = run(capsys, *d, command, "--offset", "1001", "dog")
        assert (code, err) == (1, "error: --offset must be at most 1000\n"), command
    code, _, err = run(capsys, *d, "exchanges", "x" * 501)
    assert (code, err) == (1, "error: query must be at most 500 characters\n")


def test_a_refusal_names_the_option_and_the_argument_as_the_command_takes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "write with the new base_version" (the tool's parameter) for a stale
    # --base-version, and "no thread titled 'thr-nope'" for an argument meant as an id.
    d = ["--data-dir", str(tmp_path), "--create"]
    plan = tmp_path / "plan.md"
    plan.write_text("# Plan\n")
    assert run(capsys, *d, "handoff", "write", "Plans", str(plan), "--create")[0] == 0
    plan.write_text("# Plan, revised\n")
    assert run(capsys, *d, "handoff", "write", "Plans", str(plan), "--base-version", "1")[0] == 0
    code, out, err = run(capsys, *d, "handoff", "write", "Plans", str(plan), "--base-version", "1")
    tid = err.split("thread ")[1].split(" ")[0]
    assert (code, out, err) == (
        1,
        "",
        f"error: the handoff of thread {tid} is at version 2, not 1; read it again, merge, "
        "and write with the new --base-version\n",
    )
    # The JSON keeps the tool's field, as every refusal under --json does.
    code, _, err = run(
        capsys, *d, "--json", "handoff", "write", "Plans", str(plan), "--base-version", "1"
    )
    error = json.loads(err)["error"]
    assert (error["field"], error["code"]) == ("base_version", "conflict")
    assert error["message"].endswith("write with the new --base-version")

    for argv in (["threads", "rename", "thr-nope", "X"], ["handoff", "show", "THR-nope"]):
        code, _, err = run(capsys, *d, *argv)
        ref = argv[2]
        assert (code, err) == (
            1,
            f"error: no thread with id {ref} in group main (a thread id is thr- and 12 hex "
            "digits, as the list of threads shows it), nor one titled so\n",
        )
    # A title is looked up as typed first, so a thread titled that way is still found.
    assert run(capsys, *d, "threads", "open", "thr-notes")[0] == 0
    assert run(capsys, *d, "threads", "rename", "thr-notes", "Notes")[0] == 0
    # A plain word in a message is left alone: only a parameter's name is an option.
    code, _, err = run(capsys, *d, "handoff", "show", "Nothing here")
    assert err.startswith("error: no thread titled 'Nothing here' in group main")


def test_every_thread_option_takes_the_thread_s_id_or_its_title(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wherever a command takes a thread, its id or its title will do (continuity.md).
    Before, attach and claims extract took an id only: "error: no thread Ops in group main"."""
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    tid = run(capsys, *d, "threads", "open", "Ops")[1].strip()
    notes = tmp_path / "notes.txt"
    notes.write_text("The deploy runs at noon\n")
    code, out, _ = run(capsys, *d, "--json", "attach", str(notes), "--thread", "ops")
    assert (code, json.loads(out)["thread_id"]) == (0, tid)
    code, out, _ = run(capsys, *d, "--json", "claims", "extract", "--thread", "OPS")
    assert code == 0 and json.loads(out)["handoffs"] == 0
    code, out, _ = run(capsys, *d, "--json", "attachments", "--thread", "Ops")
    assert code == 0 and len(json.loads(out)["receipts"]) == 1
    # A title that names no thread says how to find or make one, as every command does.
    for argv in (
        ["attach", str(notes)],
        ["claims", "extract"],
        ["attachments"],
        ["exchanges", "deploy"],
        ["layers"],
        ["brief"],
    ):
        assert run(capsys, *d, *argv, "--thread", "Nope") == (
            1,
            "",
            "error: no thread titled 'Nope' in group main; `ambry threads` lists the threads, "
            "`ambry threads open TITLE` creates one\n",
        ), argv
    # Every --thread says so in the help: THREAD, not ID (`ambry mcp` opens a title too).
    found = {}

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for option in parser._actions:
            if isinstance(option, argparse._SubParsersAction):
                for name, sub in option.choices.items():
                    walk(sub, f"{path} {name}".strip())
            elif "--thread" in option.option_strings:
                found[path] = option.metavar

    walk(build_parser(), "")
    assert found.pop("mcp") == "TITLE|ID"
    assert set(found.values()) == {"THREAD"}, found
    assert {"attach", "claims extract", "attachments", "exchanges", "layers", "brief"} <= set(found)


@pytest.mark.parametrize("where", ["before", "after"])
def test_create_makes_the_data_dir_owner_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    new = tmp_path / "new-store"
    argv = ["--data-dir", str(new), "store", "Likes tea"]
    argv = ["--create", *argv] if where == "before" else [*argv, "--create"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and out.startswith("mem-")
    assert (new.stat().st_mode & 0o777) == 0o700
    assert DataDir(new).groups() == ["main"]


def test_the_default_location_is_created_on_first_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    platform = tmp_path / "platform" / "Ambry"
    monkeypatch.delenv("AMBRY_DATA_DIR")
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *_, **__: str(platform))
    code, _, _ = run(capsys, "store", "Likes tea")
    assert code == 0
    assert DataDir(platform).groups() == ["main"]
    assert (platform.stat().st_mode & 0o777) == 0o700


def test_a_data_dir_named_by_the_environment_must_exist_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "stroe"
    monkeypatch.setenv("AMBRY_DATA_DIR", str(typo))
    code, out, err = run(capsys, "list")
    assert (code, out) == (1, "") and err == (
        f"error: data dir {typo} (from AMBRY_DATA_DIR) does not exist; check the variable, "
        "or add --create to start a new store there\n"
    )
    code, _, err = run(capsys, "--json", "store", "Likes tea")
    refused = json.loads(err)["error"]
    assert code == 1 and "(from AMBRY_DATA_DIR) does not exist" in refused["message"]
    # A documented code, as for a relative AMBRY_DATA_DIR (not the catch-all "error").
    assert (refused["code"], refused["field"], refused["rule"]) == (
        "invalid_params",
        "AMBRY_DATA_DIR",
        "exists",
    )
    monkeypatch.delenv("AMBRY_DATA_DIR")
    code, _, err = run(capsys, "--json", "--data-dir", str(typo), "list")
    assert code == 1 and json.loads(err)["error"]["field"] == "data_dir"
    monkeypatch.setenv("AMBRY_DATA_DIR", str(typo))
    assert not typo.exists()
    code, out, _ = run(capsys, "--create", "store", "Likes tea")
    assert code == 0 and out.startswith("mem-") and DataDir(typo).groups() == ["main"]


def test_a_relative_data_dir_in_the_environment_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "store").mkdir()
    monkeypatch.setenv("AMBRY_DATA_DIR", "store")
    for argv in (["list"], ["--create", "store", "x"], ["setup", "cursor", "--print"]):
        code, out, err = run(capsys, *argv)
        assert (code, out) == (1, ""), argv
        assert err.startswith("error: AMBRY_DATA_DIR=store is a relative path") and (
            f"set it to an absolute path, such as {tmp_path / 'store'}" in err
        )
    code, _, err = run(capsys, "--json", "list")
    error = json.loads(err)["error"]
    assert (code, error["code"], error["field"]) == (1, "invalid_params", "AMBRY_DATA_DIR")
    assert not any((tmp_path / "store").iterdir())
    # On the command line a relative path is fine: it is resolved where it is typed.
    code, _, _ = run(capsys, "--data-dir", "store", "store", "Likes tea")
    assert code == 0 and DataDir(tmp_path / "store").groups() == ["main"]


def test_a_relative_log_dir_in_the_environment_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As AMBRY_DATA_DIR: each process would log in its own working directory.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AMBRY_LOG_DIR", "logs")
    d = ["--data-dir", str(tmp_path / "data")]
    for argv in (["--create", "store", "x"], ["doctor", "--no-mcp"], ["completion", "bash"]):
        code, out, err = run(capsys, *d, *argv)
        assert (code, out) == (1, ""), argv
        assert err == (
            "error: AMBRY_LOG_DIR=logs is a relative path, so it would name another folder "
            "in every working directory (MCP clients and the app start Ambry elsewhere); "
            f"set it to an absolute path, such as {tmp_path / 'logs'}\n"
        )
    code, _, err = run(capsys, *d, "--json", "list")
    error = json.loads(err)["error"]
    # A setting to fix, as a bad value in the settings file is; not a storage fault.
    assert (code, error["code"], error["field"], error["rule"]) == (
        1,
        "invalid_params",
        "AMBRY_LOG_DIR",
        "absolute",
    )
    assert error["message"].startswith("AMBRY_LOG_DIR=logs is a relative path")
    assert sorted(tmp_path.iterdir()) == []  # no data dir, no log folder
    monkeypatch.setenv("AMBRY_LOG_DIR", str(tmp_path / "logs"))
    assert run(capsys, *d, "--create", "store", "x")[0] == 0
    assert (tmp_path / "logs" / "ambry.log").is_file()


def test_doctor_fails_a_relative_socket_in_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AMBRY_SOCKET", "agent.sock")
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "--json", "doctor", "--no-mcp")
    [socket] = [f for f in json.loads(out) if f["check"] == "socket"]
    assert code == 1 and socket["status"] == "fail"
    assert socket["detail"].startswith("AMBRY_SOCKET=agent.sock is a relative path")


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME moves the default on Linux")
@pytest.mark.parametrize("blocked_by", ["a file", "a read-only folder"])
def test_a_default_data_dir_that_cannot_be_created_is_one_clear_error(
    tmp_path: Path, blocked_by: str
) -> None:
    # As for a user whose HOME does not exist or cannot be written (a service account).
    blocker = tmp_path / "home"
    if blocked_by == "a file":
        blocker.write_text("not a folder")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder")
        blocker.mkdir(mode=0o500)
    default = blocker / "share" / "Ambry"
    env = {k: v for k, v in os.environ.items() if k != "AMBRY_DATA_DIR"}
    env |= {"XDG_DATA_HOME": str(blocker / "share"), "HOME": str(blocker)}

    def ambry(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(AMBRY), *argv], env=env, input=stdin, capture_output=True, text=True, timeout=60
        )

    advice = "pass --data-dir DIR or set AMBRY_DATA_DIR to a directory you can write to"
    for argv in (["list"], ["store", "x"]):
        done = ambry(*argv)
        assert done.returncode == 1 and done.stdout == "", argv
        [line] = done.stderr.splitlines()
        assert line.startswith(f"error: cannot create data dir {default}: ") and advice in line
    done = ambry("--json", "list")
    error = json.loads(done.stderr.splitlines()[-1])["error"]
    assert done.returncode == 1 and error["code"] == "storage_error"
    assert str(default) in error["message"] and advice in error["message"]
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }}  # fmt: skip
    reply = json.loads(ambry("mcp", stdin=json.dumps(init) + "\n").stdout.splitlines()[0])
    assert reply["error"]["code"] == -32010 and str(default) in reply["error"]["message"]
    assert advice in reply["error"]["message"]
    done = ambry("doctor", "--no-mcp", "--json")
    finding = {f["check"]: f for f in json.loads(done.stdout)}["data dir"]
    assert done.returncode == 1 and finding["status"] == "fail"
    assert finding["detail"].startswith(f"{default} cannot be created: ")
    assert "AMBRY_DATA_DIR" in finding["fix"]


def test_handoff_write_keeps_its_own_create(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "handoff.md"
    text.write_text("# Next\nShip it\n")
    code, _, err = run(
        capsys, "--data-dir", str(tmp_path), "handoff", "write", "Launch", str(text), "--create"
    )
    assert code == 0, err
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "handoff", "show", "Launch")
    assert "Ship it" in out


@pytest.mark.parametrize("group", ["", "a/b", "x" * 65])
def test_an_invalid_group_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], group: str
) -> None:
    code, _, err = run(capsys, "--data-dir", str(tmp_path), "--group", group, "search")
    assert code == 1
    assert err.startswith("error: invalid group name") and err.count("\n") == 1
    assert DataDir(tmp_path).groups() == []


def test_errors_are_json_under_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--data-dir", str(tmp_path), "show", "mem-nope", "--json")
    assert code == 1 and out == ""
    error = json.loads(err)["error"]
    assert error["code"] == "not_found" and "mem-nope" in error["message"]
    assert error["exit_status"] == 1


def test_an_unknown_option_names_no_argument_under_json(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "--json", "search", "tea", "--limt", "3")
    error = json.loads(err)["error"]
    assert (code, error["code"]) == (2, "usage") and "field" not in error and "rule" not in error


def test_usage_errors_are_json_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--json", "store", "--type", "opinion", "x")
    assert code == 2
    assert err.count("\n") == 1
    error = json.loads(err)["error"]
    assert error["code"] == "usage" and "opinion" in error["message"]
    assert (error["field"], error["rule"]) == ("type", "enum")


@pytest.mark.parametrize(
    ("argv", "field", "rule"),
    [
        (["search", "--offset", "abc", "tea"], "offset", "type"),
        (["exchanges", "--limit=1.5"], "limit", "type"),
        (["handoff", "write", "x", "-", "--base-version", "v2"], "base_version", "type"),
        (["search", "--mode", "fuzzy"], "mode", "enum"),
        (["serch", "tea"], "command", "enum"),
        (["threads", "lst"], "action", "enum"),
        (["search", "tea", "--limit"], "limit", "nargs"),
        # A missing argument, as a tool names a missing property (the first of several).
        (["show"], "id", "required"),
        (["handoff", "show"], "thread", "required"),
        (["claims"], "action", "required"),
        (["claims", "propose", "x"], "kind", "required"),
        (["threads", "rename"], "thread", "required"),
    ],
)
def test_a_usage_error_under_json_names_the_argument_and_the_rule(
    capsys: pytest.CaptureFixture[str], argv: list[str], field: str, rule: str
) -> None:
    code, out, err = run(capsys, "--json", *argv)
    error = json.loads(err)["error"]
    assert (code, out, error["exit_status"]) == (2, "", 2)
    assert (error["code"], error["field"], error["rule"]) == ("usage", field, rule)
    # The text line is argparse's, as before.
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.splitlines()[-1] == f"error: {error['message']}"


def test_each_run_logs_to_the_log_file_and_leaves_no_handler(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = list(logging.getLogger().handlers)
    run(capsys, "--data-dir", str(tmp_path), "show", "mem-nope")
    path = log_file()
    assert path == tmp_path / "logs" / "ambry.log"
    text = path.read_text()
    assert "ambry show on" in text and "refused: no entry mem-nope" in text
    assert logging.getLogger().handlers == before
    # Owner-only, like the data dir; one an older version left readable is tightened.
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o644)
    run(capsys, "--data-dir", str(tmp_path), "show", "mem-nope")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_processes_sharing_the_log_follow_each_others_rotation(tmp_path: Path) -> None:
    """Two handlers on one file stand for two processes (each holds its own file)."""
    from core.cli.logfile import _file_handler

    path = tmp_path / "ambry.log"
    server, command = _file_handler(path), _file_handler(path)
    assert isinstance(server, logging.handlers.RotatingFileHandler)
    assert isinstance(command, logging.handlers.RotatingFileHandler)
    server.maxBytes = command.maxBytes = 2000

    def record(text: str) -> logging.LogRecord:
        return logging.LogRecord("core.x", logging.INFO, __file__, 1, text, None, None)

    try:
        server.handle(record("server started"))
        for n in range(60):  # a busy command fills and rotates the file
            command.handle(record(f"command line {n:02d} " + "x" * 40))
        assert path.with_name("ambry.log.1").exists()
        server.handle(record("server still here"))
        command.handle(record("command still here"))
        for handler in (server, command):
            handler.flush()
        # Both write into the current file, and the server does not rotate the file
        # the command had just started (it would push a nearly empty file down the line).
        assert "server still here" in path.read_text()
        assert "command still here" in path.read_text()
        assert "command line 59" in path.read_text()
        assert path.with_name("ambry.log.1").stat().st_size >= 1500
        # Both rotate by the size on disk, one at a time: no file grows past the limit,
        # and none is rotated twice (which would push a nearly empty file down the line).
        for n in range(200):
            (server if n % 2 else command).handle(record(f"line {n:03d} " + "y" * 40))
        for handler in (server, command):
            handler.flush()
        files = [path, *(path.with_name(f"ambry.log.{n}") for n in (1, 2, 3))]
        sizes = [f.stat().st_size for f in files]
        assert all(size <= 2000 for size in sizes), sizes
        assert all(size >= 1500 for size in sizes[1:]), sizes
        assert "line 199" in path.read_text()
        for backup in files[1:]:
            assert stat.S_IMODE(backup.stat().st_mode) == 0o600
    finally:
        server.close()
        command.close()


def test_a_warning_reads_as_the_commands_own_and_verbose_names_its_module(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from core.cli.logfile import logging_to_file

    with logging_to_file(verbose=False):
        logging.getLogger("core.storage.db").warning("main.sqlite is open read-only")
    assert capsys.readouterr().err == "warning: main.sqlite is open read-only\n"
    with logging_to_file(verbose=True):
        logging.getLogger("core.storage.db").warning("main.sqlite is open read-only")
    assert capsys.readouterr().err == "WARNING core.storage.db: main.sqlite is open read-only\n"


# --- completion -----------------------------------------------------------------------


def completion(shell: str, capsys: pytest.CaptureFixture[str]) -> str:
    code, out, _ = run(capsys, "completion", shell)
    assert code == 0
    return out


def bash_complete(script: Path, words: str) -> list[str]:
    line = f"COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))"
    probe = f'source {script}; {line}; _ambry; printf "%s\\n" "${{COMPREPLY[@]}}"'
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_bash_completes_commands_subcommands_options_and_choices(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "ambry.bash"
    script.write_text(completion("bash", capsys))
    parser_commands = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert set(bash_complete(script, "ambry ''")) == parser_commands
    assert bash_complete(script, "ambry doc") == ["doctor"]
    assert bash_complete(script, "ambry --group work handoff ''") == [
        "show",
        "write",
        "export",
        "history",
        "restore",
        "diff",
    ]
    assert bash_complete(script, "ambry store --type ''") == [
        "preference",
        "fact",
        "instruction",
        "context",
        "correction",
    ]
    assert bash_complete(script, "ambry setup ''") == [
        "claude-desktop",
        "claude-code",
        "cursor",
        "vscode",
        "codex",
    ]
    assert "--no-mcp" in bash_complete(script, "ambry doctor --")
    # A setting's name, although `settings` checks it itself (to suggest the nearest).
    assert bash_complete(script, "ambry settings recency_") == [
        "recency_weight",
        "recency_half_life_days",
    ]


@pytest.mark.skipif(
    shutil.which("fish") is None, reason="fish is not installed (.ci/run installs it)"
)
def test_fish_completes_from_the_same_parser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "ambry.fish"
    script.write_text(completion("fish", capsys))

    def complete(line: str) -> list[str]:
        probe = f"source {script}; complete -C '{line}'"
        out = subprocess.run(["fish", "-c", probe], capture_output=True, text=True, check=True)
        return [row.split("\t")[0] for row in out.stdout.splitlines()]

    assert complete("ambry docto") == ["doctor"]
    assert complete("ambry clear ") == ["all", "episodic", "semantic"]
    assert "--client" in complete("ambry mcp --")


@pytest.mark.skipif(
    shutil.which("zsh") is None, reason="zsh is not installed (.ci/run installs it)"
)
def test_zsh_script_loads_and_registers_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "_ambry"
    script.write_text(completion("zsh", capsys))
    probe = (
        f"autoload -U compinit; compinit -u -d {tmp_path}/zcompdump; source {script}; "
        "print -r -- $_comps[ambry]; print -rl -- ${(k)functions[(I)_ambry_*]}"
    )
    out = subprocess.run(["zsh", "-fc", probe], capture_output=True, text=True, check=True)
    first, *functions = out.stdout.split()
    assert first == "_ambry"
    assert {"_ambry_store", "_ambry_handoff_write", "_ambry_setup"} <= set(functions)


def test_long_work_shows_progress_where_a_person_watches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.cli import context

    data = ["--data-dir", str(tmp_path), "--create"]
    for i in range(3):
        assert main([*data, "store", "--type", "fact", f"Fact number {i} about the garden"]) == 0
    capsys.readouterr()
    out = tmp_path / "group.jsonl"
    # Not a terminal (as here): no progress lines at all.
    assert main([*data, "export", str(out)]) == 0
    assert "exporting" not in capsys.readouterr().err
    monkeypatch.setattr(context, "watching", lambda _ctx: True)
    from core.cli import attachments
    from core.cli import data as data_commands

    monkeypatch.setattr(data_commands, "watching", lambda _ctx: True)
    monkeypatch.setattr(attachments, "watching", lambda _ctx: True)
    assert main([*data, "export", str(out)]) == 0
    assert "exporting 3/3\n" in capsys.readouterr().err
    assert main([*data, "--group", "copy", "import", str(out)]) == 0
    assert "importing" in capsys.readouterr().err
    assert context.progress_line("x", False) is None


# --- confirmation -------------------------------------------------------------------


def answer_on_a_terminal(argv: list[str], keys: bytes) -> subprocess.CompletedProcess[str]:
    """Run ``ambry`` with stdin on a terminal (stdout and stderr piped) and type ``keys``
    once it asks on stderr; fail if it has not asked within a minute."""
    import pty
    import select
    import time

    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [str(AMBRY), *argv], stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    os.close(secondary)
    assert proc.stderr is not None
    asked = b""
    deadline = time.monotonic() + 60
    try:
        while not asked.endswith(b"[y/N] "):
            ready, _, _ = select.select([proc.stderr], [], [], deadline - time.monotonic())
            chunk = os.read(proc.stderr.fileno(), 1) if ready else b""
            assert chunk, f"no question on stderr: {asked.decode()!r}"
            asked += chunk
        os.write(primary, keys)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
        os.close(primary)
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, out.decode(), (asked + err).decode()
    )


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_a_question_goes_to_stderr_and_ctrl_d_is_a_no(tmp_path: Path) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    assert main([*d, "store", "Luna is the dog"]) == 0
    assert main([*d, "threads", "open", "Launch"]) == 0
    assert main([*d, "store", "Deploys go out on Tuesdays", "--trust", "low"]) == 0
    # stdout holds the JSON only, never the question: `--json forget … > out.json`.
    done = answer_on_a_terminal([*d, "--json", "forget", "luna"], b"n\n")
    assert (done.returncode, done.stdout) == (1, "")
    question, error = done.stderr.split("[y/N] ")  # the terminal echoes the answer
    assert question == "Forget them? "
    assert json.loads(error)["error"]["message"] == "cancelled; nothing was forgotten"
    # End of input (Ctrl-D) is a no, not a traceback; for every command that asks.
    for argv in (
        ["forget", "luna"],
        ["clear", "semantic"],
        ["trash", "empty"],
        ["threads", "delete", "Launch"],
        ["review", "reject", "--all"],
    ):
        done = answer_on_a_terminal([*d, *argv], b"\x04")
        assert done.returncode == 1, argv
        assert "Traceback" not in done.stderr, argv
        assert done.stderr.splitlines()[-1].startswith("error: cancelled; "), argv
    assert main([*d, "search", "luna"]) == 0
    assert main([*d, "threads", "delete", "Launch", "--yes"]) == 0


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_review_reject_all_asks_before_it_deletes(tmp_path: Path) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    assert main([*d, "store", "Deploys go out on Tuesdays", "--trust", "low"]) == 0
    done = answer_on_a_terminal([*d, "review", "reject", "--all"], b"n\n")
    question, error = done.stderr.split("[y/N] ")
    assert question == "Reject 1 memory awaiting review in group main? They are deleted for good. "
    assert (done.returncode, done.stdout) == (1, "")
    assert error.endswith("error: cancelled; nothing was rejected\n")
    done = answer_on_a_terminal([*d, "review", "reject", "--all"], b"y\n")
    assert done.returncode == 0 and done.stdout.startswith("rejected mem-")
    assert main([*d, "--json", "review"]) == 0


def test_bytes_that_are_not_utf8_are_one_clear_error(tmp_path: Path) -> None:
    d = [b"--data-dir", str(tmp_path).encode(), b"--create"]
    latin1 = "café".encode("latin-1")

    def ambry(*argv: bytes, stdin: bytes = b"") -> tuple[int, str, str]:
        done = subprocess.run(
            [str(AMBRY).encode(), *d, *argv], input=stdin, capture_output=True, timeout=60
        )
        return done.returncode, done.stdout.decode(), done.stderr.decode()

    code, out, err = ambry(b"store", b"-", stdin=b"Likes " + latin1)
    # Named as a file's bytes are (import, ingest): the byte and its line.
    assert (code, out, err) == (
        1,
        "",
        "error: standard input is not UTF-8 text (byte 0xE9 at line 1); send it as UTF-8\n",
    )
    for argv, says in (
        ([b"store", latin1], "content contains a lone surrogate"),
        ([b"search", latin1], "query contains a lone surrogate"),
        ([b"show", latin1], "an argument or a file name is not UTF-8 text"),
        ([b"trash", b"restore", latin1], "an argument or a file name is not UTF-8 text"),
    ):
        code, out, err = ambry(*argv)
        assert (code, out) == (1, ""), argv
        assert err.startswith(f"error: {says}") and err.count("\n") == 1, argv
    code, out, _ = ambry(b"--json", b"list")
    assert (code, json.loads(out)) == (0, [])
    # A byte-order mark (as Windows tools send) is not part of the text.
    code, out, err = ambry(b"store", b"-", stdin="\ufeffLikes café".encode())
    assert (code, err) == (0, "")
    code, out, _ = ambry(b"--json", b"list")
    assert [e["content"] for e in json.loads(out)] == ["Likes café"]


def test_global_options_may_follow_every_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def leaves(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, set[str]]]:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return [(path, set(parser._option_string_actions))]
        return [
            leaf for name, sub in subs[0].choices.items() for leaf in leaves(sub, f"{path} {name}")
        ]

    for path, options in leaves(build_parser(), "ambry"):
        assert {"--data-dir", "--group", "--json"} <= options, path
    code, out, _ = run(capsys, "claims", "list", "--json", "--data-dir", str(tmp_path))
    assert (code, json.loads(out)) == (0, {"claims": [], "mode": "observe"})


@pytest.mark.parametrize(
    ("argv", "usage", "says"),
    [
        (["serch", "dog"], "usage: ambry [-h]", "invalid choice: 'serch'; did you mean 'search'?"),
        (["claims", "lst"], "usage: ambry claims [-h]", "did you mean 'list'?"),
        (["handoff", "shw", "x"], "usage: ambry handoff [-h]", "did you mean 'show'?"),
        (["store", "--type", "fakt", "x"], "usage: ambry store", "did you mean 'fact'?"),
        (["search", "--lmit", "3", "dog"], "usage: ambry search", "did you mean '--limit'?"),
        (["threads", "list", "--limt=3"], "usage: ambry threads list", "did you mean '--limit'?"),
    ],
)
def test_a_typo_gets_the_nearest_name_and_the_usage_of_its_command(
    capsys: pytest.CaptureFixture[str], argv: list[str], usage: str, says: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith(usage) and says in err.splitlines()[-1]
    # The 36 commands are not spelled out on the error line; a few choices are.
    assert "serve" not in err.splitlines()[-1]


def test_an_unknown_command_is_not_guessed_when_nothing_is_close(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run(capsys, "xyzzy")
    assert code == 2
    assert err.splitlines()[-1] == (
        "error: argument COMMAND: invalid choice: 'xyzzy' (`ambry --help` lists them)"
    )


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["audit", "--limit", "0"], "--limit must be at least 1"),
        (["threads", "--limit", "-1"], "--limit must be at least 1"),
        (["threads", "list", "--limit", "0"], "--limit must be at least 1"),
        (["claims", "list", "--limit", "0"], "--limit must be at least 1"),
        (["attachments", "--limit", "0"], "--limit must be at least 1"),
        (["list", "--limit", "0"], "--limit must be at least 1"),
        (["list", "--offset", "-1"], "--offset must be at least 0"),
        (["search", "--limit", "0", "tea"], "--limit must be at least 1"),
        (["search", "--offset", "-1", "tea"], "--offset must be at least 0"),
        (["exchanges", "--limit", "0", "tea"], "--limit must be at least 1"),
        (["exchanges", "--offset", "-1", "tea"], "--offset must be at least 0"),
        (["related", "mem-nope", "--limit", "0"], "--limit must be at least 1"),
        (["recall", "tea", "--budget", "0"], "--budget must be at least 50"),
        (
            ["handoff", "write", "--create", "Plans", "-", "--base-version", "-1"],
            "--base-version must be at least 0",
        ),
    ],
)
def test_a_limit_below_one_is_refused_not_raised_to_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    code, out, err = run(capsys, "--data-dir", str(tmp_path), "--create", *argv)
    assert (code, out, err) == (1, "", f"error: {says}\n")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["search", "--limit", "101", "tea"], "--limit must be at most 100"),
        (["search", "--offset=1001", "tea"], "--offset must be at most 1000"),
        (["exchanges", "--limit", "51", "tea"], "--limit must be at most 50"),
        (["exchanges", "--offset", "1001", "tea"], "--offset must be at most 1000"),
        (["related", "mem-nope", "--limit", "21"], "--limit must be at most 20"),
        (["recall", "tea", "--budget", "8001"], "--budget must be at most 8000"),
        (["dig", "mem-nope", "--depth", "4"], "--depth must be at most 3"),
        # The listings stop where the agent tool reading the same list stops.
        (["list", "--limit", "101"], "--limit must be at most 100"),
        (["threads", "--limit", "501"], "--limit must be at most 500"),
        (["threads", "list", "--limit=501"], "--limit must be at most 500"),
        (["attachments", "--limit", "101"], "--limit must be at most 100"),
        (["claims", "list", "--limit", "101"], "--limit must be at most 100"),
        (["audit", "--limit", "1001"], "--limit must be at most 1000"),
        (
            ["claims", "propose", "x", "--kind=fact", "--source=memory:x", "--recheck-days=3651"],
            "--recheck-days must be at most 3650",
        ),
    ],
)
def test_a_value_past_its_range_names_the_option_as_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    # The same words as a value below the range, whichever side checks the bound.
    code, out, err = run(capsys, "--data-dir", str(tmp_path), "--create", *argv)
    assert (code, out, err) == (1, "", f"error: {says}\n")
    code, out, err = run(capsys, "--data-dir", str(tmp_path), "--json", *argv)
    error = json.loads(err)["error"]
    assert (code, error["message"], error["rule"]) == (1, says, "maximum")
    assert error["field"] == says.split()[0].removeprefix("--").replace("-", "_")


def test_the_listings_take_their_largest_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for argv in (
        ["list", "--limit", "100", "--offset", "1000"],
        ["list", "--offset", "5000"],  # a list by age reads on to the oldest entry
        ["threads", "--limit", "500"],
        ["attachments", "--limit", "100"],
        ["claims", "list", "--limit", "100"],
        ["audit", "--limit", "1000"],
    ):
        code, _, err = run(capsys, *d, *argv)
        assert (code, err) == (0, ""), argv
    with pytest.raises(SystemExit):
        main(["threads", "--help"])
    assert "(default 100, at most 500)" in capsys.readouterr().out


def test_the_listings_read_on_with_offset_and_say_when_more_follow(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, threads, attachments, claims list and audit had no --offset: rows past
    # their largest page could not be reached, and a full page did not say more follow
    # (`ambry threads --offset 5` was "invalid choice: '5'").
    d = ["--data-dir", str(tmp_path / "data"), "--create"]
    for n in range(3):
        assert run(capsys, *d, "threads", "open", f"Plan {n}")[0] == 0
        (tmp_path / f"notes-{n}.txt").write_text(f"Notes number {n}\n")
        assert run(capsys, *d, "attach", str(tmp_path / f"notes-{n}.txt"))[0] == 0
        code, out, _ = run(capsys, *d, "store", f"The build takes {n + 5} minutes")
        source = f"--source=memory:{out.strip()}"
        claim = ["claims", "propose", f"The build takes {n + 5} minutes", "--kind=fact", source]
        assert run(capsys, *d, *claim)[0] == 0
    # The listings an agent tool also reads print its result, next_offset and all;
    # audit's bare list leaves the line to stderr.
    for argv, rows, key in (
        (["threads"], "threads", "title"),
        (["threads", "list"], "threads", "title"),
        (["attachments"], "receipts", "filename"),
        (["claims", "list"], "claims", "text"),
        (["audit"], None, "id"),
    ):
        code, first, _ = run(capsys, *d, *argv, "--limit", "2")
        assert code == 0 and first.endswith("\n(more follow: add --offset 2)\n"), argv
        code, out, err = run(capsys, *d, "--json", *argv, "--limit", "2")
        if rows is None:
            assert (code, err) == (0, "(more follow: add --offset 2)\n"), argv
            page = [row[key] for row in json.loads(out)]
        else:
            assert (code, err, json.loads(out)["next_offset"]) == (0, "", 2), argv
            page = [row[key] for row in json.loads(out)[rows]]
        code, out, err = run(capsys, *d, "--json", *argv, "--limit", "2", "--offset", "2")
        data = json.loads(out)
        rest = [row[key] for row in (data if rows is None else data[rows])]
        assert len(page) == 2 and rest and not set(page) & set(rest), argv
        code, out, _ = run(capsys, *d, *argv, "--offset", "5000")
        assert (code, out) == (0, f"{out.split(' at ')[0]} at --offset 5000 or beyond\n"), argv
        assert out.startswith("no "), argv
        code, _, err = run(capsys, *d, *argv, "--offset", "-1")
        assert (code, err) == (1, "error: --offset must be at least 0\n"), argv
    code, out, _ = run(capsys, *d, "threads", "--offset", "2")
    assert code == 0 and out.startswith("thr-") and "Plan 0" in out and "more follow" not in out
    code, out, _ = run(capsys, *d, "claims", "list", "--query", "build", "--limit", "1")
    assert out.endswith("(more follow: add --offset 1)\n")


def test_help_gives_every_default_examples_and_the_exit_statuses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def options(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.Action]]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += options(sub, f"{path} {name}")
            else:
                found.append((path, action))
        return found

    for path, action in options(build_parser(), "ambry"):
        if action.help == argparse.SUPPRESS:
            continue
        assert action.help, (path, action.dest)
        if action.nargs != 0 and action.default not in (None, "", [], argparse.SUPPRESS):
            assert "default" in action.help, (path, action.dest)
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "\nexamples:\n  ambry store " in out
    assert "exit status: 0 done; 1 error" in out and "130 interrupted" in out


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_ctrl_c_ends_the_line_it_interrupted(tmp_path: Path) -> None:
    import pty
    import select
    import signal
    import time

    d = ["--data-dir", str(tmp_path), "--create"]
    assert main([*d, "store", "Luna is the dog"]) == 0
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [str(AMBRY), *d, "forget", "luna"],
        stdin=secondary,
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        # Ctrl+C as a terminal delivers it, whatever this test process inherited.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while not seen.endswith(b"[y/N] "):
            ready, _, _ = select.select([primary], [], [], deadline - time.monotonic())
            chunk = os.read(primary, 1) if ready else b""
            assert chunk, f"no question: {seen.decode()!r}"
            seen += chunk
        proc.send_signal(signal.SIGINT)
        # Read while it ends: a full terminal buffer would hold its last write.
        with contextlib.suppress(OSError):  # EIO once the terminal's last writer is gone
            while proc.poll() is None or select.select([primary], [], [], 0)[0]:
                assert time.monotonic() < deadline, f"still running: {seen.decode()!r}"
                if select.select([primary], [], [], 0.1)[0]:
                    chunk = os.read(primary, 1024)
                    if not chunk:
                        break
                    seen += chunk
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
        proc.wait()
        os.close(primary)
    assert seen.decode().endswith("[y/N] \r\nerror: interrupted\r\n")
    assert main([*d, "search", "luna"]) == 0


def test_a_long_or_multi_line_memory_is_one_cut_line_in_search_and_whole_in_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    body = "Deploy checklist:\n- run the migrations\n- " + "check the dashboards " * 30
    assert run(capsys, *d, "store", "--type", "instruction", body)[0] == 0
    code, out, _ = run(capsys, *d, "search", "deploy checklist")
    [line] = out.splitlines()
    assert code == 0 and "Deploy checklist: - run the migrations -" in line
    assert "…" in line and len(line) < 420
    code, out, _ = run(capsys, *d, "search", "deploy checklist", "--json")
    assert json.loads(out)["results"][0]["content"] == body.strip()


def test_an_empty_list_says_where_the_memories_awaiting_review_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    assert run(capsys, *d, "list")[1] == "no memories\n"
    assert run(capsys, *d, "store", "Has a cat called Miso", "--trust", "low")[0] == 0
    code, out, _ = run(capsys, *d, "list")
    assert (code, out) == (0, "no memories (1 memory awaiting review: `ambry review` lists it)\n")
