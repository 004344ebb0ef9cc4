"""Documentation is tested too: every command is in docs/cli.md, and links resolve."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.cli.context import COMMANDS
from core.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def test_every_cli_command_is_documented() -> None:
    build_parser()
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in COMMANDS if f"`ambry {name}" not in text]
    assert missing == []


@pytest.mark.parametrize("page", [*sorted(p.name for p in DOCS.glob("*.md")), "README.md"])
def test_relative_links_point_at_files(page: str) -> None:
    path = ROOT / page if page == "README.md" else DOCS / page
    text = path.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (path.parent / target).exists(), f"{page} links to missing {target}"
