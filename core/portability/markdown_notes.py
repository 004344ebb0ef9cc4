"""Markdown memory files: ``MEMORY.md``, ``CLAUDE.md``, or a folder of notes.

The rule, one entry per item a person would point at:

* Each **list item** (``-``, ``*``, ``+``, ``1.``; a task box ``[ ]``/``[x]`` is dropped)
  is one memory, with its indented continuation lines and sub-items kept in it.
* Each **paragraph** outside a list is one memory (a quote's ``>`` is dropped).
* **Headings** are not memories: they give the memories under them their type and a
  tag. The nearest heading that names a kind in a word of its own (a plural too)
  decides the type ("Preferences" →
  preference; "Instructions", "Rules", "Conventions", "Guidelines", "Workflow" →
  instruction; "Corrections", "Mistakes", "Lessons" → correction; "Facts", "About",
  "People", "Environment", "Profile" → fact); otherwise a front-matter ``type:``;
  otherwise context. The innermost heading is a tag.
* Code blocks, tables, HTML comments and horizontal rules are skipped.
* Front matter (``---`` … ``---`` at the top) gives tags (``tags: [a, b]``, ``tags: a,
  b`` or ``- a`` lines) and ``type:``.
* ``[[Note]]`` and ``[[Note|label]]`` links read as their label and add the note's
  name as a tag; so do ``#hashtags``.
* A memory longer than 2,000 characters is split at word boundaries into parts.

Every file also gets a receipt (its SHA-256), so a later change to it shows as
"source changed". A folder is read recursively (``*.md`` and ``*.markdown``, hidden
folders skipped), in name order.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import ijson

from core.model.decoding import decode
from core.model.entries import MAX_CONTENT_CHARS, MAX_TAGS, EntryType
from core.model.errors import InvalidParams
from core.portability.history import ByteProgress, Note, NoteFile, fit_tag

SUFFIXES = (".md", ".markdown")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]+))?\]\]")
_WORDS = re.compile(r"[^\W_]+")
_HASHTAG = re.compile(r"(?<![\w#&/])#([A-Za-z][\w/-]{0,48})")
_KINDS: tuple[tuple[EntryType, tuple[str, ...]], ...] = (
    (EntryType.PREFERENCE, ("preference", "likes", "dislikes", "taste")),
    (
        EntryType.INSTRUCTION,
        ("instruction", "rule", "convention", "guideline", "workflow", "how to", "style"),
    ),
    (EntryType.CORRECTION, ("correction", "mistake", "lesson", "gotcha", "pitfall")),
    (EntryType.FACT, ("fact", "about", "people", "environment", "profile", "context about")),
)


#: How a thread's file of Ambry's own Markdown export begins: it holds the
#: thread's handoff and quoted turns, which are not notes to keep as memories.
_THREAD_FILE = re.compile(r"# [^\n]*\n\nThread `[^`\n]+`, |# Turns filed under no thread\n")


def _a_thread_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            head = handle.read(1024).decode("utf-8", "replace")
    except OSError:
        return False
    return bool(_THREAD_FILE.match(head.removeprefix("\ufeff")))


def files_of(path: Path) -> list[Path]:
    """The Markdown files ``path`` names: itself, or those in the folder (less the
    thread files of an Ambry Markdown export in it)."""
    if path.is_dir():
        found = [
            p
            for p in sorted(path.rglob("*"))
            if p.suffix.lower() in SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(path).parts)
            and not _a_thread_file(p)
        ]
        if not found:
            raise InvalidParams(f"{path} holds no Markdown files (*.md)", field="file")
        return found
    if not path.exists():
        raise InvalidParams(f"no file or folder at {path}", field="file")
    return [path]


def read(path: Path, progress: ByteProgress | None = None) -> Iterator[NoteFile]:
    files = files_of(path)
    sizes = [f.stat().st_size for f in files]
    done = 0
    for file, size in zip(files, sizes, strict=True):
        text = _text(file)
        if file == path:
            _refuse_json(text, file.name)
        yield NoteFile(file, tuple(parse_text(text, file.name)), receipt=True)
        done += size
        if progress is not None:
            progress(done, sum(sizes))


@dataclass
class _Block:
    line: int
    lines: list[str] = field(default_factory=list)


def _text(file: Path) -> str:
    try:
        raw = file.read_bytes()
    except OSError as exc:
        raise InvalidParams(f"cannot read {file}: {exc.strerror or exc}", field="file") from exc
    return decode(raw, file.name)


def _refuse_json(text: str, name: str) -> None:
    """Refuse a file that is JSON (or JSON Lines): another app's export given as notes
    would otherwise be cut into memories of braces and quotes."""
    body = text.lstrip()
    if not body.startswith(("{", "[")):
        return
    try:
        # One value after another (multiple_values), so JSON Lines is JSON here too.
        for _ in ijson.basic_parse(io.BytesIO(body.encode()), multiple_values=True):
            pass
    except ijson.JSONError:
        return  # Markdown that happens to start with a bracket
    raise InvalidParams(
        f"{name} holds JSON, not Markdown notes; give a Markdown file or a folder of them",
        field="file",
    )


def parse(file: Path) -> list[Note]:
    return parse_text(_text(file), file.name)


def parse_text(text: str, name: str) -> list[Note]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start, meta_tags, meta_type = _front_matter(lines, name)
    headings: list[tuple[int, str]] = []
    notes: list[Note] = []
    block: _Block | None = None
    fence: str | None = None

    def flush() -> None:
        nonlocal block
        if block is not None:
            notes.extend(_notes(block, headings, meta_tags, meta_type, name))
            block = None

    for number, line in enumerate(lines[start:], start + 1):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        if m := _FENCE.match(line):
            flush()
            fence = m.group(1)
            continue
        stripped = line.strip()
        if not stripped or _RULE.match(line) or stripped.startswith(("|", "<!--")):
            flush()
            continue
        if m := _HEADING.match(line):
            flush()
            level = len(m.group(1))
            headings = [h for h in headings if h[0] < level] + [(level, m.group(2))]
            continue
        item = _ITEM.match(line)
        if item and not item.group(1):
            flush()
            block = _Block(number, [item.group(2)])
        elif block is not None:
            block.lines.append(_unquote(stripped) if item is None else line.rstrip())
        else:
            block = _Block(number, [_unquote(stripped)])
    flush()
    return notes


def _unquote(line: str) -> str:
    return line.lstrip(">").strip() or line


def _front_matter(lines: list[str], name: str) -> tuple[int, list[str], EntryType | None]:
    if not lines or lines[0].strip() != "---":
        return 0, [], None
    for end in range(1, len(lines)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        raise InvalidParams(
            f"{name} line 1: front matter opened with --- is never closed; add a --- line after it",
            field="file",
        )
    tags: list[str] = []
    entry_type: EntryType | None = None
    key = ""
    for number, line in enumerate(lines[1:end], 2):
        if line.lstrip().startswith("- ") and key == "tags":
            tags.append(line.strip()[2:].strip().strip("'\""))
            continue
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "tags" and value:
            tags += [t.strip().strip("'\"#") for t in value.strip("[]").split(",")]
        elif key == "type" and value:
            try:
                entry_type = EntryType(value.strip("'\"").lower())
            except ValueError:
                raise InvalidParams(
                    f"{name} line {number}: type {value!r} is not one of "
                    + ", ".join(t.value for t in EntryType),
                    field="type",
                ) from None
    return end + 1, [t for t in tags if t], entry_type


def _type_for(headings: list[tuple[int, str]], default: EntryType | None) -> EntryType:
    for _, title in reversed(headings):
        words = _WORDS.findall(title.casefold())
        for entry_type, names in _KINDS:
            if any(_names(name.split(), words) for name in names):
                return entry_type
    return default or EntryType.CONTEXT


def _names(name: list[str], words: list[str]) -> bool:
    """Whether ``words`` hold ``name`` as whole words, its last one maybe plural: "Code
    style" and "Lessons learned" name a kind; "Stylesheets" and "Build artifacts" do not."""
    *lead, last = name
    size = len(name)
    for i in range(len(words) - size + 1):
        if words[i : i + size - 1] == lead and words[i + size - 1] in (last, last + "s"):
            return True
    return False


