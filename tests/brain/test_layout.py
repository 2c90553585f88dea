"""Layout rules: type folders, slugs, session ids, unsafe names, what dream may write."""

from __future__ import annotations

import pytest

from brain import layout


def test_type_folders_and_paths():
    assert layout.page_path("person", "nadia-rahman") == "knowledge/people/nadia-rahman.md"
    assert layout.page_location("knowledge/organizations/sora.md") == ("organization", "sora")
    assert layout.page_location("knowledge/unknown/sora.md") is None
    assert layout.page_location("knowledge/people/sub/x.md") is None
    assert layout.summary_path("s1") == "sessions/summaries/s1.md"
    assert layout.raw_session_path("s1") == "sessions/raw/s1.jsonl"
    assert layout.note_path("juds", "due") == "notes/juds/due.md"


def test_slugify():
    assert layout.slugify("Sora City Laboratory (Kyoto)") == "sora-city-laboratory-kyoto"
    assert layout.slugify("Ünïcödé Café") == "unicode-cafe"
    assert layout.slugify("日本") == "page"
    assert layout.slugify("Index") == "index-page"
    assert len(layout.slugify("x" * 200)) == layout.SLUG_MAX


@pytest.mark.parametrize(
    ("text", "ok"),
    [("2026-05-03-kyoto", True), ("a.b_c-d", True), ("a..b", False), ("-a", False), ("a/b", False), ("con", False)],
)
def test_is_session_id(text, ok):
    assert layout.is_session_id(text) is ok


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("knowledge/people/x.md", None),
        (".dream/state.json", None),
        ("/etc/passwd", "absolute path"),
        ("C:/x.md", "absolute path"),
        ("knowledge\\x.md", "backslash in path"),
        ("knowledge/../x.md", "path traversal"),
        (".git/config", "path inside .git/"),
        ("notes/.obsidian/x", "path inside .obsidian/"),
        ("notes/aux.md", "unsafe name 'aux.md'"),
        ("notes/a\x01.md", "unsafe name 'a\\x01.md'"),
        ("notes/trailing. ", "unsafe name 'trailing. '"),
    ],
)
def test_unsafe_reason(path, reason):
    assert layout.unsafe_reason(path) == reason


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("knowledge/people/x.md", True),
        ("notes/juds/x.md", True),
        ("sessions/summaries/s1.md", True),
        ("sessions/index.md", True),
        (".dream/state.json", True),
        (".dream/forget.md", True),
        (".dream/written/0a.json", False),
        ("sessions/raw/s1.jsonl", False),
        ("guide.md", False),
        ("rules/figures.md", False),
        (".dream/instructions.md", False),
        ("knowledge/../guide.md", False),
    ],
)
def test_dream_may_write(path, ok):
    assert layout.dream_may_write(path) is ok


def test_known_location():
    for rel in ("knowledge/index.md", "brain.toml", "sources/cal/x.ics", "sessions/raw/s1.jsonl", "rules/x.md"):
        assert layout.known_location(rel), rel
    for rel in ("random.txt", "knowledge/people/sub/x.md", "sessions/raw/sub/s1.jsonl"):
        assert not layout.known_location(rel), rel
