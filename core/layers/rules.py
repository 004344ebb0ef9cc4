"""The compression rules: what of a conversation is worth keeping, sentence by sentence.

No model is involved. Each turn is split into sentences and each sentence gets a
:class:`Kind` from its wording and its speaker:

* kept and favoured: the person's ``remember`` requests ("remember this", "don't
  forget", "keep in mind"), corrections ("no, actually...", "I meant..."),
  instructions ("always...", "please...", "from now on...") and decisions by
  either side ("let's...", "we decided...", "I'll go with...");
* kept: other statements, and questions (weakly);
* dropped: greetings and sign-offs, filler ("ok", "sounds good", "haha"), every
  turn by the ``tool`` speaker (tool output) and by ``system`` (runtime notes).

An assistant's "you should..." is advice, not the person's instruction, so only
the ``user`` speaker's sentences can be instructions, corrections or remember
requests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final


class Kind(StrEnum):
    REMEMBER = "remember"
    CORRECTION = "correction"
    INSTRUCTION = "instruction"
    DECISION = "decision"
    STATEMENT = "statement"
    QUESTION = "question"
    GREETING = "greeting"
    FILLER = "filler"
    TOOL = "tool"


#: How much each kind counts when sentences compete for a summary (0: dropped).
WEIGHT: Final[dict[Kind, float]] = {
    Kind.REMEMBER: 3.0,
    Kind.CORRECTION: 2.5,
    Kind.INSTRUCTION: 2.2,
    Kind.DECISION: 2.0,
    Kind.STATEMENT: 1.0,
    Kind.QUESTION: 0.5,
    Kind.GREETING: 0.0,
    Kind.FILLER: 0.0,
    Kind.TOOL: 0.0,
}

#: Kinds quoted verbatim in a summary's key quotes.
QUOTABLE: Final = frozenset({Kind.REMEMBER, Kind.CORRECTION, Kind.INSTRUCTION, Kind.DECISION})

_FLAGS = re.IGNORECASE
_REMEMBER = re.compile(
    r"\b(remember (this|that|to)|don'?t forget|do not forget|keep (this |that )?in mind|"
    r"for the record|make a note|note (this|that) down|never forget)\b",
    _FLAGS,
)
_CORRECTION = re.compile(
    r"^(no|nope|wrong|not quite|actually)\b[\s,.!:-]|\b(that'?s (not right|wrong|incorrect)|"
    r"i meant|correction:|you (got|have) (it|that) wrong|not what i (said|meant)|"
    r"that was a mistake|i was wrong)\b",
    _FLAGS,
)
_INSTRUCTION = re.compile(
    r"^(please|always|never|don'?t|do not|make sure|avoid|stop|use|keep|call me|send|write|"
    r"run|remind me)\b|\b(you should|you must|i want you to|i'?d like you to|from now on|"
    r"going forward|in future|from here on)\b",
    _FLAGS,
)
_DECISION = re.compile(
    r"\b(let'?s|we'?ll|we will|i'?ll|i will|we decided|i'?ve decided|i have decided|"
    r"i decided|we agreed|agreed to|going with|go with|the plan is|i'?m going to|"
    r"i am going to|settled on|chose to|we chose|i chose)\b",
    _FLAGS,
)
_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|good (morning|afternoon|evening|night)|bye|goodbye|see (you|ya)|"
    r"talk (to you )?(later|soon)|thanks?( you)?( so much)?|thank you|cheers|take care|"
    r"nice to (see|hear from|meet) you|good to (see|hear from) you|long time no see)\b",
    _FLAGS,
)
_FILLER = re.compile(
    r"^(ok(ay)?|sure|yes|yeah|yep|yup|no problem|got it|great|cool|nice|wow|lol|haha+|hmm+|"
    r"right|sounds (good|great)|awesome|amazing|perfect|indeed|exactly|of course|"
    r"that'?s (great|awesome|cool|amazing|nice|so cool|wonderful)|me too|same here)"
    r"[\s,.!?~:)]*$",
    _FLAGS,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORDS = re.compile(r"\w+")

#: A sentence of fewer words than this carries nothing on its own ("Me too!").
MIN_WORDS: Final = 4


@dataclass(frozen=True)
class Sentence:
    text: str
    kind: Kind
    #: Where ``text`` is in the turn's text: ``turn[start:end] == text``.
    span: tuple[int, int] = (0, 0)

    @property
    def weight(self) -> float:
        return WEIGHT[self.kind]


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Where each sentence of ``text`` is: split after ``.``, ``!`` or ``?`` and at
    line breaks, each piece without its surrounding whitespace, empty pieces left out."""
    spans: list[tuple[int, int]] = []
    start = 0
    for end, after in [(m.start(), m.end()) for m in _SENTENCE_END.finditer(text)] + [
        (len(text), len(text))
    ]:
        piece = text[start:end]
        stripped = piece.strip()
        if stripped:
            lead = len(piece) - len(piece.lstrip())
            spans.append((start + lead, start + lead + len(stripped)))
        start = after
    return spans


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split after ``.``, ``!`` or ``?`` and at line breaks."""
    return [text[a:b] for a, b in sentence_spans(text)]


def classify(sentence: str, speaker: str) -> Kind:
    """The :class:`Kind` of one sentence said by ``speaker`` (a core.continuity Speaker value)."""
    if speaker in ("tool", "system"):
        return Kind.TOOL
    text = sentence.strip().strip("\"'“”")
    words = len(_WORDS.findall(text))
    person = speaker == "user"
    if person and _REMEMBER.search(text):
        return Kind.REMEMBER
    if _FILLER.match(text) or words == 0:
        return Kind.FILLER
    if _GREETING.match(text) and words <= 8:
        return Kind.GREETING
    if person and _CORRECTION.search(text) and words >= 3:
        return Kind.CORRECTION
    if person and _INSTRUCTION.search(text) and words >= 3:
        return Kind.INSTRUCTION
    if _DECISION.search(text) and words >= MIN_WORDS:
        return Kind.DECISION
    if words < MIN_WORDS:
        return Kind.FILLER
    if text.endswith("?"):
        return Kind.QUESTION
    return Kind.STATEMENT


def sentences(text: str, speaker: str) -> list[Sentence]:
    """Every sentence of one turn with its kind, dropped ones included."""
    if speaker in ("tool", "system"):
        lead = len(text) - len(text.lstrip())
        whole = text.strip()
        return [Sentence(whole, Kind.TOOL, (lead, lead + len(whole)))] if whole else []
    return [
        Sentence(text[a:b], classify(text[a:b], speaker), (a, b)) for a, b in sentence_spans(text)
    ]


def kept(text: str, speaker: str) -> list[Sentence]:
    """The sentences of one turn that compression keeps."""
    return [s for s in sentences(text, speaker) if s.weight > 0]
