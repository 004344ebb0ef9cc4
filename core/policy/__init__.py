"""The write policy: what may reach the store, and in what form.

Owns: argument validation against ``resources/manifest.json`` (``manifest``), secret
detection and redaction (``secret_rules``, ``secrets``), credential statements
(``credentials``), injection neutralising (``sanitize``), trust routing
(``write_policy``) and screening of free-text fields with its audit row (``screening``).
May import: ``core.storage``, ``core.model``.
"""
