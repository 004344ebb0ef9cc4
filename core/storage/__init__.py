"""One SQLite database per group, and the workspace that opens them.

Owns: data-dir paths, connection bootstrap and the migration ladder (``db``, ``schema``),
``GroupStore`` and its row codecs (``store``, ``rows``), FTS5 query helpers (``fts``), the
audit table (``audit``), crypto at rest (``crypto``), and ``Workspace``: the open stores,
settings, data key and change listeners every capability is handed.
May import: ``core.model``. Never a capability, the service or a front end.
"""
