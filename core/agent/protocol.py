"""The agent protocol without a transport: JSON-RPC 2.0 requests dispatched to the service.

A transport (the Qt socket server in ``desktop/``, a test, a future pipe) feeds
bytes into a :class:`~core.agent.framing.FrameBuffer` (the wire format is in
:mod:`core.agent.framing`), hands each complete line to its :class:`Connection` and
writes back the reply frame, if any. Nothing here blocks, owns a socket or
imports Qt, so every rule is testable without one.

Decisions (docs/protocol.md is the reference for agents):

* One JSON-RPC 2.0 object per line, UTF-8, at most :data:`~core.agent.framing.MAX_FRAME_BYTES`
  before the newline. A longer line is :class:`~core.agent.framing.FrameTooLarge`: the transport
  sends one error and closes, as it cannot find where the next frame starts
  without reading the rest of a hostile stream.
* Batches (JSON arrays) are refused with -32600. Line framing already lets a
  client pipeline requests, and a batch would let one frame fan out into
  unbounded work with a single combined reply.
* Requests on a connection run one at a time in arrival order and replies come
  back in that order; clients still match replies by ``id``.
* Notifications (no ``id``) run but are never answered, not even with an error.
* ``hello`` must open a session before any other method; the session's id and
  group are the provenance of every write and no call argument can change them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from core.agent import (
    rpc_attachments,
    rpc_claims,
    rpc_continuity,
    rpc_layers,
    rpc_memory,
    rpc_session,
)
from core.agent.dispatch import Dispatcher

if TYPE_CHECKING:
    from core.service import MemoryService


def agent_dispatcher(service: MemoryService, token_file: Path | None = None) -> Dispatcher:
    """The method table the agent socket serves: every method of docs/protocol.md."""
    dispatcher = Dispatcher(service, token_file)
    for module in (
        rpc_session,
        rpc_memory,
        rpc_attachments,
        rpc_continuity,
        rpc_claims,
        rpc_layers,
    ):
        module.register(dispatcher)
    return dispatcher
