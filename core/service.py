"""The service layer every front end goes through (GUI, socket, MCP, CLI).

A rule (validation, limits, redaction, audit) lives here and nowhere else. A
:class:`MemoryService` and the stores it opens belong to one thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from core.attachments import attach as attachments
from core.attachments import receipts
from core.claims import context as claims_context
from core.claims.context import claim_source_turns, claims_brief_section
from core.claims.extract import Extraction, extract
from core.continuity import context as continuity
from core.continuity import sessions
from core.continuity.episodes import expire_exchanges
from core.continuity.handoffs import forget_versions
from core.continuity.threads import thread_by_id
from core.layers.compression import drop_lost
from core.layers.context import layer_brief_sections
from core.layers.points import day_points
from core.layers.scheduler import LayerWorker
from core.memory import curation, forgetting, trash
from core.memory.forgetting import ForgetPlan, Scope
from core.memory.ingest import MAX_INGEST_CHARS, IngestResult, ingest_text
from core.memory.tagging import tag_edit
from core.memory.versions import Deletion
from core.memory.writing import (
    StoreOutcome,
    StoreRequest,
    check_rate,
    clean_tags,
    parse_store_args,
    prepare,
    refuse_blank_tags,
    write_entry,
    writing,
)
from core.model.caller import Caller
from core.model.changes import Changes
from core.model.config import Config
from core.model.entries import (
    Actor,
    EntryFilter,
    EntryType,
    MemoryEntry,
    Privacy,
    SearchResult,
    iso,
    utc_now,
)
from core.model.errors import Forbidden, InvalidParams, NotFound
from core.policy.field_screening import screen_label
from core.policy.manifest import validate_args
from core.policy.own_files import known_secrets
from core.recall import search
from core.recall.brief import MemoryBrief
from core.recall.briefing import build_group_brief, refresh_decay
from core.recall.related import related as related_entries
from core.recall.search import SearchPage
from core.semantic import hybrid
from core.semantic.backfill import EmbeddingWorker, Progress, pending_note
from core.semantic.hybrid import Mode, parse_mode
from core.storage import audit
from core.storage.audit import Action
from core.storage.crypto import KeyMissing
from core.storage.paths import DataDir
from core.storage.scrub import Index, scrub
from core.storage.store import GroupStore
from core.storage.workspace import (
    LOCKED_MASK,
    MISSING_KEY_MASK,
    Workspace,
    missing_key_message,
)

__all__ = ["Caller", "MemoryService"]

log = logging.getLogger(__name__)

#: Receipts listed (and re-verified) in the brief.
BRIEF_RECEIPTS = 5


class MemoryService(Workspace):
    """Typed memory operations over the group databases of one data directory.

    The workspace underneath holds the stores, settings, data key and listeners;
    this class adds the operations every front end calls, each with its checks
    and its audit row.

    Args:
        data_dir: where the group databases live.
        config: the person's settings (limits, rates).
    """

    def __init__(self, data_dir: DataDir, config: Config | None = None) -> None:
        super().__init__(data_dir, config)
        #: Embeds new rows after their write is acknowledged (see :meth:`start_embedding`).
        self.embedding: EmbeddingWorker | None = None
        self.layers: LayerWorker | None = None  # compression into layers, in the background
        #: Per group: the connection's data_version when last checked for rows lacking
        #: vectors, and whether some may (see :meth:`check_vectors`).
        self._vectors_checked: dict[str, tuple[int, bool]] = {}
        self.on_open(self._expire_and_decay)
        self.on_open(self._embed_on_open)

    def emit(self, changes: Changes) -> Changes:
        """Tell the listeners, and wake the embedding worker when rows may need vectors."""
        if self.embedding is not None and (changes.entries or changes.threads):
            # A write on this connection moves no data_version: check it again.
            self._vectors_checked.pop(changes.group, None)
            self.embedding.wake(self.data_dir.group_db(changes.group), changes.group)
        return super().emit(changes)

    def start_embedding(
        self, on_progress: Callable[[Progress], None] | None = None, *, delay: float = 0.0
    ) -> None:
        """Embed new and not yet embedded rows in a background thread (long-running apps).

        Without it (one-shot CLI commands, tests) rows are embedded by ``ambry reindex``.
        ``delay`` seconds pass before the first batch or layers pass (the app lets its
        window draw first).
        """
        if self.embedding is None:
            self.embedding = EmbeddingWorker(
                self.config.embedding_model_dir, on_progress, start_delay=delay
            )
            self.layers = self.layers or LayerWorker(start_delay=delay)
            for group in self.open_groups():
                self.embedding.wake(self.data_dir.group_db(group), group)
                self.layers.wake(self.data_dir.group_db(group), group)

    def set_config(self, config: Config) -> None:
        """Apply ``config``. A new model folder is used at once: the old model's memory
        is freed and the worker re-embeds every open group (each was handed to it when
        opened) in the background; until then a row is found by keywords, as after a write."""
        was = self.config.embedding_model_dir
        super().set_config(config)
        if config.embedding_model_dir != was:
            log.info("embedding model changed to %r: re-embedding", config.embedding_model_dir)
            hybrid.release_model(was)
            if self.embedding is not None:
                self.embedding.use_model(config.embedding_model_dir)

    def check_vectors(self, group: str) -> bool:
        """Whether rows of ``group`` may lack vectors, waking the worker when they do.

        Every search calls it, so rows another process wrote (which woke no worker
        here) are embedded too. Unless another connection committed since the last
        call, it reads one pragma (a few microseconds); otherwise the group's
        fingerprint (0.07 ms at 10,000 rows, 0.3 ms at 100,000). Without a worker
        (a one-shot command), False: nothing would be on its way.
        """
        if self.embedding is None:
            return False
        store = self.store_for(group)
        version = store.data_version()
        seen = self._vectors_checked.get(group)
        if seen is not None and seen[0] == version:
            # Nothing committed since by another connection (the worker included):
            # the answer stands, and a worker already woken for it needs no second call.
            return seen[1]
        lacking = self.embedding.check(store.path, group, store.conn)
        self._vectors_checked[group] = (version, lacking)
        return lacking

    def settle_vectors(self, group: str) -> None:
        """Let the worker embed a few just-written rows (by anyone) before a search by meaning."""
        if self.embedding is not None and self.check_vectors(group):
            self.embedding.settle(group)

    def look_for_vectors(self, group: str, mode: Mode) -> None:
        """Before a search: wake the worker for rows lacking vectors, and in ``semantic``
        mode wait for a small backlog (:meth:`settle_vectors`)."""
        if mode is Mode.SEMANTIC:
            self.settle_vectors(group)
        else:
            self.check_vectors(group)

    def vectors_pending(self, group: str) -> int:
        """Rows of ``group`` not found by meaning yet, as the worker last counted them
        (0 when none may lack a vector, or the worker has not counted them yet)."""
        if self.embedding is None or not self.check_vectors(group):
            return 0
        return self.embedding.pending(group)

    def vectors_note(self, group: str, mode: Mode) -> dict[str, Any]:
        """What an agent's search result adds while rows wait for their vectors
        (``pending_vectors`` and a ``note``), or nothing; a keyword search needs none."""
        if mode is Mode.KEYWORD:
            return {}
        return pending_note(self.vectors_pending(group), mode)

    def close(self) -> None:
        if self.embedding is not None:
            self.embedding.close()
            self.embedding = None
        if self.layers is not None:
            self.layers.close()
        super().close()

    def _embed_on_open(self, store: GroupStore) -> None:
        if self.embedding is not None:
            self.embedding.wake(store.path, store.group)

    def _expire_and_decay(self, store: GroupStore) -> None:
        self._expire(store)
        if trash.purge_expired(store):
            self.emit(Changes(group=store.group, audit=True))
        self.refresh_decay(store.group)

    def _expire(self, store: GroupStore) -> None:
        """Turns past the TTL go, with the summaries that quote them, and leave the disk."""
        expired = expire_exchanges(store, self.config, utc_now(), with_turns=drop_lost)
        if expired:
            log.info("expired %d exchanges in group %s", expired, store.group)
            scrub(store, (Index.EXCHANGES, Index.LAYERS))
            self._turns_deleted(store)

    def _turns_deleted(self, store: GroupStore) -> None:
        """Deleting turns dropped summaries: a running pass redraws them from the rest."""
        self.redraw_summaries(store.group)

    def redraw_summaries(self, group: str) -> None:
        """Wake the layers pass for ``group``: a forget or a clear on another connection
        (the app's own runs on one of its own; ``ambry forget`` in another process)
        dropped summaries, and left the pass due. Without a pass running, nothing."""
        if self.layers is not None:
            self.layers.wake(self.data_dir.group_db(group), group)

    # -- forgetting ------------------------------------------------------------

    def forget(self, caller: Caller, plan: ForgetPlan) -> Changes:
        """``ambry forget``: the plan's memories, turns and handoffs, and every summary
        of those turns.

        Every front end forgets through here, so that nothing derived from a
        forgotten turn (a layer summary's hook, points, quotes or keywords) is left
        in a table, an index or the write-ahead log (docs/privacy.md), and no
        forgotten handoff version's number is given to another text.
        """
        changes = forgetting.forget(
            self, caller, plan, with_turns=drop_lost, drop_handoffs=forget_versions
        )
        self._turns_deleted(self.store_for(caller.group))
        return changes

    def clear(self, caller: Caller, scope: Scope) -> dict[str, int]:
        """``ambry clear``: a whole kind of memory, with the summaries of cleared turns."""
        counts = forgetting.clear(self, caller, scope, with_turns=drop_lost)
        self._turns_deleted(self.store_for(caller.group))
        return counts

    # -- sessions ------------------------------------------------------------

    def open_session(
        self, group: str, actor: Actor, client: str = "", *, agent_key: str = ""
    ) -> Caller:
        """Start a session; ``agent_key`` names the agent whose rate limits it shares."""
        if actor is Actor.AGENT:
            store = self.store_for(group)
            # A long-running app opens a store once; sessions are when time has moved on.
            self.refresh_decay(group)
            self._expire(store)
            if self.layers is not None:  # a pass when due, never waited for
                self.layers.wake(store.path, group)
        known = known_secrets(self.data_dir.root)
        client = screen_label(client[:1000], "client", known=known)
        # The key embeds the client's name as sent: it is stored, so it is screened too.
        agent_key = screen_label(agent_key, "client", known=known)
        return sessions.start_session(self, group, actor, client, agent_key=agent_key)

    def end_session(self, caller: Caller, *, graceful: bool = True) -> None:
        sessions.end_session(self, caller, graceful=graceful)

    # -- writes --------------------------------------------------------------

    def store(self, caller: Caller, args: dict[str, Any]) -> StoreOutcome:
        """``memory_store``: validate against the manifest, then :meth:`store_entries`."""
        return self.store_entries(caller, [self.parse_store_args(args)])[0]

    @staticmethod
    def parse_store_args(args: dict[str, Any]) -> StoreRequest:
        return parse_store_args(args)

    def store_entries(self, caller: Caller, requests: Sequence[StoreRequest]) -> list[StoreOutcome]:
        """Write entries in one transaction: all are stored, or none is.

        Each goes through the same checks as a single store (dedup, supersession
        rules, rate limits); the batch is durable when this returns. The person's
        store of a memory's own text in its place is a tag edit, which keeps all but
        the tags (core.memory.tagging).
        """
        store = self.store_for(caller.group)
        now = iso(utc_now())
        with writing(self, store, caller):
            outcomes: list[StoreOutcome] = []
            for r in requests:
                prepared = prepare(self, caller, r)
                outcomes.append(
                    tag_edit(self, store, caller, r, prepared, now)
                    or write_entry(self, store, caller, prepared, now)
                )
        if outcomes:
            merged = outcomes[0].changes
            for o in outcomes[1:]:
                merged = merged | o.changes
            self.emit(merged)
        return outcomes

    def delete(self, caller: Caller, entry_id: str) -> Deletion:
        """Delete one entry (the search index follows through triggers).

        The person's delete is final; an agent's moves the entry to the trash
        (:mod:`core.memory.trash`), from which the person can restore it. Either
        way its versions are relinked around it: deleting the current version
        makes the one before it current again (:mod:`core.storage.chains`).
        """
        entry_id = _entry_id(entry_id)
        store = self.store_for(caller.group)
        now = utc_now()
        with writing(self, store, caller):
            if store.get(entry_id) is None:
                raise NotFound(f"no entry {entry_id} in group {store.group}", field="id")
            check_rate(store, caller, "deletes", self.config)
            # An agent's delete can be undone by the person: it goes to the trash.
            to_trash = caller.actor is Actor.AGENT
            where: dict[str, Any] = {"to": "trash"} if to_trash else {}
            if to_trash:
                place = trash.move_to_trash(store, caller, entry_id, self.config, now)
            else:
                place = store.delete(entry_id, iso(now))
            again = place.current_again if place is not None else None
            audit.record(
                store,
                Action.DELETE,
                caller.actor,
                session_id=caller.session_id,
                entry_ids=[entry_id],
                count=1,
                current_again=again,
                **where,
            )
        scrub(store, (Index.ENTRIES,))
        ids = (entry_id, *((again,) if again else ()))
        changes = Changes(group=store.group, entries=True, review=True, audit=True, entry_ids=ids)
        return Deletion(self.emit(changes), entry_id, again)

    def delete_tool(self, caller: Caller, args: dict[str, Any]) -> Deletion:
        """``memory_delete`` with manifest validation."""
        args = validate_args("memory_delete", args)
        return self.delete(caller, args["id"])

    # -- reads ---------------------------------------------------------------

    def get(self, group: str, entry_id: str, *, reveal: bool = False) -> MemoryEntry:
        """One entry, readable: private content decrypted, secret content only if ``reveal``."""
        entry = self.store_for(group).get(_entry_id(entry_id))
        if entry is None:
            raise NotFound(f"no entry {entry_id} in group {group}", field="id")
        return self.readable(entry, reveal=reveal)

    def reveal(self, caller: Caller, entry_id: str) -> MemoryEntry:
        """Decrypt a secret entry on the person's explicit request; audited."""
        if caller.actor is Actor.AGENT:
            raise Forbidden("secret entries are revealed only to the person, in the app or CLI")
        entry = self.get(caller.group, entry_id, reveal=True)
        if entry.content in (LOCKED_MASK, MISSING_KEY_MASK):
            # Nothing was revealed: say why as an error, not as the entry's text.
            self.data_key(create=False)  # the keyring's own refusal, where it refused
            raise KeyMissing(missing_key_message(self.data_dir.root, [caller.group]))
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

    def history(self, group: str, entry_id: str) -> list[MemoryEntry]:
        self.get(group, entry_id)
        return [self.readable(e) for e in self.store_for(group).history(entry_id)]

    def search(self, caller: Caller, args: dict[str, Any]) -> list[SearchResult]:
        """``memory_search``: FTS5 ranked by bm25, or the most recent entries with no query."""
        return self.search_page(caller, args).results

    def search_page(self, caller: Caller, args: dict[str, Any]) -> SearchPage:
        """:meth:`search` from ``args["offset"]`` on, and where the next page starts."""
        args = validate_args("memory_search", args)
        refuse_blank_tags("memory_search", args.get("tags") or ())
        types = (EntryType(args["type"]),) if args.get("type") else ()
        flt = EntryFilter(
            types=types,
            tags=clean_tags(args.get("tags") or []),
            include_superseded=bool(args.get("include_superseded")),
            # Secret entries are decrypted only on the person's explicit request.
            privacy=(Privacy.PUBLIC, Privacy.PRIVATE),
        )
        mode = parse_mode(args.get("mode"))
        self.look_for_vectors(caller.group, mode)
        page = search.search_page(
            self,
            caller.group,
            args.get("query") or "",
            flt,
            int(args["limit"]),
            offset=int(args.get("offset") or 0),
            mode=mode,
        )
        store = self.store_for(caller.group)
        results = self._with_receipt_states(store, page.results)
        audit.record(
            store,
            Action.SEARCH,
            caller.actor,
            session_id=caller.session_id,
            count=len(results),
            read=True,
        )
        self.emit(Changes(group=store.group, audit=True))
        return SearchPage(results, page.next_offset, page.truncated)

    def claims_matching(self, group: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Claims matching ``query``, each labelled verified or unverified (search results)."""
        return claims_context.labelled_matches(self.store_for(group), query, limit)

    def extract_claims(self, caller: Caller, thread: str | None = None) -> Extraction:
        """Candidate claims from thread handoffs and day summaries; the person runs it.

        The summaries' points come from layers, each with its turn and span, so a
        claim cites the verbatim turn (docs/claims.md). Nothing read is changed.
        """
        store = self.store_for(caller.group)
        return extract(self, caller, thread, lambda: day_points(store, thread))

    def search_entries(
        self, group: str, query: str, flt: EntryFilter, limit: int = 20, mode: Mode = Mode.AUTO
    ) -> list[SearchResult]:
        """Search without auditing (the GUI's browsing uses this): bm25 and meaning, fused."""
        results = search.search_entries(self, group, query, flt, limit, mode=mode)
        return self._with_receipt_states(self.store_for(group), results)

    def related(self, caller: Caller, args: dict[str, Any]) -> list[SearchResult]:
        """``memory_related``: the entries nearest in meaning to one entry (not secret ones)."""
        args = validate_args("memory_related", args)
        entry = self.get(caller.group, args["id"])
        if entry.privacy is Privacy.SECRET:
            raise Forbidden("secret entries are not compared with others; pick another entry")
        flt = EntryFilter(privacy=(Privacy.PUBLIC, Privacy.PRIVATE))
        self.settle_vectors(caller.group)
        store = self.store_for(caller.group)
        ranked = related_entries(
            store,
            entry.id,
            entry.content,
            flt,
            limit=int(args["limit"]),
            model_dir=self.config.embedding_model_dir,
        )
        results = search.to_results(self, ranked or [])
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

    def list_ids(
        self, group: str, flt: EntryFilter, query: str = "", limit: int | None = None
    ) -> list[str]:
        """Ordered ids for the browser (most recent first, or best match first)."""
        return search.list_ids(self, group, flt, query, limit)

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
        sections = self.brief_sections(caller)
        result = self.build_brief(caller.group, extra_sections=sections)
        if not continuity.brief_delivered(self, caller, sections, result.sections_whole):
            # Another session took the note over while this brief was built.
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
        if caller.thread_id is not None and thread_by_id(store, caller.thread_id) is None:
            # The person deleted the session's thread: its brief is the thread-less one.
            caller = replace(caller, thread_id=None)
        sections = continuity.session_brief_sections(self, caller)
        claims = claims_brief_section(store, iso(utc_now()))
        if claims is not None:
            # Short and confirmed by the person: ahead of the long handoff text.
            sections.insert(0, claims)
        recent = receipts.list_receipts(store, caller.thread_id, BRIEF_RECEIPTS)
        if recent:
            # A handful of files: checking them now beats citing a stale state.
            attachments.verify_all(self, caller, ids=[r.id for r in recent])
            section = receipts.receipt_brief_section(store, caller.thread_id, BRIEF_RECEIPTS)
            if section is not None:
                sections.append(section)
        # Flash and Warm last: the brief cuts the first section that does not fit.
        budgets: dict[str, Any] = {"flash_budget": self.config.flash_token_budget}
        budgets["warm_budget"] = self.config.warm_token_budget
        budgets["hidden_turns"] = claim_source_turns(store)  # the claims gate decides those
        return sections + layer_brief_sections(store, caller.thread_id, utc_now(), **budgets)

    def build_brief(
        self,
        group: str,
        *,
        extra_sections: Sequence[tuple[str, str]] = (),
        list_left_out: bool = False,
    ) -> MemoryBrief:
        """The brief of ``group`` without auditing (previews, self-test).

        ``list_left_out`` fills ``left_out`` further, for a person's preview.
        """
        return build_group_brief(
            self.store_for(group),
            self.config,
            utc_now(),
            extra_sections=extra_sections,
            readable=self.readable,
            list_left_out=list_left_out,
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
        return curation.set_pinned(self, caller, entry_id, pinned)


def _entry_id(value: str) -> str:
    """An entry id as given, refused when blank (rather than "no entry  in group")."""
    if not value.strip():
        raise InvalidParams("id must not be empty: give an entry id (mem-...)", field="id")
    return value
