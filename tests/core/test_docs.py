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


def _shell_lines(text: str) -> list[list[str]]:
    """The lines of each fenced code block in ``text``, block by block."""
    return [block.splitlines() for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)]


@pytest.mark.parametrize("page", [*sorted(p.name for p in DOCS.glob("*.md")), "README.md"])
def test_examples_that_name_a_new_data_dir_create_it(page: str) -> None:
    """A data dir named by ``--data-dir`` must exist unless ``--create`` is given, so an
    example that names a folder of its own (not a placeholder such as DIR) creates it
    the first time it is used in its block."""
    path = ROOT / page if page == "README.md" else DOCS / page
    for block in _shell_lines(path.read_text(encoding="utf-8")):
        created: set[str] = set()
        for line in block:
            found = re.search(r"\bambry\b.*--data-dir[ =](\S+)", line)
            if found is None or found[1].isupper():
                continue
            folder = found[1]
            assert "--create" in line or folder in created, (
                f"{page}: `{line.strip()}` names a data dir that does not exist yet; add --create"
            )
            created.add(folder)
