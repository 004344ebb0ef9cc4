"""`ambry setup CLIENT` merges into each client's real config format; `ambry doctor` reports."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import apsw
import pytest

from core.cli import doctor
from core.cli.main import main
from core.storage.paths import DataDir
from core.storage.schema import SCHEMA_VERSION


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return home


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


CONFIGS = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers", False),
    "claude-code": (".claude.json", "mcpServers", True),
    "cursor": (".cursor/mcp.json", "mcpServers", False),
    "vscode": (".config/Code/User/mcp.json", "servers", True),
}


@pytest.mark.parametrize("client", sorted(CONFIGS))
def test_json_clients_get_a_merged_entry_once_with_a_backup(
    home: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    relative, key, typed = CONFIGS[client]
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    original = {"theme": "dark", key: {"other": {"command": "other-server", "args": []}}}
    path.write_text(json.dumps(original))

    code, out, err = run(capsys, "--group", "work", "setup", client)
    assert code == 0, err
    data = json.loads(path.read_text())
    entry = data[key]["ambry"]
    assert data["theme"] == "dark" and data[key]["other"] == original[key]["other"]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"][-5:] == ["--group", "work", "mcp", "--client", client]
    assert (entry.get("type") == "stdio") is typed
    [backup] = path.parent.glob(path.name + ".bak-*")
    assert json.loads(backup.read_text()) == original

    code, out, _ = run(capsys, "--group", "work", "setup", client)
    assert code == 0 and "already" in out
    assert len(list(path.parent.glob(path.name + ".bak-*"))) == 1


def codex_config(home: Path, text: str) -> Path:
    """Codex's config file under ``home``, holding ``text``."""
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(text)
    return path


