"""The audit log view: what happened, by whom; never content.

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
