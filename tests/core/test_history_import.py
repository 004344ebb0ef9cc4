"""Importing other apps' history and memories: Claude, ChatGPT, the MCP memory server,
Markdown notes; all or nothing, nothing twice, and the Markdown export."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.attachments.attach import verify_all
from core.cli.main import main
from core.continuity import context as continuity
from core.continuity.episodes import log_exchange
from core.model.entries import Actor, EntryType, Status
from core.model.errors import Forbidden, InvalidParams
from core.portability.history import SourceKind
from core.portability.history_import import Cancelled, plan, run
from core.portability.markdown_export import export_markdown
from core.portability.markdown_notes import parse
from core.service import Caller, MemoryService

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
CLAUDE = FIXTURES / "claude_conversations.json"
CHATGPT = FIXTURES / "chatgpt_conversations.json"


def _rows(service: MemoryService, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in service.store_for("main").execute(sql, args)]


def _count(service: MemoryService, table: str) -> int:
    return int(_rows(service, f"SELECT count(*) FROM {table}")[0][0])


def test_claude_export_becomes_threads_of_turns_with_names_and_times(
    service: MemoryService, operator: Caller
) -> None:
    dry = plan(service, operator, SourceKind.CLAUDE, CLAUDE)
    assert (dry.threads_new, dry.turns_new, dry.dry_run) == (2, 5, True)
    assert _count(service, "exchanges") == 0  # a dry run writes nothing

    done = run(service, operator, SourceKind.CLAUDE, CLAUDE)
    assert (done.threads_new, done.turns_new, done.redacted) == (2, 5, 1)
    titles = _rows(service, "SELECT title, created_at FROM threads ORDER BY created_at")
    assert titles == [
        ("Garden watering schedule", "2024-04-02T08:15:00.000Z"),
        ("Bike commute", "2024-05-10T17:00:00.000Z"),
    ]
    turns = _rows(service, "SELECT speaker, name, said_at, text FROM exchanges ORDER BY said_at")
    assert turns[0][:3] == ("user", None, "2024-04-02T08:15:00.000Z")
    # The assistant's text came from its content parts; the tool-only message is skipped.
    assert turns[1][:2] == ("assistant", "Claude")
    assert turns[1][3].startswith("Check the soil")
    # A credential statement in a turn loses its value, not the turn.
    assert "hunter2" not in turns[2][3] and "[SECRET_REDACTED]" in turns[2][3]
    assert len(turns) == 5

    again = run(service, operator, SourceKind.CLAUDE, CLAUDE)
    assert (again.threads_new, again.turns_new, again.turns_present) == (0, 0, 5)
    assert _count(service, "exchanges") == 5


def test_a_newer_export_adds_only_the_new_turns(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    run(service, operator, SourceKind.CLAUDE, CLAUDE)
    data = json.loads(CLAUDE.read_text())
    data[1]["chat_messages"].append(
        {
            "uuid": "7c1d0012-aaaa-4d1d-9e9e-000000000012",
            "text": "And in winter?",
            "sender": "human",
            "created_at": "2024-11-02T07:00:00Z",
        }
    )
    data[1]["updated_at"] = "2024-11-02T07:00:00Z"
    newer = tmp_path / "conversations.json"
    newer.write_text(json.dumps(data))
    done = run(service, operator, SourceKind.CLAUDE, newer)
    assert (done.threads_new, done.threads_updated, done.turns_new) == (0, 1, 1)
    assert done.turns_present == 5
    assert _rows(service, "SELECT updated_at FROM threads WHERE title = 'Bike commute'") == [
        ("2024-11-02T07:00:00.000Z",)
    ]


def test_the_zip_the_service_sends_is_read_as_is(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    archive = tmp_path / "data-2024.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(CLAUDE, "conversations.json")
        z.writestr("users.json", "[]")
    assert run(service, operator, SourceKind.CLAUDE, archive).turns_new == 5
    empty = tmp_path / "other.zip"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("users.json", "[]")
    with pytest.raises(InvalidParams, match=r"zip file without conversations\.json"):
        plan(service, operator, SourceKind.CLAUDE, empty)


def test_chatgpt_follows_the_current_branch_and_skips_hidden_and_tool_messages(
    service: MemoryService, operator: Caller
) -> None:
    done = run(service, operator, SourceKind.CHATGPT, CHATGPT)
    assert (done.threads_new, done.turns_new) == (2, 4)
    turns = _rows(service, "SELECT turn, speaker, name, said_at, text FROM exchanges ORDER BY seq")
    assert [t[0] for t in turns] == ["n-question", "n-answer-2", "t-question", "t-answer"]
    assert turns[1][1:4] == ("assistant", "gpt-4o", "2024-06-01T10:00:30.000Z")
    assert turns[2][4] == "[image]\n\nWhat should I pack for three days of hiking?"
    assert turns[3][2] == "ChatGPT"  # no model named: the product's name
    texts = " ".join(t[4] for t in turns)
    assert "abandoned" not in texts and "Bakes on weekends" not in texts and "print(" not in texts


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda d: d[1]["chat_messages"][1].update(sender="bot"),
            r"conversation 2 \(uuid 0b6a1c2e…\): chat_messages\[1\]: sender is 'bot'",
        ),
        (
            lambda d: d[0]["chat_messages"][0].update(created_at="yesterday"),
            r"conversation 1 .*chat_messages\[0\]\.created_at: 'yesterday' is not a time",
        ),
        (lambda d: d[1].pop("chat_messages"), r"conversation 2 .*chat_messages must be a list"),
        (
            lambda d: d[0]["chat_messages"][0].update(created_at="2999-01-01T00:00:00Z"),
            r"conversation 1 .*created_at: '2999-01-01T00:00:00Z' is more than a day in the "
            "future; check the export's clock",
        ),
    ],
)
def test_a_malformed_record_is_named_and_nothing_is_written(
    service: MemoryService, operator: Caller, tmp_path: Path, change: Any, message: str
) -> None:
    data = json.loads(CLAUDE.read_text())
    change(data)
    bad = tmp_path / "conversations.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidParams, match=message):
        run(service, operator, SourceKind.CLAUDE, bad)
    # Conversation 1 was valid, but the file is all or nothing.
    assert _count(service, "threads") == 0 and _count(service, "exchanges") == 0


def test_broken_json_names_the_byte_and_the_last_good_record(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    cut = tmp_path / "conversations.json"
    cut.write_bytes(CLAUDE.read_bytes()[:-200])
    # The last good conversation is named by its number, counted from 1, and its title.
    after = r"not valid JSON after conversation 1 \('Garden watering schedule'\), near byte"
    with pytest.raises(InvalidParams, match=after):
        run(service, operator, SourceKind.CLAUDE, cut)
    assert _count(service, "exchanges") == 0
    # Cut inside the first one: there is no conversation 0.
    cut.write_bytes(CLAUDE.read_bytes()[:300])
    with pytest.raises(InvalidParams) as caught:
        plan(service, operator, SourceKind.CLAUDE, cut)
    assert caught.value.message.startswith(
        "conversations.json: not valid JSON in conversation 1 (the first), near byte 300 "
        "(parse error: premature EOF)"
    )
    obj = tmp_path / "object.json"
    obj.write_text('{"conversations": []}')
    with pytest.raises(InvalidParams, match=r"expected a JSON array of conversations"):
        plan(service, operator, SourceKind.CHATGPT, obj)


def test_chatgpt_tree_errors_are_named(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    data = json.loads(CHATGPT.read_text())
    data[0]["current_node"] = "nowhere"
    bad = tmp_path / "conversations.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidParams, match=r"conversation 1 \(id 66a1f0c2…\): current_node"):
        plan(service, operator, SourceKind.CHATGPT, bad)
    data = json.loads(CHATGPT.read_text())
    data[1]["mapping"]["t-root"]["parent"] = "t-answer"
    bad.write_text(json.dumps(data))
    with pytest.raises(InvalidParams, match="is its own ancestor"):
        plan(service, operator, SourceKind.CHATGPT, bad)


def test_cancel_leaves_nothing_written(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    phases: list[str] = []

    def stop() -> bool:
        return "write" in phases

    def progress(phase: str, done: int, total: int) -> None:
        phases.append(phase)

    with pytest.raises(Cancelled):
        run(service, operator, SourceKind.CHATGPT, CHATGPT, progress=progress, should_stop=stop)
    assert "check" in phases and _count(service, "threads") == 0
    assert _count(service, "exchanges") == 0


def test_mcp_memory_entities_and_relations_become_facts_for_review(
    service: MemoryService, operator: Caller
) -> None:
    done = run(service, operator, SourceKind.MCP_MEMORY, FIXTURES / "memory.jsonl")
    assert (done.memories_new, done.refused) == (3, ["memory.jsonl line 4"])
    rows = _rows(
        service, "SELECT type, content, tags, status, trust FROM memory_entries ORDER BY seq"
    )
    assert [r[1] for r in rows] == [
        "Dana Lee: Prefers morning meetings",
        "Dana Lee: Works on the billing service",
        "Dana Lee works on Billing",
    ]
    assert json.loads(rows[2][2]) == ["Dana Lee", "Billing", "relation"]
    assert {(r[0], r[3], r[4]) for r in rows} == {("fact", "candidate", "low")}
    assert "Pa55w0rd" not in json.dumps(_rows(service, "SELECT * FROM memory_entries"))
    again = run(service, operator, SourceKind.MCP_MEMORY, FIXTURES / "memory.jsonl")
    assert (again.memories_new, again.memories_present) == (0, 3)


def test_mcp_memory_bad_line_is_named(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    bad = tmp_path / "memory.jsonl"
    bad.write_text('{"type":"entity","name":"A","observations":["x"]}\n{"type":"edge"}\n')
    with pytest.raises(InvalidParams, match=r"memory.jsonl line 2: type is 'edge'"):
        run(service, operator, SourceKind.MCP_MEMORY, bad)
    bad.write_text('{"type":"relation","from":"A","to":"B"}\n')
    with pytest.raises(InvalidParams, match=r"line 1: relationType must be a string \(missing\)"):
        run(service, operator, SourceKind.MCP_MEMORY, bad)
    assert _count(service, "memory_entries") == 0


def test_markdown_notes_one_entry_per_item_with_types_tags_and_receipts(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    notes = tmp_path / "notes"
    shutil.copytree(FIXTURES / "notes", notes)
    done = run(service, operator, SourceKind.MARKDOWN, notes)
    assert (done.files, done.memories_new, done.receipts_new) == (2, 6, 2)
    entries = {
        e.content: e
        for e in (
            service.get("main", r[0]) for r in _rows(service, "SELECT id FROM memory_entries")
        )
    }
    tea = entries["Prefers tea to coffee after 3 pm"]
    assert tea.type is EntryType.PREFERENCE and tea.status is Status.CANDIDATE
    assert tea.tags == ("home", "routines", "Preferences")
    assert tea.review_reason == "imported from MEMORY.md line 7"
    assert entries["Use pnpm, not npm, in the web repo."].type is EntryType.INSTRUCTION
    cat = entries["The cat is called Miso and is afraid of the hoover. #pets"]
    assert cat.type is EntryType.FACT and {"Miso", "pets"} <= set(cat.tags)
    assert "Likes answers with the command first,\nthen the explanation." in "\n".join(entries)
    assert not any("code is not a memory" in c or "table" in c for c in entries)
    receipts = _rows(service, "SELECT filename, sha256 FROM attachment_receipts ORDER BY 1")
    assert [r[0] for r in receipts] == ["MEMORY.md", "Miso.md"]

    again = run(service, operator, SourceKind.MARKDOWN, notes)
    assert (again.memories_new, again.receipts_new, again.memories_present) == (0, 0, 6)
    assert _count(service, "attachment_receipt_turns") == 2

    memory = notes / "MEMORY.md"
    memory.write_text(memory.read_text() + "\n## Preferences\n- Window seat on trains\n")
    changed = run(service, operator, SourceKind.MARKDOWN, notes)
    assert (changed.memories_new, changed.receipts_new, changed.memories_present) == (1, 1, 6)
    states = {v.receipt_id: v.state.value for v in verify_all(service, operator)}
    assert sorted(states.values()) == ["changed", "verified", "verified"]


def test_front_matter_type_and_unclosed_front_matter(tmp_path: Path) -> None:
    note = tmp_path / "CLAUDE.md"
    note.write_text("---\ntype: instruction\ntags:\n  - repo\n---\nRun make lint first.\n")
    [only] = parse(note)
    assert (only.entry_type, only.tags) == (EntryType.INSTRUCTION, ("repo",))
    note.write_text("---\ntags: [a]\nNo end.\n")
    with pytest.raises(InvalidParams, match=r"CLAUDE\.md line 1: front matter .* never closed"):
        parse(note)
    note.write_text("---\ntype: wish\n---\n")
    with pytest.raises(InvalidParams, match=r"CLAUDE\.md line 2: type .wish. is not one of"):
        parse(note)


@settings(max_examples=150, deadline=None)
# Any text but NUL, which no text file holds (it marks UTF-16 saved without its BOM).
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        max_size=3000,
    )
)
def test_markdown_parser_never_fails_on_text_and_keeps_entries_within_limits(
    tmp_path_factory: pytest.TempPathFactory, text: str
) -> None:
    note = tmp_path_factory.mktemp("md") / "n.md"
    note.write_text(text.replace("---", "- - -"), encoding="utf-8")
    for n in parse(note):
        assert n.content.strip() and len(n.content) <= 2000
        assert len(n.tags) <= 10 and all(0 < len(t) <= 50 for t in n.tags)


def test_an_agent_cannot_import(service: MemoryService, agent: Caller) -> None:
    with pytest.raises(Forbidden):
        plan(service, agent, SourceKind.CLAUDE, CLAUDE)


def test_markdown_export_writes_a_file_per_thread_and_memories_by_type(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    run(service, operator, SourceKind.CHATGPT, CHATGPT)
    service.store(operator, {"type": "preference", "content": "Prefers short answers"})
    service.store(operator, {"type": "fact", "content": "Keeps bees", "privacy": "public"})
    out = tmp_path / "md"
    summary = export_markdown(service, operator, out)
    assert (summary.threads, summary.turns, summary.memories) == (2, 4, 2)
    memories = (out / "memories.md").read_text()
    assert memories.index("## Preferences (1)") < memories.index("## Facts (1)")
    assert "- Prefers short answers" in memories
    [sourdough] = (out / "threads").glob("2024-06-01-sourdough-starter-thr*.md".replace("thr", ""))
    text = sourdough.read_text()
    assert text.startswith("# Sourdough starter\n")
    assert "**assistant (gpt-4o)**, 2024-06-01 10:00 UTC:\n\n> No: it is hungry." in text


def test_cli_dry_run_counts_then_import_writes(
    service: MemoryService, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(service.data_dir.root)]
    assert main([*data, "import", "--from", "claude", str(CLAUDE), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would add 2 new threads, 5 new turns" in out
    assert _count(service, "exchanges") == 0
    assert main([*data, "--json", "import", "--from", "claude", str(CLAUDE)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["turns"] == {"new": 5, "already_present": 0} and not report["dry_run"]
    assert main([*data, "export", "--format", "markdown", str(tmp_path / "md")]) == 0
    assert "2 threads (5 turns)" in capsys.readouterr().out
    assert main([*data, "import", str(CLAUDE), "--dry-run"]) == 2


def test_markdown_export_read_back_gives_the_same_memories(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    service.store(operator, {"type": "preference", "content": "Likes tea 🍵", "tags": ["drinks"]})
    service.store(operator, {"type": "fact", "content": "東京 office\nopens at 9", "tags": []})
    out = tmp_path / "md"
    export_markdown(service, operator, out)
    notes = parse(out / "memories.md")
    assert [(n.entry_type, n.content, n.tags) for n in notes] == [
        (EntryType.PREFERENCE, "Likes tea 🍵", ("drinks",)),
        (EntryType.FACT, "東京 office\nopens at 9", ()),
    ]
    # Imported again into the same group, they are already there.
    counts = run(service, operator, SourceKind.MARKDOWN, out / "memories.md")
    assert (counts.memories_new, counts.memories_present) == (0, 2)


def test_a_markdown_export_folder_gives_back_its_memories_not_its_threads(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    from core.continuity.episodes import log_exchange
    from core.continuity.threads import open_thread

    service.store(operator, {"type": "preference", "content": "Likes green tea", "tags": []})
    open_thread(service, operator, title="Trip planning")
    log_exchange(service, operator, "user", "Book the night train to Vienna, please")
    out = tmp_path / "md"
    export_markdown(service, operator, out)
    written = sorted(p.name for p in (out / "threads").iterdir())
    assert "unfiled.md" in written and any("trip-planning" in name for name in written)
    # The whole folder read back: the memory is already there, and neither the
    # thread's file nor the quoted turn comes back as a memory.
    counts = run(service, operator, SourceKind.MARKDOWN, out)
    assert (counts.memories_new, counts.memories_present) == (0, 1)


def test_a_note_that_is_only_a_secret_is_skipped_and_named_as_such(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "keys.md"
    notes.write_text(
        "# Keys\n\n"
        "- The deploy key lives in 1Password\n"
        "- ghp_Q7wErT9yUiOp3AsDfGh2JkLzXc8VbNm4Lk5J\n"
        "- my password is hunter2\n"
    )
    done = run(service, operator, SourceKind.MARKDOWN, notes)
    # A token alone is not a credential statement: it is skipped for what is left of it.
    assert done.memories_new == 1
    assert done.refused == ["keys.md line 5"]
    assert done.secret_only == ["keys.md line 4"]
    assert done.to_dict()["secret_only"] == ["keys.md line 4"]
    assert done.summary().endswith(
        "; 1 refused (credential statements: first at keys.md line 5)"
        "; 1 skipped (nothing but a secret: first at keys.md line 4)"
    )
    contents = [r[0] for r in _rows(service, "SELECT content FROM memory_entries")]
    assert contents == ["The deploy key lives in 1Password"]
    data = ["--data-dir", str(service.data_dir.root)]
    assert main([*data, "import", "--from", "markdown", str(notes), "--dry-run"]) == 0
    assert "1 skipped (nothing but a secret: first at keys.md line 4)" in capsys.readouterr().out


def test_mcp_memory_lines_end_at_newlines_only(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    # JSON.stringify, which the memory server writes with, leaves U+2028 and U+0085
    # in a string unescaped; they are part of the line, not the end of it.
    graph = tmp_path / "memory.jsonl"
    graph.write_bytes(
        b'{"type":"entity","name":"Notes","entityType":"doc","observations":'
        b'["line one\xe2\x80\xa8line two","caf\xc2\x85 x"]}\r\n'
        b'{"type":"relation","from":"Notes","to":"X","relationType":"mentions"}\n'
    )
    done = run(service, operator, SourceKind.MCP_MEMORY, graph)
    assert done.memories_new == 3
    contents = [r[0] for r in _rows(service, "SELECT content FROM memory_entries ORDER BY seq")]
    assert contents[0].startswith("Notes: line one") and contents[0].endswith("line two")
    assert contents[2] == "Notes mentions X"


def _sources(tmp_path: Path) -> dict[SourceKind, tuple[Path, str]]:
    """A file of each source with letters beyond ASCII, and the text it is written from."""
    claude = json.loads(CLAUDE.read_text())
    claude[0]["name"] = "Café garden"
    chatgpt = json.loads(CHATGPT.read_text())
    chatgpt[0]["title"] = "Café sourdough"
    texts = {
        SourceKind.CLAUDE: json.dumps(claude, indent=1, ensure_ascii=False),
        SourceKind.CHATGPT: json.dumps(chatgpt, indent=1, ensure_ascii=False),
        SourceKind.MCP_MEMORY: '{"type":"entity","name":"Dana","observations":["x"]}\n'
        '{"type":"entity","name":"Zoë","observations":["Likes café au lait"]}\n',
        SourceKind.MARKDOWN: "# Preferences\n\n- Likes café au lait\n",
    }
    names = {SourceKind.MCP_MEMORY: "memory.jsonl", SourceKind.MARKDOWN: "MEMORY.md"}
    return {
        kind: (tmp_path / names.get(kind, "conversations.json"), text)
        for kind, text in texts.items()
    }


@pytest.mark.parametrize("kind", list(SourceKind))
def test_every_source_reads_utf8_with_a_bom_and_utf16_and_refuses_other_bytes(
    service: MemoryService, operator: Caller, tmp_path: Path, kind: SourceKind
) -> None:
    path, text = _sources(tmp_path)[kind]
    path.write_text(text, encoding="utf-8")
    plain = plan(service, operator, kind, path).to_dict()
    for encoding in ("utf-8-sig", "utf-16"):
        path.write_text(text, encoding=encoding)
        assert plan(service, operator, kind, path).to_dict() == plain, encoding
    line, char = next((n, c) for n, s in enumerate(text.split("\n"), 1) for c in s if c > "~")
    path.write_text(text, encoding="latin-1")
    says = (
        f"{path.name} is not UTF-8 text (byte 0x{ord(char):02X} at line {line}); "
        "save the file as UTF-8"
    )
    with pytest.raises(InvalidParams) as caught:
        plan(service, operator, kind, path)
    assert caught.value.message == says
    path.write_text(text, encoding="utf-16-le")
    with pytest.raises(InvalidParams, match=r"byte 0x00 at line 1; it looks like UTF-16 without"):
        plan(service, operator, kind, path)


def test_utf16_text_is_stored_as_the_text_it_holds(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    path, text = _sources(tmp_path)[SourceKind.MCP_MEMORY]
    path.write_text(text, encoding="utf-16")
    run(service, operator, SourceKind.MCP_MEMORY, path)
    contents = [r[0] for r in _rows(service, "SELECT content FROM memory_entries ORDER BY seq")]
    assert contents == ["Dana: x", "Zoë: Likes café au lait"]
    path, text = _sources(tmp_path)[SourceKind.CLAUDE]
    path.write_text(text, encoding="utf-16")
    run(service, operator, SourceKind.CLAUDE, path)
    assert ("Café garden",) in _rows(service, "SELECT title FROM threads")


def _chatgpt_conversation(*messages: tuple[str, list[Any]]) -> dict[str, Any]:
    """A ChatGPT conversation of ``(role, parts)`` multimodal messages, one after another."""
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None}}
    parent = "root"
    for i, (role, parts) in enumerate(messages, 1):
        node = f"m{i}"
        content = {"content_type": "multimodal_text", "parts": parts}
        message = {"id": node, "author": {"role": role}, "create_time": 1714550000 + i}
        mapping[node] = {
            "id": node,
            "parent": parent,
            "message": {**message, "content": content, "recipient": "all"},
        }
        parent = node
    return {"id": "voice-1", "title": "Dog food", "current_node": parent, "mapping": mapping}


def test_chatgpt_voice_messages_keep_what_was_said(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    audio = {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file_1"}
    said = {"content_type": "audio_transcription", "direction": "in"}
    live = {
        "content_type": "real_time_user_audio_video_asset_pointer",
        "audio_asset_pointer": audio,
        "video_container_asset_pointer": None,
        "frames_asset_pointers": [],
    }
    export = tmp_path / "conversations.json"
    conversation = _chatgpt_conversation(
        ("user", [{**said, "text": "Please remember that she is allergic to chicken"}, audio]),
        ("assistant", [{**said, "text": "Got it, no chicken for Luna.", "direction": "out"}]),
        ("user", [{**said, "text": ""}, live]),
        ("user", [{**said, "text": "Look at her bowl"}, {**live, "frames_asset_pointers": [{}]}]),
        ("user", [{"content_type": "file_asset_pointer", "asset_pointer": "x"}, "the vet bill"]),
    )
    export.write_text(json.dumps([conversation]))
    run(service, operator, SourceKind.CHATGPT, export)
    assert [r[0] for r in _rows(service, "SELECT text FROM exchanges ORDER BY seq")] == [
        "Please remember that she is allergic to chicken",
        "Got it, no chicken for Luna.",
        "[audio]",  # a recording without a transcription: something was said
        "Look at her bowl\n\n[video]",
        "[attachment]\n\nthe vet bill",
    ]


@pytest.mark.parametrize(
    ("given", "path", "says"),
    [
        (SourceKind.CLAUDE, CHATGPT, "uuid must be a string (missing). It looks like a ChatGPT"),
        (SourceKind.CHATGPT, CLAUDE, "has no id (conversation_id or id must be a string). It "),
        (SourceKind.MCP_MEMORY, CHATGPT, "line 1: not JSON (Expecting value at column 2). It l"),
        (SourceKind.CHATGPT, FIXTURES / "memory.jsonl", "it starts with '{'. It looks like an MCP"),
        (SourceKind.CLAUDE, FIXTURES / "notes" / "MEMORY.md", "starts with '-'. It looks like Ma"),
        (SourceKind.MARKDOWN, CHATGPT, "holds JSON, not Markdown notes; give a Markdown file"),
        (SourceKind.MARKDOWN, CLAUDE, "holds JSON, not Markdown notes; give a Markdown file"),
        (SourceKind.MARKDOWN, FIXTURES / "memory.jsonl", "holds JSON, not Markdown notes"),
    ],
)
def test_a_file_given_as_another_source_says_which_import_it_needs(
    service: MemoryService, operator: Caller, given: SourceKind, path: Path, says: str
) -> None:
    seen = {CHATGPT: "chatgpt", CLAUDE: "claude", FIXTURES / "memory.jsonl": "mcp-memory"}
    kind = seen.get(path, "markdown")
    with pytest.raises(InvalidParams) as caught:
        plan(service, operator, given, path)
    assert says in caught.value.message
    assert caught.value.message.endswith(
        f": import it with --from {kind} (in the app: choose that source)"
    )
    assert _count(service, "memory_entries") == 0 and _count(service, "threads") == 0


def test_an_ambry_export_given_with_from_says_to_import_it_without(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    from core.portability.export import export

    service.store(operator, {"type": "fact", "content": "Keeps bees", "tags": []})
    out = tmp_path / "memories.jsonl"
    export(service, operator, out)
    for kind in (SourceKind.MARKDOWN, SourceKind.CHATGPT, SourceKind.MCP_MEMORY):
        with pytest.raises(InvalidParams, match="It looks like an Ambry export: import it "):
            plan(service, operator, kind, out)


def test_markdown_that_starts_with_a_bracket_is_still_notes(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    note = tmp_path / "links.md"
    note.write_text("[Ambry](https://example.org) keeps my notes\n\n{draft} not JSON\n")
    assert plan(service, operator, SourceKind.MARKDOWN, note).memories_new == 2


def test_a_heading_names_a_kind_only_in_a_word_of_its_own(tmp_path: Path) -> None:
    note = tmp_path / "MEMORY.md"
    headings = {
        # A kind's name inside a longer word is not the kind.
        "Customer satisfaction survey": EntryType.CONTEXT,
        "Build artifacts": EntryType.CONTEXT,
        "Stylesheets": EntryType.CONTEXT,
        "Roundabout ideas": EntryType.CONTEXT,
        "Rulers and compasses": EntryType.CONTEXT,
        # As a word of its own, singular or plural, it is.
        "Code style": EntryType.INSTRUCTION,
        "How-to": EntryType.INSTRUCTION,
        "Rules": EntryType.INSTRUCTION,
        "Lessons learned": EntryType.CORRECTION,
        "Gotchas": EntryType.CORRECTION,
        "About me": EntryType.FACT,
        "Facts": EntryType.FACT,
        "Likes and dislikes": EntryType.PREFERENCE,
        "My preferences": EntryType.PREFERENCE,
    }
    note.write_text("".join(f"## {h}\n- item under {h}\n\n" for h in headings))
    assert {n.content.removeprefix("item under "): n.entry_type for n in parse(note)} == headings


def test_two_files_with_the_same_bytes_share_one_receipt_each_with_its_link(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    notes = tmp_path / "twice"
    notes.mkdir()
    for name in ("a.md", "b.md"):
        (notes / name).write_text("# Facts\n- The boiler is serviced every October\n")
    dry = plan(service, operator, SourceKind.MARKDOWN, notes)
    done = run(service, operator, SourceKind.MARKDOWN, notes)
    # The preview counts what the import does: the same bytes are one receipt.
    assert (dry.receipts_new, dry.memories_new, dry.memories_present) == (1, 1, 1)
    assert (done.receipts_new, done.memories_new, done.memories_present) == (1, 1, 1)
    assert _count(service, "attachment_receipts") == 1
    links = _rows(service, "SELECT source_path FROM attachment_receipt_turns ORDER BY id")
    assert [Path(p).name for (p,) in links] == ["a.md", "b.md"]
    # Imported again, nothing is added: no receipt, and no second link for either file.
    again = run(service, operator, SourceKind.MARKDOWN, notes)
    assert (again.receipts_new, again.memories_new) == (0, 0)
    assert _count(service, "attachment_receipt_turns") == 2


def _on_disk(service: MemoryService, needle: str) -> list[str]:
    """The files of the data folder whose bytes hold ``needle``."""
    root = service.data_dir.root
    return [
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and needle.encode() in p.read_bytes()
    ]


GH = "ghp_1ZA0ZpxAfJjAOJwEsAwg5LtTF0JWR2OCvAmA"


def test_mcp_memory_names_are_screened_as_sent_before_underscores_read_as_spaces(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    graph = tmp_path / "memory.jsonl"
    long_name = "A rather long service name for the nightly bot " + GH
    lines = [
        {
            "type": "entity",
            "name": f"CI bot {GH}",
            "entityType": "service",
            "observations": ["runs nightly"],
        },
        {"type": "entity", "name": "Billing", "entityType": GH, "observations": ["bills monthly"]},
        {"type": "entity", "name": long_name, "entityType": "bot", "observations": ["is slow"]},
        {"type": "relation", "from": "Billing", "to": "Dana_Lee", "relationType": f"calls {GH}"},
    ]
    graph.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    dry = plan(service, operator, SourceKind.MCP_MEMORY, graph)
    done = run(service, operator, SourceKind.MCP_MEMORY, graph)
    assert dry.redacted == done.redacted == 5
    rows = _rows(service, "SELECT content, tags FROM memory_entries ORDER BY seq")
    assert [r[0] for r in rows] == [
        "CI bot [SECRET_REDACTED]: runs nightly",
        "Billing: bills monthly",
        "A rather long service name for the nightly bot [SECRET_REDACTED]: is slow",
        "Billing calls [SECRET_REDACTED] Dana Lee",
    ]
    # A name holding a token is no tag (not even cut to a tag's length); the rest read as before.
    assert [json.loads(r[1]) for r in rows] == [
        ["service"],
        ["Billing"],
        ["bot"],
        ["Billing", "Dana Lee", "relation"],
    ]
    assert _on_disk(service, GH[4:]) == []


def test_chat_titles_and_names_are_screened_before_they_are_cut_to_length(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    # The token straddles the title's 200-character limit: cut first, it would no
    # longer look like one and its first part would be kept.
    title = "t" * 180 + " " + GH
    export = tmp_path / "conversations.json"
    export.write_text(
        json.dumps(
            [
                {
                    "uuid": "0b6a1c2e-1111-4c3a-9d7e-0000000000f1",
                    "name": title,
                    "created_at": "2024-04-02T08:15:00.000000Z",
                    "updated_at": "2024-04-02T08:15:00.000000Z",
                    "chat_messages": [
                        {
                            "uuid": "7c1d0001-aaaa-4d1d-9e9e-0000000000f1",
                            "text": "hello",
                            "content": [{"type": "text", "text": "hello"}],
                            "sender": "human",
                            "created_at": "2024-04-02T08:15:00.000000Z",
                        }
                    ],
                }
            ]
        )
    )
    done = run(service, operator, SourceKind.CLAUDE, export)
    assert done.redacted == 1
    assert _rows(service, "SELECT title FROM threads") == [("t" * 180 + " [SECRET_REDACTED]",)]
    assert _on_disk(service, GH[4:14]) == []


def test_counts_of_one_read_in_the_singular(
    service: MemoryService, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("- Prefers green tea in the afternoon\n", encoding="utf-8")
    data = ["--data-dir", str(service.data_dir.root)]
    assert main([*data, "import", "--from", "markdown", str(notes), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would add 1 memory for review (0 already present), 1 file receipt" in out
    assert main([*data, "import", "--from", "markdown", str(notes)]) == 0
    assert "added 1 memory for review" in capsys.readouterr().out
    thread = continuity.enter_thread(service, service.open_session("main", Actor.AGENT), "Tea")
    log_exchange(service, thread.caller, "user", "Green tea, please.", "t1")
    assert main([*data, "export", "--format", "markdown", str(tmp_path / "md")]) == 0
    assert "wrote 1 memory and 1 thread (1 turn) as Markdown" in capsys.readouterr().out
