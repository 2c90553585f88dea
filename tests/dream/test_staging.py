"""Names from any backend are data too: the staged tree refuses every path Dream may not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.sessions import MAX_SESSION_BYTES, MAX_TURN_CHARS, parse_session
from brain.tree import DirTree
from dream.staging import StagedTree, StagingError

REFUSED = [
    "../outside.md",
    "/etc/passwd",
    "knowledge/../../escape.md",
    "knowledge/people/CON.md",
    "knowledge/people/nul.txt.md",
    "notes/aux/x.md",
    ".git/config",
    "knowledge/.git/hooks/pre-commit",
    ".obsidian/app.json",
    "knowledge/.obsidian/x.md",
    "guide.md",
    "rules/figures.md",
    "brain.toml",
    "sessions/raw/2026-01-01-x.jsonl",
    "sources/google-calendar/calendar.ics",
    "knowledge\\people\\x.md",
    "C:/knowledge/x.md",
    "knowledge/people/trailing-dot.",
    "knowledge/people/ctrl\x07.md",
]


@pytest.mark.parametrize("rel", REFUSED)
def test_unsafe_or_foreign_paths_are_refused(tmp_path: Path, rel: str):
    staged = StagedTree(tmp_path / "staged", DirTree(tmp_path / "live"))
    with pytest.raises(StagingError, match="refused to stage"):
        staged.write(rel, "x")
    assert not any((tmp_path / "staged").rglob("*"))


def test_dreams_own_paths_are_accepted(tmp_path: Path):
    staged = StagedTree(tmp_path / "staged", DirTree(tmp_path / "live"))
    for rel in ("knowledge/people/nadia.md", "notes/nadia/x.md", "sessions/summaries/s1.md", "sessions/index.md",
                ".dream/state.json", ".dream/forget.md", "knowledge/index.md"):
        staged.write(rel, "ok\n")
    assert sorted(staged.written) == sorted(
        ["knowledge/people/nadia.md", "notes/nadia/x.md", "sessions/summaries/s1.md", "sessions/index.md",
         ".dream/state.json", ".dream/forget.md", "knowledge/index.md"]
    )


def test_a_huge_session_is_refused_with_its_cap_named():
    session, problems = parse_session(b"x" * (MAX_SESSION_BYTES + 1), "sessions/raw/huge.jsonl")
    assert session is None
    assert [str(p) for p in problems] == [
        f"sessions/raw/huge.jsonl:1: session is larger than {MAX_SESSION_BYTES // 1_000_000} MB; split it into several sessions"
    ]


def test_a_huge_turn_is_cut_and_reported():
    text = '{"type":"session","id":"s"}\n{"type":"turn","n":1,"role":"user","text":"' + "a" * (MAX_TURN_CHARS + 5) + '"}\n'
    session, problems = parse_session(text.encode(), "sessions/raw/s.jsonl")
    assert session is not None and len(session.turns[0].text) == MAX_TURN_CHARS
    assert [str(p) for p in problems] == [f"sessions/raw/s.jsonl:2: turn 1 is longer than {MAX_TURN_CHARS} characters; it was cut"]
