"""The agent's way in: the wire format, the protocol methods, the client and the MCP bridge.

Owns: JSON-RPC framing (``framing``), the method table and a connection's state
(``dispatch``), the methods themselves (``rpc_session``, ``rpc_memory``,
``rpc_continuity``, ``rpc_attachments``) assembled by ``protocol``, the agent token
(``auth``), the stdlib client (``client``) and the stdio MCP server (``mcp_bridge``
for MCP's methods on the same dispatcher, ``mcp_stdio`` for its transport).
May import: ``core.service`` and everything below it. Never Qt: the socket server that
carries these frames lives in ``desktop.server``.
"""
