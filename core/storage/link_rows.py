"""Links (``layer_links``) leave with the entry or summary they join.

A link names an entry (``mem-``) or a summary (``sum-``) at either end, so no
foreign key can follow one out. Whatever deletes either calls
:func:`drop_links` in the same write transaction: :meth:`GroupStore.delete
<core.storage.store.GroupStore.delete>` for an entry (every delete of one goes
through it), the compression pass (core.layers.compression) for a summary. An
entry in the trash keeps its links, since it comes back with its id when the
person restores it; emptying the trash drops them. :func:`sweep` removes the
links an earlier Ambry left behind (it never deleted one), and each compression
pass runs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Protocol


class GroupStore(Protocol):
    """What this module needs of :class:`core.storage.store.GroupStore`."""

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any: ...


#: Ids a link may still name: entries, trashed entries, summaries.
_LIVE = (
    "SELECT id FROM memory_entries UNION ALL SELECT id FROM trash "
    "UNION ALL SELECT id FROM layer_summaries"
)
_DEAD = f"src NOT IN ({_LIVE}) OR dst NOT IN ({_LIVE})"


def drop_links(store: GroupStore, ids: Iterable[str]) -> int:
    """Delete every link from or to one of ``ids``; returns how many.

    Call it in the transaction that deletes them.
    """
    wanted = json.dumps(sorted(set(ids)))
    if wanted == "[]":
        return 0
    # Two statements, so each uses its index (the key on src, idx_layer_links_dst).
    gone = 0
    for column in ("src", "dst"):
        gone += len(
            store.execute(
                f"DELETE FROM layer_links WHERE {column} IN (SELECT value FROM json_each(?)) "
                "RETURNING 1",
                (wanted,),
            ).fetchall()
        )
    return gone


def has_dead_links(store: GroupStore) -> bool:
    """Whether a link names an entry or summary that no longer exists (a read)."""
    return store.execute(f"SELECT 1 FROM layer_links WHERE {_DEAD} LIMIT 1").fetchone() is not None


def sweep(store: GroupStore) -> int:
    """Delete the links that name an entry or summary that no longer exists; returns
    how many. Call it in a write transaction."""
    return len(store.execute(f"DELETE FROM layer_links WHERE {_DEAD} RETURNING 1").fetchall())
