"""``ambry settings``: list, show, change and reset the settings in config.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core.model.config import Config, load_config
from core.model.errors import InvalidParams
from core.semantic.embedding import default_files
from core.service import MemoryService
from core.storage.paths import DataDir
from tests.core.test_cli import run


def test_settings_are_listed_changed_and_reset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path)
    code, out, _ = run(capsys, "--data-dir", d, "settings", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["recency_weight"] == {
        "value": 0.15,
        "default": 0.15,
        "range": [0.0, 1.0],
    }
    assert set(listed) == set(Config().to_dict())

    code, out, _ = run(capsys, "--data-dir", d, "settings", "recency_weight", "0.4")
    assert code == 0 and "recency_weight = 0.4 (was 0.15)" in out
    assert load_config(tmp_path / "config.json").recency_weight == 0.4
    code, out, _ = run(capsys, "--data-dir", d, "settings", "review_agent_writes", "yes")
    assert code == 0 and load_config(tmp_path / "config.json").review_agent_writes
    # A service started afterwards ranks with it.
    service = MemoryService(DataDir(tmp_path), load_config(tmp_path / "config.json"))
    try:
        assert service.config.recency_weight == 0.4
    finally:
        service.close()

    code, out, _ = run(capsys, "--data-dir", d, "settings")
    assert "recency_weight            0.4  (default 0.15)" in out
    assert "trash_days                30\n" in out
    code, out, _ = run(capsys, "--data-dir", d, "settings", "recency_weight", "--reset")
    assert code == 0 and load_config(tmp_path / "config.json").recency_weight == 0.15
    code, out, _ = run(capsys, "--data-dir", d, "settings", "recency_weight")
    assert out.strip() == "recency_weight = 0.15 (default 0.15, 0 to 1)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("recency", "0.2"), "unknown setting 'recency'; did you mean 'recency_weight'?"),
        (("recency_weight", "3"), "must be between 0.0 and 1.0"),
        (("recency_weight", "lots"), "recency_weight must be a number, not 'lots'"),
        (("trash_days", "7.5"), "trash_days must be a whole number, not '7.5'"),
        (("review_agent_writes", "maybe"), "review_agent_writes is true or false"),
        (("trash_days", "7", "--reset"), "give a value or --reset, not both"),
    ],
)
def test_a_bad_setting_is_refused_and_the_file_left_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], message: str
) -> None:
    d = str(tmp_path)
    assert run(capsys, "--data-dir", d, "settings", "trash_days", "20")[0] == 0
    before = (tmp_path / "config.json").read_bytes()
    code, _, err = run(capsys, "--data-dir", d, "settings", *argv)
    assert code == 1 and message in err and err.startswith("error: ")
    assert (tmp_path / "config.json").read_bytes() == before


def test_a_model_folder_is_checked_and_kept_absolute(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = str(tmp_path / "data")
    folder = tmp_path / "my-model"
    folder.mkdir()
    code, _, err = run(
        capsys, "--data-dir", d, "--create", "settings", "embedding_model_dir", str(folder)
    )
    assert code == 1 and "model.onnx is missing" in err
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).write_bytes(b"")
    code, _, err = run(capsys, "--data-dir", d, "settings", "embedding_model_dir", str(folder))
    assert code == 1 and "cannot load" in err  # the files are there, but no model runs
    installed = default_files()
    shutil.copy(installed.model, folder / "model.onnx")
    shutil.copy(installed.tokenizer, folder / "tokenizer.json")
    # Typed relative to where the command runs; stored as the folder it names.
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "--data-dir", d, "settings", "embedding_model_dir", "my-model")
    assert code == 0 and "ambry reindex" in out
    saved = load_config(tmp_path / "data" / "config.json")
    assert saved.embedding_model_dir == str(folder.resolve())


def test_a_refused_value_reaches_the_log_file_redacted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Fake, format-correct; split so no scanner takes this file for a leak.
    token = "ghp_" + "Zq81kLm29QpR7vXw3Ty" + "Uo5Ks2Nd4Fh6Jb8Mc1"
    d = str(tmp_path / "data")
    code, _, err = run(
        capsys, "--data-dir", d, "--create", "settings", "embedding_model_dir", f"/m/{token}"
    )
    assert code != 0 and token in err  # the person sees what they typed
    logs = tmp_path / "logs" / "ambry.log"
    text = logs.read_text(encoding="utf-8")
    assert "embedding_model_dir" in text
    assert token not in text
    assert "[SECRET_REDACTED]" in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1.5, "'brief_token_budget' must be a whole number, not 1.5"),
        ("100", "'brief_token_budget' must be a whole number, not \"100\""),
        (True, "'brief_token_budget' must be a whole number, not true"),
        (None, "'brief_token_budget' must be a whole number, not null"),
    ],
)
def test_a_hand_edited_setting_of_the_wrong_type_names_the_file_and_the_value(
    tmp_path: Path, value: object, message: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"brief_token_budget": value}), encoding="utf-8")
    with pytest.raises(InvalidParams) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: setting {message}; fix it there")
    assert caught.value.field == "brief_token_budget" and caught.value.rule == "type"


@pytest.mark.parametrize(
    "raw",
    [
        b'\xef\xbb\xbf{"recency_weight": 0.3}\n',  # UTF-8 with a byte-order mark
        '{"recency_weight": 0.3}\r\n'.encode("utf-16"),  # Notepad's "Unicode"
    ],
    ids=["utf-8-bom", "utf-16"],
)
def test_a_settings_file_saved_by_notepad_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: bytes
) -> None:
    # Before: a UTF-8 mark gave "Unexpected UTF-8 BOM"; UTF-16 crashed every command.
    (tmp_path / "config.json").write_bytes(raw)
    assert load_config(tmp_path / "config.json").recency_weight == 0.3
    code, out, err = run(capsys, "--data-dir", str(tmp_path), "settings", "recency_weight")
    assert code == 0 and out.startswith("recency_weight = 0.3 "), err


def test_a_settings_file_that_is_not_text_names_the_file_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: UnicodeDecodeError, a traceback from every command, doctor and mcp.
    path = tmp_path / "config.json"
    path.write_bytes('{"recency_weight": 0.3} # café'.encode("cp1252"))
    code, _, err = run(capsys, "--data-dir", str(tmp_path), "list")
    assert code == 1 and "Traceback" not in err
    assert err == (
        f"error: {path} is not UTF-8 text (byte 0xE9 at line 1); save it as UTF-8, "
        "or delete it to use the defaults\n"
    )
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "doctor", "--no-mcp", "--json")
    findings = {f["check"]: f for f in json.loads(out)}
    assert findings["config"]["status"] == "fail" and "not UTF-8" in findings["config"]["detail"]
    assert "model" in findings and "log" in findings  # the other checks still ran
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    done = subprocess.run(
        [sys.executable, "-m", "ambry", "--data-dir", str(tmp_path), "mcp"],
        input=json.dumps(hello) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 1 and "is not UTF-8 text" in answer["error"]["message"]
    assert "Traceback" not in done.stderr


def test_a_folder_in_place_of_the_settings_file_must_be_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: "check that you own the data dir … (chmod 700 …)", which changes nothing.
    path = tmp_path / "config.json"
    path.mkdir()
    code, _, err = run(capsys, "--data-dir", str(tmp_path), "list")
    assert code == 1 and "chmod" not in err
    assert err.startswith(f"error: cannot read settings: {path} is a folder, but must be a file")
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "doctor", "--no-mcp", "--json")
    config = {f["check"]: f for f in json.loads(out)}["config"]
    assert config["status"] == "fail"
    assert config["fix"].startswith(f"move the folder away (mv '{path}'")


@pytest.mark.parametrize(("value", "rule"), [("3", "maximum"), ("-0.5", "minimum")])
def test_a_setting_out_of_range_names_the_bound_as_other_commands_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, rule: str
) -> None:
    # Before: rule "range", where every other command says minimum or maximum.
    code, _, err = run(
        capsys, "--data-dir", str(tmp_path), "--json", "settings", "recency_weight", value
    )
    error = json.loads(err)["error"]
    assert code == 1 and error["field"] == "recency_weight" and error["rule"] == rule


def test_minus_zero_is_saved_and_shown_as_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: saved as -0.0 and shown as "recency_weight = -0".
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "settings", "recency_weight", "-0")
    assert code == 0 and out.startswith("recency_weight = 0 (was 0.15)")
    assert json.loads((tmp_path / "config.json").read_text())["recency_weight"] == 0.0
    assert "-0" not in (tmp_path / "config.json").read_text()
    code, out, _ = run(capsys, "--data-dir", str(tmp_path), "settings", "recency_weight")
    assert out.startswith("recency_weight = 0 (default 0.15")
