"""Wheel size and install time, printed as JSON.

Usage: python bench/install.py

Builds the sdist and the wheel (from the sdist), then installs the wheel into a
new venv twice: with its dependencies from the package index (pip's cache warm,
as for a person reinstalling), and with ``--no-deps`` beside the development
venv (what ``make test`` does). Each install is then checked as ``make test``
checks it (self-test, MCP, CLI round trip), so the figures are of an install
that works. Sizes are in bytes: the wheel, the sdist, and the venv after a full
install (Python's own files are not in a venv, only its packages).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))

from install_check import check  # noqa: E402


def main() -> int:
    results = []
    for full in (True, False):
        with tempfile.TemporaryDirectory(prefix="ambry-bench-install-") as tmp:
            results.append(check(Path(tmp), full=full, quiet=True))
    print(json.dumps({"benchmark": "install", "results": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
