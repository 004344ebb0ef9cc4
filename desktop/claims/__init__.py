"""The Claims view: review candidates beside their sources, decide, see the decisions.

Owns ``view`` (the page, its mode box and undo), ``render`` (badges and the detail pane's
HTML) and ``diagnostics`` (the read-only report). Goes through ``core.claims`` with the
person's caller; may import ``desktop.memories`` (local times) and ``desktop.widgets``.
"""
