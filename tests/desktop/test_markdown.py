"""Markdown rendering for the brief and handoff views."""

from __future__ import annotations

from desktop.widgets.markdown import render_markdown


def test_task_list_items_show_as_boxes() -> None:
    html = render_markdown("- [x] header live\n- [X] fonts agreed\n- [ ] ask Dana\n1. [ ] numbered")
    assert "<li>☑ header live</li>" in html and "<li>☑ fonts agreed</li>" in html
    assert "<li>☐ ask Dana</li>" in html and "<li>☐ numbered</li>" in html


def test_brackets_elsewhere_are_left_alone() -> None:
    html = render_markdown("[x] not in a list\n\n- a [ ] inside\n- [link](https://example.org)")
    assert "<p>[x] not in a list</p>" in html
    assert "<li>a [ ] inside</li>" in html and "☐" not in html and "☑" not in html


def test_raw_html_is_shown_as_text() -> None:
    assert render_markdown("<b>bold?</b>") == "<p>&lt;b&gt;bold?&lt;/b&gt;</p>\n"
