"""Rich-text views take their text colour from the palette, which the dark theme
makes light: a fixed background must come with its own text colour, or a
translucent tint, so that what it holds can be read in either theme."""

from __future__ import annotations

import re

import pytest

from desktop.attachments.model import DETAIL_CSS
from desktop.brief.view import _DOCUMENT_CSS as BRIEF_CSS
from desktop.threads.handoff_view import HANDOFF_CSS

_RULE = re.compile(r"([^{}]+)\{([^}]*)\}")


@pytest.mark.parametrize(
    "css", [HANDOFF_CSS, DETAIL_CSS, BRIEF_CSS], ids=["handoff", "attachment", "brief"]
)
def test_a_fixed_background_brings_its_own_text_colour(css: str) -> None:
    for selector, body in _RULE.findall(css):
        props = dict(
            (k.strip(), v.strip())
            for k, _, v in (p.partition(":") for p in body.split(";"))
            if k.strip()
        )
        background = props.get("background", props.get("background-color", ""))
        if background.startswith("#"):
            assert "color" in props, f"{selector.strip()}: background {background} without a colour"
