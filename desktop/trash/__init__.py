"""The trash: what agents deleted, for the person to restore or delete for good.

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
