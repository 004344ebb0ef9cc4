"""Screening text on its way into storage: thread titles, handoffs and exchanges.

Text that reaches storage goes through the same screening as memory entries: a
credential statement is refused and definite or probable secrets are redacted,
with the pattern names audited, never the values. Control characters other
than tab and newline are dropped first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from core.model.changes import Changes
from core.model.errors import Refused
from core.policy.field_screening import screen_field, without_invisible
from core.policy.own_files import known_secrets
from core.storage import audit
from core.storage.audit import Action
from core.storage.store import GroupStore

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.storage.workspace import Workspace

# C0 and C1 controls other than tab and newline: terminal escapes and NULs have
# no place in markdown and would be replayed by `ambry handoff show`.
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """``text`` with LF line ends, no control characters other than tab and newline,
    and no invisible characters that could hide what it says (:func:`without_invisible`)."""
    return without_invisible(CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))


def screen(
    service: Workspace, store: GroupStore, caller: Caller, text: str, field: str
) -> tuple[str, tuple[str, ...]]:
    """Refuse a credential statement (audited), else redact secrets.

    Returns:
        The text to store and the pattern names that were redacted.
    """
    known = known_secrets(service.data_dir.root)
    try:
        result = screen_field(text, field, known=known)
    except Refused as exc:
        with store.transaction():
            audit.record(
                store,
                Action.REFUSED,
                caller.actor,
                session_id=caller.session_id,
                reason=exc.data["reason"],
                field=field,
            )
        service.emit(Changes(group=store.group, audit=True))
        raise
    return result.text, result.redacted


def audit_redacted(
    store: GroupStore, caller: Caller, redacted: Sequence[str], **detail: Any
) -> None:
    if redacted:
        audit.record(
            store,
            Action.SECRET_REDACTED,
            caller.actor,
            session_id=caller.session_id,
            count=len(redacted),
            patterns=sorted(set(redacted)),
            **detail,
        )
