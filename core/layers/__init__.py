"""Layers: conversation history that fades with age, and the ways back into it.

Owns the rule-based compression of exchanges into summaries (``rules``,
``keywords``, ``summaries``), the background pass that builds them and rolls them
up day -> week -> month per thread (``compression``, ``scheduler``), links between
memories and summaries and the dig along them (``links``), the turn and span each
day-summary point came from, read back for claims extraction (``points``), and what
an agent gets from the layers: Flash and Warm in the brief, ``recall`` by keywords
(``retrieval``, ``timeline``).

It reads exchanges and memory entries (``core.continuity``, ``core.storage``) and
writes only its own tables (``layer_*``), so it sits above the capabilities, beside
``core.claims`` and ``core.portability``, below the service (docs/architecture.md).
"""
