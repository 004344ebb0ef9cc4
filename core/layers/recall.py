"""``recall {text}``: keywords of the live conversation, matched in the older layers.

1. **Keywords.** The content words of ``text`` (core.layers.keywords) and the
   pieces of its unspaced text (Chinese, Japanese, Korean: pairs of characters,
   and emoji, as exchange and memory search take them,
   :func:`core.storage.fts.unspaced_grams`), rarest in the group first (idf over
   the day summaries), at most :data:`MAX_KEYWORDS`.
2. **Flash.** Turns of the last 48 hours holding any keyword (FTS5, bm25; a
   piece, in the turns' gram index, counts as exchange search counts it:
   :func:`core.semantic.hybrid.with_pieces`).
3. **Older layers.** Day summaries whose hook, points, quotes or index keywords
   hold any word (their own FTS5 index, bm25), or whose turns hold a piece (the
   turns' gram index: a summary's text keeps an unspaced run whole). A summary whose score is below
   :data:`MIN_RELATIVE` of the best one is left out, so a faint match in a nearer
   layer cannot bury a strong one further back.
4. **Order and budget.** Flash, then Warm, then Recent (weeks 1-4), then Archive;
   best first within each. Each summary comes with its best matching source turns
   (verbatim) and the detail its layer shows (core.layers.ages). Results are added
   while the estimated tokens (core.model.text.estimate_tokens) of the result as
   sent, as JSON, stay within ``budget``. A result too large for the room left
   keeps as many of its best turns as fit (a summary, none), or is left out, and
   the ones after it still get their turn: one long recent turn never empties
   the answer.

Words only, no embeddings: this is the cheap trigger that runs on every turn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Final

from core.layers.ages import FLASH_AGE, ORDER, POINTS, QUOTES, Layer, layer_of, parse_time
from core.layers.keywords import SHOWN_TERMS, as_written, idf, tokens
from core.model.entries import iso
from core.model.errors import InvalidParams
from core.model.text import estimate_tokens
from core.semantic.hybrid import with_pieces
from core.storage.fts import (
    grams_held,
    match_expression,
    unspaced_grams,
    without_unspaced,
)
from core.storage.store import GroupStore

MAX_KEYWORDS: Final = 12
MAX_TEXT_CHARS: Final = 4000
DEFAULT_BUDGET: Final = 1500
MAX_BUDGET: Final = 8000
#: Summaries scoring below this share of the best are not loaded.
MIN_RELATIVE: Final = 0.6
TURNS_PER_SUMMARY: Final = 3
TURN_CHARS: Final = 400
_CANDIDATES: Final = 40


@dataclass(frozen=True)
class RecallItem:
    layer: Layer
    summary: dict[str, Any] | None
    turns: tuple[dict[str, Any], ...]
    score: float

    def tokens(self) -> int:
        """Estimated tokens of the item as sent: all of its JSON, fields and all."""
        # The widest count a budget allows stands in for the item's own.
        return estimate_tokens(_json(self._fields(MAX_BUDGET)))

    def _fields(self, tokens: int) -> dict[str, Any]:
        return {
            "layer": self.layer.value,
            "summary": self.summary,
            "turns": list(self.turns),
            "score": round(self.score, 4),
            "tokens": tokens,
        }

    def to_dict(self) -> dict[str, Any]:
        return self._fields(self.tokens())

    def fitted(self, room: int) -> RecallItem | None:
        """This item with as many of its best turns as fit in ``room`` tokens, or None."""
        least = 0 if self.summary is not None else 1
        for kept in range(len(self.turns), least - 1, -1):
            item = self if kept == len(self.turns) else replace(self, turns=self.turns[:kept])
            if item.tokens() <= room:
                return item
        return None


def _json(value: object) -> str:
    # json.dumps's spaces after ":" and "," make this an upper bound of a compact reply.
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class RecallResult:
    keywords: tuple[str, ...]
    items: tuple[RecallItem, ...]
    budget: int
    truncated: bool
    tokens: int = field(default=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "keywords": list(self.keywords),
            "results": [i.to_dict() for i in self.items],
            "tokens": self.tokens,
            "budget": self.budget,
            "truncated": self.truncated,
        }

    def turn_ids(self) -> list[int]:
        return [int(t["id"]) for i in self.items for t in i.turns]


@dataclass(frozen=True)
class Keywords:
    """What ``recall`` looks for (:func:`live_keywords`): words for the FTS5 indexes
    and pieces of unspaced text for the turns' gram index."""

    #: Rarest first, words and pieces together, as the result shows them.
    ranked: tuple[str, ...]
    #: Those of them that are pieces of unspaced text.
    pieces: tuple[str, ...]
    #: ``ranked`` as the text wrote them ("Atlas", not the key "atla"), for the result.
    shown: tuple[str, ...] = ()

    @property
    def words(self) -> list[str]:
        return [t for t in self.ranked if t not in self.pieces]


