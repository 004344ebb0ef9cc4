"""Attachment receipts: what a file said when the agent read it, and whether it still does.

Owns: file classification and hashing (``filetypes``), receipts and their rendering
(``receipts``), attaching files (``attach``) and re-verifying them (``verification``).
May import: ``core.memory``, ``core.policy``, ``core.storage``, ``core.model``; not
``recall`` or ``continuity``.
"""
