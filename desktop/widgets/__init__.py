"""What every view shares: messages to the person, background work (``ops``), the app state
and its change signal (``watch``), table and record models, lazy pages, placeholders,
Markdown rendering, the lists' right-click menus (``row_menu``), handing folders to the
file manager (``files``), key helpers (``keys``), the room a line edit has for its
text (``text_room``), panes that stack in a narrow window (``stacking``), the person's
window preferences and theme (``prefs``, ``theme``) and the embedding progress in the
status bar (``embedding_status``).

May import: ``core`` only.
"""
