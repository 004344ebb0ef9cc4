"""How a claim reads in the Claims view: badges, the sources side by side, the decisions.

Also what an extraction found, as the one message the view shows when it ends.
"""

from __future__ import annotations

import html

from core.claims.extract import Extraction
from core.claims.model import DecisionReceipt, SourceState
from core.claims.verify import ClaimReport
from core.model.text import plural
from desktop.memories.values import local_time

#: Badge colours (background, text), as the attachment view's: amber drifted, red missing.
BADGE_COLOURS: dict[SourceState, tuple[str, str]] = {
    SourceState.EXACT: ("#e6f4ea", "#1e6b34"),
    SourceState.PARTIAL: ("#e8f0fe", "#1a4d8f"),
    SourceState.DRIFTED: ("#fff1d6", "#8a5a00"),
    SourceState.MISSING: ("#fdecea", "#b42318"),
}


def badge_text(state: SourceState) -> str:
    match state:
        case SourceState.EXACT:
            return "✓ exact match"
        case SourceState.PARTIAL:
            return "≈ partial"
        case SourceState.DRIFTED:
            return "⚠ drifted"
        case SourceState.MISSING:
            return "✗ missing"


def _badge(state: SourceState) -> str:
    bg, fg = BADGE_COLOURS[state]
    return (
        f'<span style="background:{bg}; color:{fg}; padding:2px 6px;">'
        f"&nbsp;{html.escape(badge_text(state))}&nbsp;</span>"
    )


def _text(value: str) -> str:
    return html.escape(value).replace("\n", "<br/>")


def report_html(report: ClaimReport, history: list[DecisionReceipt]) -> str:
    """The claim, then each source: what it said when cited beside what it says now."""
    c = report.claim
    due = f" · re-check by {html.escape(local_time(c.recheck_due_at))}" if c.recheck_due_at else ""
    parts = [
        f"<h3>{_text(c.text)}</h3>",
        f"<p><b>{html.escape(c.status.value)}</b> ({html.escape(c.label)}) · "
        f"{html.escape(c.kind.value)} · from {html.escape(c.origin.value)} · "
        f"recorded {html.escape(local_time(c.created_at))}{due}</p>",
        f"<p>Sources now: {_badge(report.state)} · recommendation: "
        f"<b>{html.escape(report.recommendation.value.replace('_', ' '))}</b></p>",
        '<table width="100%" cellspacing="0" cellpadding="6" border="1" '
        'style="border-collapse:collapse; border-color:#d0d4da;">'
        "<tr><th align='left'>Source</th><th align='left'>Cited (then)</th>"
        "<th align='left'>Says now</th></tr>",
    ]
    for s in report.sources:
        now = _text(s.matched_text) if s.matched_text else "<i>nothing that matches</i>"
        # The quote goes with its source when the source is deleted (docs/claims.md).
        then = (
            _text(s.handle.quote[:1500])
            if s.handle.quote
            else "<i>not kept: the source was deleted</i>"
        )
        parts.append(
            f"<tr><td valign='top'>{html.escape(s.handle.label)}<br/>{_badge(s.state)}</td>"
            f"<td valign='top'>{then}</td>"
            f"<td valign='top'>{now}<br/><small>{html.escape(s.evidence)}</small></td></tr>"
        )
    parts.append("</table>")
    parts.append("<h4>Decisions</h4>")
    if not history:
        parts.append("<p><i>None yet.</i></p>")
    for d in history:
        states = ", ".join(f"{x['source']}: {x['state']}" for x in d.source_states)
        note = f" — {html.escape(d.note)}" if d.note else ""
        parts.append(
            f"<p>{html.escape(local_time(d.at))}: <b>{html.escape(d.decision.value)}</b> by the "
            f"{html.escape(d.actor)}{note}<br/><small>{html.escape(states)}</small></p>"
        )
    return "".join(parts)


# -- what an extraction found ------------------------------------------------------------

#: Where candidates come from, said when an extraction finds none.
WHERE_FROM = (
    "Candidates come from statements in thread handoffs (list items, not tasks, next steps "
    "or questions) and from what the person said in day summaries (built by “Compress now” "
    "in Layers, or by the background pass)."
)


def extraction_text(result: Extraction) -> str:
    """What an extraction read and found, as one message.

    ``Found 7 statements in 3 handoffs and 4 day summaries: 5 new candidates, 2
    already known.`` When nothing is found it says where candidates come from;
    day summaries built before points recorded their turns are named, with what
    lets them yield claims.
    """
    read = [
        plural(n, one, many)
        for n, one, many in (
            (result.handoffs, "handoff", "handoffs"),
            (result.summaries, "day summary", "day summaries"),
        )
        if n
    ]
    if result.statements:
        known = result.statements - result.created
        found = [
            plural(result.created, "new candidate", "new candidates")
            if result.created
            else "no new candidates"
        ]
        if known:
            found.append(f"{known:,} already known")
        parts = [
            f"Found {plural(result.statements, 'statement', 'statements')} in "
            f"{' and '.join(read)}: {', '.join(found)}."
        ]
    elif read:
        parts = [f"No statements found in {' and '.join(read)}. {WHERE_FROM}"]
    else:
        parts = [
            "Nothing to extract from: no thread has a handoff and no day summary is built "
            f"yet. {WHERE_FROM}"
        ]
    if result.unsourced:
        they, them = ("it", "it") if result.unsourced == 1 else ("they", "them")
        parts.append(
            f"{plural(result.unsourced, 'day summary was', 'day summaries were')} built "
            f"before points recorded their turns, so {they} gave nothing; the next "
            f"compression pass (“Compress now” in Layers) lets {them} yield claims."
        )
    return " ".join(parts)


def extraction_needs_attention(result: Extraction) -> bool:
    """Whether the message says what to do (nothing found, or summaries to draw again)."""
    return not result.statements or bool(result.unsourced)
