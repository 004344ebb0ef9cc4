"""One SQLite database per group, and the workspace that opens them.

Owns: data-dir paths and file modes (``paths``, ``file_safety``, ``pending_files``),
connection bootstrap and the migration ladder (``db``, ``db_header``, ``schema``),
``GroupStore`` and its row codecs (``store``, ``rows``), FTS5 query helpers and
planning (``fts``, ``vocab``, ``planner``), the audit table (``audit``), crypto at rest
(``crypto``), removing deleted text from the files (``scrub``), best-effort bookkeeping
writes on read-only or full disks (``best_effort``), and ``Workspace``: the open stores,
settings, data key and change listeners every capability is handed, and the thread
plumbing of the background workers (``worker``).
May import: ``core.model``. Never a capability, the service or a front end.
"""
