"""The write path: what a store request is, the policy's verdict on it, and how
it is written (dedup, supersession, rate limits, audit).

:class:`~core.service.Workspace` runs these in one transaction per batch;
marker ingestion (:mod:`core.memory.ingest`) runs them per marker. Nothing here is
written outside a :func:`writing` transaction.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from core.memory.acceptance import Acceptance, activate, waiting_state
from core.memory.confidence import effective_confidence, initial_confidence, reinforce
from core.model.changes import Changes
from core.model.config import Config
from core.model.entries import (
    MAX_CONTENT_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    Actor,
    EntryType,
    MemoryEntry,
    Privacy,
    Provenance,
    Source,
    SourceType,
    Status,
    Trust,
    new_entry_id,
    parse_iso,
)
from core.model.errors import Conflict, InvalidParams, RateLimited, Refused
from core.policy import write_policy as policy
from core.policy.field_screening import ONLY_A_SECRET, only_secrets
from core.policy.manifest import validate_args
from core.policy.own_files import known_secrets
from core.policy.ratelimit import RateAction, charge
from core.policy.screening import audit_redacted, strip_controls
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace


@dataclass(frozen=True)
class StoreRequest:
    """One entry to write; :func:`prepare` fills in the policy's verdict.

    ``source`` is set by trusted internal callers; otherwise ``claimed_type`` and
    ``claimed_trust`` (what the caller said) are resolved by the policy.
    """

    entry_type: EntryType
    content: str
    tags: tuple[str, ...] = ()
    supersedes: str | None = None
    source: Source | None = None
    claimed_type: SourceType | None = None
    claimed_trust: Trust | None = None
    status: Status = Status.ACTIVE
    review_reason: str | None = None
    redacted: tuple[str, ...] = ()
    neutralized: tuple[str, ...] = ()
    privacy: Privacy = Privacy.PUBLIC


@dataclass(frozen=True)
class StoreOutcome:
    entry: MemoryEntry
    #: False when the content duplicated a current entry, which was returned instead.
    created: bool
    changes: Changes
    superseded: str | None = None
    #: Pattern names of the secrets the policy redacted from this write, one per finding.
    redacted: tuple[str, ...] = ()
    #: Of a write that duplicated a current entry: the tags it gave that the entry
    #: took, and those it did not take (:data:`TagsLeft` says why).
    tags_added: tuple[str, ...] = ()
    tags_not_added: tuple[str, ...] = ()
    tags_left_because: TagsLeft | None = None
    #: Of a new entry: the current entry that replaced an earlier entry of this same
    #: text (the text came back; the writer may mean to supersede that one).
    replaced_earlier_by: str | None = None
    #: Of a write that awaits review: the entry it was written to replace, which it
    #: replaces (or the version current then) once the person accepts it.
    supersedes_on_accept: str | None = None
    #: Of a write that would be stored active and duplicated a candidate: that
    #: candidate's accept, which this write made (core.memory.acceptance).
    accepted: Acceptance | None = None

    def to_dict(self) -> dict[str, Any]:
        note = {} if self.replaced_earlier_by is None else {"note": self.replaced_note()}
        said: dict[str, Any] = {"accepted_from_review": True} if self.accepted else {}
        return {
            "id": self.entry.id,
            "status": self.entry.status.value,
            "created": self.created,
            "superseded": self.superseded,
            "supersedes_on_accept": self.supersedes_on_accept,
            **said,
            "review_reason": self.entry.review_reason,
            # What was kept is not what was sent: say how much went and of which kind.
            "redacted": len(self.redacted),
            "redacted_kinds": dict(sorted(Counter(self.redacted).items())),
            "tags_added": list(self.tags_added),
            "tags_not_added": list(self.tags_not_added),
            "replaced_earlier_by": self.replaced_earlier_by,
            **note,
        }

    def replaced_note(self) -> str | None:
        """What to know of a new entry whose text an earlier one said, until replaced."""
        if self.replaced_earlier_by is None:
            return None
        return (
            f"this text was stored before and replaced by {self.replaced_earlier_by}, "
            "which is current: both are current now; if this is what holds now, store it "
            f"again with supersedes {self.replaced_earlier_by}"
        )

    def tags_note(self) -> str | None:
        """What became of the tags of a write that duplicated an entry, in words."""
        if self.created or not (self.tags_added or self.tags_not_added):
            return None
        said = []
        if self.tags_added:
            said.append(f"it took the {named_tags(self.tags_added)}")
        if self.tags_not_added:
            why = (self.tags_left_because or TagsLeft.FULL).value
            said.append(f"{named_tags(self.tags_not_added)} not added: {why}")
        return "; ".join(said)


class TagsLeft(StrEnum):
    """Why a duplicate write's tags were not added to the entry it duplicated."""

    FULL = f"a memory holds at most {MAX_TAGS} tags"
    REVIEW = "a write held for review does not change a current memory's tags"


