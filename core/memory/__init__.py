"""Memories: the write path and what keeps the store tidy.

Owns: store requests, dedup and supersession (``writing``), confidence and decay
(``confidence``), review decisions (``curation``), forgetting and clearing
(``forgetting``), the trash an agent's deletes go to (``trash``), and ``[MEMORY:...]``
markers and their ingestion (``markers``, ``ingest``).
May import: ``core.policy``, ``core.semantic``, ``core.storage``, ``core.model``.
"""
