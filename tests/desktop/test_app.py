"""Start-up without a display, and the crash handler."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from core.model.errors import NotFound
from desktop.shell import app
from desktop.widgets import messages


def test_no_display_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(app.sys, "platform", "linux")
    code = app.run(argparse.Namespace(data_dir=None, group=None, verbose=False))
    err = capsys.readouterr().err
    assert code == 1
    assert err == ("error: no display available; run `ambry serve` for the headless agent socket\n")


def test_crash_handler_reports_errors_people_can_act_on(qtbot: QtBot) -> None:
    seen: list[tuple[str, str]] = []
    messages.bridge.shown.connect(lambda level, text: seen.append((level, text)))
    handler = app.CrashHandler()
    try:
        raise NotFound("no entry mem-x in group main")
    except NotFound as exc:
        handler(NotFound, exc, exc.__traceback__)
    assert seen == [("error", "no entry mem-x in group main")]


def test_crash_handler_shows_a_dialog_for_bugs(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown: list[str] = []

    def fake_exec(box: app.QMessageBox) -> int:
        shown.append(box.informativeText() + "\n" + box.detailedText())
        return 0

    monkeypatch.setattr(app.QMessageBox, "exec", fake_exec)
    handler = app.CrashHandler()
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError as exc:
        handler(ZeroDivisionError, exc, exc.__traceback__)
    assert len(shown) == 1
    assert "ZeroDivisionError: division by zero" in shown[0]
    assert "Traceback" in shown[0]


def test_style_and_icon_load(qtbot: QtBot) -> None:
    assert "#sidebar" in app.load_style()
    assert not app.app_icon().isNull()


def test_ambry_with_no_command_opens_the_app_as_its_help_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from core.cli.main import build_parser, main

    help_text = build_parser().format_help()
    assert "With no COMMAND, `ambry` opens the desktop app" in help_text
    assert help_text.splitlines()[2].strip() == "[COMMAND ...]"  # optional in the usage
    # No command reaches the app, which here says it has no display to open on.
    for name in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(app.sys, "platform", "linux")
    assert main(["--data-dir", str(tmp_path)]) == 1
    assert "no display available" in capsys.readouterr().err
