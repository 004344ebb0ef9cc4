"""Threads, handoff versions and exchanges as rows, and how each reads in a cell."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.attachments.receipts import clip
from core.continuity.episodes import Exchange, ExchangeHit, thread_exchanges
from core.continuity.handoffs import ThreadHandoff, handoff_history
from core.continuity.threads import Thread, list_threads
from core.model.text import single_line
from core.service import MemoryService
from desktop.memories.values import local_time
from desktop.widgets.record_model import Column, Fetch, RecordModel

#: Characters of an exchange shown in its tooltip.
_TIP_CHARS = 1500


def author_text(author: str | None) -> str:
    """Who wrote a handoff version, as the person reads it."""
    match author:
        case "agent":
            return "an agent"
        case "operator":
            return "you"
        case "system":
            return "Ambry"
        case _:
            return "unknown"


def version_text(version: int | None) -> str:
    return "—" if version is None else f"v{version}"


THREAD_COLUMNS: tuple[Column[Thread], ...] = (
    Column("Title", lambda t: t.title, lambda t: f"{t.title}\n{t.id}", width=0),
    Column("Updated", lambda t: local_time(t.updated_at), width=18),
    Column("Handoff", lambda t: version_text(t.handoff_version), numeric=True, width=9),
    Column("Exchanges", lambda t: f"{t.exchange_count:,}", numeric=True, width=11),
)

VERSION_COLUMNS: tuple[Column[ThreadHandoff], ...] = (
    Column("Version", lambda h: version_text(h.version), width=8),
    Column("Written", lambda h: local_time(h.created_at), width=18),
    Column("By", lambda h: author_text(h.author), lambda h: h.session_id, width=10),
    Column("Compactions", lambda h: str(h.compaction_count), width=12),
    # Left-aligned: the last column stretches; a number at its far edge would look detached.
    Column("Size", lambda h: f"{len(h.markdown):,} chars", width=0),
)


def said_time(e: Exchange) -> str:
    """When a turn was said (imported history keeps its own dates), else when it was logged."""
    return local_time(e.said_at or e.created_at)


def speaker_text(e: Exchange) -> str:
    """The speaker's name where the turn has one, else its role."""
    return e.name or e.speaker.value


EXCHANGE_COLUMNS: tuple[Column[Exchange], ...] = (
    Column("Time", said_time, width=18),
    Column("Speaker", speaker_text, lambda e: e.speaker.value, width=10),
    Column(
        "Text",
        lambda e: clip(single_line(e.text), 300),
        lambda e: clip(e.text, _TIP_CHARS),
        width=0,
    ),
    Column("Turn", lambda e: e.turn or "", width=8),
)


HIT_COLUMNS: tuple[Column[ExchangeHit], ...] = (
    Column("Score", lambda h: f"{h.relevance_score:.2f}", numeric=True, width=6),
    Column("Time", lambda h: said_time(h.exchange), width=18),
    Column("Speaker", lambda h: speaker_text(h.exchange), lambda h: h.exchange.speaker.value),
    Column(
        "Text",
        lambda h: clip(single_line(h.exchange.text), 300),
        lambda h: clip(h.exchange.text, _TIP_CHARS),
        width=0,
    ),
    Column(
        "Thread",
        lambda h: h.exchange.thread_title or "—",
        lambda h: h.exchange.thread_id,
        width=12,
    ),
    # The reasons in full are in the tooltip: the text gets the room.
    Column("Found by", lambda h: ", ".join(h.signals), lambda h: ", ".join(h.signals), width=16),
)


def threads_model(parent: Any = None) -> RecordModel[Thread]:
    return RecordModel(THREAD_COLUMNS, lambda t: t.id, page=200, parent=parent)


def versions_model(parent: Any = None) -> RecordModel[ThreadHandoff]:
    # At most core.continuity.handoffs.MAX_HANDOFF_VERSIONS rows: one page holds them all.
    return RecordModel(VERSION_COLUMNS, lambda h: h.version, page=1000, parent=parent)


def exchanges_model(parent: Any = None) -> RecordModel[Exchange]:
    return RecordModel(EXCHANGE_COLUMNS, lambda e: e.id, page=200, parent=parent)


def hits_model(parent: Any = None) -> RecordModel[ExchangeHit]:
    return RecordModel(HIT_COLUMNS, lambda h: h.exchange.id, page=1000, parent=parent)


def fetch_threads(service: MemoryService, group: str) -> Fetch[Thread]:
    """Threads, most recently active first; list_threads pages by a growing limit."""

    def fetch(loaded: Sequence[Thread], limit: int) -> list[Thread]:
        return list_threads(service, group, len(loaded) + limit)[len(loaded) :]

    return fetch


def fetch_versions(service: MemoryService, group: str, thread_id: str) -> Fetch[ThreadHandoff]:
    def fetch(loaded: Sequence[ThreadHandoff], _limit: int) -> list[ThreadHandoff]:
        return [] if loaded else handoff_history(service, group, thread_id)

    return fetch


def fetch_exchanges(service: MemoryService, group: str, thread_id: str | None) -> Fetch[Exchange]:
    """A thread's turns (None: those filed under no thread), newest said first, each
    page said before the last turn shown."""

    def fetch(loaded: Sequence[Exchange], limit: int) -> list[Exchange]:
        before = loaded[-1] if loaded else None
        return thread_exchanges(service, group, thread_id, limit=limit, before=before)

    return fetch
