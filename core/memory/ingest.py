"""Memory markers in agent output (seed 002): parse, then store or reinforce.

Each ``[MEMORY:category(:service)] observation`` line becomes a ``context``
entry tagged ``marker``, ``category:<c>`` and ``service:<s>``, written through
the same policy as any other store. An observation that matches a current
entry of the same category and service (same normalised text, or word-set
Jaccard ≥ 0.6) reinforces that entry instead; a genuinely different
observation for the same pair is a new entry, so no knowledge is overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core.memory.confidence import effective_confidence, reinforce
from core.memory.markers import (
    Marker,
    Problem,
    count_malformed,
    marker_tags,
    parse_markers,
    same_observation,
)
from core.memory.writing import check_rate, parse_store_args, prepare, write_entry, writing
from core.model.changes import Changes
from core.model.entries import (
    EntryFilter,
    EntryType,
    MemoryEntry,
    Source,
    SourceType,
    Status,
    Trust,
    iso,
    utc_now,
)
from core.model.errors import InvalidParams, Refused
from core.storage import audit

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

MAX_INGEST_CHARS = 100_000
#: How many malformed lines a result lists (all are counted).
MAX_PROBLEMS = 50
#: How many recent entries of one category and service are compared against.
MATCH_WINDOW = 500


@dataclass(frozen=True)
class IngestResult:
    markers: int
    stored: tuple[str, ...]
    reinforced: tuple[str, ...]
    #: The malformed and the refused lines, each with what to change.
    problems: tuple[Problem, ...] = ()
    changes: Changes | None = None

    @property
    def malformed(self) -> int:
        return count_malformed(self.problems)

    @property
    def refused(self) -> int:
        return len(self.problems) - self.malformed

    def to_dict(self) -> dict[str, Any]:
        return {
            "markers": self.markers,
            "stored": list(self.stored),
            "reinforced": list(self.reinforced),
            "malformed": self.malformed,
            "refused": self.refused,
            "problems": [
                {"line": p.line, "reason": p.reason} for p in self.problems[:MAX_PROBLEMS]
            ],
        }


def _same_pair(entry: MemoryEntry, marker: Marker) -> bool:
    services = {t for t in entry.tags if t.casefold().startswith("service:")}
    wanted = {f"service:{marker.service}".casefold()} if marker.service else set()
    return {s.casefold() for s in services} == wanted


def _existing(store: GroupStore, marker: Marker, content: str) -> MemoryEntry | None:
    tags = tuple(t for t in marker_tags(marker) if t != "marker")
    flt = EntryFilter(
        types=(EntryType.CONTEXT,), tags=tags, statuses=(Status.ACTIVE, Status.CANDIDATE)
    )
    for entry in store.recent(flt, MATCH_WINDOW):
        if _same_pair(entry, marker) and same_observation(entry.content, content):
            return entry
    return None


def ingest_text(service: Workspace, caller: Caller, text: str) -> IngestResult:
    """Parse markers in ``text`` and store or reinforce each, in one transaction.

    A marker the policy refuses (for example a credential statement) is skipped
    and counted; a rate limit aborts the whole call so nothing is half-stored.
    """
    parsed = parse_markers(text[:MAX_INGEST_CHARS])
    store = service.store_for(caller.group)
    source = Source(SourceType.AI_INFERENCE, Trust.MEDIUM)
    now_dt = utc_now()
    now = iso(now_dt)
    stored: list[str] = []
    reinforced: list[str] = []
    problems = list(parsed.problems)
    changes = Changes(group=store.group, entries=True, audit=True)
    with writing(service, store, caller):
        for marker in parsed.markers:
            try:
                request = parse_store_args(
                    {"type": "context", "content": marker.observation, "tags": marker_tags(marker)}
                )
            except InvalidParams as exc:  # for example a service name too long for a tag
                problems.append(Problem(marker.line, str(exc)))
                continue
            try:
                prepared = prepare(service, caller, replace(request, source=source))
            except Refused as exc:
                problems.append(Problem(marker.line, f"refused: {exc.message}", refused=True))
                continue
            match = _existing(store, marker, prepared.content)
            if match is not None:
                check_rate(store, caller, "stores", service.config)
                current = effective_confidence(match, now_dt, service.config)
                store.reinforce(match.id, reinforce(current), now)
                reinforced.append(match.id)
                continue
            # Matching above is aware of category and service; plain content dedup is not.
            outcome = write_entry(service, store, caller, prepared, now, dedup=False)
            (stored if outcome.created else reinforced).append(outcome.entry.id)
            changes = changes | outcome.changes
        malformed = count_malformed(problems)
        audit.record(
            store,
            audit.Action.INGEST,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=[*stored, *reinforced],
            count=len(parsed.markers),
            malformed=malformed,
            refused=len(problems) - malformed,
            reinforced=len(reinforced),
        )
    ids = tuple(dict.fromkeys([*stored, *reinforced]))
    changes = service.emit(replace(changes, entry_ids=ids))
    return IngestResult(
        markers=len(parsed.markers),
        stored=tuple(stored),
        reinforced=tuple(dict.fromkeys(reinforced)),
        problems=tuple(sorted(problems, key=lambda p: p.line)),
        changes=changes,
    )
