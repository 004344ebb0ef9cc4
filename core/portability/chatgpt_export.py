"""ChatGPT's data export: ``conversations.json`` (or the zip it comes in).

The file is a JSON array of conversations. Each holds its messages as a tree, because
an edited question or a regenerated answer starts a branch::

    {"id": "…", "title": "…", "create_time": 1714550000.1, "update_time": …,
     "current_node": "<node id>",
     "mapping": {"<node id>": {"id": "…", "parent": "<node id>" | null, "children": […],
                 "message": null | {"id": "…", "author": {"role": "user"}, "create_time": …,
                                    "content": {"content_type": "text", "parts": ["…"]},
                                    "recipient": "all", "metadata": {…}}}, …}}

Only the branch the person last saw is imported: from ``current_node`` up through the
parents to the root, then in order. Of its messages, those kept are the person's and
the assistant's visible text (``content_type`` ``text`` or ``multimodal_text``, sent
to ``all``); system and tool messages, hidden ones
(``metadata.is_visually_hidden_from_conversation``), code the assistant sent to a
tool, and empty messages are skipped. The assistant is named after the model
(``metadata.model_slug``) when the export says which it was.

A ``multimodal_text`` message mixes strings with parts that are objects::

    {"content_type": "image_asset_pointer", "asset_pointer": "file-service://…"}
    {"content_type": "audio_transcription", "text": "…", "direction": "in"}
    {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://…"}
    {"content_type": "real_time_user_audio_video_asset_pointer",
     "audio_asset_pointer": {…}, "video_container_asset_pointer": {…} | null,
     "frames_asset_pointers": […]}

A voice message keeps what was said: a transcription's text is the turn's text, and
the recording it came with adds nothing. A recording without a transcription reads
``[audio]``, an image ``[image]``, a video (or the frames of one) ``[video]``, and any
other object without text ``[attachment]``.
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
_KEPT_ROLES = frozenset({"user", "assistant"})
_TEXT_TYPES = frozenset({"text", "multimodal_text"})


def read(path: Path, progress: ByteProgress | None = None) -> Iterator[Conversation]:
    for number, item in stream_array(path, MEMBER, "conversation", progress):
        yield conversation(item, f"{path.name}: conversation {number}")


def conversation(item: dict[str, Any], where: str) -> Conversation:
    ident = item.get("conversation_id") or item.get("id")
    if not isinstance(ident, str) or not ident:
        raise InvalidParams(f"{where}: has no id (conversation_id or id must be a string)")
    where = f"{where} (id {short(ident)})"
    mapping = item.get("mapping")
    if not isinstance(mapping, dict):
        raise InvalidParams(f"{where}: mapping must be an object of message nodes")
    turns = tuple(
        t for node in _branch(mapping, item.get("current_node"), where) if (t := _turn(node, where))
    )
    return Conversation(
        source_id=ident,
        title=text_field(item, "title", where, required=False),
        created_at=parse_time(item.get("create_time"), f"{where}.create_time"),
        updated_at=parse_time(item.get("update_time"), f"{where}.update_time"),
        turns=turns,
        where=where,
    )


def _branch(mapping: dict[str, Any], current: Any, where: str) -> list[dict[str, Any]]:
    """The nodes from the root down to ``current``."""
    if not mapping:
        return []
    if not isinstance(current, str) or current not in mapping:
        raise InvalidParams(
            f"{where}: current_node {current!r} is not a node of its mapping", field="current_node"
        )
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if node_id in seen:
            raise InvalidParams(f"{where}: mapping node {short(str(node_id))} is its own ancestor")
        seen.add(node_id)
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            raise InvalidParams(
                f"{where}: mapping has no node {short(str(node_id))}, which another node "
                "names as its parent"
            )
        path.append(node)
        node_id = node.get("parent")
        if node_id is not None and not isinstance(node_id, str):
            raise InvalidParams(f"{where}: mapping node parent must be a string or null")
    path.reverse()
    return path


#: What a part that is a file, not text, reads as.
_MEDIA = {
    "image_asset_pointer": "[image]",
    "audio_asset_pointer": "[audio]",
    "video_container_asset_pointer": "[video]",
}
_AUDIO = "[audio]"


def _part_texts(parts: list[Any]) -> list[str]:
    """Each part of a message as text: its words, or what kind of file it is."""
    texts = [_part_text(p) for p in parts]
    if any(t.strip() for p, t in zip(parts, texts, strict=True) if _is_words(p)):
        # The recording of a transcribed voice message says nothing the words do not.
        texts = [t for t in texts if t != _AUDIO]
    return [t for t in texts if t]


def _is_words(part: Any) -> bool:
    return isinstance(part, str) or (
        isinstance(part, dict) and part.get("content_type") == "audio_transcription"
    )


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    if kind == "real_time_user_audio_video_asset_pointer":
        video = part.get("video_container_asset_pointer") or part.get("frames_asset_pointers")
        return "[video]" if video else _AUDIO
    if isinstance(kind, str) and kind in _MEDIA:
        return _MEDIA[kind]
    text = part.get("text")
    if isinstance(text, str):
        return text  # a transcription, or any other part that has words
    return "[attachment]"


def _turn(node: dict[str, Any], where: str) -> Turn | None:
    msg = node.get("message")
    if msg is None:
        return None
    node_id = str(node.get("id") or "?")
    at = f"{where}: message {short(node_id)}"
    if not isinstance(msg, dict):
        raise InvalidParams(f"{at}: message must be an object or null")
    author = msg.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if not isinstance(role, str):
        raise InvalidParams(f"{at}: author.role must be a string")
    metadata = msg.get("metadata") or {}
    if (
        role not in _KEPT_ROLES
        or msg.get("recipient", "all") != "all"
        or (isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"))
    ):
        return None
    content = msg.get("content")
    if not isinstance(content, dict):
        raise InvalidParams(f"{at}: content must be an object")
    if content.get("content_type") not in _TEXT_TYPES:
        return None
    parts = content.get("parts")
    if not isinstance(parts, list):
        raise InvalidParams(f"{at}: content.parts must be a list")
    text = "\n\n".join(_part_texts(parts))
    if not text.strip():
        return None
    model = metadata.get("model_slug") if isinstance(metadata, dict) else None
    name = None
    if role == "assistant":
        name = model if isinstance(model, str) and model else "ChatGPT"
    key = msg.get("id") or node.get("id")
    if not isinstance(key, str) or not key:
        raise InvalidParams(f"{at}: has no id")
    return Turn(
        key=key,
        speaker=role,
        text=text,
        name=name,
        at=parse_time(msg.get("create_time"), f"{at}.create_time"),
    )
