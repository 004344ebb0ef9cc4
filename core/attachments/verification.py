"""Verifying receipts: hash each source again and record what is there now.

Verification records whether the source is still the file that was seen. It
never rewrites the recorded hash: a changed or missing source shows up as a
verification gap, never as current.

File work (stat, open, hash) touches no database, so a GUI can run
:func:`check_sources` on a worker thread between :func:`pending_checks` and
:func:`record_checks`, which run on the thread that owns the store.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from core.attachments.filetypes import NotRegular, OverLimit, digest
from core.attachments.receipts import SourceState
from core.model.changes import Changes
from core.model.entries import iso, utc_now
from core.model.errors import NotFound
from core.storage import audit
from core.storage.audit import Action

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.store import GroupStore
    from core.storage.workspace import Workspace

# -- checking a source again --------------------------------------------------------


@dataclass(frozen=True)
class SourceCheck:
    """What verifying one receipt needs; plain values, so any thread can use it."""

    receipt_id: str
    path: str
    sha256: str
    size: int
    state: SourceState
    #: The receipt's newest link when the check was planned (see :func:`record_checks`).
    basis: int = 0


@dataclass(frozen=True)
class Verification:
    """The outcome of hashing one source again."""

    receipt_id: str
    state: SourceState
    previous: SourceState
    checked_at: str
    #: Why a source is unreadable, in a few words ("permission denied").
    reason: str | None = None
    basis: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.receipt_id,
            "state": self.state.value,
            "previous_state": self.previous.value,
            "checked_at": self.checked_at,
            "reason": self.reason,
        }


def check_source(check: SourceCheck) -> Verification:
    """Hash the source of one receipt again and say what is there now.

    Reads at most the recorded size plus one chunk, so a source that grew huge
    costs no more than one that did not.
    """
    reason: str | None = None
    try:
        found = digest(check.path, check.size, 0)
    except (FileNotFoundError, NotADirectoryError):
        state = SourceState.MISSING
    except OSError as exc:  # permission, I/O error, symlink loop
        state = SourceState.UNREADABLE
        reason = (exc.strerror or type(exc).__name__).lower()
    except NotRegular as exc:
        state, reason = SourceState.UNREADABLE, f"now {exc.what}"
    except OverLimit:
        state = SourceState.CHANGED
    else:
        same = found.size == check.size and found.sha256 == check.sha256
        state = SourceState.VERIFIED if same else SourceState.CHANGED
    return Verification(check.receipt_id, state, check.state, iso(utc_now()), reason, check.basis)


#: A file modified this recently may change again within its timestamp's tick
#: (a clock tick, or two seconds on FAT), so its stat cannot vouch for its bytes yet.
_RACY_NS: Final = 3_000_000_000
#: Files hashed and found as recorded: ``(path, sha256, size)`` -> their stat then.
_as_recorded: dict[tuple[str, str, int], tuple[int, ...]] = {}
_AS_RECORDED_MAX: Final = 4096


def _signature(st: os.stat_result) -> tuple[int, ...]:
    # ctime moves on any write or utime, so a restored mtime does not hide an edit.
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def quick_check(check: SourceCheck) -> SourceState:
    """What is at the source now, hashing it again only when its stat moved.

    For checks made on every call (the brief's claims): a file of another size
    is changed without reading it; a file whose device, inode, size, mtime and
    ctime are those it had when this process last found it as recorded is
    still as recorded; any other is hashed (:func:`check_source`).
    """
    key = (check.path, check.sha256, check.size)
    try:
        st = os.stat(check.path)
    except OSError:
        st = None
    if st is not None and stat.S_ISREG(st.st_mode):
        if st.st_size != check.size:
            return SourceState.CHANGED
        if _as_recorded.get(key) == _signature(st):
            return SourceState.VERIFIED
    state = check_source(check).state
    if st is not None and state is SourceState.VERIFIED:
        settled = time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS
        if settled:
            if len(_as_recorded) >= _AS_RECORDED_MAX:
                _as_recorded.clear()
            _as_recorded[key] = _signature(st)
    return state


Progress = Callable[[int, int], None]


def check_sources(
    checks: Sequence[SourceCheck],
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> list[Verification]:
    """Check many sources in order; safe off the store's thread (no database).

    Args:
        checks: from :func:`pending_checks`.
        progress: called with ``(done, total)`` after each source.
        should_stop: polled before each source; True ends the run early and
            the results so far are returned.
    """
    results: list[Verification] = []
    total = len(checks)
    for check in checks:
        if should_stop is not None and should_stop():
            break
        results.append(check_source(check))
        if progress is not None:
            progress(len(results), total)
    return results


# -- verifying ----------------------------------------------------------------------


_NEWEST_LINK: Final = (
    "(SELECT coalesce(max(id), 0) FROM attachment_receipt_turns WHERE receipt_id = {rid})"
)


def pending_checks(store: GroupStore, ids: Sequence[str] | None = None) -> list[SourceCheck]:
    """What to verify: the receipts ``ids`` (in that order), or every receipt.

    Raises:
        NotFound: one of ``ids`` names no receipt.
    """
    sql = (
        "SELECT id, source_path, sha256, size, source_status, "
        f"{_NEWEST_LINK.format(rid='r.id')} FROM attachment_receipts r"
    )

    def check(r: Sequence[Any]) -> SourceCheck:
        return SourceCheck(r[0], r[1], r[2], int(r[3]), SourceState(r[4]), int(r[5]))

    if ids is None:
        return [check(r) for r in store.execute(f"{sql} ORDER BY id")]
    found: dict[str, SourceCheck] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for r in store.execute(f"{sql} WHERE id IN ({marks})", chunk):
            found[r[0]] = check(r)
    for rid in unique:
        if rid not in found:
            raise NotFound(f"no attachment receipt {rid} in group {store.group}", field="id")
    return [found[rid] for rid in unique]


def record_checks(service: Workspace, caller: Caller, results: Sequence[Verification]) -> Changes:
    """Store the states found by :func:`check_sources`, audited as one action.

    A result planned before the receipt's newest link (the file was attached
    again while a long run was under way, maybe from another path) is skipped
    rather than undoing what that attach recorded. Link ids, unlike times to
    the millisecond, cannot tie. The state is cheap to recompute, so the write
    skips the fsync.
    """
    store = service.store_for(caller.group)
    counts = {state.value: 0 for state in SourceState}
    for r in results:
        counts[r.state.value] += 1
    moved = [r.receipt_id for r in results if r.state is not r.previous]
    with store.relaxed_transaction():
        for r in results:
            store.execute(
                "UPDATE attachment_receipts SET source_status = ?, checked_at = ? "
                f"WHERE id = ? AND {_NEWEST_LINK.format(rid='?')} = ?",
                (r.state.value, r.checked_at, r.receipt_id, r.receipt_id, r.basis),
            )
        audit.record(
            store,
            Action.VERIFY,
            caller.actor,
            session_id=caller.session_id,
            entry_ids=moved,
            count=len(results),
            states=dict(counts),
        )
    return service.emit(Changes(group=store.group, attachments=True, audit=True))
