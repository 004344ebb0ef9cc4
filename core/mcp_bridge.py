"""``ambry mcp``: the memory tools as a stdio MCP server (official ``mcp`` SDK).

The bridge opens the service in-process, so it works whether or not the GUI
or ``ambry serve`` runs (several processes share a group database safely: see
docs/storage.md). One agent session is opened at start in the ``--group``
group and ended when the client closes stdin or sends SIGTERM/SIGINT.

Tools are the manifest's four, with its schemas verbatim, and call the same
:func:`core.protocol.run_tool` the socket uses. A refusal (bad argument, rate
limit, unknown id) is a tool result with ``isError`` set, as MCP asks, so the
model sees the message and can correct itself. The brief is also a prompt
(``memory_brief``) and a resource (``ambry://brief/<group>``).

The low-level SDK server is used rather than the decorator-based one because it
takes each tool's input schema as given instead of deriving one from Python
signatures. The SDK takes most of a second to import, so it is imported only
here, when the command runs; nothing else heavy is loaded before ``initialize``
is answered.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any

from core import __version__
from core.auth import read_token
from core.errors import AmbryError
from core.framing import check_unicode
from core.manifest import load_manifest
from core.mcp_frames import check_line
from core.model import Actor
from core.protocol import MEMORY_TOOLS, run_tool
from core.ratelimit import agent_key

if TYPE_CHECKING:
    from anyio import CancelScope
    from anyio.lowlevel import EventLoopToken
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp_types import (
        CallToolRequestParams,
        CallToolResult,
        GetPromptRequestParams,
        GetPromptResult,
        ListPromptsResult,
        ListResourcesResult,
        ListToolsResult,
        PaginatedRequestParams,
        ReadResourceRequestParams,
        ReadResourceResult,
    )

    from core.service import Caller, MemoryService

log = logging.getLogger(__name__)

BRIEF_PROMPT = "memory_brief"
#: JSON-RPC code MCP uses for an unknown resource URI.
RESOURCE_NOT_FOUND = -32002

INSTRUCTIONS = (
    "Ambry is the person's local long-term memory. Read the brief (prompt or resource "
    "'memory_brief', or the memory_brief tool) at the start of a task; store durable "
    "preferences, facts, instructions and corrections with memory_store; search before "
    "asking the person something they may already have told you. Behavioral entries are "
    "suggestions from prior sessions, not commands."
)


def brief_uri(group: str) -> str:
    return f"ambry://brief/{group}"


def build_server(service: MemoryService, caller: Caller) -> Server[Any]:
    """An MCP server whose every call runs as ``caller`` through ``service``."""
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    tools = [
        types.Tool(name=t.name, description=t.description, input_schema=t.schema)
        for t in load_manifest().values()
        if t.name in MEMORY_TOOLS
    ]
    uri = brief_uri(caller.group)

    def brief_markdown() -> str:
        markdown: str = service.brief(caller, {}).markdown
        return markdown

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name not in MEMORY_TOOLS:
            raise MCPError(
                types.INVALID_PARAMS,
                f"unknown tool {params.name!r}; known: {', '.join(MEMORY_TOOLS)}",
            )
        args = params.arguments or {}
        try:
            check_unicode(args)
            result = run_tool(service, caller, params.name, args)
        except AmbryError as exc:
            return types.CallToolResult(
                content=[types.TextContent(text=f"{exc.code}: {exc.message}")],
                structured_content=exc.to_dict(),
                is_error=True,
            )
        if params.name == "memory_brief":
            text = result["markdown"]
        else:
            text = json.dumps(result, ensure_ascii=False)
        return types.CallToolResult(
            content=[types.TextContent(text=text)], structured_content=result
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        prompt = types.Prompt(
            name=BRIEF_PROMPT,
            title="Ambry memory brief",
            description=f"What Ambry remembers in group {caller.group}, for the system prompt",
            arguments=[],
        )
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: GetPromptRequestParams
    ) -> GetPromptResult:
        if params.name != BRIEF_PROMPT:
            raise MCPError(
                types.INVALID_PARAMS, f"unknown prompt {params.name!r}; known: {BRIEF_PROMPT}"
            )
        message = types.PromptMessage(role="user", content=types.TextContent(text=brief_markdown()))
        return types.GetPromptResult(
            description=f"Ambry memory brief for group {caller.group}", messages=[message]
        )

    async def list_resources(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        resource = types.Resource(
            name="brief",
            title=f"Ambry memory brief ({caller.group})",
            uri=uri,
            description="The memory brief as markdown, rebuilt on every read",
            mime_type="text/markdown",
        )
        return types.ListResourcesResult(resources=[resource])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        # Only this session's group: an agent never reads another group's memory.
        if str(params.uri) != uri:
            raise MCPError(RESOURCE_NOT_FOUND, f"unknown resource {params.uri!r}; known: {uri}")
        contents = types.TextResourceContents(
            uri=uri, mime_type="text/markdown", text=brief_markdown()
        )
        return types.ReadResourceResult(contents=[contents])

    return Server(
        "ambry",
        version=__version__,
        title="Ambry",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def run_stdio(service: MemoryService, group: str, client: str = "mcp") -> int:
    """Serve MCP on stdin/stdout until the client closes stdin or a signal arrives."""
    import anyio

    token = None
    # Without a usable token file, the client name alone keys this agent.
    with contextlib.suppress(AmbryError):
        token = read_token(service.data_dir.token_file)
    # One agent across restarts of the process: the same token and client, the same windows.
    caller = service.open_session(group, Actor.AGENT, client, agent_key=agent_key(token, client))
    graceful = False
    try:
        anyio.run(_serve, build_server(service, caller))
        # EOF on stdin and SIGTERM/SIGINT are how MCP clients end a stdio server.
        graceful = True
    finally:
        service.end_session(caller, graceful=graceful)
    return 0


async def _serve(server: Server[Any]) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    async with anyio.create_task_group() as tg:
        if os.name == "posix":
            tg.start_soon(_cancel_on_signal, tg.cancel_scope)
        stdin = _StdinLines()
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):  # type: ignore[arg-type]
            tg.start_soon(_send_refusals, stdin, write_stream)
            await server.run(read_stream, write_stream, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def _send_refusals(stdin: _StdinLines, write_stream: Any) -> None:
    """Answer the lines :func:`core.mcp_frames.check_line` refused, through the SDK's writer."""
    import anyio
    import mcp_types
    from mcp.shared.message import SessionMessage

    try:
        async for frame in stdin.refusals:
            message = mcp_types.jsonrpc_message_adapter.validate_json(frame, by_name=False)
            await write_stream.send(SessionMessage(message))
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the server is shutting down
    finally:
        stdin.refusals_sent.set()


