"""The app's frame: start-up (``app``), the main window, its pages and menus (``main_window``,
``nav``, ``banner``, ``menus``), the command palette and key list (``commands``,
``palette``), the tray and the single running instance (``tray``, ``single_instance``),
remembered window state (``window_state``), group management (``groups``) and the
installation self-test (``selftest``).

May import: every view package, ``desktop.widgets``, ``desktop.server`` and ``core``.
"""
