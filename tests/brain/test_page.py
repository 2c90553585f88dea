"""Pages: parse/render round-trip, byte stability of hand-written pages, errors with lines."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.errors import PageError
from brain.page import Frontmatter, new_page, parse_page, render_page

HAND_WRITTEN = """\
---
# my own comment
tags: [travel]
title:   Kyoto
type: place
summary: "City in Japan."
updated: 2026-06-01
created: 2026-05-03
---
# Kyoto

Where [[juds]] starts.
"""


def test_new_page_renders_canonically():
    fm = Frontmatter(
        title="Japan Universal Design Sprint",
        type="project",
        aliases=["JUDS"],
        summary="Two-week sprint: Kyoto and Sendai.",
        created=dt.date(2026, 5, 3),
        updated=dt.date(2026, 6, 1),
        sources={1: "session:s1#t4-t6", 2: "source:google-calendar/evt-88"},
        tags=["a", "b"],
    )
    page = new_page("knowledge/projects/japan-universal-design-sprint.md", fm, "# JUDS\n\nText [cite:1].\n")
    assert render_page(page) == (
        "---\n"
        "title: Japan Universal Design Sprint\n"
        "type: project\n"
        "aliases: [JUDS]\n"
        "summary: 'Two-week sprint: Kyoto and Sendai.'\n"
        "created: 2026-05-03\n"
        "updated: 2026-06-01\n"
        "tags: [a, b]\n"
        "sources:\n"
        "  1: session:s1#t4-t6\n"
        "  2: source:google-calendar/evt-88\n"
        "---\n"
        "# JUDS\n\nText [cite:1].\n"
    )
    assert page.cites[0].line == 15
    again = parse_page(render_page(page), page.path)
    assert again.frontmatter == fm
    assert render_page(again) == render_page(page)


def test_hand_written_page_keeps_its_bytes():
    page = parse_page(HAND_WRITTEN, "knowledge/places/kyoto.md")
    assert render_page(page) == HAND_WRITTEN
    assert page.links[0].line == 12


def test_changed_body_keeps_the_front_matter_bytes():
    page = parse_page(HAND_WRITTEN, "knowledge/places/kyoto.md")
    changed = page.with_changes(body="# Kyoto\n\nNew text.\n")
    assert render_page(changed) == HAND_WRITTEN.split("# Kyoto")[0] + "# Kyoto\n\nNew text.\n"


def test_changed_front_matter_rewrites_only_the_front_matter():
    page = parse_page(HAND_WRITTEN, "knowledge/places/kyoto.md")
    fm = page.frontmatter.model_copy(update={"summary": "Old capital of Japan."})
    out = render_page(page.with_changes(frontmatter=fm))
    assert out == (
        "---\ntitle: Kyoto\ntype: place\nsummary: Old capital of Japan.\ncreated: 2026-05-03\n"
        "updated: 2026-06-01\ntags: [travel]\n---\n# Kyoto\n\nWhere [[juds]] starts.\n"
    )


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("# no front matter\n", 1, "no front matter"),
        ("---\ntitle: x\n", 1, "not closed"),
        ("---\ntitle: x\ntype: [unclosed\n---\n", 4, "invalid YAML"),
        ("---\ntitle: &a x\ntype: *a\n---\n", 2, "anchors and aliases"),
        ("---\n- a list\n---\n", 2, "must be a mapping"),
        ("---\ntype: person\n---\n", 2, "'title' is missing"),
        ("---\ntitle: x\ntype: person\ncreated: May 3\n---\n", 4, "'created' is invalid"),
        ("---\ntitle: x\ntype: person\nsources:\n  one: session:s#t1\n---\n", 4, "'sources' is invalid"),
        ("---\ntitle: x\ntype: person\ncreated: 2026-02-30\n---\n", 4, "invalid value"),
        ("---\ntitle: x\x00\n---\n", 1, "binary"),
    ],
)
def test_unreadable_pages_raise_page_error_with_line(text, line, message):
    with pytest.raises(PageError) as err:
        parse_page(text, "knowledge/people/x.md")
    assert err.value.line == line
    assert message in err.value.message


def test_line_numbers_count_newlines_only():
    # \u2028 is a line break to str.splitlines, not to markdown-it; \x0c likewise in the body.
    text = "---\ntitle: \"a\u2028b\"\ntype: person\n---\nx\x0cy\n\n[[y]]\n"
    page = parse_page(text, "knowledge/people/a.md")
    assert page.body_line == 5
    assert page.links[0].line == 7


@pytest.mark.parametrize("value", [1e16, 1.5e-07, float("inf"), float("-inf"), 0.1, -0.0, 2**70, True, None])
def test_numbers_and_constants_read_back_with_their_type(value):
    fm = Frontmatter(title="t", type="person", x=value, xs=[value])
    again = parse_page(render_page(new_page("knowledge/people/t.md", fm, "")), "knowledge/people/t.md")
    assert again.frontmatter.extras() == {"x": value, "xs": [value]}
    assert type(again.frontmatter.extras()["x"]) is type(value)


def test_values_with_yaml_line_breaks_stay_on_one_line():
    fm = Frontmatter(title="a\x85b", type="person", summary="c\u2028d", aliases=["e\nf"], note="g\u2029h")
    out = render_page(new_page("knowledge/people/a.md", fm, "body\n"))
    assert out.count("\n") == 8
    assert parse_page(out, "knowledge/people/a.md").frontmatter == fm


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)
_TARGETS = st.one_of(
    st.builds(lambda s, a, b: f"session:{s}#t{a}-t{a + b}", st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True),
              st.integers(1, 500), st.integers(0, 20)),
    st.from_regex(r"source:[a-z][a-z0-9-]{0,10}/[A-Za-z0-9@._-]{1,20}", fullmatch=True),
)
_KEYS = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True).filter(
    lambda k: k not in ("title", "type", "aliases", "summary", "created", "updated", "sources")
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_TEXT,
    summary=_TEXT,
    aliases=st.lists(_TEXT, max_size=3),
    sources=st.dictionaries(st.integers(1, 99), _TARGETS, max_size=4),
    extras=st.dictionaries(_KEYS, st.one_of(_TEXT, st.integers(), st.floats(allow_nan=False), st.booleans(), st.lists(_TEXT, max_size=2)), max_size=2),
    body=st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=300),
    created=st.dates(dt.date(1990, 1, 1), dt.date(2100, 1, 1)),
)
def test_generated_pages_round_trip_byte_identically(title, summary, aliases, sources, extras, body, created):
    fm = Frontmatter(title=title, type="project", summary=summary, aliases=aliases, created=created,
                     updated=created, sources=sources, **extras)
    text = render_page(new_page("knowledge/projects/x.md", fm, body))
    again = parse_page(text, "knowledge/projects/x.md")
    assert render_page(again) == text
    assert again.frontmatter == fm
    assert again.body == body


_YAMLISH = st.lists(
    st.sampled_from(
        list("abc:-[]{}!&*|>'\"#%@`,?\n \t019.eTrufalsnY~\\")
        + ["title: x\n", "type: project\n", "sources:\n  1: ", "created: ", "2026-02-30", "!!binary ",
           "!!python/object:os.system ", "aliases: ", "<<: ", "\u2028", "\x85", "\ufeff", "\r", "\x00"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), st.builds(lambda fm, body: f"---\n{fm}\n---\n{body}", _YAMLISH, st.text(max_size=40))))
def test_parse_page_raises_only_page_error(text):
    try:
        page = parse_page(text, "knowledge/projects/x.md")
    except PageError:
        return
    assert render_page(page) == text
