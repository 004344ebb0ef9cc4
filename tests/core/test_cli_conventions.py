"""What people expect of a command line: no silent new stores, refused bad names,
JSON errors under --json, a log file, and shell completion from the parser."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest

from core.cli.logfile import log_file
from core.cli.main import build_parser, main
from core.storage.paths import DataDir


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
    assert not (tmp_path / "default-data").exists()
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    code, _, err = run(capsys, "--data-dir", str(blocker / "sub"), "--create", "search", "dog")
    assert code == 1 and err.startswith("error: cannot create data dir") and "Traceback" not in err
    assert err.count("\n") == 1


def test_a_mistyped_group_is_refused_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    assert run(capsys, *d, "--group", "work", "store", "Standup at nine")[0] == 0
    for argv in (["search", "standup"], ["list"], ["exchanges"], ["brief"]):
        code, out, err = run(capsys, *d, "--group", "wrok", *argv)
        assert (code, out) == (1, ""), argv
        assert err.startswith("error: no group 'wrok'") and "groups: work" in err
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
    ):
        code, _, err = run(capsys, *d, *argv)
        assert code == 1 and err.startswith(f"error: {says}") and err.count("\n") == 1, argv
    code, _, err = run(capsys, *d, "--json", "search", "--limit", "0", "dog")
    assert json.loads(err)["error"]["message"] == "limit must be at least 1"


def test_errors_name_options_not_agent_tools(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = ["--data-dir", str(tmp_path), "--create"]
    for command in ("search", "exchanges"):
        code, _, err = run(capsys, *d, command, "--limit", "0", "dog")
        assert (code, err) == (1, "error: limit must be at least 1\n"), command
    code, _, err = run(capsys, *d, "exchanges", "x" * 501)
    assert (code, err) == (1, "error: query must be at most 500 characters\n")


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
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # conftest points AMBRY_DATA_DIR (the configured default) at a folder that does not exist.
    code, _, _ = run(capsys, "store", "Likes tea")
    assert code == 0
    assert DataDir(tmp_path / "default-data").groups() == ["main"]


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


def test_usage_errors_are_json_under_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--json", "store", "--type", "opinion", "x")
    assert code == 2
    assert err.count("\n") == 1
    error = json.loads(err)["error"]
    assert error["code"] == "usage" and "opinion" in error["message"]


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
