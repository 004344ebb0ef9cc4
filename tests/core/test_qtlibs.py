"""The Qt system-library check names every library PySide6's xcb plugin links to."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from core.cli import qtlibs
from core.cli.main import main
from core.cli.qtlibs import (
    SYSTEM_LIBRARIES,
    QtLibraries,
    check_qt_libraries,
    report,
    uses_xcb,
    xcb_plugin,
)

BASE = re.compile(
    r"lib(c|m|dl|pthread|rt|stdc\+\+|gcc_s|Qt6\w*|icu\w*|pyside6\w*|shiboken6\w*)\.so"
)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_every_system_library_the_plugin_needs_is_mapped_to_packages() -> None:
    plugin = xcb_plugin()
    assert plugin is not None
    qpa = next((plugin.parents[2] / "lib").glob("libQt6XcbQpa.so*"))
    needed: set[str] = set()
    for binary in (plugin, qpa):
        out = subprocess.run(["readelf", "-d", str(binary)], capture_output=True, text=True)
        needed |= set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout))
    system = {n for n in needed if not BASE.match(n)}
    assert system, "readelf found no system library at all"
    assert system - set(SYSTEM_LIBRARIES) == set()


def test_missing_libraries_become_install_commands() -> None:
    found = QtLibraries(True, missing=("libxcb-icccm.so.4", "libxcb-keysyms.so.1", "libodd.so.9"))
    assert found.install_commands() == [
        "sudo apt-get install libxcb-icccm4 libxcb-keysyms1",
        "sudo dnf install xcb-util-keysyms xcb-util-wm",
    ]
    text = report(found)
    assert "libxcb-icccm.so.4" in text and "libodd.so.9" in text


def test_the_check_runs_here() -> None:
    result = check_qt_libraries()
    assert result.checked, result.reason
    assert all(name.endswith(tuple(".so." + d for d in "0123456789")) for name in result.missing)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xcb is Linux's")
def test_xcb_is_checked_only_where_qt_will_use_it() -> None:
    assert uses_xcb({"DISPLAY": ":0"})
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb"})
    assert not uses_xcb({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"})
    assert not uses_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "w-0", "XDG_SESSION_TYPE": "wayland"})
    assert not uses_xcb({})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xcb is Linux's")
def test_the_gui_launch_names_missing_libraries_instead_of_starting_qt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    missing = QtLibraries(True, missing=("libxcb-cursor.so.0",))
    monkeypatch.setattr(qtlibs, "check_qt_libraries", lambda: missing)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["--data-dir", str(tmp_path), "--create"]) == 1
    err = capsys.readouterr().err
    assert "libxcb-cursor.so.0" in err and "sudo apt-get install libxcb-cursor0" in err
    assert "sudo dnf install xcb-util-cursor" in err
    monkeypatch.setattr(qtlibs, "check_qt_libraries", lambda: QtLibraries(True))
    assert qtlibs.preflight({"DISPLAY": ":99"}) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xcb is Linux's")
def test_make_run_checks_the_libraries_only_where_qt_will_use_x11(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = QtLibraries(True, missing=("libxcb-cursor.so.0",))
    monkeypatch.setattr(qtlibs, "check_qt_libraries", lambda: missing)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
    assert qtlibs.main() == 1 and "libxcb-cursor0" in capsys.readouterr().err
    # Offscreen (or Wayland, or no display) needs none of them: make run goes on.
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert qtlibs.main() == 0 and capsys.readouterr().err == ""
