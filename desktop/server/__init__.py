"""The agent socket on the Qt side: a QLocalServer that moves frames between clients and
the dispatcher of ``core.agent``, and the headless event loop of ``ambry serve``.

May import: ``core`` only; no view, no widget.
"""
