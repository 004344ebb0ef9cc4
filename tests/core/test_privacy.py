"""Private and secret entries: encrypted at rest, kept out of the brief and the index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.cli.main import main
from core.layers.links import dig
from core.memory import trash
from core.model.config import Config
from core.model.entries import Actor, Privacy
from core.model.errors import Forbidden
from core.semantic import backfill
from core.semantic.embedding import shared_embedder
from core.service import Caller, MemoryService
from core.storage import audit
from core.storage.crypto import KEY_NAME_FILE, KeyMissing, KeyUnavailable, path_account
from core.storage.paths import DataDir
from core.storage.workspace import MISSING_KEY_MASK, SECRET_MASK

PRIVATE_TEXT = "Blood type is AB negative, diagnosed hypothyroid in March"
SECRET_TEXT = "Safe deposit box 4471 is at the Rue Clerc branch"


def test_private_and_secret_content_never_touches_the_disk_in_plaintext(
    data_dir: DataDir, memory_keyring: object
) -> None:
    svc = MemoryService(data_dir, Config(include_private_in_brief=True))
    op = svc.open_session("main", Actor.OPERATOR)
    agent = svc.open_session("main", Actor.AGENT)
    p = svc.store(
        agent, {"type": "fact", "content": PRIVATE_TEXT, "tags": ["health"], "privacy": "private"}
    ).entry
    s = svc.store(
        op, {"type": "fact", "content": SECRET_TEXT, "tags": ["finance"], "privacy": "secret"}
    ).entry
    assert p.content == PRIVATE_TEXT  # the writer gets its words back
    # Tags stay searchable; content words are not in the index.
    assert [r.id for r in svc.search(agent, {"query": "health"})] == [p.id]
    assert svc.search(agent, {"query": "hypothyroid"}) == []
    found = svc.search(agent, {"query": "health"})[0]
    assert found.content == PRIVATE_TEXT
    # Secret entries never reach an agent, nor the brief.
    assert svc.search(agent, {"query": "finance"}) == []
    brief = svc.build_brief("main").markdown
    assert PRIVATE_TEXT in brief and "deposit" not in brief
    assert svc.get("main", s.id).content == SECRET_MASK
    with pytest.raises(Forbidden):
        svc.reveal(agent, s.id)
    assert svc.reveal(op, s.id).content == SECRET_TEXT
    assert audit.recent(svc.store_for("main"), actions=["reveal"])[0].entry_ids == [s.id]
    svc.close()
    for path in Path(data_dir.root).rglob("*"):
        if path.is_file():
            blob = path.read_bytes()
            for text in (PRIVATE_TEXT, SECRET_TEXT, "hypothyroid", "deposit box"):
                assert text.encode() not in blob, f"{text!r} found in {path.name}"


def test_private_entries_stay_out_of_the_brief_by_default(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    service.store(operator, {"type": "fact", "content": PRIVATE_TEXT, "privacy": "private"})
    service.store(operator, {"type": "fact", "content": "Public fact"})
    md = service.build_brief("main").markdown
    assert "Public fact" in md and "Blood" not in md


def test_private_duplicates_are_detected_without_a_plain_hash(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    a = service.store(operator, {"type": "fact", "content": PRIVATE_TEXT, "privacy": "private"})
    b = service.store(
        operator, {"type": "fact", "content": PRIVATE_TEXT.upper(), "privacy": "private"}
    )
    assert not b.created and b.entry.id == a.entry.id


def test_without_a_keyring_private_writes_fail_clearly_and_public_ones_work(
    service: MemoryService, operator: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring
    from keyring.backends import fail

    monkeypatch.setattr(keyring, "get_keyring", fail.Keyring)
    with pytest.raises(KeyUnavailable, match="OS keyring"):
        service.store(operator, {"type": "fact", "content": "x", "privacy": "private"})
    assert service.store(operator, {"type": "fact", "content": "y"}).entry.privacy is Privacy.PUBLIC
    assert service.store_for("main").total() == 1


def test_a_keyring_that_keeps_keys_in_a_plain_file_counts_as_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], plain_file_keyring: object
) -> None:
    from tests.keyring_backend import PlainFileKeyring

    assert isinstance(plain_file_keyring, PlainFileKeyring)
    args = ("--data-dir", str(tmp_path / "data"), "--create")
    assert main([*args, "store", "--privacy", "secret", SECRET_TEXT]) == 1
    err = capsys.readouterr().err
    assert "need an OS keyring" in err and "plain file" in err and "Public entries keep" in err
    assert not plain_file_keyring.path.exists()  # no key was written beside the data
    assert main([*args, "store", "Public fact"]) == 0
    capsys.readouterr()
    assert main([*args, "doctor", "--no-mcp", "--json"]) == 0
    found = {f["check"]: f for f in json.loads(capsys.readouterr().out)}
    keyring_check = found["keyring"]
    assert keyring_check["status"] == "warn"
    assert "PlainFileKeyring" in keyring_check["detail"]
    assert "keyrings.alt" not in keyring_check["fix"] and "pip" not in keyring_check["fix"]
    assert "Secret Service" in keyring_check["fix"]


def test_a_key_already_in_a_plain_file_keyring_reads_but_seals_nothing_new(
    data_dir: DataDir, tmp_path: Path, memory_keyring: object
) -> None:
    import keyring

    from tests.keyring_backend import MemoryKeyring, PlainFileKeyring

    assert isinstance(memory_keyring, MemoryKeyring)
    svc = MemoryService(data_dir)
    op = svc.open_session("main", Actor.OPERATOR)
    kept = svc.store(op, {"type": "fact", "content": PRIVATE_TEXT, "privacy": "private"}).entry
    svc.close()
    # The key an earlier version put in a plain-file keyring (the fixture restores its own).
    plain = PlainFileKeyring(tmp_path / "keyring_pass.cfg")
    for (service_name, account), value in memory_keyring.passwords.items():
        plain.set_password(service_name, account, value)
    keyring.set_keyring(plain)
    svc = MemoryService(data_dir)
    op = svc.open_session("main", Actor.OPERATOR)
    assert svc.get("main", kept.id).content == PRIVATE_TEXT
    with pytest.raises(KeyUnavailable, match="need an OS keyring"):
        svc.store(op, {"type": "fact", "content": "Takes levothyroxine", "privacy": "private"})
    # Public memories keep working: the person's write looks the text up among the
    # sealed ones with the key it can read, and seals nothing.
    assert svc.store(op, {"type": "fact", "content": "Plain public note"}).created
    again = svc.store(op, {"type": "fact", "content": PRIVATE_TEXT})
    assert again.created and again.entry.privacy is Privacy.PUBLIC
    svc.close()


def test_the_key_is_bound_to_the_entry(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    from core.storage.crypto import DecryptionFailed

    a = service.store(operator, {"type": "fact", "content": "first", "privacy": "private"})
    b = service.store(operator, {"type": "fact", "content": "second", "privacy": "private"})
    store = service.store_for("main")
    sealed_a = store.execute("SELECT content FROM memory_entries WHERE id = ?", (a.entry.id,)).get
    store.execute("UPDATE memory_entries SET content = ? WHERE id = ?", (sealed_a, b.entry.id))
    with pytest.raises(DecryptionFailed, match="cannot be decrypted"):
        service.get("main", b.entry.id)


def test_undoing_the_delete_of_a_private_entry_restores_it_whole(
    service: MemoryService, operator: Caller, memory_keyring: object
) -> None:
    from core.memory import bulk, curation

    e = service.store(operator, {"type": "fact", "content": PRIVATE_TEXT, "privacy": "private"})
    _, deleted = curation.delete_many(service, operator, [e.entry.id])
    bulk.restore_all(service, operator, deleted.entries, deleted.places)
    assert service.get("main", e.entry.id).content == PRIVATE_TEXT
    again = service.store(operator, {"type": "fact", "content": PRIVATE_TEXT, "privacy": "private"})
    assert not again.created and again.entry.id == e.entry.id


def _store_sealed(root: Path) -> tuple[str, str]:
    """A private and a secret memory in a data dir made at ``root``: their ids."""
    root.mkdir(exist_ok=True)
    svc = MemoryService(DataDir(root))
    op = svc.open_session("main", Actor.OPERATOR)
    p = svc.store(op, {"type": "fact", "content": PRIVATE_TEXT, "privacy": "private"}).entry
    s = svc.store(op, {"type": "fact", "content": SECRET_TEXT, "privacy": "secret"}).entry
    svc.close()
    return p.id, s.id


def _read_sealed(root: Path, ids: tuple[str, str]) -> tuple[str, str]:
    svc = MemoryService(DataDir(root))
    try:
        op = svc.open_session("main", Actor.OPERATOR)
        return svc.get("main", ids[0]).content, svc.reveal(op, ids[1]).content
    finally:
        svc.close()


def test_private_memories_stay_readable_after_the_data_dir_is_moved_or_copied(
    tmp_path: Path, memory_keyring: object
) -> None:
    first = tmp_path / "data"
    ids = _store_sealed(first)
    moved = tmp_path / "elsewhere" / "my mémoire 記憶"
    moved.parent.mkdir()
    first.rename(moved)
    assert _read_sealed(moved, ids) == (PRIVATE_TEXT, SECRET_TEXT)
    copy = tmp_path / "copy"
    shutil.copytree(moved, copy, symlinks=True)
    assert _read_sealed(copy, ids) == (PRIVATE_TEXT, SECRET_TEXT)


def test_a_data_dir_moved_by_an_earlier_version_gets_no_second_key(
    tmp_path: Path, memory_keyring: object
) -> None:
    import keyring

    home = tmp_path / "data"
    ids = _store_sealed(home)
    # Earlier versions kept no key-name file: the key's entry was named after the path.
    backend = keyring.get_keyring()
    name = (home / KEY_NAME_FILE).read_text().strip()
    backend.passwords[("Ambry", path_account(home))] = backend.passwords.pop(("Ambry", name))  # type: ignore[attr-defined]
    (home / KEY_NAME_FILE).unlink()
    moved = tmp_path / "moved"
    home.rename(moved)
    keys_before = dict(backend.passwords)  # type: ignore[attr-defined]
    svc = MemoryService(DataDir(moved))
    op = svc.open_session("main", Actor.OPERATOR)
    assert svc.get("main", ids[0]).content == MISSING_KEY_MASK
    with pytest.raises(KeyMissing, match="move it back"):
        svc.store(op, {"type": "fact", "content": "new and private", "privacy": "private"})
    # Nothing is revealed, and that is an error, not the mask given as the secret's text.
    with pytest.raises(KeyMissing, match="move it back"):
        svc.reveal(op, ids[1])
    svc.close()
    assert backend.passwords == keys_before  # type: ignore[attr-defined]
    # Back where its key was made, `ambry doctor` finds it and the folder keeps its name
    # from then on (a folder of secret memories only is never decrypted by a listing).
    moved.rename(home)
    assert main(["--data-dir", str(home), "doctor", "--no-mcp"]) in (0, 1)
    assert (home / KEY_NAME_FILE).read_text().strip() == path_account(home)
    home.rename(moved)
    assert _read_sealed(moved, ids) == (PRIVATE_TEXT, SECRET_TEXT)


def test_a_new_data_dir_where_another_was_moved_from_gets_a_key_of_its_own(
    tmp_path: Path, memory_keyring: object
) -> None:
    first = tmp_path / "data"
    ids = _store_sealed(first)
    away = tmp_path / "away"
    first.rename(away)
    other = _store_sealed(first)
    names = {(d / KEY_NAME_FILE).read_text() for d in (first, away)}
    assert len(names) == 2
    assert _read_sealed(away, ids) == _read_sealed(first, other) == (PRIVATE_TEXT, SECRET_TEXT)


def test_a_damaged_key_name_file_is_named_as_the_reason(
    tmp_path: Path, memory_keyring: object
) -> None:
    home = tmp_path / "data"
    ids = _store_sealed(home)
    (home / KEY_NAME_FILE).write_text("not a name\n")
    svc = MemoryService(DataDir(home))
    try:
        op = svc.open_session("main", Actor.OPERATOR)
        assert svc.get("main", ids[0]).content == MISSING_KEY_MASK
        with pytest.raises(KeyMissing, match="key-name file does not name an entry"):
            svc.reveal(op, ids[1])
    finally:
        svc.close()


def test_a_memory_made_secret_seals_its_earlier_public_versions(
    service: MemoryService, operator: Caller, agent: Caller, memory_keyring: object
) -> None:
    text = "Bank PIN reminder: Grisholt street house number"
    first = service.store(operator, {"type": "fact", "content": text, "tags": ["bank"]}).entry
    second = service.store(
        operator, {"type": "fact", "content": text + " (old)", "supersedes": first.id}
    ).entry
    store = service.store_for("main")
    model = shared_embedder()
    assert model is not None
    backfill.reindex(store.conn, store.path, "main", model)
    assert store.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 2
    # The documented way to make it secret: a new version that supersedes it.
    head = service.store(
        operator,
        {"type": "fact", "content": text, "supersedes": second.id, "privacy": "secret"},
    ).entry
    rows = store.execute("SELECT id, privacy, search_text FROM memory_entries ORDER BY seq")
    assert [tuple(r) for r in rows] == [
        (first.id, "secret", ""),
        (second.id, "secret", ""),
        (head.id, "secret", ""),
    ]
    assert store.execute("SELECT count(*) FROM memory_vectors").fetchone()[0] == 0
    # Agents see none of it, however they ask; the tags stay the person's way in.
    for args in (
        {"query": "Grisholt", "include_superseded": True},
        {"query": "bank reminder street", "include_superseded": True, "mode": "semantic"},
    ):
        assert service.search(agent, args) == []
    dug = json.dumps(dig(service, "main", head.id))
    assert "Grisholt" not in dug and first.id in dug
    # The person still reads every version, with the key.
    assert [service.reveal(operator, v.id).content for v in (first, second)] == [
        text,
        text + " (old)",
    ]
    assert [e.privacy for e in service.history("main", head.id)] == [Privacy.SECRET] * 3
    service.close()
    for path in service.data_dir.root.rglob("*"):
        if path.is_file():
            assert b"Grisholt" not in path.read_bytes(), path.name


def test_a_private_version_made_secret_takes_its_earlier_versions_along(
    service: MemoryService, operator: Caller, agent: Caller, memory_keyring: object
) -> None:
    a = service.store(operator, {"type": "fact", "content": "Sees Dr Quell on Fridays"}).entry
    b = service.store(
        operator,
        {
            "type": "fact",
            "content": "Sees Dr Quell on Mondays",
            "supersedes": a.id,
            "privacy": "private",
            "tags": ["health"],
        },
    ).entry
    assert service.get("main", a.id).privacy is Privacy.PRIVATE
    service.store(
        operator,
        {
            "type": "fact",
            "content": "Sees Dr Quell weekly",
            "supersedes": b.id,
            "privacy": "secret",
            "tags": ["health"],
        },
    )
    assert {service.get("main", i).privacy for i in (a.id, b.id)} == {Privacy.SECRET}
    assert service.search(agent, {"query": "health", "include_superseded": True}) == []
    # Made public again, the new version is public; the earlier ones stay sealed.
    c = service.store_for("main").history(b.id)[-1]
    service.store(operator, {"type": "fact", "content": "Sees a doctor weekly", "supersedes": c.id})
    assert service.get("main", c.id).privacy is Privacy.SECRET


def _chain_made_secret_with_one_in_the_trash(
    service: MemoryService, operator: Caller, agent: Caller, text: str
) -> tuple[str, str]:
    """An agent's two versions, the first deleted to the trash; then the person makes
    the memory secret with a third. Returns the trashed id and the head's."""
    v1 = service.store(agent, {"type": "fact", "content": text + " Baker Row"}).entry.id
    v2 = service.store(
        agent, {"type": "fact", "content": text + " Mill Row", "supersedes": v1}
    ).entry.id
    service.delete(agent, v1)
    head = service.store(
        operator,
        {"type": "fact", "content": text + " Mill Row", "supersedes": v2, "privacy": "secret"},
    ).entry.id
    return v1, head