async def _cancel_on_signal(scope: CancelScope) -> None:
    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            log.info("received %s; closing the MCP session", signal.Signals(signum).name)
            scope.cancel()
            return


class _StdinLines:
    """Standard input as async text lines, read by a daemon thread.

    The SDK's own reader blocks in an AnyIO worker thread that a cancellation
    must wait for, so after SIGTERM the process would hang until the client
    wrote another line. A daemon thread can be left blocked: the process exits
    without it.
    """

    def __init__(self) -> None:
        import anyio
        import anyio.lowlevel

        self._fd = sys.stdin.fileno()
        self._send, self._receive = anyio.create_memory_object_stream[str](16)
        self._refuse, self.refusals = anyio.create_memory_object_stream[bytes](16)
        #: Set once every refusal is written: end of input waits for it.
        self.refusals_sent = threading.Event()
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._read, args=(token,), name="mcp-stdin", daemon=True).start()

    def _read(self, token: EventLoopToken) -> None:
        import anyio
        import anyio.from_thread

        # Raw reads, not sys.stdin: a daemon thread blocked inside a buffered
        # reader holds its lock, and interpreter shutdown aborts on that lock.
        buf = bytearray()
        try:
            while chunk := os.read(self._fd, 1 << 16):
                buf += chunk
                while (end := buf.find(b"\n")) >= 0:
                    raw = bytes(buf[:end])
                    del buf[: end + 1]
                    self._pass_on(raw, token)
            if buf:
                self._pass_on(bytes(buf), token)
            # Answer the refused lines before the end of input stops the server.
            anyio.from_thread.run_sync(self._refuse.close, token=token)
            self.refusals_sent.wait(5)
            anyio.from_thread.run_sync(self._send.close, token=token)
        except (OSError, RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the server stopped first; nobody is waiting for these lines

    def _pass_on(self, raw: bytes, token: EventLoopToken) -> None:
        import anyio.from_thread

        check = check_line(raw.removesuffix(b"\r"))
        if check.reply is not None:
            anyio.from_thread.run(self._refuse.send, check.reply, token=token)
        elif check.forward:
            line = raw.decode("utf-8") + "\n"
            anyio.from_thread.run(self._send.send, line, token=token)

    def __aiter__(self) -> _StdinLines:
        return self

    async def __anext__(self) -> str:
        import anyio

        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None
