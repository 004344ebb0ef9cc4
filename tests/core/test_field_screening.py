"""core.policy.field_screening: the one screening every stored text field goes through."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.model.errors import Refused
from core.policy.field_screening import (
    Statements,
    refuse_secret_name,
    screen_field,
    screen_label,
)
from core.policy.secrets import REPLACEMENT

TOKEN = "Yq3v-Lr8_Wm2Zt6Nb0Kp4Xs9Dg1Hc5Jf7Qa2Ve8Tu3"


def test_a_statement_is_refused_with_the_field_named() -> None:
    with pytest.raises(Refused) as info:
        screen_field("Login for the NAS: admin / Tulip-88", "tags.3")
    assert "tags.3" in info.value.message
    assert info.value.data["field"] == "tags.3"


def test_file_text_loses_only_the_stated_values() -> None:
    text = "Backups at 2am.\nmy password is Zx9!wqMorel\nLogin for the NAS: admin / Tulip-88\nEnd."
    out = screen_field(text, "text", statements=Statements.REDACT)
    assert "Zx9!wqMorel" not in out.text and "Tulip-88" not in out.text
    assert out.text.startswith("Backups at 2am.\n") and out.text.endswith("\nEnd.")
    assert out.redacted.count("credential_statement") == 2


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("app password: abcd efgh ijkl mnop.", "abcd efgh ijkl mnop"),
        ("my passphrase is correct horse battery staple", "correct horse battery staple"),
        ('my password is "Summer 2024 rocks" now', "Summer 2024 rocks"),
        ("GitHub recovery codes: 3f2a1-9c8b7, 77e2d-01fa3.", "3f2a1-9c8b7, 77e2d-01fa3"),
        (
            "seed phrase:\nlegal winner thank year\nwave sausage worth useful\n"
            "legal winner thank yellow\n\nthanks",
            "legal winner thank year\nwave sausage worth useful\nlegal winner thank yellow",
        ),
        ("authenticator setup key: jbsw y3dp ehpk 3pxp kq2a ok", "jbsw y3dp ehpk 3pxp kq2a"),
        ("Door code: 48 21, ring twice", "48 21"),
        ("the alarm code is 1 2 3 4 now", "1 2 3 4"),
        ("my atm pin is four four one two, thanks", "four four one two"),
        ("the door code is nine-one-one-five.", "nine-one-one-five"),
        ("my password is hunter two.", "hunter two"),
        ("recovery codes: abcd-efgh, ijkl-mnop and that is all", "abcd-efgh, ijkl-mnop"),
        (
            "my 12 words are legal winner thank year wave sausage worth useful legal winner "
            "thank yellow and more",
            "legal winner thank year wave sausage worth useful legal winner thank yellow",
        ),
    ],
)
def test_file_text_loses_all_of_a_value_of_several_words(text: str, value: str) -> None:
    out = screen_field(text, "text", statements=Statements.REDACT)
    assert out.text == text.replace(value, REPLACEMENT)
    assert out.redacted == ("credential_statement",)


def test_the_agent_token_is_cut_out_wherever_it_appears() -> None:
    out = screen_field(f"socket token {TOKEN}, again:{TOKEN}.", "text", known=(TOKEN,))
    assert TOKEN not in out.text
    assert out.text == f"socket token {REPLACEMENT}, again:{REPLACEMENT}."


def test_a_label_is_never_refused() -> None:
    assert screen_label("my password is Zx9!wqMorel", "client") == f"my password is {REPLACEMENT}"


def test_a_path_with_a_secret_is_refused_not_rewritten() -> None:
    with pytest.raises(Refused, match="rename or move the file"):
        refuse_secret_name("/tmp/glpat-Rk8vQm2ZxT4pLw9NbY3c/notes.txt", "path")
    refuse_secret_name("/home/ana/notes/2024-05-01 standup.md", "path")


@settings(max_examples=300, deadline=None)
@given(
    before=st.text(max_size=60),
    after=st.text(max_size=60),
    mode=st.sampled_from(list(Statements)),
)
def test_any_text_screens_without_error_and_never_keeps_the_token(
    before: str, after: str, mode: Statements
) -> None:
    text = f"{before}{TOKEN}{after}"
    try:
        out = screen_field(text, "text", statements=mode, known=(TOKEN,))
    except Refused:
        assert mode is Statements.REFUSE
        return
    assert TOKEN not in out.text
    assert REPLACEMENT in out.text