def live_keywords(store: GroupStore, text: str) -> Keywords:
    """The content words and unspaced pieces of ``text``, rarest in the group's
    history first, at most :data:`MAX_KEYWORDS` of them together."""
    text = text[:MAX_TEXT_CHARS]
    # An unspaced run is one token to the word indexes: its pieces are looked for instead.
    words = list(dict.fromkeys(k for k, _ in tokens(without_unspaced(text))))
    pieces = unspaced_grams(text)
    terms = [*words, *pieces]
    if not terms:
        return Keywords((), ())
    total = int(store.execute("SELECT count(*) FROM layer_summaries WHERE level = 'day'").get)
    marks = ", ".join("?" * len(terms))
    df = dict(store.execute(f"SELECT term, docs FROM layer_vocab WHERE term IN ({marks})", terms))
    ranked = sorted(terms, key=lambda t: (-idf(int(df.get(t, 0)), total), terms.index(t)))
    kept = tuple(ranked[:MAX_KEYWORDS])
    written = as_written(without_unspaced(text))
    shown = tuple(dict.fromkeys(written.get(t, t) for t in kept))
    return Keywords(kept, tuple(p for p in pieces if p in kept), shown)


def _turn(row: Any) -> dict[str, Any]:
    text = row[4] if len(row[4]) <= TURN_CHARS else row[4][: TURN_CHARS - 1] + "…"
    return {
        "id": int(row[0]),
        "speaker": row[1],
        "name": row[2],
        "thread_id": row[3],
        "text": text,
        "at": row[5],
        "turn": row[6],
    }


_TURN_COLUMNS = "e.seq, e.speaker, e.name, e.thread_id, e.text, e.said_at, e.turn"


def _flash(store: GroupStore, asked: Keywords, since: str) -> RecallItem | None:
    where = "e.said_at >= ? AND e.speaker IN ('user', 'assistant')"
    turns = _best_turns(store, asked, where, (since,), 5)
    if not turns:
        return None
    return RecallItem(Layer.FLASH, None, tuple(_turn(r) for _, r in turns), turns[0][0])


def _source_turns(
    store: GroupStore, asked: Keywords, summary_id: str
) -> tuple[dict[str, Any], ...]:
    where = (
        "EXISTS (SELECT 1 FROM layer_sources s WHERE s.exchange_seq = e.seq AND s.summary_id = ?)"
    )
    return tuple(
        _turn(r) for _, r in _best_turns(store, asked, where, (summary_id,), TURNS_PER_SUMMARY)
    )


def _best_turns(
    store: GroupStore, asked: Keywords, where: str, params: tuple[Any, ...], limit: int
) -> list[tuple[float, Any]]:
    """The ``limit`` best turns ``e`` meeting ``where`` that hold a keyword, each with
    its score (higher is better) and row (:data:`_TURN_COLUMNS`): bm25 over the
    words, a piece held counted as exchange search counts it."""
    bm25: dict[int, float] = {}
    if asked.words:
        rows = store.execute(
            "SELECT e.seq, bm25(exchanges_fts) FROM exchanges_fts "
            "JOIN exchanges e ON e.seq = exchanges_fts.rowid "
            f"WHERE exchanges_fts MATCH ? AND {where} "
            f"ORDER BY bm25(exchanges_fts) LIMIT {int(limit)}",
            (match_expression(asked.words), *params),
        )
        bm25 = {int(r[0]): float(r[1]) for r in rows}
    held: dict[int, int] = {}
    if asked.pieces:
        turns, bound = grams_held(
            "exchange_grams",
            asked.pieces,
            f"EXISTS (SELECT 1 FROM exchanges e WHERE e.seq = exchange_grams.rowid AND {where})",
            params,
        )
        rows = store.execute(f"{turns} ORDER BY held DESC, seq DESC LIMIT {int(limit)}", bound)
        held = {int(r[0]): int(r[1]) for r in rows}
    # Stable: equal scores keep bm25's order.
    scores = with_pieces(bm25, held, len(asked.pieces))
    best = sorted(scores, key=scores.__getitem__)[:limit]
    found = _rows(store, _TURN_COLUMNS, "exchanges e", best)
    return [(-scores[seq], found[seq]) for seq in best if seq in found]


def _rows(store: GroupStore, columns: str, table: str, seqs: list[int]) -> dict[int, Any]:
    """``columns`` of the rows ``seqs`` (at most a few dozen) of ``table`` (``"exchanges
    e"``: with the alias the columns name), by seq."""
    if not seqs:
        return {}
    alias = table.split()[-1]
    rows = store.execute(
        f"SELECT {columns}, {alias}.seq FROM {table} "
        f"WHERE {alias}.seq IN ({', '.join('?' * len(seqs))})",
        seqs,
    )
    return {int(r[-1]): r for r in rows}


