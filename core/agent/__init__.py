"""The agent's way in: the wire format, the protocol methods, the client and MCP.

Owns: JSON-RPC framing (``framing``), the method table and a connection's state
(``dispatch``), the methods themselves (``rpc_session``, ``rpc_memory``,
``rpc_continuity``, ``rpc_attachments``, ``rpc_claims``) assembled by ``protocol``,
the results of the two searches, which the CLI's ``--json`` prints too
(``search_results``), the signals that stop a server (``signals``), the agent token
(``auth``), the stdlib client (``client``), and the stdio MCP server: MCP's own methods
(``mcp_bridge``) over a line loop (``mcp_stdio``), every socket method a tool.
May import: ``core.service`` and everything below it. Never Qt: the socket server that
carries these frames lives in ``desktop.server``.
"""
