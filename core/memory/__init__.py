"""Memories: the write path and what keeps the store tidy.

Owns: store requests, dedup, supersession and rate limits (``writing``), confidence and
decay (``confidence``), review decisions (``curation``), forgetting and clearing
(``forgetting``), and ``[MEMORY:...]`` markers and their ingestion (``markers``, ``ingest``).
May import: ``core.policy``, ``core.storage``, ``core.model``.
"""
