"""The app's frame: start-up (``app``), the main window and its navigation
(``main_window``), and the installation self-test (``selftest``).

May import: every view package, ``desktop.widgets``, ``desktop.server`` and ``core``.
"""
