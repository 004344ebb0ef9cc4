"""The Claims view: review candidates beside their sources, decide, see the decisions.

Owns ``view`` (the page) and ``render`` (badges and the detail pane's HTML).
Goes through ``core.claims`` with the person's caller; may import ``desktop.memories``
(local times) and ``desktop.widgets``.
"""
