"""Finding memories and handing them to an agent: search and the brief.

Owns: memory search and browse ordering (``search``), the brief's selection and
rendering (``brief``) and its queries over a group (``briefing``).
May import: ``core.memory``, ``core.policy``, ``core.storage``, ``core.model``; not its
sibling capabilities (``continuity``, ``attachments``): the service composes them.
"""
