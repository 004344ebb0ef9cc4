"""The Claims view: review candidates beside their sources, decide, see the decisions.

Owns ``view`` (the page, its mode box and undo, and extraction on the window's
background thread), ``render`` (badges, the detail pane's HTML and the extraction
message) and ``diagnostics`` (the read-only report). Goes through ``core.claims`` and
the service with the person's caller; may import ``desktop.memories`` (local times) and
``desktop.widgets``.
"""
