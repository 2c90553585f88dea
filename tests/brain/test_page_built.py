"""render_built's Page, found without reading the YAML back, must be exactly what parse_page gives."""

from __future__ import annotations

import datetime as dt

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brain.errors import PageError
from brain.page import Frontmatter, parse_page, render_built, render_new
from brain.view import parse_cached, remember_built

_ODD = st.sampled_from(
    ["x", "two words", "a: b", "a #b", "1", "01", "-1", "1.5", ".5", "1e5", "0x1F", "1_000", "2026-01-01", "yes", "No",
     "null", "~", "", " x", "x ", "'q'", "it's", '"d"', "[a, b]", "{a: 1}", "&a", "*a", "!!str 1", "|", ">", "-", "- x",
     "?x", "%x", "@x", "`x", "x\u00a0y", "é", "x\u2028y", "a\tb", "a\nb", "a\r\nb", "\x85", "\ufeff", "<<", "=", "---",
     "...", "\\", "😀", "a,b", "a, b", "#", "k: v\n  1: x"]
)
_TEXT = st.one_of(_ODD, st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
_SCALAR = st.one_of(_TEXT, st.integers(), st.floats(), st.booleans(), st.none(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31)),
                    st.datetimes(dt.datetime(1990, 1, 1), dt.datetime(2100, 1, 1)))
_EXTRA = st.one_of(_SCALAR, st.lists(_SCALAR, max_size=3), st.lists(st.lists(_TEXT, max_size=2), max_size=2),
                   st.dictionaries(_TEXT, _TEXT, max_size=2))
_KEYS = st.sampled_from(["kind", "topic", "confidence", "observed", "mentions", "no", "on", "x_y", "k-1", "null", "1", "é"])


def _strictly_equal(built, parsed) -> None:
    assert built == parsed
    assert built.model_dump_json() == parsed.model_dump_json()
    for a, b in ((built.frontmatter, parsed.frontmatter), (built.source_frontmatter, parsed.source_frontmatter)):
        assert a.model_fields_set == b.model_fields_set
        assert list((a.model_extra or {}).items()) == list((b.model_extra or {}).items())
        assert [type(v) for v in (a.model_extra or {}).values()] == [type(v) for v in (b.model_extra or {}).values()]
        assert [type(getattr(a, k)) for k in Frontmatter.model_fields] == [type(getattr(b, k)) for k in Frontmatter.model_fields]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    title=_TEXT,
    summary=st.one_of(st.none(), _TEXT),
    aliases=st.lists(_TEXT, max_size=3),
    created=st.one_of(st.none(), st.dates(dt.date(1, 1, 1), dt.date(9999, 12, 31))),
    sources=st.dictionaries(st.integers(1, 99), _TEXT, max_size=3),
    extras=st.dictionaries(_KEYS, _EXTRA, max_size=4),
    body=st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
)
def test_built_page_is_the_parsed_page(title, summary, aliases, created, sources, extras, body) -> None:
    fm = Frontmatter(title=title, type="note", summary=summary, aliases=aliases, created=created, sources=sources, **extras)
    text, built = render_built("notes/ada/x.md", fm, body)
    assert text == render_new(fm, body)
    try:
        parsed = parse_page(text, "notes/ada/x.md")
    except PageError:
        assert built is None
        return
    if built is not None:
        _strictly_equal(built, parsed)


def test_what_dream_writes_is_built_without_parsing() -> None:
    fm = Frontmatter(title="Ada moved to Kyoto", type="note", kind="identity", topic="ada", confidence=0.8,
                     observed=dt.date(2026, 5, 3), mentions=["kyoto", "sora-lab"], sources={1: "session:s1#t1", 2: "session:s2#t4-t6"})
    body = "Ada moved to Kyoto [[kyoto]]. [cite:1][cite:2]\n"
    text, built = render_built("notes/ada/moved.md", fm, body)
    assert built is not None
    _strictly_equal(built, parse_page(text, "notes/ada/moved.md"))
    # remember_built hands the same Page to later parses of exactly that text, and only of that.
    assert remember_built("notes/ada/moved.md", fm, body) == text
    assert parse_cached("notes/ada/moved.md", text) == built
    assert parse_cached("notes/ada/moved.md", text + "edited\n").body == body + "edited\n"


def test_values_that_may_not_read_back_are_left_to_the_parser() -> None:
    for extra in ({"when": dt.datetime(2026, 5, 3, 10, 0)}, {"score": float("nan")}, {"score": float("inf")}, {"score": 0.0},
                  {"flag": True}, {"nested": [["a"]]}, {"map": {"a": "b"}}):
        fm = Frontmatter(title="t", type="note", **extra)
        assert render_built("notes/ada/x.md", fm, "b\n")[1] is None


def test_zero_and_negative_zero_are_written_apart_whichever_comes_first() -> None:
    from brain.page import _scalar

    assert (_scalar(0.0), _scalar(-0.0)) == ("0.0", "-0.0")
    assert (_scalar(-0.0), _scalar(0.0)) == ("-0.0", "0.0")
