"""The claims diagnostics report (read-only): recurring, conflicting, ready and decayed claims."""

from __future__ import annotations

from html import escape
from typing import Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from core.claims.diagnostics import Diagnostics

_SECTIONS = (
    ("recurring", "Recurring", "candidates cited by two or more sources, most first"),
    ("conflicts", "Conflicting", "candidates that contradict a verified claim or a memory"),
    ("ready", "Ready", "candidates every source of which says them word for word"),
    ("decayed", "Decayed", "stale candidates, lost or drifted sources, claims due a re-check"),
)


def _evidence(item: dict[str, Any]) -> str:
    rest = {k: v for k, v in item.items() if k not in ("id", "text", "sources")}
    parts = [f"{escape(k.replace('_', ' '))}: {escape(str(v))}" for k, v in rest.items()]
    sources = ", ".join(escape(s) for s in item.get("sources", []))
    return " · ".join([p for p in (sources, *parts) if p])


def diagnostics_html(report: Diagnostics) -> str:
    """The report as HTML: each item's evidence first, then the claim."""
    data = report.to_dict()
    out = [
        f"<p>Mode <b>{escape(report.mode.value)}</b>; {report.scanned} candidates examined. "
        "Nothing here changes a claim: you decide in the list.</p>"
    ]
    for key, title, what in _SECTIONS:
        items = data[key]
        out.append(f"<h3>{title} ({len(items)})</h3><p><i>{escape(what)}</i></p>")
        if not items:
            out.append("<p>None.</p>")
            continue
        out.append("<ul>")
        for item in items:
            out.append(
                f"<li><small>{_evidence(item)}</small><br>“{escape(item['text'])}” "
                f"<small>({escape(item['id'])})</small></li>"
            )
        out.append("</ul>")
    return "".join(out)


class DiagnosticsDialog(QDialog):
    """Shows one diagnostics report.

    Args:
        report: what :func:`core.claims.diagnostics.diagnose` found.
        parent: the parent widget.
    """

    def __init__(self, report: Diagnostics, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Claims diagnostics")
        self.resize(760, 560)
        self.text = QTextBrowser(self)
        self.text.setObjectName("claimsDiagnostics")
        self.text.setHtml(diagnostics_html(report))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
