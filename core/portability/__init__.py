"""Moving a group in and out: export, import, other apps' histories, and whole groups.

Owns: the ``ambry-export`` JSONL format (``format``, ``export``, ``importing``,
and ``merging``: what a record already stored takes from a newer export), imports
from Claude, ChatGPT, the MCP memory server and Markdown notes (``history``,
``history_import``, ``claude_export``, ``chatgpt_export``, ``mcp_memory``,
``markdown_notes``), the Markdown export (``markdown_export``) and renaming or
deleting a group after a backup (``groups``). Everything imported passes the same
write policy as an agent's write.
May import: every capability below the service.
"""
