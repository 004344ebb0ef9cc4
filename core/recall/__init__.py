"""Finding memories and handing them to an agent: search and the brief.

Owns: memory search (``search``, with hybrid ranking in ``memory_recall``), related
memories (``related``), browse order (``ordering``), and the brief: its values
(``brief_values``), selection and rendering (``brief``), how a section is cut
short (``section_cut``) and its queries (``briefing``).
May import: ``core.memory`` and everything below it; not its sibling capabilities
(``continuity``, ``attachments``): the service composes them.
"""
