"""Claims: statements with source handles, a candidate lane and a verified lane.

Owns the claim records (``claims``, ``claim_sources``, ``claim_decisions``,
``claim_settings`` tables), the gate that only the person passes (accept,
reject, defer, retract), read-only source verification, deterministic extraction
from thread handoffs and day summaries, the claims mode (observe, diagnostic,
enforce) and the brief's "Verified claims" section. docs/claims.md describes it.

Layering: claims sits one layer above ``recall | continuity | attachments``
because a claim's sources live there (exchange turns and thread handoffs in
continuity, receipts in attachments); it reads them and never writes them. It
may import those packages, ``memory``, ``policy``, ``storage`` and ``model``;
the service, the agent protocol and the CLI sit above it. ``core.layers`` is a
sibling: the day summaries' points reach extraction through the service.
"""
