"""What every view shares and watches: the service, the group, settings, change records.

Every mutation in core returns a :class:`~core.model.changes.Changes` record and
tells the service's listeners. :class:`AppState` turns those calls into one
app-level Qt signal (Anki's ``operation_did_execute``), merged over a few
milliseconds so that an agent storing twenty memories in a burst costs one
refresh, not twenty. Each view then refreshes only what the record says it
shows.

Writes by another process (``ambry store`` in a terminal) never reach this
process's listeners, so the current group's ``PRAGMA data_version`` is polled:
it changes only when another connection commits, and reading it is a few
microseconds, so an idle window stays idle.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from core.memory.forgetting import Scope
from core.model.changes import Changes
from core.model.config import Config, load_config, save_config
from core.model.entries import Actor
from core.model.errors import AmbryError
from core.service import Caller, MemoryService
from core.storage.audit import Action
from core.storage.paths import DataDir, validate_group
from core.storage.store import GroupStore

log = logging.getLogger(__name__)

#: How long change records are gathered before one signal carries them all.
COALESCE_MS = 30
#: How often the current group's database is checked for other processes' writes.
POLL_MS = 500
#: The client name of the person's sessions, as the audit log shows it.
CLIENT_NAME = "desktop"


def audit_mark(store: GroupStore) -> tuple[Any, ...]:
    """What moves when something a view shows changes.

    The newest audit row (every change a person or agent makes writes one) and the
    layer summaries' count and last build (the compression pass writes no audit row).
    Vectors are in neither: they change nothing a view draws.
    """
    row = store.execute(
        "SELECT (SELECT coalesce(max(id), 0) FROM audit_log), "
        "(SELECT count(*) FROM layer_summaries), (SELECT max(built_at) FROM layer_summaries)"
    ).fetchone()
    return tuple(row)


@dataclass(frozen=True)
class Forgetting:
    """The memories that forgets and clears in ``group`` took, as their audit rows say.

    Attributes:
        group: where.
        entry_ids: the memories a forget deleted, and those it took from the trash.
        cleared: a clear of memories (or of everything) took every one.
    """

    group: str
    entry_ids: frozenset[str] = frozenset()
    cleared: bool = False

    def took(self, entry_id: str) -> bool:
        return self.cleared or entry_id in self.entry_ids


def forgotten_since(store: GroupStore, mark: tuple[Any, ...] | None) -> Forgetting | None:
    """What forgets and clears recorded after the audit row ``mark`` names took, or
    ``None`` if none was recorded."""
    after = int(mark[0]) if mark else 0
    rows = store.execute(
        "SELECT action, entry_ids, detail FROM audit_log WHERE id > ? AND action IN (?, ?)",
        (after, Action.FORGET.value, Action.CLEAR.value),
    ).fetchall()
    if not rows:
        return None
    ids: set[str] = set()
    cleared = False
    for action, entry_ids, detail in rows:
        details = json.loads(detail)
        if action == Action.CLEAR.value:
            cleared = cleared or details.get("scope") != Scope.EPISODIC.value
        else:
            ids.update(json.loads(entry_ids), details.get("trash_ids", ()))
    return Forgetting(store.group, frozenset(ids), cleared)


def forgot_since(store: GroupStore, mark: tuple[Any, ...] | None) -> bool:
    """Whether a forget or a clear was recorded after the audit row ``mark`` names."""
    return forgotten_since(store, mark) is not None


def everything(group: str) -> Changes:
    """A record saying that anything in ``group`` may have changed."""
    return Changes(
        group=group,
        entries=True,
        review=True,
        audit=True,
        sessions=True,
        threads=True,
        attachments=True,
        claims=True,
    )


class AppState(QObject):
    """The composition root's shared state, passed to every view.

    Args:
        service: the GUI thread's service (the agent socket uses the same one).
        data_dir: the data directory in use.
        group: the group shown first.
        parent: the owning QObject.

    Signals:
        changed(object): a :class:`~core.model.changes.Changes` record, one per group
            and burst, for writes by this process and by others.
        config_changed(object): the new :class:`~core.model.config.Config`.
        group_changed(str): the group the views show now.
    """

    changed = Signal(object)
    config_changed = Signal(object)
    group_changed = Signal(str)
    #: A topic was forgotten or memories cleared in this group, by the app
    #: (:meth:`forgot`) or by another process (``ambry forget``, ``ambry clear``):
    #: what the app keeps to undo must not bring them back.
    forgotten = Signal(str)
    #: The same, for the current group, with what it took: a :class:`Forgetting`.
    memories_forgotten = Signal(object)

    def __init__(
        self, service: MemoryService, data_dir: DataDir, group: str, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.service = service
        self.data_dir = data_dir
        self._group = validate_group(group)
        self._operators: dict[str, Caller] = {}
        self._pending: dict[str, Changes] = {}
        self._closed = False
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(COALESCE_MS)
        self._flush_timer.timeout.connect(self._flush)
        self._version = 0
        self._audited: tuple[Any, ...] = ()
        #: The settings the views were last told of.
        self._config_shown = service.config
        self._poll_timer = QTimer(self)
        self._poll_timer.setInterval(POLL_MS)
        self._poll_timer.timeout.connect(self.poll)
        service.add_listener(self._on_changes)

    # -- group and sessions ----------------------------------------------------

    @property
    def group(self) -> str:
        return self._group

    @property
    def config(self) -> Config:
        return self.service.config

    def groups(self) -> list[str]:
        """Groups with a database, plus the current one (which may not have one yet)."""
        return sorted({*self.data_dir.groups(), self._group})

    def set_group(self, group: str) -> None:
        """Show ``group`` (creating its database if needed) in every view."""
        group = validate_group(group)
        if group == self._group:
            return
        store = self.service.store_for(group)
        self._group = group
        # The baseline is taken now: a commit made before the first poll still counts.
        self._version = store.data_version()
        self._audited = audit_mark(store)
        self.group_changed.emit(group)

    def operator(self, group: str | None = None) -> Caller:
        """The person's session in ``group`` (default: the current one), opened on first use."""
        group = group or self._group
        caller = self._operators.get(group)
        if caller is None:
            caller = self.service.open_session(group, Actor.OPERATOR, CLIENT_NAME)
            self._operators[group] = caller
        return caller

    # -- settings --------------------------------------------------------------

    def update_config(self, config: Config) -> None:
        """Save ``config`` and apply it at once (the agent socket shares the service).

        A setting changed in the file since the app read it (``ambry settings``) and
        not edited here keeps the file's value, rather than being written back over.
        """
        loaded = self.service.config
        if config == loaded:
            return
        try:
            on_disk = load_config(self.data_dir.config_file)
        except AmbryError as exc:  # a file broken since: this save writes it whole again
            log.warning("settings file unreadable, saving the app's settings: %s", exc)
            on_disk = loaded
        kept = {
            f.name: getattr(on_disk, f.name)
            for f in dataclasses.fields(Config)
            if getattr(config, f.name) == getattr(loaded, f.name)
            and getattr(on_disk, f.name) != getattr(loaded, f.name)
        }
        if kept:
            config = config.with_changes(**kept)
        save_config(self.data_dir.config_file, config)
        self.service.set_config(config)
        self._config_shown = config
        self.config_changed.emit(config)

    # -- change records --------------------------------------------------------

    def start_polling(self) -> None:
        store = self.service.store_for(self._group)
        self._version = store.data_version()
        self._audited = audit_mark(store)
        self._poll_timer.start()

    def poll(self) -> None:
        """Check the settings file, and the current group for commits by other connections.

        Rows lacking vectors are looked for on every such commit, whoever made it
        (:meth:`~core.service.MemoryService.check_vectors`: microseconds when none do).

        Every change a person or an agent makes writes an audit row; vectors from the
        embedding worker do not, and change nothing a view shows. A commit that moved
        neither the audit log nor the layer summaries leaves the views alone: a
        background backfill of 100,000 vectors must not redraw the window each batch.
        """
        # Settings saved by `ambry settings`, or picked up by the agent server's last call.
        self.service.follow_config()
        if self.service.config != self._config_shown:
            self._config_shown = self.service.config
            self.config_changed.emit(self._config_shown)
        store = self.service.store_for(self._group)
        version = store.data_version()
        if version != self._version:
            # Rows another process wrote (`ambry store`, an import) woke no worker here;
            # the status bar then shows the worker's progress on them.
            self.service.check_vectors(self._group)
            mark = audit_mark(store)
            if mark != self._audited:
                log.info("group %s changed on disk", self._group)
                erased = forgotten_since(store, self._audited)
                if erased is not None:
                    # `ambry forget` in a terminal: the summaries it dropped are drawn
                    # again by this app's pass, not at the next 6-hourly one.
                    self.service.redraw_summaries(self._group)
                    self.forgotten.emit(self._group)
                    self.memories_forgotten.emit(erased)
                self._on_changes(everything(self._group))
            self._audited = mark
        self._version = version

    def forgot(self, group: str) -> None:
        """The app forgot a topic or cleared memories in ``group``, on a connection of
        its own: drop the undo steps that could bring them back now, draw the layer
        summaries it dropped again, and show the change at once rather than at the
        next poll."""
        self.service.redraw_summaries(group)
        self.forgotten.emit(group)
        if group == self._group:
            self.poll()

    def _on_changes(self, changes: Changes) -> None:
        # Called from inside service calls: only queue here, views refresh after.
        if self._closed:
            return
        pending = self._pending.get(changes.group)
        self._pending[changes.group] = changes if pending is None else pending | changes
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _flush(self) -> None:
        pending, self._pending = self._pending, {}
        for changes in pending.values():
            self.changed.emit(changes)

    def close(self) -> None:
        """End the person's sessions and stop watching."""
        self._closed = True
        self.service.remove_listener(self._on_changes)
        self._poll_timer.stop()
        self._flush_timer.stop()
        for caller in self._operators.values():
            self.service.end_session(caller)
        self._operators.clear()
