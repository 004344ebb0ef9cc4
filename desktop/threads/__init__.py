"""Threads and their handoffs: the list, the handoff editor and its version history.

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
