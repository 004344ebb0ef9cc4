"""Export/import round trips, all-or-nothing import, forget and clear."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.claims import gate, records
from core.claims.model import Decision
from core.cli.main import main
from core.continuity import episodes, handoffs, threads
from core.memory import forgetting
from core.memory.forgetting import Scope
from core.memory.writing import StoreRequest
from core.model.entries import Actor, EntryType
from core.model.errors import Conflict, InvalidParams
from core.portability.export import export
from core.portability.importing import import_file
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.paths import DataDir


def _fill(service: MemoryService, who: Caller) -> dict[str, str]:
    ids = {}
    ids["old"] = service.store(who, {"type": "fact", "content": "Lives in Paris"}).entry.id
    ids["new"] = service.store(
        who,
        {"type": "fact", "content": "Lives in Lyon", "supersedes": ids["old"], "tags": ["home"]},
    ).entry.id
    ids["pref"] = service.store(
        who, {"type": "preference", "content": "Likes terse replies"}
    ).entry.id
    return ids


def test_round_trip_keeps_supersession_and_provenance(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    ids = _fill(service, operator)
    before = {i: service.get("main", i) for i in ids.values()}
    out = tmp_path / "export.jsonl"
    summary = export(service, operator, out)
    assert summary.entries == 3
    header = json.loads(out.read_text().splitlines()[0])
    assert header["format"] == "ambry-export" and header["version"] == 1

    other = service.open_session("restored", Actor.OPERATOR)
    report = import_file(service, other, out)
    assert report.entries == 3 and not report.conflicts
    for entry_id, entry in before.items():
        got = service.get("restored", entry_id)
        assert (got.content, got.superseded_by, got.provenance.created_at, got.tags) == (
            entry.content,
            entry.superseded_by,
            entry.provenance.created_at,
            entry.tags,
        )
    assert [r.content for r in service.search(other, {"query": "lives"})] == ["Lives in Lyon"]
    # Importing the same file again finds only duplicates.
    again = import_file(service, other, out)
    assert again.entries == 0 and len(again.duplicates) == 3


def test_import_is_all_or_nothing(service: MemoryService, operator: Caller, tmp_path: Path) -> None:
    _fill(service, operator)
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    lines = out.read_text().splitlines()
    target = service.open_session("target", Actor.OPERATOR)

    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([*lines, '{"kind": "entry", "id": "mem-x"}']) + "\n")
    with pytest.raises(InvalidParams, match="line 5"):
        import_file(service, target, bad)
    assert service.store_for("target").total() == 0
    # Bytes that are not UTF-8 (a file saved as Latin-1, or as UTF-16 without its
    # byte-order mark) are one clear refusal, naming the byte and its line.
    latin1 = tmp_path / "latin1.jsonl"
    cafe = '{"kind": "entry", "content": "café"}\n'.encode("latin-1")
    latin1.write_bytes(out.read_bytes() + cafe)
    with pytest.raises(InvalidParams) as caught:
        import_file(service, target, latin1)
    assert caught.value.message == (
        "latin1.jsonl is not UTF-8 text (byte 0xE9 at line 5); save the file as UTF-8"
    )
    bare = tmp_path / "bare.jsonl"
    bare.write_bytes(out.read_text().encode("utf-16-le"))
    with pytest.raises(InvalidParams, match="line 1; it looks like UTF-16 without a byte-order"):
        import_file(service, target, bare)
    assert service.store_for("target").total() == 0
    # An editor's byte-order mark before the first line is no reason to refuse the file.
    marked = tmp_path / "marked.jsonl"
    marked.write_bytes("\ufeff".encode() + out.read_bytes())
    assert import_file(service, target, marked).entries == 3
    assert service.store_for("target").total() == 3
    # Nor is UTF-16 with its mark (Notepad's "Unicode", PowerShell's >): it holds the same.
    utf16 = tmp_path / "utf16.jsonl"
    utf16.write_text(out.read_text(), encoding="utf-16")
    into = service.open_session("from-utf16", Actor.OPERATOR)
    assert import_file(service, into, utf16).entries == 3

    # A conflicting record (same id, different content) stops the whole import.
    record = json.loads(lines[1])
    service_id = record["id"]
    changed = dict(record, content="Something else entirely")
    conflict = tmp_path / "conflict.jsonl"
    conflict.write_text("\n".join([lines[0], json.dumps(changed)]) + "\n")
    import_file(service, target, out)
    total = service.store_for("target").total()
    with pytest.raises(Conflict, match="nothing imported"):
        import_file(service, target, conflict)
    assert service.store_for("target").total() == total
    assert service.get("target", service_id).content == record["content"]


def test_private_entries_export_only_encrypted(
    service: MemoryService, operator: Caller, tmp_path: Path, memory_keyring: object
) -> None:
    text = "Therapist appointment every other Thursday"
    p = service.store(operator, {"type": "fact", "content": text, "privacy": "private"}).entry
    plain = tmp_path / "plain.jsonl"
    assert export(service, operator, plain).skipped_private == 1
    assert "Therapist" not in plain.read_text()
    with pytest.raises(InvalidParams, match="passphrase"):
        export(service, operator, tmp_path / "x.jsonl", include_private=True)
    sealed = tmp_path / "sealed.jsonl"
    export(service, operator, sealed, include_private=True, passphrase="correct horse")
    assert "Therapist" not in sealed.read_text()
    other = service.open_session("other", Actor.OPERATOR)
    with pytest.raises(InvalidParams, match="passphrase"):
        import_file(service, other, sealed)
    with pytest.raises(InvalidParams, match=r"sealed\.jsonl line \d+: wrong passphrase"):
        import_file(service, other, sealed, passphrase="wrong")
    import_file(service, other, sealed, passphrase="correct horse")
    assert service.get("other", p.id).content == text


def test_forget_a_topic(service: MemoryService, operator: Caller) -> None:
    keep = service.store(operator, {"type": "fact", "content": "Works at Acme"}).entry.id
    gone = service.store(
        operator, {"type": "fact", "content": "Ex-partner is named Sam", "tags": ["relationships"]}
    ).entry.id
    old = service.store(operator, {"type": "fact", "content": "Dating Sam since May"}).entry.id
    service.store(operator, {"type": "fact", "content": "Broke up with Sam", "supersedes": old})
    plan = forgetting.plan_forget(service, "main", "Sam")
    assert {e.id for e in plan.entries} >= {gone, old}
    service.forget(operator, plan)
    assert service.search(operator, {"query": "Sam", "include_superseded": True}) == []
    assert service.get("main", keep)
    row = audit.recent(service.store_for("main"), actions=["forget"])[0]
    assert row.count == len(plan.entries) and "Sam" not in json.dumps(row.to_dict())


def test_clear_semantic(service: MemoryService, operator: Caller) -> None:
    _fill(service, operator)
    counts = service.clear(operator, Scope.SEMANTIC)
    assert counts["memory_entries"] == 3
    assert service.store_for("main").total() == 0


def test_clear_all_takes_the_claims_and_their_decisions(
    service: MemoryService, operator: Caller
) -> None:
    agent = service.open_session("main", Actor.AGENT, "bot")
    entry = service.store(operator, {"type": "fact", "content": "The shed code is 4711"}).entry
    source = [{"kind": "memory", "id": entry.id}]
    claim = gate.propose(
        service, agent, {"text": "The shed has a code", "kind": "fact", "sources": source}
    )
    gate.decide(service, operator, claim.claim.id, Decision.REJECT)
    store = service.store_for("main")
    counts = service.clear(operator, Scope.ALL)
    assert counts["claims"] == 1 and counts["claim_decisions"] == 1
    assert records.list_claims(store) == []
    for table in ("claims", "claim_sources", "claim_decisions"):
        assert store.execute(f"SELECT count(*) FROM {table}").get == 0
    assert not store.execute(
        "SELECT rowid FROM claims_fts WHERE claims_fts MATCH 'shed'"
    ).fetchall()


def test_cli_clear_needs_confirmation_without_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    d = str(tmp_path)
    assert main(["--data-dir", d, "store", "Keep this"]) == 0
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert main(["--data-dir", d, "clear", "all"]) == 1
    assert "needs confirmation" in capsys.readouterr().err
    assert main(["--data-dir", d, "search", "keep"]) == 0
    assert "Keep this" in capsys.readouterr().out
    assert main(["--data-dir", d, "clear", "all", "--yes"]) == 0
    # What was deleted, in the words a person uses, without the empty kinds.
    assert capsys.readouterr().out == "deleted 1 memory\n"
    assert main(["--data-dir", d, "clear", "all", "--yes"]) == 0
    assert capsys.readouterr().out == "nothing to delete in group main\n"
    assert main(["--data-dir", d, "forget", "keep", "--yes"]) == 0
    assert "nothing matches" in capsys.readouterr().out


def test_cli_export_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = str(tmp_path / "data")
    Path(d).mkdir()
    out = str(tmp_path / "e.jsonl")
    main(["--data-dir", d, "store", "--tags", "x", "Exported fact"])
    assert main(["--data-dir", d, "export", out]) == 0
    assert main(["--data-dir", d, "--group", "copy", "import", out, "--json"]) == 0
    capsys.readouterr()
    assert main(["--data-dir", d, "--group", "copy", "search", "exported"]) == 0
    assert "Exported fact" in capsys.readouterr().out
    assert main(["--data-dir", d, "import", str(tmp_path / "missing.jsonl")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_private_data_dir_scan_after_export(data_dir: DataDir) -> None:
    # Export files are written owner-only.
    svc = MemoryService(data_dir)
    op = svc.open_session("main", Actor.OPERATOR)
    svc.store(op, {"type": "fact", "content": "x"})
    out = data_dir.root / "e.jsonl"
    export(svc, op, out)
    assert out.stat().st_mode & 0o077 == 0
    svc.close()


def test_export_with_private_entries_refuses_without_their_key(
    service: MemoryService, operator: Caller, tmp_path: Path, memory_keyring: object
) -> None:
    from core.storage.crypto import KeyUnavailable

    service.store(operator, {"type": "fact", "content": "private", "privacy": "private"})
    memory_keyring.passwords.clear()  # type: ignore[attr-defined]
    fresh = MemoryService(service.data_dir)  # no key cached
    op = fresh.open_session("main", Actor.OPERATOR)
    with pytest.raises(KeyUnavailable, match="nothing was exported"):
        export(fresh, op, tmp_path / "x.jsonl", include_private=True, passphrase="pw")
    assert not (tmp_path / "x.jsonl").exists()
    fresh.close()


def test_export_and_import_report_progress(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    for i in range(450):
        service.store(operator, {"type": "fact", "content": f"fact {i}"})
    seen: list[tuple[int, int]] = []
    out = tmp_path / "e.jsonl"
    export(service, operator, out, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(200, 450), (400, 450), (450, 450)]
    seen.clear()
    other = service.open_session("other", Actor.OPERATOR)
    import_file(service, other, out, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (450, 450)


def test_import_into_a_group_with_its_own_handoffs_and_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Handoffs and receipt links are numbered per group: another group's number 1
    # is not this group's number 1, so it must not stop the import as a conflict.
    d = str(tmp_path / "data")
    Path(d).mkdir()
    note = tmp_path / "note.txt"
    note.write_text("a note\n")
    state = tmp_path / "state.md"
    for group, text in (("main", "Exported state"), ("other", "Other state")):
        state.write_text(text)
        base = ["--data-dir", d, "--group", group]
        assert main([*base, "handoff", "write", f"Thread {group}", str(state), "--create"]) == 0
        assert main([*base, "attach", str(note), "--observation", group]) == 0
    out = str(tmp_path / "e.jsonl")
    assert main(["--data-dir", d, "export", out]) == 0
    capsys.readouterr()
    base = ["--data-dir", d, "--group", "other"]
    assert main([*base, "--json", "import", out]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == {"thread": 1, "thread_handoff": 1, "receipt_link": 1}
    assert report["conflicts"] == []
    assert main([*base, "handoff", "show", "Thread main"]) == 0
    assert "Exported state" in capsys.readouterr().out
    assert main([*base, "handoff", "show", "Thread other"]) == 0
    assert "Other state" in capsys.readouterr().out
    # Again: everything is a duplicate, nothing is added twice.
    assert main([*base, "--json", "import", out]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["rows"] == {} and again["conflicts"] == []


def test_import_skips_a_memory_the_group_holds_under_another_id(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    ids = _fill(service, operator)
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    other = service.open_session("other", Actor.OPERATOR)
    held = service.store(other, {"type": "preference", "content": "likes  terse replies"}).entry
    service.store(other, {"type": "fact", "content": "Lives in Lyon"})
    report = import_file(service, other, out)
    assert report.duplicates == [ids["pref"]]
    assert [e.id for e in service.search(other, {"query": "terse"})] == [held.id]
    # The end of a supersession chain in the file is kept, so the chain holds.
    assert service.get("other", ids["old"]).superseded_by == ids["new"]
    assert service.get("other", ids["new"]).content == "Lives in Lyon"


def test_export_replaces_an_earlier_export_but_no_other_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = str(tmp_path / "data")
    Path(d).mkdir()
    assert main(["--data-dir", d, "store", "Exported fact"]) == 0
    out = tmp_path / "e.jsonl"
    assert main(["--data-dir", d, "export", str(out)]) == 0
    assert main(["--data-dir", d, "store", "A later fact"]) == 0
    assert main(["--data-dir", d, "export", str(out)]) == 0
    assert "A later fact" in out.read_text()
    notes = tmp_path / "notes.md"
    notes.write_text("# My notes\n")
    capsys.readouterr()
    assert main(["--data-dir", d, "export", str(notes)]) == 1
    assert "notes.md exists and is not an Ambry export; nothing was exported" in (
        capsys.readouterr().err
    )
    assert notes.read_text() == "# My notes\n"


@pytest.mark.parametrize(
    ("name", "text", "source"),
    [
        ("memory.jsonl", '{"type":"entity","name":"Al","entityType":"person"}\n', "mcp-memory"),
        ("notes.md", "# Notes\n\n- likes tea\n", "markdown"),
        ("conversations.json", '[{"uuid":"1","name":"c","chat_messages":[]}]', "claude"),
        ("conversations.json", '[{"id":"1","title":"c","mapping":{}}]', "chatgpt"),
    ],
)
def test_another_apps_file_imported_as_an_export_says_which_import_to_use(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, source: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    code = main(["--data-dir", str(tmp_path / "data"), "--create", "import", str(path)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith(f"error: {name} line 1")
    assert f"not an Ambry export: import it with `ambry import --from {source}`" in err


def test_a_broken_export_gets_no_other_apps_hint(tmp_path: Path) -> None:
    service = MemoryService(DataDir(tmp_path / "data"))
    path = tmp_path / "export.jsonl"
    path.write_text('{"format": "ambry-export"}\n')
    caller = service.open_session("main", Actor.OPERATOR)
    with pytest.raises(InvalidParams) as refused:
        import_file(service, caller, path)
    assert "It looks like" not in refused.value.message
    service.close()


def test_a_refused_import_leaves_no_new_group_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["--data-dir", str(data), "--create", "store", "Likes tea"]) == 0
    assert main(["--data-dir", str(data), "--group", "tyop", "import", str(bad)]) == 1
    assert "bad.jsonl line 1: not JSON" in capsys.readouterr().err
    assert DataDir(data).groups() == ["main"]
    good = tmp_path / "good.jsonl"
    assert main(["--data-dir", str(data), "export", str(good)]) == 0
    assert main(["--data-dir", str(data), "--group", "copy", "import", str(good)]) == 0
    assert DataDir(data).groups() == ["copy", "main"]


def test_an_imported_memory_that_is_only_a_secret_is_skipped_and_reported(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _fill(service, operator)
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    # Edited by hand: one memory is now a token alone, another the placeholder of one.
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for rec in records:
        if rec.get("id") == ids["pref"]:
            rec["content"] = "ghp_Q7wErT9yUiOp3AsDfGh2JkLzXc8VbNm4Lk5J"
        elif rec.get("id") == ids["old"]:
            rec["content"] = "[SECRET_REDACTED], [SECRET_REDACTED]"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(json.dumps(r) for r in records) + "\n")

    other = service.open_session("other", Actor.OPERATOR)
    report = import_file(service, other, edited)
    # The rest of the file is imported; the two are skipped with their reason, not stored
    # as a placeholder nobody can read anything from.
    assert report.entries == 1 and report.refused == []
    assert sorted(report.secret_only) == sorted([ids["pref"], ids["old"]])
    assert report.to_dict()["secret_only"] == report.secret_only
    assert service.get("other", ids["new"]).content == "Lives in Lyon"
    stored = service.store_for("other")
    assert stored.get(ids["pref"]) is None and stored.get(ids["old"]) is None
    row = audit.recent(stored, actions=["import"])[0]
    assert row.detail["secret_only"] == 2

    # The CLI says so in its summary, in words and in --json.
    data = ["--data-dir", str(service.data_dir.root), "--group", "third"]
    assert main([*data, "import", str(edited)]) == 0
    assert capsys.readouterr().out == (
        "imported 1 entry and 0 other records; 0 duplicates skipped; "
        "2 memories skipped (nothing but a secret)\n"
    )


@pytest.mark.parametrize("left_out", ["middle", "newest"])
def test_a_version_left_out_of_an_import_hides_no_older_one(
    service: MemoryService,
    operator: Caller,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    left_out: str,
) -> None:
    chain = ["Lives in Paris", "Lives in Lyon", "Lives in Nice"]
    ids = [service.store(operator, {"type": "fact", "content": chain[0]}).entry.id]
    for text in chain[1:]:
        stored = service.store(operator, {"type": "fact", "content": text, "supersedes": ids[-1]})
        ids.append(stored.entry.id)
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    # Edited by hand: one version of the chain is now a token alone, so it is skipped.
    gone = ids[1] if left_out == "middle" else ids[2]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for rec in records:
        if rec.get("id") == gone:
            rec["content"] = "ghp_Q7wErT9yUiOp3AsDfGh2JkLzXc8VbNm4Lk5J"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(json.dumps(r) for r in records) + "\n")

    other = service.open_session("other", Actor.OPERATOR)
    report = import_file(service, other, edited)
    assert report.secret_only == [gone]
    found = [r.content for r in service.search(other, {"query": "lives", "mode": "keyword"})]
    stored = service.store_for("other")
    links = dict(stored.execute("SELECT id, superseded_by FROM memory_entries").fetchall())
    if left_out == "middle":
        # Paris now names Nice, the next version imported; Nice is the one current.
        assert links == {ids[0]: ids[2], ids[2]: None}
        assert report.relinked == [ids[0]]
        assert found == ["Lives in Nice"]
    else:
        # Nothing newer than Lyon was imported: Lyon is current again, Paris names it.
        assert links == {ids[0]: ids[1], ids[1]: None}
        assert report.relinked == [ids[1]]
        assert found == ["Lives in Lyon"]
    data = ["--data-dir", str(service.data_dir.root), "--group", "third"]
    assert main([*data, "import", str(edited)]) == 0
    assert "1 older version re-linked past a memory left out" in capsys.readouterr().out


def test_the_import_summary_counts_one_of_a_kind_in_the_singular(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = service.store(operator, {"type": "fact", "content": "Lives in Paris"}).entry.id
    new = service.store(operator, {"type": "fact", "content": "Lives in Lyon", "supersedes": old})
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    # Edited by hand: the newest version is now a credential statement, refused.
    records = [json.loads(line) for line in out.read_text().splitlines()]
    for rec in records:
        if rec.get("id") == new.entry.id:
            rec["content"] = "my password is hunter2"
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    data = ["--data-dir", str(service.data_dir.root), "--group", "other"]
    assert main([*data, "import", str(edited)]) == 0
    assert capsys.readouterr().out == (
        "imported 1 entry and 0 other records; 0 duplicates skipped; "
        "1 credential statement refused; 1 older version re-linked past a memory left out "
        "(current again if nothing newer was imported)\n"
    )


def test_an_older_export_with_empty_tags_imports_without_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No write keeps an empty tag now, but a file from before (or edited by hand) may
    # hold some: the import still goes through, leaves them out and says how many.
    source, target = tmp_path / "source", tmp_path / "target"
    d = ["--data-dir", str(source), "--create"]
    assert main([*d, "store", "--tags", "work", "Works on the billing service"]) == 0
    out = tmp_path / "older.jsonl"
    assert main([*d, "export", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[1])
    entry["tags"] = ["work", "", "  ", "\t"]
    out.write_text("\n".join([lines[0], json.dumps(entry), *lines[2:]]) + "\n", encoding="utf-8")
    capsys.readouterr()
    t = ["--data-dir", str(target), "--create"]
    assert main([*t, "import", str(out)]) == 0
    said = capsys.readouterr().out
    assert said.strip().endswith("; 3 empty tags left out")
    assert main([*t, "--json", "list"]) == 0
    [imported] = json.loads(capsys.readouterr().out)
    assert (imported["id"], imported["tags"]) == (entry["id"], ["work"])
    # Once held, the same file is a duplicate: nothing left out, as nothing is written.
    assert main([*t, "--json", "import", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["entries"], report["empty_tags"], report["duplicates"]) == (0, 0, [entry["id"]])


SECRET_WORDS = "my password is Hunter2Hunter2!!"


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            lambda rec: rec.update(content=SECRET_WORDS + " filler" * 300),
            "content must be at most 2000 characters (it has 2,131)",
        ),
        (
            lambda rec: rec.update(tags=[SECRET_WORDS + " filler" * 5]),
            "tags.0 must be at most 50 characters (it has 66)",
        ),
        (lambda rec: rec.update(type=SECRET_WORDS), "type must be one of preference, fact"),
        (lambda rec: rec.update(sealed=SECRET_WORDS), "record must have exactly one of content"),
        (lambda rec: rec.update(confidence=SECRET_WORDS), "confidence must be of type number"),
    ],
)
def test_a_refused_import_line_names_the_entry_and_never_quotes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Any, problem: str
) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    assert main([*data, "--create", "store", "Likes tea"]) == 0
    out = tmp_path / "e.jsonl"
    assert main([*data, "export", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    edit(records[1])
    out.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    capsys.readouterr()
    assert main([*data, "--group", "copy", "import", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"e.jsonl line 2 (id {records[1]['id']}): {problem}" in err
    log = (tmp_path / "logs" / "ambry.log").read_text()
    assert f"refused: e.jsonl line 2 (id {records[1]['id']}): {problem}" in log
    # Before, both repeated the value whole: a password, in the log that holds no content.
    assert "Hunter2" not in err and "Hunter2" not in log


def test_a_refused_tag_is_named_by_its_place(service: MemoryService, operator: Caller) -> None:
    # The app's edits and the imports from other apps write without the tools' schema.
    request = StoreRequest(EntryType.FACT, "Likes tea", ("ok", "Hunter2Hunter2" * 4))
    with pytest.raises(InvalidParams) as refused:
        service.store_entries(operator, [request])
    assert refused.value.message == "tag 2 must be at most 50 characters (it has 56)"


def test_an_empty_or_blank_entry_is_skipped_and_counted(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kept = service.store(operator, {"type": "fact", "content": "ok entry one"}).entry.id
    for text in ("first", "second", "third"):
        service.store(operator, {"type": "fact", "content": text})
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    # Edited by hand, or from an older Ambry: three memories with nothing to say.
    records = [json.loads(line) for line in out.read_text().splitlines()]
    blanks = iter(["", "   ", "\u0007\n"])
    empty = []
    for rec in records:
        if rec.get("kind") == "entry" and rec["id"] != kept:
            rec["content"] = next(blanks)
            empty.append(rec["id"])
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(json.dumps(r) for r in records) + "\n")

    other = service.open_session("other", Actor.OPERATOR)
    report = import_file(service, other, edited)
    # Before, "" was stored (the brief read "- [fact] (empty)") and "   " counted its duplicate.
    assert report.entries == 1 and report.duplicates == []
    assert sorted(report.empty) == sorted(empty)
    assert report.to_dict()["empty"] == report.empty
    assert service.store_for("other").total() == 1
    agent = service.open_session("other", Actor.AGENT)
    assert "(empty)" not in service.brief(agent).markdown
    assert audit.recent(service.store_for("other"), actions=["import"])[0].detail["empty"] == 3

    data = ["--data-dir", str(service.data_dir.root), "--group", "third"]
    assert main([*data, "import", str(edited)]) == 0
    assert capsys.readouterr().out == (
        "imported 1 entry and 0 other records; 0 duplicates skipped; 3 empty memories skipped\n"
    )


def test_a_sealed_entry_over_the_limit_is_refused_by_line_and_id(
    service: MemoryService, operator: Caller, tmp_path: Path, memory_keyring: object
) -> None:
    import base64

    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    from core.portability.format import derive_key

    entry = service.store(operator, {"type": "fact", "content": "x", "privacy": "private"}).entry
    sealed = tmp_path / "sealed.jsonl"
    export(service, operator, sealed, include_private=True, passphrase="correct horse")
    records = [json.loads(line) for line in sealed.read_text().splitlines()]
    salt = base64.b64decode(records[0]["encryption"]["salt"])
    key = derive_key("correct horse", salt)
    nonce = b"\0" * 12
    too_long = (SECRET_WORDS + " filler" * 300).encode()
    rec = next(r for r in records if r.get("id") == entry.id)
    rec["sealed"] = base64.b64encode(
        nonce + AESGCM(key).encrypt(nonce, too_long, entry.id.encode())
    )
    rec["sealed"] = rec["sealed"].decode()
    sealed.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    other = service.open_session("other", Actor.OPERATOR)
    with pytest.raises(InvalidParams) as refused:
        import_file(service, other, sealed, passphrase="correct horse")
    assert refused.value.message == (
        f"sealed.jsonl line 2 (id {entry.id}): content must be at most 2000 characters "
        "(it has 2,131)"
    )
    assert service.store_for("other").total() == 0


def test_a_handoff_keeps_its_author_across_export_and_import(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, a handoff's author (its session's actor) was null after an import:
    # sessions are not exported, and the author was read from them.
    agent = service.open_session("main", Actor.AGENT, "test-agent")
    tid = threads.open_thread(service, operator, title="Billing")[0].id
    handoffs.write_handoff(service, operator, tid, "# Plan\n\nmine")
    handoffs.write_handoff(service, agent, tid, "# Plan\n\nthe agent's", base_version=1)
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert [r["author"] for r in records if r["kind"] == "thread_handoff"] == [
        "operator",
        "agent",
    ]
    data = ["--data-dir", str(service.data_dir.root)]
    for group in ("main", "copy"):
        if group == "copy":
            assert main([*data, "--group", group, "import", str(out)]) == 0
        capsys.readouterr()
        assert main([*data, "--group", group, "--json", "handoff", "history", tid]) == 0
        history = json.loads(capsys.readouterr().out)
        assert [(h["version"], h["author"]) for h in history] == [(2, "agent"), (1, "operator")]
    # A file from before, without authors, still imports (the handoffs without one).
    for rec in records:
        rec.pop("author", None)
    older = tmp_path / "older.jsonl"
    older.write_text("\n".join([out.read_text().splitlines()[0], *map(json.dumps, records)]) + "\n")
    assert main([*data, "--group", "older", "import", str(older)]) == 0
    capsys.readouterr()
    assert main([*data, "--group", "older", "--json", "handoff", "history", tid]) == 0
    assert [h["author"] for h in json.loads(capsys.readouterr().out)] == [None, None]
    # An author that is no actor is refused with its line, before anything is written.
    records[1]["author"] = "someone"
    older.write_text("\n".join([out.read_text().splitlines()[0], *map(json.dumps, records)]) + "\n")
    with pytest.raises(InvalidParams, match="line 3: author"):
        import_file(service, service.open_session("bad", Actor.OPERATOR), older)


def test_the_export_summary_says_the_turns_are_not_in_it(
    service: MemoryService, operator: Caller, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before, turns were left out silently: the summary named private entries only.
    service.store(operator, {"type": "fact", "content": "Likes green tea"})
    for n in range(3):
        episodes.log_exchange(service, operator, "user", f"What about tea number {n}?")
    d = ["--data-dir", str(service.data_dir.root)]
    out = tmp_path / "e.jsonl"
    assert main([*d, "export", str(out)]) == 0
    assert capsys.readouterr().out == (
        f"exported 1 entry to {out}; 3 conversation turns not exported (an export holds "
        "no turns: copy the data dir to keep them, or export --format markdown to read them)\n"
    )
    assert "tea number" not in out.read_text()
    assert main([*d, "--json", "export", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["skipped_turns"] == 3


def test_forget_says_which_private_memories_it_could_not_search_by_their_words(
    service: MemoryService,
    operator: Caller,
    memory_keyring: object,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Before: "nothing matches; nothing was deleted", while a private memory held the
    # word in its encrypted text, which forget matches by its tags only.
    sealed = service.store(
        operator,
        {"type": "fact", "content": "User's therapist is Dr. Marlowe", "privacy": "private"},
    ).entry.id
    d = ["--data-dir", str(service.data_dir.root)]
    assert main([*d, "forget", "Marlowe", "--yes"]) == 0
    assert capsys.readouterr().out == (
        "nothing matches; nothing was deleted (1 private/secret memory not searched by "
        "their words, which are encrypted, only by their tags: `ambry list` shows them "
        "(a secret one's text: `ambry reveal ID`), `ambry list --tags TAG` finds them by "
        "tag, and `ambry delete ID` deletes one)\n"
    )
    assert main([*d, "--json", "forget", "Marlowe", "--yes"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["deleted"], said["sealed_unsearched"]) == (False, 1)
    # When something does match, the list ends with the same word about the rest.
    service.store(operator, {"type": "fact", "content": "Marlowe Street is near the office"})
    assert main([*d, "forget", "Marlowe", "--yes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2].startswith("(1 private/secret memory not searched by their words")
    assert out[-1] == "forgot 1 memory"
    assert service.get("main", sealed).content == "User's therapist is Dr. Marlowe"
    # A private memory forget does take (by a tag) is not counted as left unsearched.
    service.store(
        operator,
        {"type": "fact", "content": "Sees Dr. Marlowe", "privacy": "private", "tags": ["marlowe"]},
    )
    assert main([*d, "--json", "forget", "Marlowe", "--yes"]) == 0
    said = json.loads(capsys.readouterr().out)
    assert (len(said["entries"]), said["sealed_unsearched"]) == (1, 1)


def test_the_command_forget_names_lists_a_secret_memory_by_its_tag(
    service: MemoryService,
    operator: Caller,
    memory_keyring: object,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Before, forget said `ambry search --tags TAG` finds them, and search leaves
    # secret memories out: "no matching memories".
    d = ["--data-dir", str(service.data_dir.root)]
    assert (
        main([*d, "store", "Vault hint Vrennic", "--privacy", "secret", "--tags", "finance"]) == 0
    )
    sealed = capsys.readouterr().out.strip()
    service.store(operator, {"type": "fact", "content": "Pays rent on the first"})
    assert main([*d, "forget", "Vrennic", "--yes"]) == 0
    assert "`ambry list --tags TAG` finds them by tag" in capsys.readouterr().out
    assert main([*d, "list", "--tags", "Finance"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{sealed}  [fact] active\n  [secret: reveal it in Ambry to read]\n")
    assert out.count("mem-") == 1 and "tags: finance" in out and "Vrennic" not in out
    assert main([*d, "list", "--tags", "finance,rent"]) == 0
    assert capsys.readouterr().out == "no memories\n"
    assert main([*d, "list", "--tags", "finance,"]) == 1
    assert "tag 2 is empty" in capsys.readouterr().err


def test_an_imported_memory_last_seen_long_ago_is_stale_at_once(
    service: MemoryService, operator: Caller, tmp_path: Path
) -> None:
    kept = service.store(operator, {"type": "fact", "content": "Mia is allergic to peanuts"}).entry
    out = tmp_path / "export.jsonl"
    export(service, operator, out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    long_ago = "2020-01-01T09:00:00.000Z"
    for rec in lines[1:]:
        if rec["kind"] == "entry":
            rec["provenance"]["created_at"] = rec["provenance"]["updated_at"] = long_ago
            rec["last_seen_at"] = long_ago
    out.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    other = service.open_session("restored", Actor.OPERATOR)
    store = service.store_for("restored")  # opened (and decay refreshed) before the import
    assert import_file(service, other, out).entries == 1
    row = store.execute(
        "SELECT effective_confidence, stale FROM memory_entries WHERE id = ?", (kept.id,)
    ).fetchone()
    assert tuple(row) == (0.0, 1)
