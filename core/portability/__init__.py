"""Moving a group in and out: export to a file, import from one, all or nothing.

Owns: the ``ambry-export`` JSONL format, its validation, sealing with a passphrase, and
import through the same write policy as an agent's write (``format``, ``export``, ``importing``).
May import: every capability below the service (``recall``, ``continuity``,
``attachments``, ``memory``, ``policy``, ``storage``, ``model``).
"""
