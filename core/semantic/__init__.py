"""Meaning: local sentence embeddings, their vectors in the group file, and hybrid fusion.

Owns: the embedding model, loaded with onnxruntime and checked by sha256 (``embedding``),
vectors stored beside the rows they describe and scanned with numpy
(``vectors``), the background worker that embeds after a write is acknowledged and
backfills what is missing (``backfill``), the fusion of keyword and vector ranks with
recency and confidence (``hybrid``) and dates named in a question (``timeref``).
May import: ``core.storage``, ``core.model``. Both searches (``recall`` for memories,
``continuity`` for conversation turns) build on it.
"""
