"""The plain-body scanner must agree with markdown-it wherever it is used."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.markdown import parse_body, parse_body_full, takes_fast_path

_PIECES = st.sampled_from(
    ["[[a]]", "[[b|B]]", "[[c#H]]", "[[d#H|D x]]", "[cite:1]", "[cite:22]", "[[", "]]", "[cite:x]", "# ", "## ", "- ",
     "* ", "1. ", "text", " ", "\n", "\n\n", "Title", "[x](y)", "*em*", "_u_", "###### h", "####### h", "#no", "  ", "[",
     "]", ":", "!", "[[e]][cite:3]", "x # y", "#", "---", "***", "+ ", "(", ")", "|", "||"]
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_PIECES, max_size=30).map("".join), st.integers(1, 50))
def test_fast_path_matches_markdown_it(body: str, first: int):
    if not takes_fast_path(body):
        return  # markdown-it handles this body
    assert parse_body(body, first) == parse_body_full(body, first)


def test_dream_style_page_takes_the_fast_path_and_agrees():
    body = "# Nadia\n\n## About\n- Works at [[oai|Open Access Institute]]. [cite:1][cite:2]\n\n## History\n- Until 2026-05-18: x [cite:3]\n"
    assert takes_fast_path(body)
    assert parse_body(body, 9) == parse_body_full(body, 9)
