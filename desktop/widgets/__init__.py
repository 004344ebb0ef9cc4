"""What every view shares: messages to the person, background work (``ops``), the app state
and its change signal (``watch``), table and record models, lazy pages, placeholders,
Markdown rendering and handing folders to the file manager.

May import: ``core`` only.
"""
