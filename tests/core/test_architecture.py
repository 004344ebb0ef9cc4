"""core/ is a library with no Qt in it.

Only the composition roots of the GUI and the socket server may reach into
``desktop/``, and only from inside a function, so importing core never loads Qt.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "core"


def test_core_never_imports_qt() -> None:
    offenders = []
    for path in CORE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top_level = set(map(id, tree.body))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                if root in {"PySide6", "PyQt5", "PyQt6", "shiboken6"} or (
                    root == "desktop" and id(node) in top_level
                ):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []
