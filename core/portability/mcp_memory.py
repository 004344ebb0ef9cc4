"""The official MCP memory server's knowledge graph file (``memory.jsonl``).

One JSON object per line, an entity or a relation::

    {"type": "entity", "name": "Dana_Lee", "entityType": "person",
     "observations": ["Prefers morning meetings", "Works on the billing service"]}
    {"type": "relation", "from": "Dana_Lee", "to": "Billing", "relationType": "works_on"}

Each observation becomes a fact about its entity (``Dana Lee: Prefers morning
meetings``), tagged with the entity's name and type. Each relation becomes a fact of
its own (``Dana Lee works on Billing``), tagged with both names and ``relation``.
Underscores in names and relation types read as spaces, unless the name holds what
looks like a secret: that one is passed on as the file has it, so the write's screening
sees it as sent (``ghp_…`` read as ``ghp …`` would pass). An entity without
observations adds nothing by itself; its relations still do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.model.decoding import decode
from core.model.entries import EntryType
from core.model.errors import InvalidParams
from core.portability.history import ByteProgress, Note, NoteFile, fit_tag, holds_secret, text_field


def read(path: Path, progress: ByteProgress | None = None) -> Iterator[NoteFile]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidParams(f"cannot read {path}: {exc.strerror or exc}", field="file") from exc
    notes: list[Note] = []
    # Lines end at \n (or \r\n) only: JSON.stringify, which the memory server writes
    # with, leaves U+2028 and U+0085 in a string as they are, and str.splitlines
    # would break the line there.
    for number, line in enumerate(decode(data, path.name).split("\n"), 1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidParams(f"{where}: not JSON ({exc.msg} at column {exc.colno})") from None
        if not isinstance(value, dict):
            raise InvalidParams(f"{where}: expected an object with a type, entity or relation")
        notes += _notes(value, where)
    if progress is not None:
        progress(len(data), len(data))
    yield NoteFile(path, tuple(notes), receipt=False)


def _notes(value: dict[str, Any], where: str) -> list[Note]:
    match value.get("type"):
        case "entity":
            name = _words(text_field(value, "name", where))
            kind = _words(text_field(value, "entityType", where, required=False))
            observations = value.get("observations", [])
            if not isinstance(observations, list):
                raise InvalidParams(f"{where}: observations must be a list of strings")
            notes = []
            for i, obs in enumerate(observations):
                if not isinstance(obs, str):
                    raise InvalidParams(f"{where}: observations[{i}] must be a string")
                if obs.strip():
                    tags = _tags(name, kind)
                    notes.append(Note(EntryType.FACT, f"{name}: {obs.strip()}", tags, where))
            return notes
        case "relation":
            source = _words(text_field(value, "from", where))
            target = _words(text_field(value, "to", where))
            relation = _words(text_field(value, "relationType", where))
            content = f"{source} {relation} {target}"
            return [Note(EntryType.FACT, content, _tags(source, target, "relation"), where)]
        case other:
            raise InvalidParams(
                f"{where}: type is {other!r}; expected 'entity' or 'relation'", field="type"
            )


def _words(text: str) -> str:
    if holds_secret(text):
        return text.strip()
    return " ".join(text.replace("_", " ").split())


def _tags(*names: str) -> tuple[str, ...]:
    return tuple(tag for n in names if (tag := fit_tag(n)))