def _summaries(store: GroupStore, asked: Keywords, since: str) -> list[tuple[float, Any]]:
    """The best day summaries ended before ``since`` that hold a keyword, at most
    :data:`_CANDIDATES`, each with its score and row (:data:`SUMMARY_COLUMNS`): bm25
    of their text and keyword index for the words; the pieces their best turn holds
    (a summary's text keeps an unspaced run whole, so its turns are looked in)."""
    bm25: dict[int, float] = {}
    if asked.words:
        rows = store.execute(
            "SELECT s.seq, bm25(layer_fts) FROM layer_fts "
            "JOIN layer_summaries s ON s.seq = layer_fts.rowid "
            "WHERE layer_fts MATCH ? AND s.level = 'day' AND s.end_at < ? "
            f"ORDER BY bm25(layer_fts) LIMIT {_CANDIDATES}",
            (match_expression(asked.words), since),
        )
        bm25 = {int(r[0]): float(r[1]) for r in rows}
    held: dict[int, int] = {}
    if asked.pieces:
        turns, bound = grams_held(
            "exchange_grams",
            asked.pieces,
            "EXISTS (SELECT 1 FROM layer_sources x WHERE x.exchange_seq = exchange_grams.rowid)",
        )
        rows = store.execute(
            f"SELECT s.seq, max(t.held) AS most FROM ({turns}) AS t "
            "JOIN layer_sources x ON x.exchange_seq = t.seq "
            "JOIN layer_summaries s ON s.id = x.summary_id "
            "WHERE s.level = 'day' AND s.end_at < ? "
            f"GROUP BY s.seq ORDER BY most DESC, s.seq DESC LIMIT {_CANDIDATES}",
            (*bound, since),
        )
        held = {int(r[0]): int(r[1]) for r in rows}
    scores = with_pieces(bm25, held, len(asked.pieces))
    best = sorted(scores, key=scores.__getitem__)[:_CANDIDATES]
    found = _rows(store, SUMMARY_COLUMNS, "layer_summaries s", best)
    return [(-scores[seq], found[seq]) for seq in best if seq in found]


def summary_view(row: Any, layer: Layer) -> dict[str, Any]:
    """A summary as its layer shows it (``row``: id, level, period, thread_id, hook,
    points, quotes, keywords, start_at, end_at, turn_count)."""
    points = json.loads(row[5])[: POINTS[layer]]
    quotes = json.loads(row[6])[: QUOTES[layer]]
    return {
        "id": row[0],
        "level": row[1],
        "period": row[2],
        "thread_id": row[3],
        "hook": row[4],
        "points": points,
        "quotes": quotes,
        "keywords": json.loads(row[7])[:SHOWN_TERMS],
        "start_at": row[8],
        "end_at": row[9],
        "turn_count": row[10],
    }


SUMMARY_COLUMNS: Final = (
    "s.id, s.level, s.period, s.thread_id, s.hook, s.points, s.quotes, s.keywords, "
    "s.start_at, s.end_at, s.turn_count"
)


def recall(
    store: GroupStore, text: str, now: datetime, *, budget: int = DEFAULT_BUDGET
) -> RecallResult:
    """Load what the older layers hold about ``text`` (see the module notes)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidParams("text must be a non-empty string", field="text", rule="minLength")
    if not 50 <= budget <= MAX_BUDGET:
        raise InvalidParams.bounds("budget", budget, 50, MAX_BUDGET, unit=" tokens")
    asked = live_keywords(store, text)
    if not asked.ranked:
        return RecallResult((), (), budget, False)
    since = iso(now - FLASH_AGE)
    found: list[RecallItem] = []
    flash = _flash(store, asked, since)
    summaries = _summaries(store, asked, since)
    best = max([score for score, _ in summaries], default=0.0)
    for score, r in summaries:
        if best > 0 and score < MIN_RELATIVE * best:
            continue
        layer = layer_of(parse_time(r[9]), now)
        found.append(RecallItem(layer, summary_view(r, layer), (), score))
    found.sort(key=lambda i: (ORDER.index(i.layer.group), -i.score))
    if flash is not None:
        found.insert(0, flash)
    items: list[RecallItem] = []
    # The reply's own fields count too, so that the whole of it keeps to the budget.
    empty = RecallResult(asked.shown, (), MAX_BUDGET, False, MAX_BUDGET)
    used = estimate_tokens(_json(empty.to_dict()))
    truncated = False
    for item in found:
        if item.summary is not None:
            item = replace(item, turns=_source_turns(store, asked, item.summary["id"]))
        # A token more for the ", " that joins it to the results before it.
        fitted = item.fitted(budget - used - 1)
        if fitted is not item:
            truncated = True
        if fitted is not None:
            items.append(fitted)
            used += fitted.tokens() + 1
    return RecallResult(asked.shown, tuple(items), budget, truncated, used)
