"""The service layer every front end goes through (GUI, socket, MCP, CLI).

A rule (validation, limits, redaction, audit) lives here and nowhere else. A
:class:`MemoryService` and the stores it opens belong to one thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from core import attachments, audit, continuity, memory_recall, receipts
from core.audit import Action
from core.backfill import EmbeddingWorker, Progress
from core.brief import MemoryBrief
from core.briefing import build_group_brief, refresh_decay
from core.changes import Changes
from core.confidence import effective_confidence
from core.config import Config
from core.crypto import (
    KeyUnavailable,
    decrypt,
    encrypt,
    is_encrypted,
    keyed_hash,
    load_key,
)
from core.episodes import expire_exchanges
from core.errors import Forbidden, InvalidParams, NotFound
from core.fts import typed_terms
from core.hybrid import Mode, parse_mode
from core.ingest import MAX_INGEST_CHARS, IngestResult, ingest_text
from core.manifest import validate_args
from core.model import (
    MAX_SEARCH_LIMIT,
    Actor,
    EntryFilter,
    EntryType,
    MemoryEntry,
    Privacy,
    SearchResult,
    SourceType,
    Trust,
    iso,
    new_session_id,
    parse_iso,
    utc_now,
)
from core.model_cache import set_cache_dir
from core.paths import DataDir, validate_group
from core.related import related as related_entries
from core.rows import Hit, NewRow, decode_tags
from core.store import GroupStore
from core.writing import (
    StoreOutcome,
    StoreRequest,
    check_rate,
    clean_tags,
    content_key,
    normalise_content,
    prepare,
    write_entry,
    writing,
)

log = logging.getLogger(__name__)

#: Receipts listed (and re-verified) in the brief.
BRIEF_RECEIPTS = 5
SECRET_MASK = "[secret: reveal it in Ambry to read]"
LOCKED_MASK = "[encrypted: the OS keyring holding Ambry's key is unavailable]"


@dataclass(frozen=True)
class Caller:
    """Who is calling, in which group and session. Provenance comes from here only."""

    group: str
    actor: Actor
    session_id: str
    #: The thread the session works in, if it named one.
    thread_id: str | None = None


_BEHAVIORAL_TYPES = frozenset(t.value for t in EntryType if t.behavioral)


def to_search_result(hit: Hit, content: str, score: float) -> SearchResult:
    """A search result from its stored columns and its readable ``content``."""
    return SearchResult(
        id=hit.id,
        type=hit.type,
        content=content,
        behavioral=hit.type in _BEHAVIORAL_TYPES,
        tags=list(decode_tags(hit.tags)),
        created_at=hit.created_at,
        relevance_score=score,
        status=hit.status,
        superseded_by=hit.superseded_by,
        trust=hit.trust,
    )


class MemoryService:
    """Typed memory operations over the group databases of one data directory.

    Args:
        data_dir: where the group databases live.
        config: the person's settings (limits, rates).
    """

    def __init__(self, data_dir: DataDir, config: Config | None = None) -> None:
        self.data_dir = data_dir
        self.config = config or Config()
        self._stores: dict[str, GroupStore] = {}
        self._listeners: list[Callable[[Changes], None]] = []
        self._key: bytes | None = None
        self._defer_reads = False
        #: Embeds new rows after their write is acknowledged (see :meth:`start_embedding`).
        self.embedding: EmbeddingWorker | None = None

    # -- plumbing ------------------------------------------------------------

    def add_listener(self, fn: Callable[[Changes], None]) -> None:
        """Call ``fn`` with the change record of every mutation made through this service."""
        self._listeners.append(fn)

    def remove_listener(self, fn: Callable[[Changes], None]) -> None:
        """Stop calling ``fn``; unknown listeners are ignored (a view may close twice)."""
        if fn in self._listeners:
            self._listeners.remove(fn)

    def emit(self, changes: Changes) -> Changes:
        """Tell every listener about ``changes`` (modules that write through a store call this)."""
        for fn in list(self._listeners):
            fn(changes)
        if self.embedding is not None and (changes.entries or changes.threads):
            self.embedding.wake(self.data_dir.group_db(changes.group), changes.group)
        return changes

    def start_embedding(self, on_progress: Callable[[Progress], None] | None = None) -> None:
        """Embed new and not yet embedded rows in a background thread (long-running apps).

        Without it (one-shot CLI commands, tests) rows are embedded by ``ambry reindex``.
        """
        if self.embedding is None:
            # A long-running process keeps the model's optimised graph for its next start.
            set_cache_dir(self.data_dir.root / "model-cache")
            self.embedding = EmbeddingWorker(self.config.embedding_model_dir, on_progress)
            for group in self._stores:
                self.embedding.wake(self.data_dir.group_db(group), group)

    def store_for(self, group: str) -> GroupStore:
        """The open store of ``group``, opening (and migrating, purging) it on first use."""
        group = validate_group(group)
        store = self._stores.get(group)
        if store is None:
            self.data_dir.ensure()
            store = GroupStore(self.data_dir.group_db(group), group)
            store.defer_reads = self._defer_reads
            self._stores[group] = store
            self._purge_superseded(store)
            expired = expire_exchanges(store, self.config, utc_now())
            if expired:
                log.info("expired %d exchanges in group %s", expired, group)
            self.refresh_decay(group)
            if self.embedding is not None:
                self.embedding.wake(store.path, group)
        return store

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

    def close(self) -> None:
        if self.embedding is not None:
            self.embedding.close()
            self.embedding = None
        for store in self._stores.values():
            store.close()
        self._stores.clear()

    def set_config(self, config: Config) -> None:
        self.config = config

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

    # -- sessions ------------------------------------------------------------

    def open_session(self, group: str, actor: Actor, client: str = "") -> Caller:
        store = self.store_for(group)
        if actor is Actor.AGENT:
            # A long-running app opens a store once; sessions are when time has moved on.
            self.refresh_decay(group)
            expire_exchanges(store, self.config, utc_now())
        session_id = new_session_id()
        with store.transaction():
            store.execute(
                "INSERT INTO sessions (id, actor, client, started_at) VALUES (?, ?, ?, ?)",
                (session_id, actor.value, client[:200], iso(utc_now())),
            )
            audit.record(
                store, Action.SESSION_START, actor, session_id=session_id, client=client[:200]
            )
        self.emit(Changes(group=store.group, sessions=True, audit=True))
        return Caller(group=store.group, actor=actor, session_id=session_id)

    def end_session(self, caller: Caller, *, graceful: bool = True) -> None:
        store = self.store_for(caller.group)
        state = "ended" if graceful else "abandoned"
        with store.transaction():
            store.execute(
                "UPDATE sessions SET ended_at = ?, end_state = ? "
                "WHERE id = ? AND end_state = 'open'",
                (iso(utc_now()), state, caller.session_id),
            )
            audit.record(
                store, Action.SESSION_END, caller.actor, session_id=caller.session_id, state=state
            )
        self.emit(Changes(group=store.group, sessions=True, audit=True))

    # -- writes --------------------------------------------------------------

    def store(self, caller: Caller, args: dict[str, Any]) -> StoreOutcome:
        """``memory_store``: validate against the manifest, then :meth:`store_entries`."""
        return self.store_entries(caller, [self.parse_store_args(args)])[0]

    @staticmethod
    def parse_store_args(args: dict[str, Any]) -> StoreRequest:
        args = validate_args("memory_store", args)
        claim = args.get("source") or {}
        return StoreRequest(
            entry_type=EntryType(args["type"]),
            content=args["content"],
            tags=tuple(args.get("tags") or ()),
            supersedes=args.get("supersedes"),
            claimed_type=SourceType(claim["type"]) if claim.get("type") else None,
            claimed_trust=Trust(claim["trust"]) if claim.get("trust") else None,
            privacy=Privacy(args.get("privacy") or "public"),
        )

    def store_entries(self, caller: Caller, requests: Sequence[StoreRequest]) -> list[StoreOutcome]:
        """Write entries in one transaction: all are stored, or none is.

        Each goes through the same checks as a single store (dedup, supersession
        rules, rate limits); the batch is durable when this returns.
        """
        store = self.store_for(caller.group)
        now = iso(utc_now())
        with writing(self, store, caller):
            prepared = [prepare(self, caller, r) for r in requests]
            outcomes = [write_entry(self, store, caller, r, now) for r in prepared]
        if outcomes:
            merged = outcomes[0].changes
            for o in outcomes[1:]:
                merged = merged | o.changes
            self.emit(merged)
        return outcomes

    def delete(self, caller: Caller, entry_id: str) -> Changes:
        """Hard-delete one entry (the search index follows through triggers)."""
        store = self.store_for(caller.group)
        with writing(self, store, caller):
            if store.get(entry_id) is None:
                raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
            check_rate(store, caller, "deletes", self.config.rate_deletes_per_session)
            store.delete(entry_id)
            audit.record(
                store,
                Action.DELETE,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=[entry_id],
                count=1,
            )
        return self.emit(
            Changes(group=store.group, entries=True, review=True, audit=True, entry_ids=(entry_id,))
        )

    def delete_tool(self, caller: Caller, args: dict[str, Any]) -> Changes:
        """``memory_delete`` with manifest validation."""
        args = validate_args("memory_delete", args)
        return self.delete(caller, args["id"])

    # -- reads ---------------------------------------------------------------

    def get(self, group: str, entry_id: str, *, reveal: bool = False) -> MemoryEntry:
        """One entry, readable: private content decrypted, secret content only if ``reveal``."""
        entry = self.store_for(group).get(entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id} in group {group}", field="id")
        return self.readable(entry, reveal=reveal)

    def entries(self, group: str, ids: Iterable[str]) -> dict[str, MemoryEntry]:
        """Readable entries by id (secret content masked), for lists such as the browser."""
        return {k: self.readable(e) for k, e in self.store_for(group).get_many(ids).items()}

    def reveal(self, caller: Caller, entry_id: str) -> MemoryEntry:
        """Decrypt a secret entry on the person's explicit request; audited."""
        if caller.actor is Actor.AGENT:
            raise Forbidden("secret entries are revealed only to the person, in the app or CLI")
        entry = self.get(caller.group, entry_id, reveal=True)
        store = self.store_for(caller.group)
        with store.transaction():
            audit.record(
                store,
                Action.REVEAL,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=[entry_id],
            )
        self.emit(Changes(group=store.group, audit=True))
        return entry

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
            key = self._data_key(create=False)
        except KeyUnavailable:
            key = None
        if key is None:
            return LOCKED_MASK
        return decrypt(key, content, entry_id)

    def dedup_key(self, privacy: Privacy, content: str) -> str:
        """The key duplicates are found by: a plain hash, or a keyed one for encrypted text."""
        if privacy is Privacy.PUBLIC:
            return content_key(content)
        data_key = self._data_key(create=True)
        assert data_key is not None
        return keyed_hash(data_key, normalise_content(content))

    def row_for(self, entry: MemoryEntry) -> NewRow:
        """What the store writes for ``entry`` (plaintext content): sealed unless public."""
        key = self.dedup_key(entry.privacy, entry.content)
        if entry.privacy is Privacy.PUBLIC:
            return NewRow(entry, search_text=entry.content, content_key=key)
        data_key = self._data_key(create=True)
        assert data_key is not None
        # Only tags stay searchable; the content is ciphertext at rest.
        sealed = encrypt(data_key, entry.content, entry.id)
        return NewRow(replace(entry, content=sealed), search_text="", content_key=key)

    def _data_key(self, *, create: bool) -> bytes | None:
        if self._key is None:
            self._key = load_key(self.data_dir.root, create=create)
        return self._key

    def history(self, group: str, entry_id: str) -> list[MemoryEntry]:
        self.get(group, entry_id)
        return [self.readable(e) for e in self.store_for(group).history(entry_id)]

    def search(self, caller: Caller, args: dict[str, Any]) -> list[SearchResult]:
        """``memory_search``: FTS5 ranked by bm25, or the most recent entries with no query."""
        args = validate_args("memory_search", args)
        types = (EntryType(args["type"]),) if args.get("type") else ()
        flt = EntryFilter(
            types=types,
            tags=clean_tags(args.get("tags") or []),
            include_superseded=bool(args.get("include_superseded")),
            # Secret entries are decrypted only on the person's explicit request.
            privacy=(Privacy.PUBLIC, Privacy.PRIVATE),
        )
        results = self.search_entries(
            caller.group,
            args.get("query") or "",
            flt,
            int(args["limit"]),
            mode=parse_mode(args.get("mode")),
        )
        store = self.store_for(caller.group)
        audit.record(
            store,
            Action.SEARCH,
            caller.actor,
            session_id=caller.session_id,
            count=len(results),
            read=True,
        )
        self.emit(Changes(group=store.group, audit=True))
        return results

    def search_entries(
        self, group: str, query: str, flt: EntryFilter, limit: int = 20, mode: Mode = Mode.AUTO
    ) -> list[SearchResult]:
        """Search without auditing (the GUI's browsing uses this): bm25 and meaning, fused."""
        limit = max(1, min(limit, MAX_SEARCH_LIMIT))
        store = self.store_for(group)
        if query.strip():
            ranked = memory_recall.search(
                store, query, flt, limit, mode=mode, config=self.config, now=utc_now()
            )
        else:
            ranked = [memory_recall.RankedHit(h, 0.0, ()) for h in store.recent_hits(flt, limit)]
        results = [
            to_search_result(
                r.hit, self.readable_content(r.hit.id, r.hit.privacy, r.hit.content), r.score
            )
            for r in ranked
        ]
        results = [
            replace(res, signals=r.signals) if r.signals else res
            for res, r in zip(results, ranked, strict=True)
        ]
        return self._with_receipt_states(store, results)

    def related(self, caller: Caller, args: dict[str, Any]) -> list[SearchResult]:
        """``memory_related``: the entries nearest in meaning to one entry (not secret ones)."""
        args = validate_args("memory_related", args)
        entry = self.get(caller.group, args["id"])
        if entry.privacy is Privacy.SECRET:
            raise Forbidden("secret entries are not compared with others; pick another entry")
        flt = EntryFilter(privacy=(Privacy.PUBLIC, Privacy.PRIVATE))
        store = self.store_for(caller.group)
        ranked = related_entries(
            store,
            entry.id,
            entry.content,
            flt,
            limit=int(args["limit"]),
            model_dir=self.config.embedding_model_dir,
        )
        results = [
            replace(
                to_search_result(
                    r.hit, self.readable_content(r.hit.id, r.hit.privacy, r.hit.content), r.score
                ),
                signals=r.signals,
            )
            for r in ranked or []
        ]
        audit.record(
            store,
            Action.SEARCH,
            caller.actor,
            session_id=caller.session_id,
            count=len(results),
            read=True,
            scope="related",
        )
        self.emit(Changes(group=store.group, audit=True))
        return results

    @staticmethod
    def _with_receipt_states(store: GroupStore, results: list[SearchResult]) -> list[SearchResult]:
        """State plainly, next to a result, whether the files it cites are still as recorded."""
        cited = {r.id: receipts.cited_ids(r.content) for r in results}
        wanted = {i for ids in cited.values() for i in ids}
        if not wanted:
            return results
        states = receipts.receipt_states(store, wanted)
        return [
            replace(r, receipts={i: states[i] for i in cited[r.id] if i in states} or None)
            for r in results
        ]

    def list_ids(self, group: str, flt: EntryFilter, query: str = "") -> list[str]:
        """Ordered ids for the browser (most recent first, or best match first)."""
        store = self.store_for(group)
        if not query.strip():
            return store.ids(flt)
        terms, typing = typed_terms(query)
        return store.browse_ids(flt, terms, prefix_last=typing)

    # -- brief, decay, markers, pins ----------------------------------------

    def refresh_decay(self, group: str, *, force: bool = False) -> int:
        """Apply staleness decay (at open and at agent session start); audited when it moved."""
        store = self.store_for(group)
        changed = refresh_decay(store, self.config, utc_now(), force=force)
        if changed:
            with store.transaction():
                audit.record(store, Action.DECAY, Actor.SYSTEM, count=changed)
            log.info("decay refreshed %d entries in group %s", changed, group)
            self.emit(Changes(group=store.group, entries=True, audit=True))
        return changed

    def brief(self, caller: Caller, args: dict[str, Any] | None = None) -> MemoryBrief:
        """``memory_brief``: the brief the agent receives, audited (counts only)."""
        validate_args("memory_brief", args or {})
        result = self.build_brief(caller.group, extra_sections=self.brief_sections(caller))
        store = self.store_for(caller.group)
        audit.record(
            store,
            Action.BRIEF,
            caller.actor,
            session_id=caller.session_id,
            count=result.brief_count,
            size=result.char_count,
            read=True,
        )
        self.emit(Changes(group=store.group, audit=True))
        return result

    def brief_sections(self, caller: Caller) -> list[tuple[str, str]]:
        """What the brief adds after the memories: the caller's thread and its files."""
        store = self.store_for(caller.group)
        sections = continuity.session_brief_sections(self, caller)
        recent = receipts.list_receipts(store, caller.thread_id, BRIEF_RECEIPTS)
        if recent:
            # A handful of files: checking them now beats citing a stale state.
            attachments.verify_all(self, caller, ids=[r.id for r in recent])
            section = receipts.receipt_brief_section(store, caller.thread_id, BRIEF_RECEIPTS)
            if section is not None:
                sections.append(section)
        return sections

    def build_brief(
        self, group: str, *, extra_sections: Sequence[tuple[str, str]] = ()
    ) -> MemoryBrief:
        """The brief of ``group`` without auditing (previews, self-test)."""
        return build_group_brief(
            self.store_for(group),
            self.config,
            utc_now(),
            extra_sections=extra_sections,
            readable=self.readable,
        )

    def ingest_text(self, caller: Caller, text: str) -> IngestResult:
        """Store or reinforce the ``[MEMORY:...]`` markers found in ``text``."""
        if not isinstance(text, str):
            raise InvalidParams("text must be a string", field="text", rule="type")
        if len(text) > MAX_INGEST_CHARS:
            raise InvalidParams(
                f"text must be at most {MAX_INGEST_CHARS} characters; send it in parts",
                field="text",
                rule="maxLength",
            )
        return ingest_text(self, caller, text)

    def set_pinned(self, caller: Caller, entry_id: str, pinned: bool) -> Changes:
        """Pin (exempt from decay) or unpin an entry. Only the person may do this."""
        if caller.actor is Actor.AGENT:
            raise Forbidden("pinning is for the person, in the app or the CLI")
        store = self.store_for(caller.group)
        now = iso(utc_now())
        with store.transaction():
            entry = store.get(entry_id)
            if entry is None:
                raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
            store.update_fields(entry_id, pinned=int(pinned))
            # Unpinning restarts the clock, so the entry does not drop at once.
            current = effective_confidence(
                replace(entry, pinned=False), parse_iso(now), self.config
            )
            value = entry.confidence if pinned else current
            store.reinforce(entry_id, value, now)
            audit.record(
                store,
                Action.UPDATE,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=[entry_id],
                field="pinned",
                value=pinned,
            )
        return self.emit(
            Changes(group=store.group, entries=True, audit=True, entry_ids=(entry_id,))
        )
