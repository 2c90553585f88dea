"""ChatGPT custom instructions become the owner's profile: cited to their own session, checked
by the verifier as the owner's words ("user: I live in Lisbon" supports "Dain lives in Lisbon")."""

from __future__ import annotations

from pathlib import Path

from brain.page import parse_page
from brain.scaffold import init_brain
from dream.backends import get_backend
from dream.importers import import_path
from dream.run import run
from dream.settings import RunFlags, load_settings

EXPORT = Path(__file__).resolve().parents[2] / "fixtures" / "importers" / "chatgpt-export"


def test_the_custom_instructions_are_the_owner_s_cited_profile(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    init_brain(root, owner="Dain")
    import_path("chatgpt", EXPORT, root)
    report = run(load_settings(root, RunFlags(backend="offline", now="2024-06-01T00:00:00Z")), get_backend("offline"))
    assert report.rejected == {}
    page = parse_page((root / "knowledge/people/dain.md").read_text(encoding="utf-8"), "dain.md")
    assert "- 2024-05-03: Dain lives in Lisbon. [cite:1]" in page.body
    assert page.frontmatter.sources[1] == "session:chatgpt-profile-d89350383890#t1"
    assert "- 2024-05-03: Dain's custom instructions on how to answer: Be brief. [cite:2]" in page.body
    assert page.frontmatter.sources[2] == "session:chatgpt-profile-d89350383890#t2"
