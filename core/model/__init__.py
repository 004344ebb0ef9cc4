"""Domain values every layer shares: entries and their enums, errors, change records,
settings, the caller's provenance, plain-text helpers, and a text file's bytes as text.

Owns: ``entries`` (MemoryEntry, filters, limits), ``errors`` (the typed errors every front
end maps), ``changes`` (the change record a mutation returns), ``config`` (the person's
settings and their bounds), ``caller``, ``text``, ``decoding`` (UTF-8, or refused with
the place), ``times`` (the store's time format, and reading back times an older
import kept as given), ``file_errors`` (why a file cannot be read or written, and
the fix).
May import: the standard library only. Everything else in ``core`` may import this.
"""
