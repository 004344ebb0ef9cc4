"""Attachment receipts: their verification state, and re-verifying off the GUI thread.

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
