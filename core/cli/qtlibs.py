"""The system libraries Qt's xcb platform plugin needs on Linux, and the command that installs them.

PySide6's wheels bundle Qt but not the X11/xcb libraries of the desktop; when one
is missing, all a person sees is Qt's "could not load the Qt platform plugin
'xcb'". This module asks the dynamic loader (``ldd`` on the plugin PySide6
ships, without importing Qt) which libraries it cannot find, and names the
Debian/Ubuntu and Fedora packages that provide them. ``make run`` runs it first
(``python -m core.cli.qtlibs``), ``ambry`` runs it before opening the window
(:func:`preflight`) and ``ambry doctor`` reports it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# soname -> (Debian/Ubuntu package, Fedora package): everything outside Qt itself that
# PySide6 6.11's libqxcb.so and libQt6XcbQpa.so load (read off `ldd`).
SYSTEM_LIBRARIES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
}
_NOT_FOUND = re.compile(r"^\s*(\S+) => not found", re.MULTILINE)


@dataclass(frozen=True)
class QtLibraries:
    """What the check found: ``checked`` is False (with ``reason``) when it could not run."""

    checked: bool
    missing: tuple[str, ...] = ()
    reason: str = ""
    plugin: Path | None = None

    @property
    def ok(self) -> bool:
        return self.checked and not self.missing

    def install_commands(self) -> list[str]:
        known = [SYSTEM_LIBRARIES[s] for s in self.missing if s in SYSTEM_LIBRARIES]
        if not known:
            return []
        debian = " ".join(sorted({d for d, _ in known}))
        fedora = " ".join(sorted({f for _, f in known}))
        return [f"sudo apt-get install {debian}", f"sudo dnf install {fedora}"]


def xcb_plugin() -> Path | None:
    """PySide6's xcb platform plugin, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        plugin = Path(location) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.exists():
            return plugin
    return None


def check_qt_libraries() -> QtLibraries:
    if not sys.platform.startswith("linux"):
        return QtLibraries(False, reason=f"Qt bundles what it needs on {sys.platform}")
    plugin = xcb_plugin()
    if plugin is None:
        return QtLibraries(False, reason="PySide6 (or its xcb plugin) is not installed")
    ldd = shutil.which("ldd")
    if ldd is None:
        return QtLibraries(False, reason="ldd is not available to ask the loader", plugin=plugin)
    proc = subprocess.run(
        [ldd, str(plugin)], capture_output=True, text=True, timeout=30, check=False
    )
    missing = tuple(dict.fromkeys(_NOT_FOUND.findall(proc.stdout)))
    return QtLibraries(True, missing=missing, plugin=plugin)


def report(result: QtLibraries) -> str:
    if not result.checked:
        return f"Qt platform libraries not checked: {result.reason}"
    if result.ok:
        return "Qt platform libraries: all present"
    lines = [
        "The desktop app needs system libraries that are missing: " + ", ".join(result.missing),
        "Install them with one of:",
        *(f"  {c}" for c in result.install_commands()),
    ]
    unknown = [s for s in result.missing if s not in SYSTEM_LIBRARIES]
    if unknown:
        lines.append("  (and the package that provides " + ", ".join(unknown) + ")")
    return "\n".join(lines)


def uses_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will pick its xcb (X11) platform plugin here, the one these libraries feed."""
    if not sys.platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":")[0] == "xcb"
    wayland = environ.get("WAYLAND_DISPLAY") and environ.get("XDG_SESSION_TYPE") == "wayland"
    return bool(environ.get("DISPLAY")) and not wayland


def preflight(environ: Mapping[str, str] | None = None) -> str | None:
    """Before the GUI starts: what to tell the person if Qt's platform plugin cannot load.

    Qt aborts the process when its platform plugin fails, with a message that
    names neither the library nor the package, so the check runs first. ``None``
    when nothing is missing (or the check does not apply here).
    """
    result = _lacking(os.environ if environ is None else environ)
    return None if result is None else "error: Qt cannot open a window here.\n" + report(result)


def _lacking(environ: Mapping[str, str]) -> QtLibraries | None:
    """The check's result if Qt will use X11 here and a library it needs is missing."""
    if not uses_xcb(environ):
        return None
    result = check_qt_libraries()
    return result if result.checked and not result.ok else None


def main() -> int:
    """For ``make run``: exit 1 with the install commands if a library Qt will need is
    missing (none are needed where Qt will not use X11: offscreen, Wayland, no display)."""
    result = _lacking(os.environ)
    if result is not None:
        print(report(result), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