def named_tags(tags: tuple[str, ...]) -> str:
    """``tag 'a'``, ``tags 'a', 'b'``: the tags named, for a sentence about them."""
    return f"tag{'s' if len(tags) > 1 else ''} {', '.join(repr(t) for t in tags)}"


def add_tags(
    store: GroupStore,
    caller: Caller,
    entry: MemoryEntry,
    tags: Iterable[str],
    now: str,
    **detail: Any,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Add to ``entry``, in place and audited (``detail`` in the row), those of ``tags``
    it lacks (case aside), as many as it has room for.

    Returns:
        The tags added, and those left out for want of room (:data:`MAX_TAGS`).
    """
    have = {t.casefold() for t in entry.tags}
    new = [t for t in clean_tags(tags) if t.casefold() not in have]
    room = max(0, MAX_TAGS - len(entry.tags))
    added, left = tuple(new[:room]), tuple(new[room:])
    if added:
        store.update_fields(
            entry.id,
            tags=json.dumps([*entry.tags, *added], ensure_ascii=False),
            updated_at=now,
        )
        audit.record(
            store,
            Action.UPDATE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[entry.id],
            count=len(added),
            field="tags",
            **detail,
        )
    return added, left


def parse_store_args(args: dict[str, Any]) -> StoreRequest:
    """A :class:`StoreRequest` from ``memory_store`` arguments, validated against the manifest."""
    args = validate_args("memory_store", args)
    refuse_blank_tags("memory_store", args.get("tags") or ())
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


def refuse_blank_tags(tool: str, tags: Iterable[str]) -> None:
    """Refuse a tag that is only white space (or control characters) in ``tool``'s
    arguments, as its schema refuses an empty one: the caller sent it, so it is told,
    rather than the tag being dropped without a word.

    Raises:
        InvalidParams: naming the tag by its index (``tags.1``), rule ``minLength``.
    """
    for i, tag in enumerate(tags):
        if not " ".join(strip_controls(tag).split()):
            raise InvalidParams(
                f"{tool}: tags.{i} must not be empty or only white space; leave it out",
                field=f"tags.{i}",
                rule="minLength",
            )


def clean_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Strip, collapse inner whitespace and drop empty or repeated (case-blind) tags."""
    seen: dict[str, str] = {}
    for tag in tags:
        t = " ".join(strip_controls(tag).split())
        if t and t.casefold() not in seen:
            seen[t.casefold()] = t
    return tuple(seen.values())


def check_limits(content: str, tags: Iterable[str]) -> None:
    """The entry limits, for every caller (the manifest checks them for agents too)."""
    if len(content) > MAX_CONTENT_CHARS:
        raise InvalidParams(
            f"content must be at most {MAX_CONTENT_CHARS} characters (it has {len(content)})",
            field="content",
            rule="maxLength",
        )
    tags = list(tags)
    if len(tags) > MAX_TAGS:
        raise InvalidParams(f"at most {MAX_TAGS} tags", field="tags", rule="maxItems")
    for i, tag in enumerate(tags):
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidParams(
                # Named by its place, never quoted: a refusal is logged, and a tag is
                # a memory's text as much as its content is.
                f"tag {i + 1} must be at most {MAX_TAG_CHARS} characters (it has {len(tag)})",
                field=f"tags.{i}",
                rule="maxLength",
            )


@contextlib.contextmanager
def writing(service: Workspace, store: GroupStore, caller: Caller) -> Iterator[None]:
    """A write transaction whose policy refusals are audited after the rollback."""
    try:
        with store.transaction():
            yield
    except (RateLimited, Refused) as exc:
        action = Action.RATE_LIMITED if isinstance(exc, RateLimited) else Action.REFUSED
        kept = ("limit", "window", "allowed", "reason")
        safe = {k: v for k, v in exc.data.items() if k in kept}
        with store.transaction():
            audit.record(store, action, caller.actor, session_id=caller.session_id, **safe)
        service.emit(Changes(group=store.group, audit=True))
        raise


def check_rate(store: GroupStore, caller: Caller, counter: str, config: Config) -> None:
    """Count one action against the calling agent's rolling windows, or refuse it."""
    charge(store, caller, RateAction(counter), config)


def prepare(service: Workspace, caller: Caller, request: StoreRequest) -> StoreRequest:
    """Normalise a request and run the write policy on it (see core.policy.write_policy)."""
    # Control characters (an escape sequence would reach the person's terminal through
    # `ambry show`) go, as for conversation turns; tabs and line breaks stay.
    content = strip_controls(request.content).strip()
    if not content:
        raise InvalidParams("content must not be empty", field="content", rule="minLength")
    check_limits(content, request.tags)
    source = request.source or policy.resolve_source(
        caller.actor, request.claimed_type, request.claimed_trust
    )
    verdict = policy.apply(
        caller.actor,
        content,
        clean_tags(request.tags),
        source,
        service.config,
        known=known_secrets(service.data_dir.root),
    )
    if only_secrets(verdict.content):
        raise Refused(
            "not stored: content is nothing but a secret, and nothing is left once it is "
            "removed; store a note of where it lives instead (such as 'the deploy key is in "
            "1Password')",
            reason=ONLY_A_SECRET,
            field="content",
        )
    return replace(
        request,
        content=verdict.content,
        tags=verdict.tags,
        source=verdict.source,
        status=verdict.status,
        review_reason=verdict.review_reason,
        redacted=verdict.redacted,
        neutralized=verdict.neutralized,
    )


def write_entry(
    service: Workspace,
    store: GroupStore,
    caller: Caller,
    request: StoreRequest,
    now: str,
    *,
    dedup: bool = True,
) -> StoreOutcome:
    entry_type, content, tags = request.entry_type, request.content, request.tags
    supersedes, source = request.supersedes, request.source
    assert source is not None, "requests are prepared before they are written"
    target: MemoryEntry | None = None
    if supersedes is not None:
        target = store.get(supersedes)
        if target is None:
            raise Conflict(
                f"cannot supersede {supersedes}: no such entry in group {store.group}",
                field="supersedes",
            )
        if target.superseded_by is not None:
            raise Conflict(
                f"cannot supersede {supersedes}: it was already superseded by "
                f"{target.superseded_by}; supersede that entry instead",
                field="supersedes",
                current=target.superseded_by,
            )
    changes = Changes(group=store.group, entries=True, audit=True)
    # An agent's sealed (private, secret) write is never matched against sealed
    # entries: "already stored" would confirm that the person keeps that text,
    # and reinforcing it would let a guess refresh it. No lookup, so no timing.
    if caller.actor is Actor.AGENT and request.privacy is not Privacy.PUBLIC:
        dedup = False
    keys = service.dedup_keys(request.privacy, content) if dedup else ()
    duplicate = store.find_duplicate(keys, entry_type) if keys else None
    if duplicate is not None and target is not None and duplicate.id == target.id:
        # Same text as the entry it replaces: an edit of tags (or nothing), which
        # still makes a new version so history is kept.
        duplicate = None
    if duplicate is not None:
        check_rate(store, caller, "stores", service.config)
        # Seeing the same memory again is evidence for it (seed 002 reinforcement).
        current = effective_confidence(duplicate, parse_iso(now), service.config)
        store.reinforce(duplicate.id, reinforce(current), now)
        # The tags given are the writer's, as when it is stored the first time; a
        # write held for review does not change a memory it did not get past review.
        why = TagsLeft.FULL
        added: tuple[str, ...] = ()
        if request.status is Status.CANDIDATE and duplicate.status is Status.ACTIVE:
            have = {t.casefold() for t in duplicate.tags}
            left = tuple(t for t in tags if t.casefold() not in have)
            why = TagsLeft.REVIEW
        else:
            added, left = add_tags(store, caller, duplicate, tags, now, reason="stored again")
        superseded = None
        accepted = None
        if duplicate.status is Status.CANDIDATE and request.status is Status.ACTIVE:
            # This write would be stored active on its own: the copy awaiting review
            # gains nothing by waiting, so the write accepts it, as the person would.
            accepted = activate(store, caller, duplicate, now, stored_again=True)
            if accepted.superseded:
                check_rate(store, caller, "supersedes", service.config)
                superseded = accepted.superseded
        if (
            target is not None
            and target.id != duplicate.id
            and request.status is not Status.CANDIDATE
            and target.id != superseded
        ):
            check_rate(store, caller, "supersedes", service.config)
            store.mark_superseded(target.id, duplicate.id, now)
            superseded = target.id
        audit.record(
            store,
            Action.DEDUP,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[duplicate.id, *([superseded] if superseded else [])],
            size=len(content),
        )
        entry = store.get(duplicate.id)
        assert entry is not None
        pending = waiting_state(store, entry.id)[1] if entry.status is Status.CANDIDATE else None
        ids = (entry.id, *((superseded,) if superseded else ()))
        return StoreOutcome(
            entry,
            False,
            replace(changes, entry_ids=ids, review=accepted is not None),
            superseded,
            request.redacted,
            tags_added=added,
            tags_not_added=left,
            tags_left_because=why if left else None,
            supersedes_on_accept=pending,
            accepted=accepted,
        )

    check_rate(store, caller, "stores", service.config)
    if target is not None:
        check_rate(store, caller, "supersedes", service.config)
    # The text came back after it was replaced: the write stands (it may be meant),
    # and the result names what replaced it, so the writer can supersede that.
    earlier = keys
    if keys and caller.actor is not Actor.AGENT and request.privacy is Privacy.PUBLIC:
        # The person is told of a text replaced by a sealed version, which sealed it too.
        earlier = (*keys, *service.sealed_keys(content))
    replaced_by = store.replaced_earlier(earlier, entry_type) if earlier else None
    if replaced_by is not None and target is not None and replaced_by == target.id:
        replaced_by = None  # put back on purpose: it supersedes what replaced it
    if replaced_by is not None and caller.actor is Actor.AGENT:
        head = store.get(replaced_by)
        if head is None or head.privacy is Privacy.SECRET:
            replaced_by = None  # an agent is never told of a secret entry
    candidate = request.status is Status.CANDIDATE
    entry = MemoryEntry(
        id=new_entry_id(),
        type=entry_type,
        content=content,
        tags=tags,
        status=request.status,
        review_reason=request.review_reason,
        superseded_by=None,
        superseded_at=None,
        confidence=initial_confidence(source.trust),
        effective_confidence=initial_confidence(source.trust),
        # The person's new version of a memory they pinned stays pinned (pins are theirs).
        pinned=target is not None and target.pinned and caller.actor is not Actor.AGENT,
        privacy=request.privacy,
        source=source,
        provenance=Provenance(caller.session_id, store.group, now, now),
        last_seen_at=now,
    )
    store.insert(service.row_for(entry))
    audit.record(
        store,
        Action.STORE,
        caller.actor,
        session_id=caller.session_id,
        entry_ids=[entry.id],
        size=len(content),
        type=entry_type.value,
        trust=source.trust.value,
        status=request.status.value,
        reason=request.review_reason,
    )
    audit_redacted(store, caller, request.redacted, entry_ids=[entry.id])
    if request.neutralized:
        audit.record(
            store,
            Action.NEUTRALIZED,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[entry.id],
            count=len(request.neutralized),
            markers=sorted(set(request.neutralized)),
        )
    superseded = None
    if target is not None and candidate:
        # A write awaiting review must not hide a current memory yet.
        store.execute(
            "UPDATE memory_entries SET pending_supersedes = ? WHERE id = ?",
            (target.id, entry.id),
        )
    elif target is not None:
        store.mark_superseded(target.id, entry.id, now)
        superseded = target.id
        audit.record(
            store,
            Action.SUPERSEDE,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[target.id, entry.id],
        )
    ids = (entry.id, *((superseded,) if superseded else ()))
    changes = replace(changes, entry_ids=ids, review=candidate)
    return StoreOutcome(
        entry,
        True,
        changes,
        superseded,
        request.redacted,
        replaced_earlier_by=replaced_by,
        supersedes_on_accept=target.id if target is not None and candidate else None,
    )
