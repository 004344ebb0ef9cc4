"""The claims mode (observe, diagnostic, enforce): plan, apply, roll back; the person only.

Seed 004 §12.1: every change reads the current settings, shows the difference,
backs the prior settings up to a timestamped file *before* writing, writes only
the mode, and reports what changed with its boundary statements. ``plan`` is a
dry run; ``apply`` and ``rollback`` need an explicit confirmation. An ``apply``
of the mode already set changes nothing and writes nothing. A rollback restores
the mode the last change replaced (after backing up what it replaces); repeated
rollbacks walk back through the changes, one each, until none is left.

Backups: ``<data dir>/backups/claims/<group>-<UTC stamp>.json``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.claims import records
from core.claims.model import Mode
from core.model.changes import Changes
from core.model.config import atomic_write
from core.model.entries import Actor, utc_now
from core.model.errors import Forbidden, InvalidParams, NotFound
from core.model.file_errors import file_error
from core.storage import audit
from core.storage.audit import Action
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

MODE_KEY = "mode"
DEFAULT_MODE = Mode.OBSERVE


def current_mode(store: GroupStore) -> Mode:
    value = records.read_setting(store, MODE_KEY)
    return DEFAULT_MODE if value is None else Mode(value)


def parse_mode(value: object) -> Mode:
    try:
        return Mode(str(value))
    except ValueError:
        choices = ", ".join(m.value for m in Mode)
        raise InvalidParams(f"mode must be one of {choices}", field="mode", rule="enum") from None


def effects(mode: Mode) -> list[str]:
    """What ``mode`` does, in the person's words."""
    injected = (
        "verified, fresh claims are added to the agent's session-start brief"
        if mode.injects
        else "no claim reaches the agent's session-start brief"
    )
    reported = (
        "candidate diagnostics are reported"
        if mode.reports
        else "candidate diagnostics are not reported"
    )
    return ["claims are recorded as candidates; only the person verifies them", injected, reported]


def backup_dir(service: Workspace) -> Path:
    return service.data_dir.root / "backups" / "claims"


@dataclass(frozen=True)
class ModePlan:
    group: str
    current: Mode
    target: Mode
    backup: str | None = None
    applied: bool = False

    @property
    def changes(self) -> bool:
        return self.current is not self.target

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "current": self.current.value,
            "target": self.target.value,
            "changes": self.changes,
            "applied": self.applied,
            "backup": self.backup,
            "effects": effects(self.target),
            # Seed 004 §12.1: what a mode change never does.
            "boundary": [
                "no claim is verified, retracted or changed",
                "no source is read or modified",
                "nothing is injected by this command",
            ],
        }


def plan(service: Workspace, group: str, target: object) -> ModePlan:
    """The dry run: what ``apply`` would change. Reads only."""
    return ModePlan(group, current_mode(service.store_for(group)), parse_mode(target))


def _require_person(caller: Caller, yes: bool, action: str) -> None:
    if caller.actor is not Actor.OPERATOR:
        raise Forbidden("the claims mode is changed by the person only, with `ambry claims mode`")
    if not yes:
        raise InvalidParams(
            f"{action} changes the claims mode: run `ambry claims mode plan` first, then repeat "
            f"with --yes to confirm",
            field="yes",
            rule="confirmation",
        )


def _write_backup(service: Workspace, group: str, mode: Mode, how: str, target: Mode) -> Path:
    """Save the prior settings (owner-only, atomically) before they change.

    Raises:
        FileError: the backup cannot be written (a read-only or full disk), so
            nothing is changed.
    """
    reason = f"before {how} to {target.value}"
    folder = backup_dir(service)
    stamp = utc_now().strftime("%Y%m%dT%H%M%S%fZ")
    path = folder / f"{group}-{stamp}.json"
    n = 1
    while path.exists():
        path = folder / f"{group}-{stamp}-{n}.json"
        n += 1
    data = {
        "group": group,
        "settings": {MODE_KEY: mode.value},
        "reason": reason,
        "how": how,
        "to": target.value,
    }
    try:
        atomic_write(path, (json.dumps(data, indent=2) + "\n").encode("utf-8"))
    except OSError as exc:
        why = "write the backup of the claims mode (the mode was not changed)"
        raise file_error(exc, path, why) from exc
    return path


