"""Continuity between sessions: threads, handoffs, sessions and conversation turns.

Owns: sessions (``sessions``), threads (``threads``), versioned thread handoffs
(``handoffs``, ``handoff_text``), one-shot session handoffs (``session_handoffs``),
conversation turns and their hybrid search (``episodes``, ``exchange_recall``,
``exchange_candidates``, ``speaker_names``), bulk-imported history (``imported_history``), what a
session learns when it enters a thread (``context``), and what a forget will
take, described for the person before it goes (``forget_preview``).
May import: ``core.memory`` and everything below it; not ``recall`` or ``attachments``.
"""
