"""Ambry's PySide6 desktop app and the Qt side of the agent socket (QLocalServer)."""
