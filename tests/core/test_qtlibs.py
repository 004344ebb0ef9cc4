"""The Qt system-library check names every library PySide6's xcb plugin links to."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from core.cli.qtlibs import SYSTEM_LIBRARIES, QtLibraries, check_qt_libraries, report, xcb_plugin

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
