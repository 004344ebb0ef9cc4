"""Settings: limits, rates and the agent token, plus data tasks (export, import, clear).

May import: ``desktop.memories``, ``desktop.widgets`` and ``core``.
"""
