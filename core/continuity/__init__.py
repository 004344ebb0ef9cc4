"""Continuity between sessions: threads, handoffs, sessions and exchanges.

Owns: sessions (``sessions``), threads (``threads``), versioned thread handoffs
(``handoffs``, ``handoff_text``), one-shot session handoffs (``session_handoffs``),
episodic exchanges and their search (``episodes``), and what a session learns when it
enters a thread (``context``).
May import: ``core.memory``, ``core.policy``, ``core.storage``, ``core.model``; not
``recall`` or ``attachments``.
"""
