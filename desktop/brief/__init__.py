"""The brief preview: the rendered brief the next agent session receives, and its limits.

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