def test_codex_gets_a_toml_table_and_keeps_the_rest(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = codex_config(
        home,
        'model = "o3"  # keep me\n\n[mcp_servers.other]\ncommand = "x"\n\n'
        '[mcp_servers.ambry]\ncommand = "old"\n[mcp_servers.ambry.env]\nA = "1"\n\n'
        '[profiles.fast]\nmodel = "mini"\n',
    )
    code, _, err = run(capsys, "setup", "codex")
    assert code == 0, err
    text = path.read_text()
    data = tomllib.loads(text)
    assert "# keep me" in text
    assert data["model"] == "o3" and data["profiles"] == {"fast": {"model": "mini"}}
    assert data["mcp_servers"]["other"] == {"command": "x"}
    assert data["mcp_servers"]["ambry"]["args"][-3:] == ["mcp", "--client", "codex"]
    assert data["mcp_servers"]["ambry"]["env"] == {"A": "1"}  # the person's, kept


def test_project_and_print(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "proj"
    code, out, _ = run(capsys, "setup", "vscode", "--project", str(project), "--print")
    assert code == 0
    assert out.startswith(f"# VS Code: {project / '.vscode' / 'mcp.json'}")
    assert json.loads(out.split("\n", 1)[1])["servers"]["ambry"]["type"] == "stdio"
    assert not project.exists()
    code, _, _ = run(capsys, "setup", "cursor", "--project", str(project))
    assert json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["ambry"]


def test_a_file_with_comments_is_refused_untouched(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{\n  // my servers\n  "mcpServers": {}\n}\n')
    code, _, err = run(capsys, "setup", "cursor")
    assert code == 1 and err.count("\n") == 1
    assert "holds comments or trailing commas" in err and "ambry setup cursor --print" in err
    assert path.read_text().startswith("{\n  // my servers")
    assert list(path.parent.glob("*.bak-*")) == []
    # A file that is simply broken says where.
    path.write_text('{\n  "mcpServers": {\n}\n')
    code, _, err = run(capsys, "setup", "cursor")
    assert code == 1 and "not plain JSON" in err and "line 4" in err


def test_setup_refuses_a_data_dir_that_does_not_exist_unless_create(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The client's `ambry mcp` would refuse it: say so now, not at its first start.
    missing = tmp_path / "elsewhere"
    code, out, err = run(capsys, "--data-dir", str(missing), "setup", "cursor", "--print")
    assert (code, out) == (1, "") and f"data dir {missing} does not exist" in err
    assert not missing.exists()
    code, out, _ = run(capsys, "--data-dir", str(missing), "--create", "setup", "cursor")
    assert code == 0 and missing.is_dir()
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["ambry"]
    assert entry["args"][-5:-3] == ["--data-dir", str(missing)]


@pytest.mark.parametrize("how", ["flag", "environment", "relative flag"])
def test_setup_names_the_data_dir_in_use_however_it_was_given(
    home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    mine = tmp_path / "my store"
    mine.mkdir()
    monkeypatch.chdir(tmp_path)
    argv = {
        "flag": ["--data-dir", str(mine)],
        "relative flag": ["--data-dir", "my store"],
        "environment": [],
    }[how]
    if how == "environment":
        monkeypatch.setenv("AMBRY_DATA_DIR", str(mine))
    code, out, err = run(capsys, *argv, "setup", "claude-code", "--print", "--json")
    assert code == 0, err
    args = json.loads(out)["entry"]["args"]
    assert args[-5:] == ["--data-dir", str(mine), "mcp", "--client", "claude-code"]


def test_setup_leaves_the_platform_default_implicit(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AMBRY_DATA_DIR")
    code, out, _ = run(capsys, "setup", "claude-code", "--print", "--json")
    assert code == 0 and "--data-dir" not in json.loads(out)["entry"]["args"]


def test_doctor_fails_on_a_data_dir_the_environment_names_that_does_not_exist(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "stroe"
    monkeypatch.setenv("AMBRY_DATA_DIR", str(typo))
    code, out, _ = run(capsys, "doctor", "--no-mcp", "--json")
    finding = {f["check"]: f for f in json.loads(out)}["data dir"]
    assert code == 1 and finding["status"] == "fail"
    assert finding["detail"] == f"{typo} (from AMBRY_DATA_DIR) does not exist"
    assert not typo.exists()


def test_doctor_reports_every_check_and_fails_on_a_missing_data_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "typo"
    code, out, _ = run(capsys, "--data-dir", str(missing), "doctor", "--no-mcp", "--json")
    findings = {f["check"]: f for f in json.loads(out)}
    assert code == 1
    assert findings["data dir"]["status"] == "fail" and "--create" in findings["data dir"]["fix"]
    assert {"ambry", "keyring", "socket", "qt", "model", "log"} <= set(findings)
    assert findings["log"]["detail"] == str(tmp_path / "logs" / "ambry.log")
    assert not missing.exists()


def test_doctor_reads_schemas_without_writing_and_times_mcp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert run(capsys, "--data-dir", str(data), "--create", "store", "Likes tea")[0] == 0
    db = DataDir(data).group_db("main")
    os.chmod(data, 0o755)
    before = db.stat().st_mtime_ns
    _, out, _ = run(capsys, "--data-dir", str(data), "doctor")  # qt may fail here
    lines = {line.split(":")[0]: line for line in out.splitlines() if not line.startswith(" ")}
    assert "schema v" in lines["ok    group main"]
    assert lines["warn  data dir"].endswith("readable by others (mode 0755)")
    assert "chmod 700" in out
    assert "answered initialize in" in out
    assert db.stat().st_mtime_ns == before


def test_doctor_loads_the_embedding_model_and_names_a_broken_one(tmp_path: Path) -> None:
    from core.cli.doctor import Status, check_model

    ok = check_model()
    assert ok.status is Status.OK and "hashes checked" in ok.detail
    own = tmp_path / "my-model"
    own.mkdir()
    (own / "model.onnx").write_bytes(b"not a model")
    (own / "tokenizer.json").write_text("{}")
    broken = check_model(str(own))
    assert broken.status is Status.FAIL and "keywords only" in broken.detail
    assert "embedding_model_dir" in broken.fix


def test_doctor_fails_a_log_folder_it_cannot_create(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before, it said "ok" for a log file no command could write.
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    monkeypatch.setenv("AMBRY_LOG_DIR", str(blocked / "log"))
    found = doctor.check_log()
    assert found.status is doctor.Status.FAIL and "cannot be written" in found.detail
    assert f"{blocked} is a file, but must be a folder" in found.detail
    monkeypatch.setenv("AMBRY_LOG_DIR", str(tmp_path / "state" / "log"))
    fine = doctor.check_log()
    assert fine.status is doctor.Status.OK and "created on first use" in fine.detail


def test_doctor_reports_a_bad_settings_file_and_goes_on_checking(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, doctor stopped at the file with the one error line every command
    # gives, and checked nothing else.
    data = tmp_path / "data"
    assert run(capsys, "--data-dir", str(data), "--create", "store", "Likes tea")[0] == 0
    (data / "config.json").write_text('{"rate_stores_per_hour": "lots"}')
    code, out, err = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp", "--json")
    findings = {f["check"]: f for f in json.loads(out)}
    assert code == 1 and err == ""
    config = findings["config"]
    assert config["status"] == "fail" and "rate_stores_per_hour" in config["detail"]
    assert str(data / "config.json") in config["fix"] and "delete it" in config["fix"]
    assert findings["group main"]["status"] == "ok" and "model" in findings
    (data / "config.json").unlink()
    code, out, _ = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp", "--json")
    config = {f["check"]: f for f in json.loads(out)}["config"]
    assert config["status"] == "ok" and "defaults" in config["detail"]


def test_doctor_names_the_newest_copy_of_a_damaged_group(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    assert run(capsys, "--data-dir", str(data), "--create", "store", "Likes tea")[0] == 0
    assert run(capsys, "--data-dir", str(data), "--group", "work", "store", "Ships Fridays")[0] == 0
    db = DataDir(data).group_db("main")
    (data / "backups").mkdir()
    older = data / "backups" / "main-20260101T000000000000Z.sqlite"
    newer = data / "backups" / "main-20260301T000000000000Z.sqlite"
    for copy, when in ((older, 1_000_000), (newer, 2_000_000)):
        copy.write_bytes(db.read_bytes())
        os.utime(copy, (when, when))
    db.write_bytes(b"not a database at all" * 100)
    code, out, _ = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp", "--json")
    findings = {f["check"]: f for f in json.loads(out)}
    assert code == 1 and findings["group main"]["status"] == "fail"
    assert findings["group main"]["fix"].endswith(str(newer))
    # A group with no copy gets no made-up advice.
    DataDir(data).group_db("work").write_bytes(b"garbage" * 100)
    code, out, _ = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp", "--json")
    # A group with no copy is not sent to one that does not exist: the way to save
    # what is readable in it.
    fix = {f["check"]: f for f in json.loads(out)}["group work"]["fix"]
    assert ".recover" in fix and "A damaged database" in fix and ".bak" not in fix
    # A newer Ambry's file is not damaged: no older copy is offered in its place.
    db.write_bytes(newer.read_bytes())
    conn = apsw.Connection(str(db))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    code, out, _ = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp", "--json")
    found = {f["check"]: f for f in json.loads(out)}["group main"]
    assert "newer Ambry" in found["detail"] and found["fix"] == ""


def test_doctor_finds_a_group_damaged_past_its_header(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, a file whose header and schema were intact said "ok", while every
    # export and write of the group failed with "database disk image is malformed".
    data = tmp_path / "data"
    assert run(capsys, "--data-dir", str(data), "--create", "store", "Likes tea")[0] == 0
    db = DataDir(data).group_db("main")
    conn = apsw.Connection(str(db))
    try:
        page_size = int(conn.execute("PRAGMA page_size").get)
        root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'memory_entries'").get
    finally:
        conn.close()
    with db.open("r+b") as fh:
        fh.seek((int(root) - 1) * page_size)
        fh.write(b"\xff" * page_size)
    code, out, _ = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp", "--json")
    found = {f["check"]: f for f in json.loads(out)}["group main"]
    assert code == 1 and found["status"] == "fail"
    assert "is damaged" in found["detail"] and "move it aside" in found["fix"]
    assert ".recover" in found["fix"]
    assert run(capsys, "--data-dir", str(data), "export", str(tmp_path / "out.jsonl"))[0] == 1


def test_doctor_fails_when_the_key_of_private_memories_is_not_in_the_keyring(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], memory_keyring: object
) -> None:
    data = tmp_path / "data"
    args = ("--data-dir", str(data), "--create")
    assert run(capsys, *args, "store", "--privacy", "private", "Sees Dr Ames")[0] == 0
    _, out, _ = run(capsys, "--data-dir", str(data), "doctor", "--no-mcp")
    assert "ok    data key: in the keyring for group main" in out
    # A folder an earlier version saw moved: no key-name file, a path without a key.
    (data / "key-name").unlink()
    moved = tmp_path / "moved"
    data.rename(moved)
    _, out, _ = run(capsys, "--data-dir", str(moved), "doctor", "--no-mcp")
    assert "fail  data key: the private and secret memories of group main cannot be read" in out
    assert "move it back" in out
    assert not (moved / "key-name").exists()  # doctor changes nothing


def test_a_file_that_cannot_be_read_or_written_is_refused_not_a_bug(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, each of these ended in a traceback reported as a bug in ambry setup.
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_bytes(b'{"note": "caf\xe9"}')
    code, _, err = run(capsys, "setup", "cursor")
    assert code == 1 and "not UTF-8 text (byte 14)" in err and "--print" in err
    assert path.read_bytes() == b'{"note": "caf\xe9"}'
    path.unlink()
    path.mkdir()
    code, _, err = run(capsys, "setup", "cursor")
    assert code == 1 and "cannot be read (Is a directory)" in err and "bug" not in err
    blocker = home / "not-a-folder"
    blocker.write_text("a file where the config's folder should be")
    code, _, err = run(capsys, "setup", "codex", "--config", str(blocker / "config.toml"))
    assert code == 1 and "cannot be written (" in err and "nothing was changed" in err
    assert blocker.read_text() == "a file where the config's folder should be"


def test_codex_entries_written_other_ways_are_replaced_or_refused_and_names_are_quoted(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = codex_config(home, '[mcp_servers."ambry"]\ncommand = "old"\n')
    code, _, err = run(capsys, "setup", "codex")
    assert code == 0, err
    assert tomllib.loads(path.read_text())["mcp_servers"]["ambry"]["command"] != "old"
    # Inline and dotted forms cannot be dropped line by line: refused, not a traceback.
    for text in (
        'model = "o3"\n[mcp_servers]\nambry = { command = "old" }\n',
        'mcp_servers.ambry.command = "old"\n',
    ):
        path.write_text(text)
        code, _, err = run(capsys, "setup", "codex")
        assert code == 1 and "is not a plain [mcp_servers.ambry] table" in err, err
        assert path.read_text() == text
    # A name TOML does not allow bare is quoted, in the file and in --print.
    path.write_text('model = "o3"\n')
    for name in ("my ambry", "ambry.work"):
        code, out, _ = run(capsys, "setup", "codex", "--name", name, "--print")
        assert code == 0 and tomllib.loads(out.split("\n", 1)[1])["mcp_servers"][name]
        code, _, err = run(capsys, "setup", "codex", "--name", name)
        assert code == 0, err
        assert tomllib.loads(path.read_text())["mcp_servers"][name]["command"]
        assert "already" in run(capsys, "setup", "codex", "--name", name)[1]


def test_a_symlinked_config_is_written_through_not_replaced(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    real = tmp_path / "dotfiles" / "cursor-mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {"other": {"command": "x"}}}')
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(real)
    code, _, err = run(capsys, "setup", "cursor")
    assert code == 0, err
    assert link.is_symlink() and link.resolve() == real
    assert set(json.loads(real.read_text())["mcpServers"]) == {"other", "ambry"}
    assert "already" in run(capsys, "setup", "cursor")[1]


@pytest.mark.parametrize("client", ["cursor", "codex"])
def test_an_ambry_entry_pointing_elsewhere_is_replaced_and_named(
    home: Path, capsys: pytest.CaptureFixture[str], client: str
) -> None:
    if client == "codex":
        path = home / ".codex" / "config.toml"
        old = '[mcp_servers.ambry]\ncommand = "/old/ambry"\nargs = ["mcp"]\n'
    else:
        path = home / ".cursor" / "mcp.json"
        old = '{"mcpServers": {"ambry": {"command": "/old/ambry", "args": ["mcp"]}}}'
    path.parent.mkdir()
    path.write_text(old)
    code, out, err = run(capsys, "setup", client)
    assert code == 0, err
    assert out.startswith("replaced 'ambry' (it started /old/ambry mcp) in ")
    code, out, _ = run(capsys, "--json", "setup", client, "--name", "other")
    assert code == 0 and json.loads(out)["replaced"] is None
    assert run(capsys, "setup", client)[1].startswith(f"{CLIENT_LABELS[client]} already")


CLIENT_LABELS = {"cursor": "Cursor", "codex": "Codex"}


def test_claude_code_follows_claude_config_dir(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "claude-work"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    code, _, err = run(capsys, "setup", "claude-code")
    assert code == 0, err
    assert json.loads((elsewhere / ".claude.json").read_text())["mcpServers"]["ambry"]
    assert not (home / ".claude.json").exists()


def test_configs_of_an_unexpected_shape_are_refused_with_what_is_wrong(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = home / ".codex" / "config.toml"
    toml.parent.mkdir()
    for text, why in (
        ('[[mcp_servers]]\ncommand = "x"\n', "its mcp_servers is not a table"),
        ('mcp_servers = "x"\n', "its mcp_servers is not a table"),
        ('mcp_servers = { gh = { command = "gh" } }\n', "its mcp_servers is written inline"),
    ):
        toml.write_text(text)
        code, _, err = run(capsys, "setup", "codex")
        assert code == 1 and why in err and "bug" not in err, text
        assert toml.read_text() == text
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir()
    cursor.write_text("[1]\n")
    code, _, err = run(capsys, "setup", "cursor")
    assert code == 1 and "not a JSON object at the top" in err
    # A byte-order mark from a Windows editor is no reason to refuse the file.
    cursor.write_bytes(b'\xef\xbb\xbf{"mcpServers": {"gh": {"command": "gh"}}}\n')
    assert run(capsys, "setup", "cursor")[0] == 0
    assert set(json.loads(cursor.read_text())["mcpServers"]) == {"gh", "ambry"}


def test_keys_the_person_added_to_the_entry_are_kept(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "setup", "cursor")[0] == 0
    path = home / ".cursor" / "mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["ambry"]["env"] = {"AMBRY_LOG_DIR": "/var/log/ambry"}
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "setup", "cursor")
    assert code == 0 and "already" in out
    data["mcpServers"]["ambry"]["command"] = "/old/ambry"
    path.write_text(json.dumps(data))
    code, out, _ = run(capsys, "setup", "cursor")
    assert code == 0 and "replaced" in out
    kept = json.loads(path.read_text())["mcpServers"]["ambry"]
    assert kept["env"] == {"AMBRY_LOG_DIR": "/var/log/ambry"} and kept["command"] != "/old/ambry"


def codex_entry(capsys: pytest.CaptureFixture[str]) -> str:
    """The lines of the entry ``ambry setup codex`` writes, without the table's header."""
    code, out, _ = run(capsys, "--json", "setup", "codex", "--print")
    assert code == 0
    entry = json.loads(out)["entry"]
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items())


def test_codex_keeps_the_keys_and_tables_the_person_added_to_the_entry(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = codex_config(
        home,
        'model = "o3"\n\n'
        "[mcp_servers.ambry]  # my memory\n"
        'command = "/old/ambry"\n'
        'args = [\n  "mcp",\n]\n'
        "# slow disk\n"
        "startup_timeout_sec = 30\n"
        "tool_timeout_sec = 120.5\n"
        "enabled = true\n"
        'env_vars = ["HOME"]\n\n'
        '[mcp_servers.ambry.env]\nAMBRY_LOG_DIR = "/var/log/ambry"\n\n'
        '[profiles.fast]\nmodel = "mini"\n',
    )
    code, out, err = run(capsys, "--json", "setup", "codex")
    assert code == 0, err
    result = json.loads(out)
    assert result["changed"] is True and result["replaced"]["command"] == "/old/ambry"
    text = path.read_text()
    data = tomllib.loads(text)
    ambry = data["mcp_servers"]["ambry"]
    assert ambry == {
        **result["entry"],
        "startup_timeout_sec": 30,
        "tool_timeout_sec": 120.5,
        "enabled": True,
        "env_vars": ["HOME"],
        "env": {"AMBRY_LOG_DIR": "/var/log/ambry"},
    }
    assert "# my memory\n" in text and "# slow disk\n" in text and "/old/ambry" not in text
    assert data["model"] == "o3" and data["profiles"] == {"fast": {"model": "mini"}}
    # Run again: the person's keys are no difference, so nothing is written.
    code, out, _ = run(capsys, "--json", "setup", "codex")
    assert code == 0 and json.loads(out)["changed"] is False
    assert path.read_text() == text
    assert "already" in run(capsys, "setup", "codex")[1]
    assert len(list(path.parent.glob("config.toml.bak-*"))) == 1


def test_a_codex_entry_that_differs_only_by_the_persons_keys_is_already_there(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = home / ".codex" / "config.toml"
    path.parent.mkdir()
    text = (
        "[mcp_servers.ambry]\n"
        + codex_entry(capsys)
        + "startup_timeout_sec = 30\nenabled = false\n\n"
        + '[mcp_servers.ambry.env]\nAMBRY_LOG_DIR = "/var/log/ambry"\n'
    )
    path.write_text(text)
    code, out, err = run(capsys, "setup", "codex")
    assert code == 0, err
    assert out.startswith("Codex already starts Ambry") and "replaced" not in out
    code, out, _ = run(capsys, "--json", "setup", "codex")
    assert code == 0 and json.loads(out)["changed"] is False and "replaced" not in json.loads(out)
    assert path.read_text() == text
    assert not list(path.parent.glob("config.toml.bak-*"))


def test_a_codex_entry_that_has_only_the_persons_env_table_gets_ours_beside_it(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = codex_config(
        home, '[mcp_servers.ambry.env]\nAMBRY_LOG_DIR = "/var/log/ambry"\n\n[tui]\nx = 1\n'
    )
    code, out, err = run(capsys, "--json", "setup", "codex")
    assert code == 0, err
    result = json.loads(out)
    data = tomllib.loads(path.read_text())
    assert data["mcp_servers"]["ambry"] == {
        **result["entry"],
        "env": {"AMBRY_LOG_DIR": "/var/log/ambry"},
    }
    assert data["tui"] == {"x": 1}
    assert "already" in run(capsys, "setup", "codex")[1]


@pytest.mark.parametrize(
    ("marker", "command"),
    [
        ("pipx_metadata.json", "pipx reinstall ambry"),
        ("uv-receipt.toml", "uv tool upgrade --reinstall ambry"),
        ("pyvenv.cfg", "-m pip install --force-reinstall ambry"),
    ],
)
def test_the_reinstall_fix_names_the_tool_that_installed_ambry(
    tmp_path: Path, marker: str, command: str
) -> None:
    from core.cli.installation import reinstall_command

    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / marker).write_text("")
    assert command in reinstall_command(venv)
    # Unknown: all three ways, to pick from.
    unknown = reinstall_command(tmp_path / "elsewhere")
    assert "pipx reinstall" in unknown and "uv tool upgrade" in unknown and "pip" in unknown
