"""The review inbox: candidates awaiting the person (accept, reject, defer).

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