def test_a_version_in_the_trash_is_sealed_with_its_chain_and_restored_sealed(
    service: MemoryService, operator: Caller, agent: Caller, memory_keyring: object
) -> None:
    text = "Safe combination hint: Tollgrave"
    v1, head = _chain_made_secret_with_one_in_the_trash(service, operator, agent, text)
    store = service.store_for("main")
    kept = json.loads(store.execute("SELECT entry FROM trash WHERE id = ?", (v1,)).get)
    assert kept["privacy"] == "secret" and kept["search_text"] == ""
    assert "Tollgrave" not in store.execute("SELECT entry FROM trash").get
    trash.restore(service, operator, v1)
    assert service.history("main", head)[0].id == v1
    assert service.get("main", v1).privacy is Privacy.SECRET
    assert service.search(agent, {"query": "Tollgrave Baker", "include_superseded": True}) == []
    assert service.reveal(operator, v1).content == text + " Baker Row"
    service.close()
    for path in service.data_dir.root.rglob("*"):
        if path.is_file():
            assert b"Tollgrave" not in path.read_bytes(), path.name


def test_a_version_restored_behind_a_secret_one_takes_its_privacy(
    service: MemoryService, operator: Caller, agent: Caller, memory_keyring: object
) -> None:
    """Kept in the clear in the trash (by an Ambry before it sealed the trash too),
    it is sealed as it goes back behind the secret version."""
    text = "Safe combination hint: Wexmoor"
    v1, head = _chain_made_secret_with_one_in_the_trash(service, operator, agent, text)
    store = service.store_for("main")
    kept = json.loads(store.execute("SELECT entry FROM trash WHERE id = ?", (v1,)).get)
    kept.update(privacy="public", content=text + " Baker Row", search_text=text + " Baker Row")
    with store.transaction():
        store.execute("UPDATE trash SET entry = ? WHERE id = ?", (json.dumps(kept), v1))
    trash.restore(service, operator, v1)
    assert service.get("main", v1).privacy is Privacy.SECRET
    row = store.execute("SELECT content, search_text FROM memory_entries WHERE id = ?", (v1,))
    assert "Wexmoor" not in str(row.fetchone())
    assert service.search(agent, {"query": "Wexmoor Baker", "include_superseded": True}) == []
    assert service.reveal(operator, v1).content == text + " Baker Row"
    assert [e.privacy for e in service.history("main", head)] == [Privacy.SECRET] * 3


def test_the_trash_is_read_only_when_a_chain_becomes_more_private(
    service: MemoryService,
    operator: Caller,
    agent: Caller,
    memory_keyring: object,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each new version of a private memory (a tag change, an edit) read the whole
    # trash: 21 ms a version at 20,000 trashed rows.
    from core.storage.workspace import Workspace

    looked: list[str] = []
    seal_trashed = Workspace._seal_trashed

    def counted(self: Workspace, store: object, head: object, chain: list[str]) -> list[str]:
        looked.append(chain[-1])
        return seal_trashed(self, store, head, chain)  # type: ignore[arg-type]

    monkeypatch.setattr(Workspace, "_seal_trashed", counted)
    text = "Safe combination hint: Quillmere"
    _v1, head = _chain_made_secret_with_one_in_the_trash(service, operator, agent, text)
    assert looked == [head]  # the chain became secret: its trashed version was sealed
    looked.clear()
    again = service.store(
        operator,
        {
            "type": "fact",
            "content": text + " Baker Row",
            "privacy": "secret",
            "tags": ["vault"],
            "supersedes": head,
        },
    )
    assert again.superseded == head and looked == []
