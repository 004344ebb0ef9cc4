from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

import pytest

from desktop.shell.selftest import run_self_test


def test_self_test_passes_in_process(qapp: Any) -> None:
    out = io.StringIO()
    assert run_self_test(out) == 0
    lines = out.getvalue().splitlines()
    assert lines[-1] == "self-test passed"
    assert sum(line.startswith("PASS") for line in lines) == 11


def test_self_test_fails_when_the_model_is_not_the_pinned_one(
    qapp: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.semantic import embedding

    monkeypatch.setattr(embedding, "MODEL_SHA256", "0" * 64)
    embedding.forget_shared()
    try:
        out = io.StringIO()
        assert run_self_test(out) == 1
        (line,) = [x for x in out.getvalue().splitlines() if x.startswith("FAIL")]
        assert line.startswith("FAIL  semantic search:") and "sha256" in line
    finally:
        monkeypatch.undo()
        embedding.forget_shared()


@pytest.mark.slow
def test_ambry_self_test_command_exits_0() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ambry", "--self-test"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "self-test passed" in done.stdout


def test_shipped_files_are_checked(qapp: Any) -> None:
    from desktop.shell.selftest import check_icons, check_skill, check_stylesheet

    assert check_icons() == "8 PNG sizes and the SVG"
    assert check_stylesheet().endswith(" rules")
    with pytest.raises(AssertionError, match="names tools the manifest lacks"):
        check_skill({"memory_store"})
