"""Claude.ai's data export: ``conversations.json`` (or the zip it comes in).

The file is a JSON array of conversations::

    {"uuid": "…", "name": "Trip planning", "created_at": "2024-05-01T09:30:00.000000Z",
     "updated_at": "…", "chat_messages": [
        {"uuid": "…", "sender": "human" | "assistant", "text": "…",
         "content": [{"type": "text", "text": "…"}, …], "created_at": "…"}, …]}

Each conversation becomes a thread and each message a turn with its sender (``human``
→ ``user``, ``assistant`` → ``assistant``, named "Claude") and original time. A message's
text is its ``text`` field, or else the ``text`` parts of its ``content``; messages with
no text at all (a tool call, an attachment alone) are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.model.errors import InvalidParams
from core.portability.history import (
    ByteProgress,
    Conversation,
    Turn,
    parse_time,
    short,
    stream_array,
    text_field,
)

MEMBER = "conversations.json"
_SPEAKERS = {"human": "user", "assistant": "assistant"}


def read(path: Path, progress: ByteProgress | None = None) -> Iterator[Conversation]:
    for number, item in stream_array(path, MEMBER, "conversation", progress):
        yield conversation(item, f"{path.name}: conversation {number}")


def conversation(item: dict[str, Any], where: str) -> Conversation:
    ident = text_field(item, "uuid", where)
    where = f"{where} (uuid {short(ident)})"
    messages = item.get("chat_messages")
    if not isinstance(messages, list):
        raise InvalidParams(f"{where}: chat_messages must be a list of messages")
    turns: list[Turn] = []
    for i, msg in enumerate(messages):
        at = f"{where}: chat_messages[{i}]"
        if not isinstance(msg, dict):
            raise InvalidParams(f"{at} must be an object")
        sender = msg.get("sender")
        if sender not in _SPEAKERS:
            raise InvalidParams(f"{at}: sender is {sender!r}; expected 'human' or 'assistant'")
        text = _message_text(msg, at)
        if not text.strip():
            continue
        speaker = _SPEAKERS[sender]
        turns.append(
            Turn(
                key=text_field(msg, "uuid", at),
                speaker=speaker,
                text=text,
                name="Claude" if speaker == "assistant" else None,
                at=parse_time(msg.get("created_at"), f"{at}.created_at"),
            )
        )
    return Conversation(
        source_id=ident,
        title=text_field(item, "name", where, required=False),
        created_at=parse_time(item.get("created_at"), f"{where}.created_at"),
        updated_at=parse_time(item.get("updated_at"), f"{where}.updated_at"),
        turns=tuple(turns),
        where=where,
    )


def _message_text(msg: dict[str, Any], where: str) -> str:
    text = text_field(msg, "text", where, required=False)
    if text.strip():
        return text
    content = msg.get("content")
    if content is None:
        return ""
    if not isinstance(content, list):
        raise InvalidParams(f"{where}: content must be a list of parts")
    parts = [
        p["text"]
        for p in content
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    ]
    return "\n\n".join(parts)
