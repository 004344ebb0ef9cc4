"""The open group databases of one data directory, and what every capability needs of them.

A :class:`Workspace` owns the stores (one per group, opened on first use), the
person's settings, the data key that seals private and secret content, and the
listeners told about every change. Capability modules take a workspace rather
than the service, so they depend on storage and never on the layer above them;
:class:`core.service.MemoryService` is a workspace with the operations on top.
A workspace and the stores it opens belong to one thread.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from core.model.changes import Changes
from core.model.config import Config, load_config
from core.model.entries import Actor, MemoryEntry, Privacy, Status, iso, utc_now
from core.model.errors import AmbryError
from core.storage import audit, chain_repair, index_levels
from core.storage.audit import Action
from core.storage.best_effort import UPKEEP_WAIT_MS, best_effort
from core.storage.chains import CHAIN_KEY
from core.storage.crypto import (
    KeyMissing,
    KeyUnavailable,
    decrypt,
    describe_key_entry,
    encrypt,
    is_encrypted,
    keyed_hash,
    load_key,
    require_os_keyring,
)
from core.storage.paths import DataDir, validate_group
from core.storage.rows import NewRow
from core.storage.scrub import Index, scrub
from core.storage.store import GroupStore

log = logging.getLogger(__name__)

SECRET_MASK = "[secret: reveal it in Ambry to read]"
LOCKED_MASK = "[encrypted: the OS keyring holding Ambry's key is unavailable]"
MISSING_KEY_MASK = "[encrypted: this data folder's key is not in the OS keyring]"

#: Run on a group's store right after it is opened (expiry, decay): set by the service.
OpenHook = Callable[[GroupStore], None]


#: How private each level is: an earlier version never stays less private than its successor.
_RANK = {Privacy.PUBLIC: 0, Privacy.PRIVATE: 1, Privacy.SECRET: 2}


def _scrub_entries(store: GroupStore) -> None:
    """After earlier versions were sealed: their plain words leave the memories'
    index segments and the write-ahead log."""
    scrub(store, (Index.ENTRIES,))


def _statement_texts(content: str) -> tuple[str, ...]:
    """The forms of ``content`` whose hashes find it stored before: as stored now
    (:func:`same_statement`), before list numbers, "+ ", dashes and bold were taken
    off (:func:`statement_before_list_numbers`), and before :func:`same_statement`
    (case and spacing folded only); each once."""
    return tuple(
        dict.fromkeys(
            (
                same_statement(content),
                statement_before_list_numbers(content),
                normalise_content(content),
            )
        )
    )


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What changes when a file is rewritten (atomically, by rename: the inode too)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def normalise_content(text: str) -> str:
    return " ".join(text.casefold().split())


#: Quotes and apostrophes typed more than one way ("User’s", "User's").
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201b": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2033": '"',
    }
)
#: What a sentence may end with without changing what it says.
_SENTENCE_END = ".!;,:\u2026 "


#: A list item's mark, or quotes around the whole statement: not part of it.
_FRAMING = re.compile(r'^(?:[-*\u2022]\s+)?(["\'`]?)(.*?)\1$', re.DOTALL)
#: A list item's mark, :data:`_FRAMING`'s and more: "+ ", an en or em dash, a
#: number ("1. ", "12) "); and bold around the whole statement ("**...**").
_LIST_MARK = re.compile(r"^(?:[-*+\u2022\u2013\u2014]|\d{1,3}[.)])\s+")
_BOLD = re.compile(r"^\*\*(?!\*)(.+?)(?<!\*)\*\*[.!;,:\u2026 ]*$", re.DOTALL)


#: Marks a text may carry or not without reading differently: joiners, direction
#: marks, the grapheme joiner, variation selectors (stored text keeps them where a
#: script or an emoji needs them; core.policy.field_screening).
_MARKS = re.compile("[\u034f\u061c\u200c-\u200f\ufe00-\ufe0f]")


def same_statement(text: str) -> str:
    """``text`` as duplicates are told apart: case, spacing, the style of its quotes,
    quotes or bold around it, a list item's mark before it ("- ", "* ", "•", "+ ",
    "– ", "— ", "1. ", "1) "), invisible marks and the punctuation it ends with do
    not count ("1. Prefers dark mode." and '"prefers dark mode"' are "prefers dark
    mode")."""
    folded = _folded(text)
    marked = _LIST_MARK.match(folded)
    if marked and folded[marked.end() :].strip():
        folded = folded[marked.end() :]
    bold = _BOLD.match(folded)
    if bold and "**" not in bold.group(1) and bold.group(1).strip():
        folded = bold.group(1).strip()
    return _unframed(folded)


def statement_before_list_numbers(text: str) -> str:
    """``text`` as :func:`same_statement` read it before "+ ", dashes, numbers and
    bold were taken off: the key of entries stored then, which stay as they were."""
    return _unframed(_folded(text))


def _folded(text: str) -> str:
    return normalise_content(_MARKS.sub("", unicodedata.normalize("NFKC", text)).translate(_QUOTES))


def _unframed(folded: str) -> str:
    framed = _FRAMING.match(folded)
    statement = folded
    if framed and not (framed.group(1) and framed.group(1) in framed.group(2)):
        statement = framed.group(2).strip() or folded
    return statement.rstrip(_SENTENCE_END) or statement


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class Workspace:
    """The group databases of one data directory.

    Args:
        data_dir: where the group databases live.
        config: the person's settings (limits, rates).
    """

    def __init__(self, data_dir: DataDir, config: Config | None = None) -> None:
        self.data_dir = data_dir
        self.config = config or Config()
        # ``config`` is taken to be the file as it is now; later changes are followed.
        self._config_stamp = _stamp(data_dir.config_file)
        self._stores: dict[str, GroupStore] = {}
        self._listeners: list[Callable[[Changes], None]] = []
        self._open_hooks: list[OpenHook] = []
        self._key: bytes | None = None
        self._defer_reads = False

    # -- change notification ---------------------------------------------------

    def add_listener(self, fn: Callable[[Changes], None]) -> None:
        """Call ``fn`` with the change record of every mutation made through this workspace."""
        self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[Changes], None]) -> None:
        """Stop calling ``fn``; unknown listeners are ignored (a view may close twice)."""
        if fn in self._listeners:
            self._listeners.remove(fn)

    def emit(self, changes: Changes) -> Changes:
        """Tell every listener about ``changes`` (modules that write through a store call this)."""
        for fn in list(self._listeners):
            fn(changes)
        return changes

    # -- stores ------------------------------------------------------------------

    def on_open(self, hook: OpenHook) -> None:
        """Run ``hook`` on every group store when it is first opened."""
        self._open_hooks.append(hook)

    def store_for(self, group: str) -> GroupStore:
        """The open store of ``group``, opening (and migrating, purging) it on first use."""
        group = validate_group(group)
        store = self._stores.get(group)
        if store is None:
            self.data_dir.ensure()
            store = GroupStore(self.data_dir.group_db(group), group)
            store.defer_reads = self._defer_reads
            store.seal_earlier = self.seal_earlier
            store.after_sealing = _scrub_entries
            self._stores[group] = store
            # Upkeep must not stop a read-only or full disk from being searched.
            with best_effort(
                store, "start-up upkeep (purge, expiry, decay)", wait_ms=UPKEEP_WAIT_MS
            ):
                self._repair_chains(store)
                self._keep_index_levels(store)
                self._purge_superseded(store)
                for hook in self._open_hooks:
                    hook(store)
        return store

    def open_groups(self) -> list[str]:
        """The groups whose stores are open now."""
        return list(self._stores)

    def defer_read_audit(self, on: bool = True) -> None:
        """Batch the audit rows of reads until :meth:`flush_read_audit` (servers use this)."""
        self._defer_reads = on
        for store in self._stores.values():
            store.defer_reads = on

    def flush_read_audit(self) -> int:
        """Write every pending read-audit row; returns how many."""
        written = 0
        for store in self._stores.values():
            count = store.flush_reads()
            if count:
                written += count
                self.emit(Changes(group=store.group, audit=True))
        return written

    def close_store(self, group: str) -> None:
        """Close ``group``'s store if it is open (before its file is moved or removed)."""
        store = self._stores.pop(group, None)
        if store is not None:
            store.close()

    def close(self) -> None:
        for store in self._stores.values():
            store.close()
        self._stores.clear()

    def set_config(self, config: Config) -> None:
        self.config = config

    def follow_config(self) -> bool:
        """Apply ``config.json`` if it changed since it was last read (``ambry settings``,
        or another Ambry process saving its settings); returns whether settings changed.

        One ``stat`` when nothing changed, so a server calls it before every call: the
        processes serving one data dir use the same settings (the same model too, or
        their embedding workers would each re-embed what the other just did). A file
        that cannot be read is logged and the settings in use are kept.
        """
        stamp = _stamp(self.data_dir.config_file)
        if stamp == self._config_stamp:
            return False
        self._config_stamp = stamp
        try:
            config = load_config(self.data_dir.config_file)
        except AmbryError as exc:
            log.warning("%s; the settings in use are kept", exc.message)
            return False
        if config == self.config:
            return False
        log.info("settings changed in %s: applied", self.data_dir.config_file)
        self.set_config(config)
        return True

    def _repair_chains(self, store: GroupStore) -> None:
        """Relink the versions an earlier Ambry left naming a deleted entry."""
        if not chain_repair.missing_versions(store):
            return  # one indexed query: a store this version wrote is never broken
        with store.transaction():
            mended = chain_repair.repair(store, iso(utc_now()))
        if mended:
            log.info("relinked %d versions in group %s", len(mended), store.group)

    def _keep_index_levels(self, store: GroupStore) -> None:
        """Rebuild a word index that many deletes brought near FTS5's limit, or past it
        (an earlier Ambry did not watch it): the rows are whole, the index derived."""
        if index_levels.over(store):  # five one-row reads: nothing is written as a rule
            with store.transaction():
                index_levels.keep_levels(store)

    def _purge_superseded(self, store: GroupStore) -> None:
        cutoff = iso(utc_now() - timedelta(days=self.config.purge_superseded_days))
        with store.transaction():
            purged = store.purge_superseded(cutoff)
            if purged:
                audit.record(
                    store,
                    Action.PURGE,
                    Actor.SYSTEM,
                    entry_ids=purged,
                    count=len(purged),
                    reason=f"superseded more than {self.config.purge_superseded_days} days ago",
                )
        if purged:
            log.info("purged %d superseded entries from group %s", len(purged), store.group)
            scrub(store, (Index.ENTRIES,))

    # -- content at rest ---------------------------------------------------------

    def seal_earlier(self, store: GroupStore, head_id: str) -> bool:
        """Seal the earlier versions of ``head_id``'s chain as it is sealed.

        Making a memory private or secret is storing a new version that supersedes
        it; the versions before it still said the same in the clear. Each one less
        private than ``head_id`` takes its privacy: a public one is encrypted under
        its own id, keyed-hashed and taken out of the word index, grams and vectors
        (its tags stay indexed, as any sealed entry's), so agents and search treat
        it as they treat the new version; the person still reads it in the history.
        Inside the caller's transaction.

        Returns:
            Whether any version was sealed.
        """
        head = store.get(head_id)
        if head is None or head.privacy is Privacy.PUBLIC:
            return False
        sealed: list[str] = []
        chain = store.history(head_id)
        for version in chain:
            if version.id == head_id:
                break
            if _RANK[version.privacy] >= _RANK[head.privacy]:
                continue
            if version.privacy is Privacy.PUBLIC:
                content, content_key = self._sealed(head.privacy, version.content, version.id)
            else:
                content, content_key = version.content, self._stored_key(store, version.id)
            store.seal(version.id, head.privacy, content, content_key)
            sealed.append(version.id)
        if sealed:
            # The chain's privacy rose only now: versions trashed before this were kept
            # as they were, while any trashed since an earlier rise were sealed then.
            # (Looking on every new version read the whole trash, 21 ms a version at
            # 20,000 trashed rows.)
            sealed += self._seal_trashed(store, head, [v.id for v in chain])
        if sealed:
            audit.record(
                store,
                Action.UPDATE,
                Actor.SYSTEM,
                entry_ids=sealed,
                count=len(sealed),
                reason=f"made {head.privacy} with their later version {head_id}",
            )
        return bool(sealed)

    def _seal_trashed(self, store: GroupStore, head: MemoryEntry, chain: list[str]) -> list[str]:
        """Seal, as :meth:`seal_earlier` seals the versions in place, the versions of
        ``chain`` in the trash: they said the same in the clear, and a restore puts
        them back as they are kept. Returns their ids."""
        rows = store.execute(
            "SELECT DISTINCT t.id, t.entry FROM trash t, "
            f"json_each(t.entry, '$.{CHAIN_KEY}.later') j "
            "WHERE j.value IN (SELECT value FROM json_each(?))",
            (json.dumps(chain),),
        ).fetchall()
        sealed: list[str] = []
        for trashed_id, text in rows:
            entry = json.loads(text)
            privacy = Privacy(entry["privacy"])
            if _RANK[privacy] >= _RANK[head.privacy]:
                continue
            if privacy is Privacy.PUBLIC:
                entry["content"], entry["content_key"] = self._sealed(
                    head.privacy, str(entry["content"]), str(trashed_id)
                )
            entry.update(privacy=head.privacy.value, search_text="")
            store.execute(
                "UPDATE trash SET entry = ? WHERE id = ?",
                (json.dumps(entry, ensure_ascii=False), trashed_id),
            )
            sealed.append(str(trashed_id))
        return sealed

    def _sealed(self, privacy: Privacy, plain: str, entry_id: str) -> tuple[str, str]:
        """Public ``plain`` of ``entry_id`` as it is kept at ``privacy``: encrypted
        content and its keyed duplicate hash."""
        key = self.data_key(create=True)
        assert key is not None, "data_key(create=True) returns a key or raises"
        return encrypt(key, plain, entry_id), self.dedup_key(privacy, plain)

    @staticmethod
    def _stored_key(store: GroupStore, entry_id: str) -> str:
        row = store.execute(
            "SELECT content_key FROM memory_entries WHERE id = ?", (entry_id,)
        ).fetchone()
        return str(row[0])

    def entries(self, group: str, ids: Iterable[str]) -> dict[str, MemoryEntry]:
        """Readable entries by id (secret content masked), for lists such as the browser."""
        return {k: self.readable(e) for k, e in self.store_for(group).get_many(ids).items()}

    def candidate_count(self, group: str, ids: Iterable[str]) -> int:
        """How many of ``ids`` await review (for a selection too large to read entry by entry)."""
        return self.store_for(group).count_status(ids, Status.CANDIDATE)

    def readable(self, entry: MemoryEntry, *, reveal: bool = False) -> MemoryEntry:
        """``entry`` with its content decrypted where allowed, else a plain-words mask."""
        content = self.readable_content(entry.id, entry.privacy, entry.content, reveal=reveal)
        return entry if content is entry.content else replace(entry, content=content)

    def readable_content(
        self, entry_id: str, privacy: str, content: str, *, reveal: bool = False
    ) -> str:
        """Stored ``content`` decrypted where allowed, else a plain-words mask."""
        if privacy == Privacy.PUBLIC or not is_encrypted(content):
            return content
        if privacy == Privacy.SECRET and not reveal:
            return SECRET_MASK
        try:
            key = self.data_key(create=False)
        except KeyUnavailable:
            return LOCKED_MASK
        if key is None:
            return MISSING_KEY_MASK
        return decrypt(key, content, entry_id)

    def dedup_key(self, privacy: Privacy, content: str) -> str:
        """The key a new entry is stored with (:func:`same_statement` of its text)."""
        return self._dedup_hash(privacy, same_statement(content))

    def dedup_keys(self, privacy: Privacy, content: str) -> tuple[str, ...]:
        """The key a new entry is stored with, then the keys entries stored before
        had, when different: before list numbers, "+ ", dashes and bold were taken
        off (:func:`statement_before_list_numbers`), and before :func:`same_statement`
        (case and spacing folded only). A duplicate is looked up by all of them;
        stored keys are never rewritten."""
        return tuple(self._dedup_hash(privacy, t) for t in _statement_texts(content))

    def sealed_keys(self, content: str) -> tuple[str, ...]:
        """The keys a sealed entry of ``content`` was stored under (:meth:`dedup_keys`);
        none while this data dir has no key, or no keyring to read it from. A lookup
        seals nothing, so a key a plain-file keyring holds serves it too."""
        try:
            key = self.data_key(create=False)
        except KeyUnavailable:
            return ()
        if key is None:
            return ()
        return tuple(keyed_hash(key, t) for t in _statement_texts(content))

    def _dedup_hash(self, privacy: Privacy, text: str) -> str:
        """A plain hash of ``text``, or a keyed one for content sealed at rest."""
        if privacy is Privacy.PUBLIC:
            return _sha256(text)
        data_key = self.data_key(create=True)
        assert data_key is not None
        return keyed_hash(data_key, text)

    def row_for(self, entry: MemoryEntry) -> NewRow:
        """What the store writes for ``entry`` (plaintext content): sealed unless public."""
        key = self.dedup_key(entry.privacy, entry.content)
        if entry.privacy is Privacy.PUBLIC:
            return NewRow(entry, search_text=entry.content, content_key=key)
        data_key = self.data_key(create=True)
        assert data_key is not None
        # Only tags stay searchable; the content is ciphertext at rest.
        sealed = encrypt(data_key, entry.content, entry.id)
        return NewRow(replace(entry, content=sealed), search_text="", content_key=key)

    def data_key(self, *, create: bool) -> bytes | None:
        """The key that seals private and secret content (``None`` if absent and not created).

        ``create``: the key is for sealing, which needs an OS keyring even when a
        plain-file keyring already holds a key to read with.
        """
        if create:
            require_os_keyring()
        if self._key is None:
            self._key = load_key(self.data_dir.root, create=False)
            if self._key is None and create:
                sealed = self.sealed_groups()
                if sealed:
                    raise KeyMissing(missing_key_message(self.data_dir.root, sealed))
                self._key = load_key(self.data_dir.root, create=True)
        return self._key

    def sealed_groups(self) -> list[str]:
        """The groups holding content sealed with this data dir's key (trash included)."""
        found = []
        for group in self.data_dir.groups():
            try:
                sealed = holds_sealed(self.store_for(group))
            except AmbryError as exc:
                log.warning("cannot tell whether group %s holds sealed entries: %s", group, exc)
                continue
            if sealed:
                found.append(group)
        return found


#: Whether a group database holds content sealed with its data dir's key.
SEALED_SQL = (
    "SELECT 1 FROM memory_entries WHERE substr(content, 1, 5) = 'enc1:' "
    "UNION ALL SELECT 1 FROM trash "
    "WHERE substr(json_extract(entry, '$.content'), 1, 5) = 'enc1:' LIMIT 1"
)


def holds_sealed(store: GroupStore) -> bool:
    """Whether ``store`` holds private or secret content (its trash included)."""
    return store.execute(SEALED_SQL).fetchone() is not None


def missing_key_message(root: Path, groups: list[str]) -> str:
    """Why no new key is made while sealed entries wait for the old one."""
    return (
        f"the private and secret memories of group {', '.join(groups)} were sealed with a key "
        f"that the OS keyring does not hold ({describe_key_entry(root)}), so no new key "
        "is made and nothing private can be stored: a new key would leave them unreadable. "
        "If this data folder was moved or renamed, move it back, run `ambry doctor` there once "
        "with this version of Ambry (the folder then keeps its key's name) and move it again; "
        "if it came from another machine or account, restore the key there with the "
        "keyring's tools, or bring its memories with `ambry export --include-private` "
        "and `ambry import`"
    )
