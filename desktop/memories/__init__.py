"""The memory browser: a lazy table over the store, search and filters, the detail editor,
bulk actions, history, and the first-run agent setup shown while the group is empty.

May import: ``desktop.widgets`` and ``core``. The review inbox and the other views reuse its
list model, actions and formatting, so it sits one layer below them.
"""
