"""The "Connect an agent" page: the MCP configuration, the socket, and who is connected.

May import desktop.memories (the MCP snippet), desktop.widgets, desktop.server and core.
"""
