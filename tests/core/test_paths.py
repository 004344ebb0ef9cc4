from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from core.agent.client import AmbryClient
from core.model.errors import InvalidGroup, InvalidParams, StorageError
from core.storage.paths import (
    DataDir,
    DataDirOrigin,
    default_socket_path,
    locate_data_dir,
    resolve_data_dir,
    validate_group,
)


@pytest.mark.parametrize("name", ["main", "work_2", "A-b", "x" * 64])
def test_valid_group_names(name: str) -> None:
    assert validate_group(name) == name


@pytest.mark.parametrize(
    "name", ["", "../x", "a/b", "a\\b", "a\x00b", "x" * 65, "dot.name", " main", "ü", None, 3]
)
def test_invalid_group_names_are_refused_before_any_path(name: object, tmp_path: Path) -> None:
    with pytest.raises(InvalidGroup, match="invalid group name"):
        validate_group(name)
    with pytest.raises(InvalidGroup):
        DataDir(tmp_path).group_db(name)  # type: ignore[arg-type]
    assert not any(tmp_path.iterdir())


def test_data_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBRY_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "flag") == tmp_path / "flag"
    assert resolve_data_dir(None) == tmp_path / "env"
    monkeypatch.delenv("AMBRY_DATA_DIR")
    assert resolve_data_dir(None).name == "Ambry"


def test_where_the_data_dir_was_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AMBRY_DATA_DIR", str(tmp_path / "env"))
    flag = locate_data_dir("rel")
    assert (flag.path, flag.origin, flag.named) == (tmp_path / "rel", DataDirOrigin.FLAG, True)
    env = locate_data_dir(None)
    assert (env.path, env.origin) == (tmp_path / "env", DataDirOrigin.ENV)
    assert env.describe() == f"{tmp_path / 'env'} (from AMBRY_DATA_DIR)"
    monkeypatch.setenv("AMBRY_DATA_DIR", "")
    assert not locate_data_dir(None).named


@pytest.mark.parametrize("value", ["store", "./store", "../x/store"])
def test_a_relative_data_dir_in_the_environment_is_refused(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AMBRY_DATA_DIR", value)
    # A setting to fix, not a fault of the disk: invalid_params, naming the variable.
    with pytest.raises(InvalidParams, match=f"AMBRY_DATA_DIR={value} is a relative path") as info:
        resolve_data_dir(None)
    assert (info.value.code, info.value.field, info.value.rule) == (
        "invalid_params",
        "AMBRY_DATA_DIR",
        "absolute",
    )
    monkeypatch.setenv("AMBRY_DATA_DIR", "~/store")
    assert resolve_data_dir(None) == Path.home() / "store"


def test_a_data_dir_that_cannot_be_made_is_a_storage_error(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(StorageError, match=f"cannot create data dir {blocker / 'sub'}: ") as info:
        DataDir(blocker / "sub").ensure()
    assert "pass --data-dir DIR or set AMBRY_DATA_DIR" in info.value.message


def test_socket_path_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMBRY_SOCKET", str(tmp_path / "s.sock"))
    assert default_socket_path() == tmp_path / "s.sock"
    monkeypatch.delenv("AMBRY_SOCKET")
    assert default_socket_path().parts[-2:] == ("ambry", "agent.sock")


@pytest.mark.parametrize("value", ["agent.sock", "./run/agent.sock", "../agent.sock"])
def test_a_relative_socket_in_the_environment_is_refused(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The app, `ambry serve` and an agent's client start in other folders: resolved
    # where each started, they would not meet on one socket.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AMBRY_SOCKET", value)
    says = f"AMBRY_SOCKET={value} is a relative path, so it would name another socket"
    with pytest.raises(InvalidParams, match=re.escape(says)) as info:
        default_socket_path()
    assert f"set it to an absolute path, such as {tmp_path / value}" in info.value.message
    assert info.value.field == "AMBRY_SOCKET"
    with pytest.raises(InvalidParams, match="AMBRY_SOCKET"):
        AmbryClient()
    assert AmbryClient(tmp_path / "s.sock").socket_path == tmp_path / "s.sock"
    monkeypatch.setenv("AMBRY_SOCKET", "~/agent.sock")
    assert default_socket_path() == Path.home() / "agent.sock"


def test_no_runtime_dir_puts_no_warning_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    # An ssh login or a container has no XDG_RUNTIME_DIR: the socket still has a
    # place, and the fallback goes to the log rather than stderr.
    monkeypatch.delenv("AMBRY_SOCKET", raising=False)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = default_socket_path()
    assert path.parts[-2:] == ("ambry", "agent.sock")
