"""Matches by meaning, merged into the browser's word matches once they are ready.

Search as you type lists the memories that share the typed words at once (bm25,
no model). When that list is complete and the typing has paused for
:data:`PAUSE_MS`, the same search runs again in the background, ranked by words
and meaning fused (:func:`core.recall.search.search_entries`), and its best
:data:`MEANING_RESULTS` are merged in:

- a memory found only by meaning joins the list, marked "by meaning" in its row;
- while the person has not touched the list (nothing selected, scrolled to the
  top), the fused ranking's best come first and the other word matches follow,
  whether or not meaning found new ones (the word order is bm25's alone);
- once they have, only the new rows are added, at the end, so nothing moves
  under the pointer.

A list sorted by a column holds the word matches only. Without the embedding
model there is nothing to merge, and the list stays as it is.

A few seconds after a group is first listed, its vectors are loaded on the
query thread (:data:`WARM_DELAY_MS`), a step at a time, so that neither the
first ranking by meaning nor the first "Also related" list has to load them
(0.3 s at 100,000 memories) while a search typed meanwhile waits.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal

from core.semantic import hybrid, vectors
from core.semantic.embedding import shared_embedder
from core.service import MemoryService
from desktop.memories.state import BrowserQuery
from desktop.widgets.ops import Executor

log = logging.getLogger(__name__)

#: How many of the fused ranking's best are merged into the list.
MEANING_RESULTS = 20
#: Shorter searches are a word being typed, not a meaning to look for.
MIN_CHARS = 3
#: How long the typing must pause before the search is ranked by meaning (the
#: word list does not wait for this).
PAUSE_MS = 400
#: How long after a group is first listed its vectors are loaded, and how many
#: at a time (about 50 ms each: a search typed meanwhile waits at most that long).
WARM_DELAY_MS = 3000
WARM_STEP = 16_384


@dataclass(frozen=True)
class Ranked:
    """The fused ranking of one search: its best ids, and those no word matched."""

    group: str
    query: BrowserQuery
    ids: tuple[str, ...]
    by_meaning: frozenset[str]


def wants_meaning(query: BrowserQuery) -> bool:
    """Whether ``query`` is a search the list can rank by meaning."""
    return len(query.text.strip()) >= MIN_CHARS and query.sort is None


def fused(group: str, query: BrowserQuery, service: MemoryService) -> Ranked | None:
    """The fused ranking of ``query``'s text within its filters (None: no model)."""
    if shared_embedder(service.config.embedding_model_dir) is None:
        return None
    found = service.search_entries(group, query.text, query.entry_filter(), MEANING_RESULTS)
    # A guess that only fills a short list (neither words nor meaning found it)
    # is for an agent; the list shows what matched.
    results = [r for r in found if hybrid.matched(r.signals)]
    by_meaning = frozenset(r.id for r in results if hybrid.Signal.KEYWORD.value not in r.signals)
    return Ranked(group, query, tuple(r.id for r in results), by_meaning)


def warm(group: str, service: MemoryService) -> tuple[int, bool]:
    """Load the model and up to :data:`WARM_STEP` more of ``group``'s memory vectors;
    returns how many are loaded, and whether more are to come (0, False: no model)."""
    embedder = shared_embedder(service.config.embedding_model_dir)
    if embedder is None:
        return 0, False
    store = service.store_for(group)
    index = hybrid.vector_index(store, vectors.MEMORIES, embedder, at_most=WARM_STEP)
    return len(index), index.loading


def merged(words: Sequence[str], ranked: Ranked, *, in_place: bool) -> list[str]:
    """The word matches ``words`` with ``ranked`` merged in: the fused best first, or
    (``in_place``) the word matches where they were and the new ones after them."""
    if in_place:
        known = set(words)
        return [*words, *(i for i in ranked.ids if i in ranked.by_meaning and i not in known)]
    best = set(ranked.ids)
    return [*ranked.ids, *(i for i in words if i not in best)]


class MeaningMerge(QObject):
    """Runs the fused ranking after each complete word list and says what to show.

    Args:
        executor: the background thread the ranking runs on.
        touched: whether the person has selected or scrolled in the list.
        parent: the owning QObject.

    Signals:
        ready(object): the ids to show now (``list[str]``), for the current query.
        pending_changed(bool): a ranking by meaning is running for an empty list.
    """

    ready = Signal(object)
    pending_changed = Signal(bool)

    def __init__(
        self, executor: Executor, touched: Callable[[], bool], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._executor = executor
        self._touched = touched
        self._current: tuple[str, BrowserQuery] | None = None
        self._words: list[str] = []
        self.ranked: Ranked | None = None
        self._timer = QTimer(self, singleShot=True, interval=PAUSE_MS)
        self._timer.timeout.connect(self._rank)
        self._warmed: set[str] = set()

    @property
    def by_meaning(self) -> frozenset[str]:
        return self.ranked.by_meaning if self.ranked is not None else frozenset()

    def listed(self, group: str, query: BrowserQuery, words: list[str]) -> list[str]:
        """A complete word list for ``query`` arrived: the ids to show now (the
        last ranking's merged in when it was for the same search), and the
        ranking is asked for again."""
        if self._current != (group, query):
            self.ranked = None
        self._current = (group, query)
        if group not in self._warmed:
            self._warmed.add(group)
            QTimer.singleShot(WARM_DELAY_MS, self, lambda: self._warm(group))
        self._words = list(words)
        if not wants_meaning(query):
            self.ranked = None
            self.hold()
            self.pending_changed.emit(False)
            return self._words
        self.pending_changed.emit(not words and self.ranked is None)
        self._timer.start()
        return self.shown()

    def hold(self) -> None:
        """The person is typing: no ranking until the next word list."""
        self._timer.stop()

    def _rank(self) -> None:
        if self._current is None or self._executor.closed:
            return
        group, query = self._current
        self._executor.submit(
            group,
            lambda service: fused(group, query, service),
            self._ranked,
            self._failed,
            lambda: self.pending_changed.emit(False),
        )

    def shown(self) -> list[str]:
        """The word list with the current ranking merged in."""
        if self.ranked is None:
            return self._words
        return merged(self._words, self.ranked, in_place=self._touched())

    def _warm(self, group: str) -> None:
        if self._executor.closed:
            return  # the app is closing

        def loaded(done: tuple[int, bool]) -> None:
            count, more = done
            if more:
                self._warm(group)  # the next step, after whatever was asked meanwhile
            else:
                log.debug("loaded %d memory vectors of %s for search by meaning", count, group)

        def later() -> None:  # cut short for a search typed meanwhile: go on after a pause
            QTimer.singleShot(WARM_DELAY_MS, self, lambda: self._warm(group))

        self._executor.submit(
            group, lambda service: warm(group, service), loaded, self._failed, later
        )

    def _failed(self, exc: BaseException) -> None:
        # The word matches are listed already; a ranking that fails only adds nothing.
        log.warning("search by meaning failed: %s", exc)
        self.pending_changed.emit(False)

    def _ranked(self, ranked: Ranked | None) -> None:
        self.pending_changed.emit(False)
        if ranked is None or self._current != (ranked.group, ranked.query):
            return  # no model, or the person searched for something else meanwhile
        self.ranked = ranked
        self.ready.emit(self.shown())
