from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.memory.markers import (
    Category,
    Marker,
    jaccard,
    marker_tags,
    normalise,
    parse_markers,
    same_observation,
)


def test_both_forms_parse() -> None:
    text = (
        "Checked the stack.\n"
        "[MEMORY:timing:jellyfin] Takes about 60s to start after a restart\n"
        "[MEMORY:remediation]   Retry DNS once during VPN reconnects  \n"
    )
    result = parse_markers(text)
    assert result.malformed == 0
    assert result.markers == (
        Marker(Category.TIMING, "jellyfin", "Takes about 60s to start after a restart", 2),
        Marker(Category.REMEDIATION, None, "Retry DNS once during VPN reconnects", 3),
    )


@pytest.mark.parametrize(
    "line",
    [
        "- [MEMORY:dependency:caddy] Start after WireGuard",
        "* [MEMORY:dependency:caddy] Start after WireGuard",
        "+ [MEMORY:dependency:caddy] Start after WireGuard",
        "    - [MEMORY:dependency:caddy] Start after WireGuard",
        "12. [MEMORY:dependency:caddy] Start after WireGuard",
        "3) [MEMORY:dependency:caddy] Start after WireGuard",
        "\t[memory:DEPENDENCY:caddy]Start after WireGuard",
    ],
)
def test_indentation_bullets_and_case_are_accepted(line: str) -> None:
    result = parse_markers(line)
    assert result.malformed == 0
    assert result.markers == (Marker(Category.DEPENDENCY, "caddy", "Start after WireGuard", 1),)


@pytest.mark.parametrize(
    "line",
    [
        "[MEMORY:mood] Feeling good",  # unknown category
        "[MEMORY:] nothing",
        "[MEMORY:timing:] empty service",
        "[MEMORY:timing:my service] space in service",
        "[MEMORY:timing:a/b] slash in service",
        f"[MEMORY:timing:{'s' * 65}] service too long",
        "[MEMORY:timing:x:y] too many parts",
        "[MEMORY:timing]",
        "[MEMORY:timing]    ",
        "[MEMORY:timing no closing bracket",
        f"[MEMORY:timing] {'x' * 2001}",
        "[MEMORY:timing] one [MEMORY:behavior] two",
        "As noted, [MEMORY:timing] markers are parsed",  # not at the start of the line
        "-[MEMORY:timing] bullet without a space",
        "[MEMORY: timing] padded category",
    ],
)
def test_malformed_lines_are_counted_not_half_parsed(line: str) -> None:
    result = parse_markers(f"intro\n{line}\n[MEMORY:behavior] fine")
    assert result.malformed == 1
    [problem] = result.problems
    assert problem.line == 2 and problem.reason
    assert result.markers == (Marker(Category.BEHAVIOR, None, "fine", 3),)


def test_limits_are_inclusive() -> None:
    service = "s" * 64
    result = parse_markers(f"[MEMORY:maintenance:{service}] {'x' * 2000}")
    assert result.malformed == 0
    assert result.markers[0].service == service
    assert len(result.markers[0].observation) == 2000


def test_lines_without_a_marker_are_ignored() -> None:
    result = parse_markers("plain text\n[EVENT:info:x] other markers\n[MEMO:timing] near miss\n")
    assert result == parse_markers("")
    assert result.markers == () and result.malformed == 0


def test_unicode_line_separators_split_lines() -> None:
    result = parse_markers("[MEMORY:timing] a\u2028[MEMORY:behavior:svc] b\u0085tail")
    assert [(m.category, m.observation, m.line) for m in result.markers] == [
        (Category.TIMING, "a", 1),
        (Category.BEHAVIOR, "b", 2),
    ]


@given(st.text())
def test_never_raises_on_any_text(text: str) -> None:
    result = parse_markers(text)
    assert result.malformed >= 0
    for marker in result.markers:
        assert marker.observation == marker.observation.strip() != ""
        assert "\n" not in marker.observation


_parts = st.text(alphabet=st.sampled_from("[]:MEORYmemory-_ abc\n\t*timngbehavor"), max_size=60)


@given(st.lists(_parts, max_size=8))
def test_never_raises_on_marker_like_text(pieces: list[str]) -> None:
    text = "[MEMORY:".join(pieces)
    result = parse_markers(text)
    attempts = sum("[memory:" in line.casefold() for line in text.splitlines())
    assert len(result.markers) + result.malformed == attempts


@given(
    category=st.sampled_from(list(Category)),
    service=st.none() | st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True),
    observation=st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1
    ).filter(lambda s: s.strip() and "[memory:" not in s.casefold() and len(s.strip()) <= 2000),
)
def test_round_trip(category: Category, service: str | None, observation: str) -> None:
    head = f"{category}:{service}" if service else str(category)
    result = parse_markers(f"[MEMORY:{head}] {observation}")
    assert result.malformed == 0
    assert result.markers == (Marker(category, service, observation.strip(), 1),)


def test_marker_tags() -> None:
    assert marker_tags(Marker(Category.TIMING, "jellyfin", "slow", 1)) == [
        "marker",
        "category:timing",
        "service:jellyfin",
    ]
    assert marker_tags(Marker(Category.BEHAVIOR, None, "x", 1)) == [
        "marker",
        "category:behavior",
    ]


def test_normalise() -> None:
    assert normalise("  Takes  60s\tto START.  ") == "takes 60s to start"
    assert normalise("Done?!…") == "done"
    assert normalise("...") == ""


def test_jaccard() -> None:
    assert jaccard("a b c", "A B C") == 1.0
    assert jaccard("a b", "c d") == 0.0
    assert jaccard("a b c d", "a b c e") == pytest.approx(3 / 5)
    assert jaccard("", "!!") == 1.0
    assert jaccard("", "word") == 0.0


def test_same_observation() -> None:
    assert same_observation("Takes 60s to start.", "takes 60s  to start")
    assert same_observation(
        "Jellyfin takes 60s to start after restart",
        "jellyfin takes about 60s to start after a restart",
    )
    assert not same_observation("Takes 60s to start", "Needs a weekly VACUUM FULL")
    assert not same_observation("a b c d", "a b c e", threshold=0.7)
