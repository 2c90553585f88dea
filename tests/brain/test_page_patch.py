"""A hand-written page whose `updated` and `sources` change keeps the rest of its front matter bytes."""

from __future__ import annotations

import datetime as dt

from brain.page import dump_frontmatter, parse_page, render_page

PAGE = """---
# the owner's comment
title: Kyoto
type: place
summary: City   # trailing comment
created: 2026-05-01
updated: 2026-05-02
tags: [travel]
sources:
    1: session:a#t1   # first
---
# Kyoto

Text [cite:1]
"""
P = "knowledge/places/kyoto.md"


def _change(text: str, **update):
    page = parse_page(text, P)
    fm = page.frontmatter.model_copy(update=update)
    return render_page(page.with_changes(frontmatter=fm, body=page.body + "- new [cite:2]\n"))


def test_updated_and_new_sources_are_patched_in_place():
    out = _change(PAGE, updated=dt.date(2026, 6, 1), sources={1: "session:a#t1", 2: "session:b#t3"})
    assert out == PAGE.replace("updated: 2026-05-02", "updated: 2026-06-01").replace(
        "    1: session:a#t1   # first\n", "    1: session:a#t1   # first\n    2: session:b#t3\n"
    ) + "- new [cite:2]\n"


def test_a_page_without_sources_gets_the_key_before_the_closing_line():
    text = PAGE.replace("sources:\n    1: session:a#t1   # first\n", "").replace("Text [cite:1]", "Text")
    out = _change(text, sources={2: "session:b#t3"})
    assert "tags: [travel]\nsources:\n  2: session:b#t3\n---\n" in out
    assert out.startswith("---\n# the owner's comment\n")


def test_inline_sources_or_other_changes_fall_back_to_canonical_front_matter():
    inline = PAGE.replace("sources:\n    1: session:a#t1   # first\n", "sources: {1: 'session:a#t1'}\n")
    page = parse_page(inline, P)
    out = _change(inline, sources={1: "session:a#t1", 2: "session:b#t3"})
    assert out.startswith(dump_frontmatter(page.frontmatter.model_copy(update={"sources": {1: "session:a#t1", 2: "session:b#t3"}})))
    retitled = _change(PAGE, title="Kyōto")
    assert "# the owner's comment" not in retitled and "title: Kyōto" in retitled
