"""Agent protocol methods for memories: the manifest's tools and marker ingestion."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from core.agent.dispatch import Connection, Dispatcher, Handler
from core.agent.search_results import related_memories, search_memories
from core.model.errors import NotFound
from core.policy.manifest import validate_args

if TYPE_CHECKING:
    from core.model.caller import Caller
    from core.service import MemoryService

MEMORY_TOOLS: Final = (
    "memory_store",
    "memory_search",
    "memory_brief",
    "memory_delete",
    "memory_related",
)


def run_tool(service: MemoryService, caller: Caller, name: str, args: dict[str, Any]) -> Any:
    """Call one memory tool (MCP reaches it through the same dispatcher method).

    Raises:
        NotFound: ``name`` is not one of :data:`MEMORY_TOOLS`.
        AmbryError: whatever the service refuses.
    """
    match name:
        case "memory_store":
            return service.store(caller, args).to_dict()
        case "memory_search":
            return search_memories(service, caller, args).to_dict()
        case "memory_brief":
            return service.brief(caller, args).to_dict()
        case "memory_delete":
            return service.delete_tool(caller, args).to_dict()
        case "memory_related":
            return related_memories(service, caller, args).to_dict()
        case _:
            raise NotFound(f"unknown tool {name!r}; known: {', '.join(MEMORY_TOOLS)}")


def _tool(name: str) -> Handler:
    def handler(conn: Connection, params: dict[str, Any]) -> Any:
        return run_tool(conn.service, conn.caller, name, params)

    return handler


def _ingest_text(conn: Connection, params: dict[str, Any]) -> Any:
    args = validate_args("ingest_text", params)
    return conn.service.ingest_text(conn.caller, args["text"]).to_dict()


def register(dispatcher: Dispatcher) -> None:
    for name in MEMORY_TOOLS:
        dispatcher.register_method(name, _tool(name))
    dispatcher.register_method("ingest_text", _ingest_text)
