"""The speakers a question names: hyphens, apostrophes and scripts without capitals."""

from __future__ import annotations

import pytest

from core.continuity import episodes
from core.continuity.exchange_recall import as_spoken
from core.continuity.speaker_names import speakers_named
from core.model.entries import Actor
from core.semantic.hybrid import Mode
from core.service import MemoryService

SAID = [
    ("Mary-Jane", "I repaired the bicycle chain"),
    ("Mary Jane", "The tomatoes are ripe"),
    ("O'Brien", "The boiler needs servicing"),
    ("O’Neil", "The gutters are blocked again"),
    ("李雷", "我喜欢喝绿茶"),
    ("王小明", "明天下雨"),
    ("小明", "我在图书馆"),
    ("雷", "一个字的名字"),
    ("Follow", "Nobody asked me"),
]


@pytest.fixture
def logged(service: MemoryService) -> MemoryService:
    agent = service.open_session("main", Actor.AGENT, "names")
    for name, text in SAID:
        episodes.log_exchange(service, agent, "user", text, name=name)
    return service


@pytest.mark.parametrize(
    ("question", "named"),
    [
        # A hyphen or an apostrophe is part of the name, either apostrophe finding the
        # other; before, "Mary-Jane" named "Mary Jane" and "O'Brien" no one.
        ("What did Mary-Jane say?", {"Mary-Jane"}),
        ("Mary-Jane", {"Mary-Jane"}),
        ("what did mary-jane say", {"Mary-Jane"}),
        ("What did Mary Jane say?", {"Mary Jane"}),
        ("What did O'Brien say?", {"O'Brien"}),
        ("What did O’Brien say?", {"O'Brien"}),
        ("What did O'Neil say?", {"O’Neil"}),
        ("Is O'Brien's boiler fixed?", {"O'Brien"}),
        # Chinese has no capitals: a word is a name when a speaker was logged with it,
        # on its own or inside a sentence written without spaces.
        ("What did 李雷 say?", {"李雷"}),
        ("李雷", {"李雷"}),
        ("李雷说了什么?", {"李雷"}),
        # The longest name found, not the one inside it.
        ("王小明说了什么", {"王小明"}),
        ("小明在哪里", {"小明"}),
    ],
)
def test_names_with_hyphens_apostrophes_or_without_capitals_name_their_speaker(
    logged: MemoryService, question: str, named: set[str]
) -> None:
    assert speakers_named(logged.store_for("main"), question) == named


@pytest.mark.parametrize(
    "question",
    [
        # Part of a hyphenated name is another name.
        "What did Mary say about Jane-Anne?",
        # A common word is no name: lower case among capitals, or a Chinese sentence
        # that holds no name as written.
        "What did we follow up on?",
        "我喜欢喝绿茶",
        # A name of one character is looked for as a word, not inside a sentence.
        "打雷了吗",
        "What did Brien say?",
    ],
)
def test_common_words_and_parts_of_names_name_no_one(logged: MemoryService, question: str) -> None:
    found = speakers_named(logged.store_for("main"), question)
    assert found <= {"Mary Jane"} and "Mary-Jane" not in found


@pytest.mark.parametrize(
    "question", ["What did Mary-Jane say?", "Mary-Jane", "what did O’Brien say"]
)
def test_a_keyword_search_naming_a_speaker_finds_their_turns(
    logged: MemoryService, question: str
) -> None:
    agent = logged.open_session("main", Actor.AGENT, "asks")
    hits = episodes.search_exchanges(logged, agent, question, mode=Mode.KEYWORD)
    said = {name: text for name, text in SAID}
    speaker = "O'Brien" if "Brien" in question else "Mary-Jane"
    assert said[speaker] in [h.exchange.text for h in hits if "speaker" in h.signals]
    assert all(h.exchange.name == speaker for h in hits if "speaker" in h.signals)


def test_chinese_questions_find_the_speaker_they_name(logged: MemoryService) -> None:
    agent = logged.open_session("main", Actor.AGENT, "asks")
    for question in ("What did 李雷 say?", "李雷说了什么?"):
        hits = episodes.search_exchanges(logged, agent, question, mode=Mode.KEYWORD)
        assert [h.exchange.text for h in hits][:1] == ["我喜欢喝绿茶"], question
        assert "speaker" in hits[0].signals


@pytest.mark.parametrize(
    ("question", "named", "spoken"),
    [
        ("What did O’Brien say?", {"o'brien"}, "What did I say?"),
        ("Where is Mary-Jane's bike?", {"mary-jane"}, "Where is my bike?"),
    ],
)
def test_a_question_names_a_speaker_with_either_apostrophe(
    question: str, named: set[str], spoken: str
) -> None:
    assert as_spoken(question, named) == spoken