def backups(service: Workspace, group: str) -> list[Path]:
    """The group's backups, oldest first (the stamp sorts as text)."""
    folder = backup_dir(service)
    if not folder.is_dir():
        return []
    name = re.compile(re.escape(group) + r"-(\d{8}T\d{12}Z)(?:-(\d+))?\.json")
    found: list[tuple[str, int, Path]] = []
    for p in folder.glob(f"{group}-*.json"):
        if m := name.fullmatch(p.name):
            found.append((m.group(1), int(m.group(2) or 0), p))
    return [p for _, _, p in sorted(found)]


#: An older backup's reason, for one written before backups named their step.
_REASON = re.compile(r"before (apply|rollback) to (\w+)")


def _read_step(path: Path) -> tuple[Mode, str, Mode | None]:
    """A backup's mode, and the step (``apply`` or ``rollback``) and mode it was
    written before (None when an older backup does not say).

    Raises:
        InvalidParams: the file is not a claims-mode backup Ambry wrote.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        before = Mode(data["settings"][MODE_KEY])
        how, to = data.get("how"), data.get("to")
        if how is None and (m := _REASON.fullmatch(str(data.get("reason", "")))):
            how, to = m.group(1), m.group(2)
        return before, str(how or "apply"), None if to is None else Mode(to)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise InvalidParams(
            f"the claims-mode backup {path.name} cannot be read ({type(exc).__name__}); "
            f"move it out of {path.parent} and try again",
            field="backup",
        ) from exc


def history(service: Workspace, group: str) -> list[Mode]:
    """The modes that real changes replaced, oldest first, less those a rollback
    already restored: the last is what the next rollback restores.

    Read from the backups: each ``apply`` that changed the mode adds the mode it
    replaced, each ``rollback`` that changed it takes the last one off. A backup
    of a step that changed nothing (written by an older Ambry) counts for nothing.
    """
    stack: list[Mode] = []
    for path in backups(service, group):
        before, how, to = _read_step(path)
        if to is before:
            continue
        if how == "rollback":
            if stack:
                stack.pop()
        else:
            stack.append(before)
    return stack


def rollback_target(service: Workspace, group: str) -> Mode | None:
    """The mode a rollback would restore, or None when there is nothing to roll back.

    A mode in the history that is the current one (backups removed or restored by
    hand) is passed over: rolling back to it would change nothing.
    """
    found = history(service, group)
    current = current_mode(service.store_for(group))
    while found and found[-1] is current:
        found.pop()
    return found[-1] if found else None


def _set(service: Workspace, caller: Caller, target: Mode, how: str) -> ModePlan:
    store = service.store_for(caller.group)
    current = current_mode(store)
    if current is target:
        # Nothing changes: no backup, no audit row, and the report says "already".
        return ModePlan(caller.group, current, target)
    path = _write_backup(service, caller.group, current, how, target)
    with store.transaction():
        records.write_setting(store, MODE_KEY, target.value)
        audit.record(
            store,
            Action.CLAIM_MODE,
            caller.actor,
            session_id=caller.session_id,
            how=how,
            previous=current.value,
            mode=target.value,
            backup=path.name,
        )
    service.emit(Changes(group=store.group, claims=True, audit=True))
    return ModePlan(caller.group, current, target, str(path), applied=True)


def apply(service: Workspace, caller: Caller, target: object, *, yes: bool) -> ModePlan:
    """Set the mode, after backing up the prior settings. The person only, confirmed."""
    mode = parse_mode(target)
    _require_person(caller, yes, "apply")
    return _set(service, caller, mode, "apply")


def rollback(service: Workspace, caller: Caller, *, yes: bool) -> ModePlan:
    """Restore the mode the last change replaced (backing up the current one first);
    each further rollback goes one change further back (:func:`history`).

    Raises:
        NotFound: no change is left to roll back.
    """
    _require_person(caller, yes, "rollback")
    target = rollback_target(service, caller.group)
    if target is None:
        mode = current_mode(service.store_for(caller.group)).value
        raise NotFound(
            f"nothing to roll back in group {caller.group}: no change of the claims mode "
            f"is left to undo (it is {mode}); set another mode with "
            "`ambry claims mode apply MODE --yes`",
            field="backup",
        )
    return _set(service, caller, target, "rollback")