#: The line under each item of Ambry's own Markdown export: id, source, trust, tags.
_EXPORT_NOTE = re.compile(
    r"^\*(?:\*\*awaiting review\*\*; )?`mem-[0-9a-f-]{36}`; [^*]*?(?:; tags: (?P<tags>[^*]*))?\*$"
)


def _notes(
    block: _Block,
    headings: list[tuple[int, str]],
    meta_tags: list[str],
    meta_type: EntryType | None,
    name: str,
) -> list[Note]:
    text = "\n".join(block.lines).strip()
    if not text:
        return []
    links: list[str] = []

    def label(m: re.Match[str]) -> str:
        links.append(m.group(1).strip())
        return (m.group(2) or m.group(1)).strip()

    text = _LINK.sub(label, text)
    tags = [*meta_tags, *([headings[-1][1]] if headings else []), *links]
    body, _, last = text.rpartition("\n")
    if body and (exported := _EXPORT_NOTE.match(last.strip())):
        # An item of `ambry export --format markdown`: its text and tags as they were,
        # so it comes back as the memory it was (and is found already present).
        text = body.strip()
        tags = [*meta_tags, *(exported["tags"] or "").split(", "), *links]
    tags += _HASHTAG.findall(text)
    seen: dict[str, str] = {}
    for tag in tags:
        t = fit_tag(" ".join(tag.split()))
        if t and t.casefold() not in seen:
            seen[t.casefold()] = t
    kept = tuple(list(seen.values())[:MAX_TAGS])
    entry_type = _type_for(headings, meta_type)
    where = f"{name} line {block.line}"
    parts = _split(text)
    if len(parts) == 1:
        return [Note(entry_type, text, kept, where)]
    return [Note(entry_type, p, kept, f"{where} (part {i})") for i, p in enumerate(parts, 1)]


def _split(text: str) -> list[str]:
    parts: list[str] = []
    while len(text) > MAX_CONTENT_CHARS:
        cut = text.rfind(" ", 0, MAX_CONTENT_CHARS)
        cut = cut if cut > MAX_CONTENT_CHARS // 2 else MAX_CONTENT_CHARS
        parts.append(text[:cut].strip())
        text = text[cut:].strip()
    return [*parts, text] if text else parts
