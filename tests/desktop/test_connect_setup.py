"""One-click client setup on the Connect page: asks, merges with a backup, says what it did."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from core.storage.paths import DataDir
from desktop.shell.main_window import MainWindow, Nav
from tests.desktop.conftest import Dialogs


def test_add_to_cursor_merges_with_a_backup_and_twice_is_harmless(
    window: MainWindow, dialogs: Dialogs, data_dir: DataDir, tmp_path: Path
) -> None:
    window.go(Nav.CONNECT)
    box = window.connect_page.setup_box
    config = tmp_path / "cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}), encoding="utf-8")
    box.paths["cursor"] = config

    dialogs.answer = False
    box.buttons["cursor"].click()
    assert "Cursor" in dialogs.asked[-1] and str(config) in dialogs.asked[-1]
    assert "ambry" not in json.loads(config.read_text(encoding="utf-8"))["mcpServers"]

    dialogs.answer = True
    box.buttons["cursor"].click()
    servers = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]
    assert servers["other"] == {"command": "x"}
    args = servers["ambry"]["args"]
    assert args[args.index("--data-dir") + 1] == str(data_dir.root)
    assert args[args.index("--group") + 1] == "main"
    assert "Added Ambry to Cursor" in box.result.text()
    assert len(list(config.parent.glob("mcp.json.bak-*"))) == 1

    box.buttons["cursor"].click()
    assert "already starts Ambry" in box.result.text()
    assert len(list(config.parent.glob("mcp.json.bak-*"))) == 1


def test_a_file_it_cannot_parse_is_left_alone_with_the_reason(
    window: MainWindow, tmp_path: Path
) -> None:
    box = window.connect_page.setup_box
    config = tmp_path / "claude_desktop_config.json"
    config.write_text("{ // a comment\n}", encoding="utf-8")
    box.paths["claude-desktop"] = config
    box.buttons["claude-desktop"].click()
    assert "Claude Desktop was not changed" in box.result.text()
    assert config.read_text(encoding="utf-8") == "{ // a comment\n}"


def test_an_entry_pointing_elsewhere_is_replaced_and_the_result_says_so(
    window: MainWindow, dialogs: Dialogs, tmp_path: Path
) -> None:
    box = window.connect_page.setup_box
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"ambry": {"command": "/old/ambry", "args": []}}}')
    box.paths["cursor"] = config
    dialogs.answer = True
    box.buttons["cursor"].click()
    assert f"Replaced the Ambry entry in Cursor ({config}); it started /old/ambry." in (
        box.result.text()
    )


def test_the_page_shows_the_entry_the_button_writes(
    window: MainWindow, dialogs: Dialogs, tmp_path: Path
) -> None:
    # Before, the snippet found `ambry` its own way and could name another executable.
    window.go(Nav.CONNECT)
    page = window.connect_page
    config = tmp_path / "mcp.json"
    page.setup_box.paths["cursor"] = config
    dialogs.answer = True
    page.setup_box.buttons["cursor"].click()
    written = json.loads(config.read_text(encoding="utf-8"))["mcpServers"]["ambry"]
    shown = json.loads(page.snippet.toPlainText())["mcpServers"]["ambry"]
    # The same entry, with the client's own name.
    assert shown["args"][-2:] == ["--client", "claude-desktop"]
    assert written == {**shown, "args": [*shown["args"][:-1], "cursor"]}
    line = shlex.join([shown["command"], *shown["args"][:-1], "claude-code"])
    assert page.claude_line.text().endswith(line)
