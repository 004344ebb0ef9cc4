"""The SQL of each step of the schema ladder, by capability; the ladder's order is in
:mod:`core.storage.schema`."""
