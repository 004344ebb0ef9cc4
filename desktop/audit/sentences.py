"""Audit rows as sentences a person reads: who did what, to how much, when. No Qt.

Only metadata reaches a sentence (the log holds nothing else): types, sizes,
counts, reasons, thread ids. Ids are not spelled out here; the page shows them
as links beside the sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from core.claims.model import Decision, SourceState
from core.model.entries import Actor
from core.model.text import plural
from core.storage.audit import Action, AuditRecord

#: Builds the rest of the sentence after the subject.
Predicate = Callable[[AuditRecord], str]


def _n(record: AuditRecord) -> int:
    return record.count if record.count is not None else len(record.entry_ids)


def _chars(record: AuditRecord) -> str:
    return "" if record.size is None else f" ({plural(record.size, 'char')})"


def _bytes(size: int | None) -> str:
    if size is None:
        return ""
    for unit in ("bytes", "KB", "MB"):
        if size < 1024 or unit == "MB":
            return f" ({size:,} {unit})" if unit == "bytes" else f" ({size:.1f} {unit})"
        size = size / 1024  # type: ignore[assignment]
    return ""


def _thread(record: AuditRecord) -> str:
    thread = record.detail.get("thread")
    return f" {thread}" if thread else ""


#: Words that start with a vowel letter and a consonant sound ("a user"), or the
#: other way round ("an hour"): the article goes by the sound.
_SOUNDS_CONSONANT = ("eu", "one", "uni", "usa", "use", "usu", "uti", "ure")
_SOUNDS_VOWEL = ("hour", "honest", "honour", "heir")


def _article(word: str) -> str:
    """``word`` after "a" or "an", as it sounds: an instruction, a user, an hour."""
    low = word.casefold()
    vowel = low[:1] in ("a", "e", "i", "o", "u")
    if low.startswith(_SOUNDS_CONSONANT):
        vowel = False
    elif low.startswith(_SOUNDS_VOWEL):
        vowel = True
    return ("an " if vowel else "a ") + word


def _store(r: AuditRecord) -> str:
    kind = str(r.detail.get("type", "memory"))
    held = " for review" if r.detail.get("status") == "candidate" else ""
    return f"stored {_article(kind)}{_chars(r)}{held}"


def _update(r: AuditRecord) -> str:
    match r.detail.get("field"):
        case "pinned":
            return "pinned a memory" if r.detail.get("value") else "unpinned a memory"
        case "tags" if r.detail.get("undo"):
            left = len(r.detail.get("left") or ())
            kept = f"; {left:,} changed since " + (
                "was left as it is" if left == 1 else "were left as they are"
            )
            n = plural(_n(r), "memory", "memories")
            return f"took back a change of the tags of {n}{_stopped(r)}{kept if left else ''}"
        case "tags" if r.detail.get("versions"):
            return f"changed the tags of {plural(_n(r), 'memory', 'memories')}{_stopped(r)}"
        case "tags":
            return f"added {plural(_n(r), 'tag')} to a memory"
        case "superseded_by":
            n = plural(_n(r), "memory", "memories")
            return f"relinked {n} whose newer version an earlier Ambry deleted"
    return f"changed the {r.detail.get('field', 'settings')} of a memory"


def _delete(r: AuditRecord) -> str:
    said = f"deleted {plural(_n(r), 'memory', 'memories')}{_stopped(r)}"
    again = len(r.detail.get("current_again") or ())
    if again:
        versions = "an earlier version is" if again == 1 else f"{again:,} earlier versions are"
        said += f"; {versions} current again"
    return said


def _forget(r: AuditRecord) -> str:
    parts = [
        plural(_n(r), "memory", "memories"),
        plural(int(r.detail.get("exchanges", 0)), "exchange"),
    ]
    if versions := int(r.detail.get("handoff_versions", 0)):
        parts.append(plural(versions, "handoff version"))
    if notes := int(r.detail.get("session_handoffs", 0)):
        parts.append(plural(notes, "session handoff"))
    return "forgot " + ", ".join(parts[:-1]) + " and " + parts[-1]


def _search(r: AuditRecord) -> str:
    what = "exchanges" if r.detail.get("scope") == "exchanges" else "memories"
    return f"searched {what} ({plural(_n(r), 'result')})"


def _handoff_write(r: AuditRecord) -> str:
    if r.detail.get("kind") == "session":
        return f"left a note for the next session of thread{_thread(r)}{_chars(r)}"
    version = r.detail.get("version")
    return f"wrote version {version} of the handoff of thread{_thread(r)}{_chars(r)}"


def _session_end(r: AuditRecord) -> str:
    if r.detail.get("state") == "abandoned":
        return "left a session without ending it"
    return "ended a session"


def _restore(r: AuditRecord) -> str:
    where = " from the trash" if r.detail.get("source") == "trash" else ""
    left = len(r.detail.get("left") or ())
    could_not = f"; {left:,} could not come back" if left else ""
    return f"restored {plural(_n(r), 'memory', 'memories')}{where}{_stopped(r)}{could_not}"


def _stopped(r: AuditRecord) -> str:
    """`` (stopped before the end: 10,000 asked)`` for a bulk change cancelled (or cut
    short) between its batches (core.memory.bulk)."""
    if not r.detail.get("stopped"):
        return ""
    return f" (stopped before the end: {int(r.detail.get('asked', 0)):,} asked)"


def _review_accept(r: AuditRecord) -> str:
    if r.detail.get("stored_again"):
        # A write that would be stored active on its own, of a candidate's text.
        return "stored the text of a memory awaiting review, which made it active"
    return f"accepted {plural(_n(r), 'memory', 'memories')} in review"


def _review_undo(r: AuditRecord) -> str:
    again = int(r.detail.get("current_again", 0))
    current = f" and made {plural(again, 'memory', 'memories')} it replaced current again"
    return f"returned {plural(_n(r), 'memory', 'memories')} to review" + (current if again else "")


def _purge(r: AuditRecord) -> str:
    why = r.detail.get("reason")
    return f"removed {plural(_n(r), 'memory', 'memories')} for good" + (f" ({why})" if why else "")


def _verify(r: AuditRecord) -> str:
    states = r.detail.get("states") or {}
    found = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
    return f"checked {plural(_n(r), 'attachment')}" + (f": {found}" if found else "")


def _claim_propose(r: AuditRecord) -> str:
    if r.detail.get("created", True):
        return f"proposed a claim ({plural(_n(r), 'source')})"
    if _n(r):
        return f"proposed a known claim again, adding {plural(_n(r), 'source')}"
    return "proposed a known claim again"


def _claim_extract(r: AuditRecord) -> str:
    read = [
        plural(int(r.detail.get("handoffs", 0)), "handoff"),
        plural(int(r.detail.get("summaries", 0)), "day summary", "day summaries"),
    ]
    found = plural(int(r.detail.get("statements", 0)), "statement")
    new = plural(_n(r), "new candidate")
    return f"looked for claims in {' and '.join(read)}: {found}, {new}"


#: What a decision did to the claim, as a verb.
_DECIDED: dict[str, str] = {
    Decision.ACCEPT: "verified",
    Decision.REJECT: "rejected",
    Decision.DEFER: "deferred",
    Decision.RETRACT: "retracted",
}
#: What the claim's sources said when the person decided.
_SOURCES_SAID: dict[str, str] = {
    SourceState.EXACT: "sources matched exactly",
    SourceState.PARTIAL: "sources matched in part",
    SourceState.DRIFTED: "sources had drifted",
    SourceState.MISSING: "sources were missing",
}


def _claim_decide(r: AuditRecord) -> str:
    decision = str(r.detail.get("decision", ""))
    verb = _DECIDED.get(decision, "decided on")
    said = _SOURCES_SAID.get(str(r.detail.get("state", "")))
    return f"{verb} a claim" + (f" ({said})" if said else "")


def _claim_mode(r: AuditRecord) -> str:
    mode, previous = r.detail.get("mode"), r.detail.get("previous")
    if mode is None:
        return "changed the claims mode"
    back = r.detail.get("how") == "rollback"
    verb = "put the claims mode back to" if back else "set the claims mode to"
    return f"{verb} {mode}" + (f" (it was {previous})" if previous else "")


PREDICATES: dict[str, Predicate] = {
    Action.STORE: _store,
    Action.DEDUP: lambda r: f"stored a memory it already had{_chars(r)}; the old one was kept",
    Action.SUPERSEDE: lambda r: "replaced a memory with a new version",
    Action.DELETE: _delete,
    Action.RESTORE: _restore,
    Action.REVEAL: lambda r: "revealed a secret memory",
    Action.FORGET: _forget,
    Action.CLEAR: lambda r: f"cleared {r.detail.get('scope', 'all')} memory ({_n(r):,} rows)",
    Action.EXPORT: lambda r: f"exported {plural(_n(r), 'memory', 'memories')}",
    Action.IMPORT: lambda r: f"imported {plural(_n(r), 'memory', 'memories')}",
    Action.SEARCH: _search,
    Action.BRIEF: lambda r: (
        f"read the brief ({plural(_n(r), 'memory', 'memories')}"
        + (f", {r.size:,} chars)" if r.size is not None else ")")
    ),
    Action.UPDATE: _update,
    Action.SECRET_REDACTED: lambda r: f"sent {plural(_n(r), 'secret')}, redacted before saving",
    Action.NEUTRALIZED: lambda r: f"sent {plural(_n(r), 'instruction marker')}, made inert",
    Action.REFUSED: lambda r: f"was refused: {r.detail.get('reason', 'not allowed')}",
    Action.RATE_LIMITED: lambda r: (
        "was held back by a rate limit"
        + (f" ({r.detail['reason']})" if r.detail.get("reason") else "")
    ),
    Action.PURGE: _purge,
    Action.REVIEW_ACCEPT: _review_accept,
    Action.REVIEW_REJECT: lambda r: f"rejected {plural(_n(r), 'memory', 'memories')} in review",
    Action.REVIEW_DEFER: lambda r: f"deferred {plural(_n(r), 'memory', 'memories')} in review",
    Action.REVIEW_UNDO: _review_undo,
    Action.SESSION_START: lambda r: "started a session",
    Action.SESSION_END: _session_end,
    Action.DECAY: lambda r: (
        f"lowered the confidence of {plural(_n(r), 'unused memory', 'unused memories')}"
    ),
    Action.INGEST: lambda r: f"sent text with {plural(_n(r), 'memory marker')}",
    Action.THREAD_CREATE: lambda r: f"opened a new thread{_thread(r)}",
    Action.THREAD_OPEN: lambda r: f"picked up thread{_thread(r)}",
    Action.THREAD_RENAME: lambda r: f"renamed thread{_thread(r)}",
    Action.THREAD_DELETE: lambda r: f"deleted thread{_thread(r)} and its handoffs",
    Action.HANDOFF_WRITE: _handoff_write,
    Action.HANDOFF_RESTORE: lambda r: (
        f"restored version {r.detail.get('restored')} of the handoff of thread{_thread(r)}"
    ),
    Action.HANDOFF_READ: lambda r: (
        "read the session handoff it received again (in no thread)"
        if r.detail.get("scope") == "session"
        else f"read the handoff of thread{_thread(r)}"
    ),
    Action.HANDOFF_DELIVER: lambda r: f"received the last session's note of thread{_thread(r)}",
    Action.HANDOFF_EXPORT: lambda r: f"exported the handoff of thread{_thread(r)}",
    Action.EXCHANGE_LOG: lambda r: (
        f"logged {_article(str(r.detail.get('speaker', 'conversation')))} turn{_chars(r)}"
    ),
    Action.EXPIRE: lambda r: f"removed {plural(_n(r), 'old exchange')}",
    Action.ATTACH: lambda r: (
        f"recorded a receipt for {_article(str(r.detail.get('kind', 'file')))} file{_bytes(r.size)}"
    ),
    Action.VERIFY: _verify,
    Action.CLAIM_PROPOSE: _claim_propose,
    Action.CLAIM_EXTRACT: _claim_extract,
    Action.CLAIM_DECIDE: _claim_decide,
    Action.CLAIM_MODE: _claim_mode,
}


def subject(record: AuditRecord, clients: Mapping[str, str]) -> str:
    """Who did it: "Agent Claude Code", "An agent", "You" or "Ambry"."""
    match record.actor:
        case Actor.AGENT:
            client = clients.get(record.session_id or "", "")
            return f"Agent {client}" if client else "An agent"
        case Actor.OPERATOR:
            return "You"
        case _:
            return "Ambry"


def sentence(record: AuditRecord, clients: Mapping[str, str]) -> str:
    """``record`` as one sentence, without its time."""
    predicate = PREDICATES.get(record.action)
    what = predicate(record) if predicate else record.action.replace("_", " ")
    who = subject(record, clients)
    if who == "You" and what.startswith("was "):
        what = "were " + what.removeprefix("was ")
    return f"{who} {what}"


def actions_described_by(text: str) -> list[str]:
    """The actions whose sentence contains ``text`` whatever the row (for the search field)."""
    needle = text.strip().casefold()
    if not needle:
        return []
    found = []
    for action, predicate in PREDICATES.items():
        words = predicate(AuditRecord(0, "", action, "", None, [], 0, 0, {})).casefold()
        if needle in words or needle in str(action).replace("_", " "):
            found.append(str(action))
    return found
