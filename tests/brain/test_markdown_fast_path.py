"""The plain-body scanner must agree with markdown-it wherever it is used."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.markdown import _WIKILINK_RE, parse_body, parse_body_full, takes_fast_path

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


#: The fast path's definition as one pattern (what brain.markdown splits in two for speed).
_REFERENCE = re.compile(
    r"[`\\<&\t~]|\]\("
    r"|^ {4}"
    r"|^ {0,3}(?:=+|-+)[ \t]*$"
    r"|^ {0,3}(?:(?:[-*+]|\d+[.)])[ \t]+)*(?:>|\[[^\]]*\]:)"
    r"|^ {0,3}(?:(?:[-*+]|\d+[.)])[ \t]+)+#|^ {0,3}#{7}"
    r"|^ {0,3}(?:(?:[-*+]|\d+[.)]) +)*(?:[-*+]|\d+[.)]) {5}",
    re.M,
)
_LINE_PIECES = st.sampled_from([" ", "  ", "\n", "-", "*", "+", "1", "12", ".", ")", "#", "=", ">", "[", "]", ":", "(", "a", "\t",
                                "`", "<", "&", "~", "\\", "|", "[[a|b]]", "[[c]]"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_LINE_PIECES, max_size=24).map("".join))
def test_fast_path_test_is_the_single_pattern(body: str):
    expected = not _REFERENCE.search(body) and "|" not in _WIKILINK_RE.sub("", body)
    assert takes_fast_path(body) == expected


def test_a_body_parsed_again_gives_the_kept_result_and_pages_get_lists_of_their_own():
    from brain.page import Frontmatter, new_page, parse_page, render_page

    body = "# Ada\n\n- Ada works at [[acme|Acme]]. [cite:1]\n- She met [[bo]] in May. [cite:2]\n"
    first = parse_body(body, 7)
    assert parse_body(body, 7) is first  # kept: the gate reads back what the run built
    assert parse_body(body, 8) is not first and [l.line for l in parse_body(body, 8).links] == [l.line + 1 for l in first.links]
    page = new_page("knowledge/people/ada.md", Frontmatter(title="Ada", type="person", sources={1: "s#1", 2: "s#2"}), body)
    again = parse_page(render_page(page), page.path)
    assert again.links == page.links and again.cites == page.cites
    page.links.clear()  # a caller's change to its page does not reach the next page of that body
    assert parse_page(render_page(again), again.path).links == again.links == parse_body(body, page.body_line).links
    assert again.links and len(again.links) == len(first.links)
    changed = again.with_changes(body=body)
    changed.cites.clear()
    assert parse_body(body, again.body_line).cites and again.cites
