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


def test_the_staged_folder_holds_what_is_staged_after_flush(tmp_path: Path):
    live = tmp_path / "live"
    (live / "knowledge" / "people").mkdir(parents=True)
    (live / "knowledge" / "people" / "ada.md").write_text("live\n", encoding="utf-8")
    staged = StagedTree(tmp_path / "staged", DirTree(live))
    staged.write("knowledge/people/ada.md", "first\n")
    staged.write("knowledge/people/ada.md", "second\n")
    staged.write("notes/ada/x.md", "note\n")
    staged.write("notes/ada/gone.md", "dropped\n")
    staged.drop("notes/ada/gone.md")
    assert staged.read("knowledge/people/ada.md") == "second\n"
    assert staged.derived_from["knowledge/people/ada.md"] == "live\n"
    staged.flush()
    on_disk = {p.relative_to(staged.root).as_posix(): p.read_text(encoding="utf-8") for p in staged.root.rglob("*") if p.is_file()}
    assert on_disk == {"knowledge/people/ada.md": "second\n", "notes/ada/x.md": "note\n"}
    staged.drop("notes/ada/x.md")
    staged.flush()
    assert not (staged.root / "notes" / "ada" / "x.md").exists()
    assert staged.read("knowledge/people/ada.md") == "second\n"


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


def test_a_flush_writes_what_is_staged_into_the_run_folder(tmp_path: Path):
    live = tmp_path / "live"
    (live / "knowledge" / "people").mkdir(parents=True)
    (live / "knowledge" / "people" / "ada.md").write_text("live\n", encoding="utf-8")
    files = {"knowledge/people/ada.md": "second\n", "notes/ada/x.md": "note\n", "notes/ada/é ü.md": "naïve\n", "notes/b/empty.md": ""}
    staged = StagedTree(tmp_path / "run", DirTree(live))
    for rel, text in files.items():
        staged.write(rel, text)
    staged.drop("notes/ada/x.md")
    staged.flush()
    found = {p.relative_to(staged.root).as_posix(): p.read_bytes() for p in staged.root.rglob("*") if p.is_file()}
    assert found == {"knowledge/people/ada.md": b"second\n", "notes/ada/\u00e9 \u00fc.md": "naïve\n".encode(), "notes/b/empty.md": b""}
    assert (live / "knowledge" / "people" / "ada.md").read_text(encoding="utf-8") == "live\n"


def test_a_page_the_owner_deletes_before_the_run_stages_it_is_not_brought_back(tmp_path: Path):
    from dream.sync import plan_sync, read_live

    live = tmp_path / "live"
    page = live / "knowledge" / "people" / "ada.md"
    page.parent.mkdir(parents=True)
    page.write_text("live\n", encoding="utf-8")
    tree = DirTree(live)
    staged = StagedTree(tmp_path / "staged", tree, listed=frozenset(tree.files()))  # what the run found
    page.unlink()  # the owner deletes it while the run compiles
    staged.write("knowledge/people/ada.md", "Dream's update\n")
    staged.write("knowledge/people/bo.md", "a new page\n")
    assert staged.vanished == {"knowledge/people/ada.md"}
    written = staged.written
    plan = plan_sync(written, staged.derived_from, read_live(live, list(written)), vanished=frozenset(staged.vanished))
    assert list(plan.writes) == ["knowledge/people/bo.md"]
    assert plan.conflicts == ["knowledge/people/ada.md: deleted by the owner during the run; not re-created"]
