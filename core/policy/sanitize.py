"""Neutralise prompt-injection markers in low-trust content before it is stored.

Text fetched from the web or inferred by a model may carry markers that a later
reader (an agent loading its memory) could mistake for instructions: chat
template tokens, ``[SYSTEM]`` tags, "ignore previous instructions". Each marker
is rewritten into a visibly inert form rather than deleted, so a person reviewing
the entry still sees what the source tried, and nothing they wrote is lost.

Every rewrite produces text that no rule matches again, which makes
:func:`neutralize` idempotent.
"""

from __future__ import annotations

import re
from enum import StrEnum


class Marker(StrEnum):
    """The kinds of marker :func:`neutralize` rewrites."""

    BRACKET_TAG = "bracket_tag"  # [SYSTEM], [ADMIN], [INSTRUCTION], [INST], [/INST]
    LLAMA_SYS = "llama_sys"  # <<SYS>>, <</SYS>>
    CHAT_TOKEN = "chat_token"  # <|im_start|>, <|system|>, <|eot_id|>
    ROLE_TAG = "role_tag"  # <system>, </system>, <instructions>
    MEMORY_MARKER = "memory_marker"  # [MEMORY: ...], Ambry's own brief markup
    IGNORE_PREVIOUS = "ignore_previous"  # "ignore all previous instructions"
    ROLE_HIJACK = "role_hijack"  # "you are now ...", "from now on you will ..."
    ROLE_LABEL = "role_label"  # "System:" or "### System:" at the start of a line


_NEUTRALIZED = "[neutralized: "
# Padding inside a marker is bounded, which keeps each attempt cheap and every
# rewrite at least as long as the marker it replaces.
_S = r"[ \t]{0,3}"
# Marker names are matched in ASCII only: with Unicode case folding "ſystem" would
# match "system", and rewriting it to "system" would silently alter the input.
_PATTERN = re.compile(
    rf"(?P<bracket_tag>\[{_S}(?P<bracket>/?{_S}(?ai:system|admin|instructions?|inst)){_S}\])"
    r"|(?P<llama_sys><<[ \t]?(?P<llama>/?[ \t]?(?ai:sys))[ \t]?>>)"
    # Brackets are kept out of a token's name so the rewrite cannot nest markers.
    rf"|(?P<chat_token><[|｜]{_S}(?P<chat>[^\s|｜<>\[\]]{{1,64}}?){_S}[|｜]>)"
    rf"|(?P<role_tag><{_S}(?P<tag>/?{_S}"
    r"(?ai:system(?:[_-][a-z]+)*|admin|instructions?|developer))"
    # An opener that never closes is rewritten too: left alone, it could close on a
    # ">" that the rewrite of some marker after it frees up.
    rf"(?:(?P<attrs>[ \t][^<>\n]{{0,200}}?)?{_S}(?P<close>/?)>|(?![\w-])))"
    rf"|(?P<memory_marker>\[{_S}(?P<memory>/?{_S}(?ai:memory)){_S}(?P<mem_end>[:\]]))"
    # "(?<!\[neutralized: )" leaves a phrase that an earlier pass wrapped alone.
    r"|(?<![\w])(?<!\[neutralized: )(?P<ignore_previous>"
    r"(?ai:ignore|disregard|forget|override|bypass)\s+"
    r"(?:(?:(?ai:all|any|every|the|your|my|of|these|those)\s+){0,3}"
    r"(?ai:previous|prior|preceding|above|earlier|former|foregoing|past|initial|original|system)"
    r"\s+(?ai:instructions?|prompts?|directions?|rules?|messages?|context|commands?"
    r"|guidelines?|guidance|orders?)"
    r"|(?ai:everything|anything|all)\s+(?ai:above|before|prior|previously)))(?!\w)"
    r"|(?<![\w])(?<!\[neutralized: )(?P<role_hijack>"
    r"(?ai:you)\s+(?ai:are)\s+(?ai:now)"
    r"|(?ai:from)\s+(?ai:now)\s+(?ai:on),?\s+(?ai:you)\s+(?ai:are|will|must|shall)"
    r"|(?ai:pretend)\s+(?:(?ai:to)\s+(?ai:be)|(?ai:you)\s+(?ai:are)))(?!\w)"
    r"|(?P<role_label>^(?P<role_prefix>[ \t]*(?:\#{1,6}[ \t]*)?)"
    r"(?P<role>(?ai:system|assistant|developer))[ \t]{0,3}:)",
    re.MULTILINE,
)


# Every marker without "[" or "<" contains one of these words (ASCII, so lower()
# can only add matches, never hide one).
_TRIGGER_WORDS = (
    "ignore", "disregard", "forget", "override", "bypass",
    "now", "pretend",
    "system", "assistant", "developer",
)  # fmt: skip


def _squash(name: str) -> str:
    # "[ / INST ]" and "[/inst]" are the same marker; keep one spelling.
    return "".join(name.split()).lower()


def _rewrite(m: re.Match[str], kind: Marker, found: dict[Marker, None]) -> str:
    match kind:
        case Marker.BRACKET_TAG:
            return f"[content: {_squash(m['bracket'])}]"
        case Marker.LLAMA_SYS:
            return f"[content: {_squash(m['llama'])}]"
        case Marker.CHAT_TOKEN:
            return f"[content: {m['chat']}]"
        case Marker.ROLE_TAG:
            # Attributes are free text and may hide a marker of their own.
            attrs = _neutralize(m["attrs"], found) if m["attrs"] else ""
            return f"[content: {_squash(m['tag'])}{attrs}{m['close'] or ''}]"
        case Marker.MEMORY_MARKER:
            return f"[content: {_squash(m['memory'])}{m['mem_end']}"
        case Marker.IGNORE_PREVIOUS | Marker.ROLE_HIJACK:
            return f"{_NEUTRALIZED}{m[kind]}]"
        case Marker.ROLE_LABEL:
            return f"{m['role_prefix']}[content: {m['role'].lower()}]:"


def _neutralize(text: str, found: dict[Marker, None]) -> str:
    def rewrite(m: re.Match[str]) -> str:
        # Each alternative is wrapped in a group named after its Marker, and that
        # outer group closes last, so it is the match's lastgroup.
        kind = Marker(str(m.lastgroup))
        found.setdefault(kind, None)
        return _rewrite(m, kind, found)

    return _PATTERN.sub(rewrite, text)


def neutralize(text: str) -> tuple[str, tuple[str, ...]]:
    """Rewrite injection markers in ``text`` into inert, visible forms.

    ``[SYSTEM]`` becomes ``[content: system]``, ``<|im_start|>`` becomes
    ``[content: im_start]``, and phrases such as "ignore previous instructions"
    are wrapped as ``[neutralized: ignore previous instructions]``. Words are kept;
    only the markup that made them look like a directive changes.

    Args:
        text: Any string.

    Returns:
        The rewritten text and the :class:`Marker` names found, each once, in order
        of first appearance.
    """
    if not _may_contain_marker(text):
        return text, ()
    found: dict[Marker, None] = {}
    return _neutralize(text, found), tuple(found)


def _may_contain_marker(text: str) -> bool:
    # The combined regex costs ~0.3 ms per 2,000 characters; these look-ups cost
    # a few microseconds and rule out most ordinary text.
    if "[" in text or "<" in text:
        return True
    lowered = text.lower()
    return any(word in lowered for word in _TRIGGER_WORDS)
