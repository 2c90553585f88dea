"""Citation targets: parse and str() are a round-trip pair; malformed targets say what is expected."""

from __future__ import annotations

import pytest

from brain.citations import CitationError, CitationTarget, expand_session_cites


@pytest.mark.parametrize(
    ("text", "kind", "ref", "turns"),
    [
        ("session:2026-05-03-kyoto-planning#t4", "session", "2026-05-03-kyoto-planning", [4]),
        ("session:s1#t4-t6", "session", "s1", [4, 5, 6]),
        ("source:google-calendar/evt-88", "source", "google-calendar/evt-88", []),
        ("source:docs/reports/2026/q2.md", "source", "docs/reports/2026/q2.md", []),
        ("note:nadia-rahman/prefers-pdf.md", "note", "nadia-rahman/prefers-pdf.md", []),
    ],
)
def test_parse_and_format_round_trip(text, kind, ref, turns):
    target = CitationTarget.parse(text)
    assert (target.kind, target.ref, list(target.turns)) == (kind, ref, turns)
    assert str(target) == text
    assert CitationTarget.parse(str(target)) == target


def test_single_turn_range_formats_short():
    assert str(CitationTarget.parse("session:s1#t4-t4")) == "session:s1#t4"
    assert str(CitationTarget.session("s1", 2, 3)) == "session:s1#t2-t3"


def test_source_parts():
    target = CitationTarget.parse("source:google-calendar/evt-88")
    assert (target.connector, target.ref) == ("google-calendar", "google-calendar/evt-88")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("session:s1#t0", "must start at 1"),
        ("session:s1#t6-t4", "not run backwards"),
        ("session:a..b#t1", "'..'"),
        ("session:s1", "malformed"),
        ("session:s1#4", "malformed"),
        ("http://example.com", "malformed"),
        ("note:../secrets.md", "malformed"),
        ("note:x.txt", "malformed"),
        ("", "malformed"),
    ],
)
def test_malformed_targets(text, message):
    with pytest.raises(CitationError, match=message if message != "'..'" else r"'\.\.'"):
        CitationTarget.parse(text)


def test_expand_session_cites_sorted_by_turn_number():
    targets = [CitationTarget.parse("session:s1#t9-t11"), CitationTarget.parse("session:s1#t2"),
               CitationTarget.parse("source:c/x")]
    assert expand_session_cites(targets) == ["session:s1#t2", "session:s1#t9", "session:s1#t10", "session:s1#t11"]
