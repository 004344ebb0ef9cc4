"""How this Ambry was installed, to name the command that reinstalls it.

pipx and ``uv tool install`` give Ambry a venv of its own, which the person never
activates: ``pip install`` run in a shell would go to another Python. Each tool
leaves a file in the venvs it makes (``pipx_metadata.json``, ``uv-receipt.toml``),
which tells them apart from a venv the person made and runs ``pip`` in.
"""

from __future__ import annotations

import shlex
import sys
from enum import StrEnum
from pathlib import Path


class Installer(StrEnum):
    PIPX = "pipx"
    UV_TOOL = "uv tool"
    VENV = "venv"
    FROZEN = "frozen"
    UNKNOWN = "unknown"


def installer(prefix: Path | None = None) -> Installer:
    """Which tool installed the Ambry running in ``prefix`` (default: this Python's)."""
    if prefix is None:
        if getattr(sys, "frozen", False):
            return Installer.FROZEN
        prefix = Path(sys.prefix)
    if (prefix / "pipx_metadata.json").is_file():
        return Installer.PIPX
    if (prefix / "uv-receipt.toml").is_file():
        return Installer.UV_TOOL
    if (prefix / "pyvenv.cfg").is_file():
        return Installer.VENV
    return Installer.UNKNOWN


def _pip(python: str) -> str:
    return f"{shlex.quote(python)} -m pip"


def reinstall_command(prefix: Path | None = None) -> str:
    """The command that reinstalls Ambry, for how it was installed."""
    match installer(prefix):
        case Installer.PIPX:
            return "pipx reinstall ambry"
        case Installer.UV_TOOL:
            return "uv tool upgrade --reinstall ambry"
        case Installer.VENV:
            return f"{_pip(sys.executable)} install --force-reinstall ambry"
        case Installer.FROZEN:
            return "download Ambry again"
        case Installer.UNKNOWN:
            return (
                "pip install --force-reinstall ambry in Ambry's venv, `pipx reinstall ambry`, "
                "or `uv tool upgrade --reinstall ambry`, as Ambry was installed"
            )
