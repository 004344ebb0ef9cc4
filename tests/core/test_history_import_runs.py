"""How an ``import --from`` runs: progress and cancel inside one large file, one check,
no group left behind by a refused file, and a dry run that reports what the import will."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli.main import main
from core.model.entries import Actor
from core.model.errors import Refused
from core.portability.history import SourceKind
from core.portability.history_import import MEMORY_BATCH, Cancelled, plan, planner, run
from core.service import Caller, MemoryService
from core.storage.paths import DataDir

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
CLAUDE = FIXTURES / "claude_conversations.json"
ENTITIES = 5 * MEMORY_BATCH


def _memory_file(path: Path, entities: int = ENTITIES) -> Path:
    lines = [
        json.dumps(
            {
                "type": "entity",
                "name": f"Entity_{i}",
                "entityType": "thing",
                "observations": [f"Observation {i} about the harbour"],
            }
        )
        for i in range(entities)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _memories(service: MemoryService, group: str = "main") -> int:
    return int(service.store_for(group).execute("SELECT count(*) FROM memory_entries").get)


@pytest.mark.parametrize("phase", ["check", "write"])
def test_a_cancel_inside_one_large_file_stops_it_with_nothing_written(
    service: MemoryService, operator: Caller, tmp_path: Path, phase: str
) -> None:
    path = _memory_file(tmp_path / "memory.jsonl")
    reports: list[tuple[str, int, int]] = []

    def stop() -> bool:
        # Asked once the phase is under way: before, a file of memories reported (and
        # asked) once per phase, before its memories were checked or written.
        return sum(1 for r in reports if r[0] == phase) >= 3

    with pytest.raises(Cancelled, match="nothing was written"):
        run(
            service,
            operator,
            SourceKind.MCP_MEMORY,
            path,
            progress=lambda *r: reports.append(r),
            should_stop=stop,
        )
    assert _memories(service) == 0
    # Stopped within a batch of the ask, not at the end of the file.
    done = [r[1] for r in reports if r[0] == phase]
    assert done[-1] < path.stat().st_size


def test_progress_moves_through_a_file_of_memories_in_both_phases(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    path = _memory_file(tmp_path / "memory.jsonl")
    size = path.stat().st_size
    reports: list[tuple[str, int, int]] = []
    done = run(
        service, operator, SourceKind.MCP_MEMORY, path, progress=lambda *r: reports.append(r)
    )
    assert done.memories_new == ENTITIES
    for phase in ("check", "write"):
        seen = [d for p, d, t in reports if p == phase and t == size]
        assert len(set(seen)) >= 5, (phase, seen)  # before: one report, at the end
        assert seen == sorted(seen) and seen[-1] == size


def test_run_given_its_plan_checks_the_file_once(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    path = _memory_file(tmp_path / "memory.jsonl", entities=3)
    phases: list[str] = []
    counts = plan(service, operator, SourceKind.MCP_MEMORY, path, screen=False)
    run(
        service,
        operator,
        SourceKind.MCP_MEMORY,
        path,
        progress=lambda phase, *_: phases.append(phase),
        planned=counts,
    )
    assert set(phases) == {"write"}
    assert _memories(service) == 3


def test_the_cli_prints_checking_once(tmp_path: Path) -> None:
    path = _memory_file(tmp_path / "memory.jsonl", entities=3)
    data = tmp_path / "data"
    # The progress line is written when stderr is a terminal: give it one.
    command = [sys.executable, "-m", "ambry", "--data-dir", str(data), "--create"]
    main_fd, terminal = pty.openpty()
    try:
        finished = subprocess.run(
            [*command, "import", "--from", "mcp-memory", str(path)],
            stderr=terminal,
            stdout=subprocess.PIPE,
            text=True,
            timeout=120,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            check=False,
        )
        os.close(terminal)
        said = b""
        while True:
            try:
                chunk = os.read(main_fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(main_fd)
    assert finished.returncode == 0, said
    text = said.decode()
    assert "added 3 memories for review" in finished.stdout
    # Before, the file was checked by the command and again inside the import.
    assert text.count("checking: 100%") == 1, text
    assert text.count("importing: 100%") == 1, text


@pytest.mark.parametrize("dry_run", [False, True])
@pytest.mark.parametrize("content", [None, "[not json"])
def test_a_refused_file_leaves_no_new_group_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, dry_run: bool
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "--create", "store", "Likes tea"]) == 0
    path = tmp_path / "conversations.json"
    if content is not None:
        path.write_text(content)
    extra = ["--dry-run"] if dry_run else []
    assert main([*data, "--group", "typo1", "import", "--from", "claude", str(path), *extra]) == 1
    assert "conversations.json" in capsys.readouterr().err
    assert DataDir(tmp_path / "data").groups() == ["main"]


def test_a_dry_run_into_a_new_group_counts_and_makes_nothing(
    service: MemoryService, tmp_path: Path
) -> None:
    path = _memory_file(tmp_path / "memory.jsonl", entities=3)
    counts = plan(service, planner("fresh"), SourceKind.MCP_MEMORY, path)
    assert counts.memories_new == 3
    assert "fresh" not in service.data_dir.groups()
    done = run(service, service.open_session("fresh", Actor.OPERATOR), SourceKind.MCP_MEMORY, path)
    assert done.memories_new == 3


def test_a_dry_run_reports_the_secrets_the_import_redacts(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "memory.jsonl"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    notes.write_text(
        json.dumps(
            {
                "type": "entity",
                "name": "Deploys",
                "observations": [f"The deploy uses {token} for the registry"],
            }
        )
        + "\n"
    )
    for kind, path in ((SourceKind.CLAUDE, CLAUDE), (SourceKind.MCP_MEMORY, notes)):
        dry = plan(service, operator, kind, path)
        done = run(service, operator, kind, path)
        assert dry.redacted == done.redacted > 0, kind
        assert (dry.threads_new, dry.turns_new, dry.memories_new) == (
            done.threads_new,
            done.turns_new,
            done.memories_new,
        )
    data = ["--data-dir", str(service.data_dir.root), "--group", "other"]
    assert main([*data, "import", "--from", "claude", str(CLAUDE), "--dry-run"]) == 0
    assert capsys.readouterr().out == (
        "would add 2 new threads, 5 new turns, 0 turns already present; "
        "1 secret would be redacted\n"
    )
    assert main([*data, "import", "--from", "claude", str(CLAUDE)]) == 0
    # The import reports what it added, not first what a dry run would have.
    assert capsys.readouterr().out.splitlines()[0] == (
        "added 2 new threads, 5 new turns, 0 turns already present; 1 secret redacted"
    )


def test_a_file_named_with_a_secret_is_refused_by_the_dry_run_as_by_the_import(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    token = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "other.md").write_text("# Deploys\n\n- The deploy runs from the ops box\n")
    (notes / f"{token}.md").write_text("# Deploys\n\n- Prefers blue-green deploys\n")
    expected = (
        "not imported: file 2 in the folder ([SECRET_REDACTED].md): the file's name holds "
        "what looks like a secret (stripe_live_key), and a file's receipt keeps its path as "
        "it is; rename the file and import again. Nothing was imported"
    )
    with pytest.raises(Refused) as dry:
        plan(service, operator, SourceKind.MARKDOWN, notes)
    with pytest.raises(Refused) as done:
        run(service, operator, SourceKind.MARKDOWN, notes)
    assert dry.value.message == done.value.message == expected
    data = ["--data-dir", str(service.data_dir.root)]
    for extra in (["--dry-run"], []):
        assert main([*data, "import", "--from", "markdown", str(notes), *extra]) == 1
        out, err = capsys.readouterr()
        assert (out, err) == ("", f"error: {expected}\n")
    assert _memories(service) == 0
    receipts = service.store_for("main").execute("SELECT count(*) FROM attachment_receipts").get
    assert receipts == 0
    # A secret in the name of a folder on the way is named as such.
    inner = tmp_path / f"keys-{token}" / "deploy.md"
    inner.parent.mkdir()
    (notes / f"{token}.md").rename(inner)
    with pytest.raises(
        Refused,
        match=r"^not imported: .*/keys-\[SECRET_REDACTED\]/deploy\.md: the "
        "name of a folder on its path holds .*rename that folder",
    ) as exc:
        plan(service, operator, SourceKind.MARKDOWN, inner)
    assert token not in exc.value.message
    assert run(service, operator, SourceKind.MARKDOWN, notes).memories_new == 1
