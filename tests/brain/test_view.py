"""BrainView: names resolve across pages, notes and summaries; a staged view shows its writes over the live tree."""

from __future__ import annotations

from pathlib import Path

from brain.tree import DirTree, MemTree
from brain.view import BrainView


def _page(title: str, summary: str = "", aliases: str = "") -> str:
    return f"---\ntitle: {title}\ntype: person\naliases: [{aliases}]\nsummary: {summary or title}\n---\n# {title}\n"


def _summary(sid: str, started: str) -> str:
    return f"---\ntitle: Session {sid}\ntype: summary\nstarted: {started}\nsummary: Talked.\n---\n# {sid}\n"


def test_a_name_shared_by_pages_notes_and_summaries_resolves_to_all_of_them(tmp_path: Path):
    files = {
        "knowledge/people/ada.md": _page("Ada", aliases="Tea"),
        "knowledge/people/tea.md": _page("Tea"),
        "notes/ada/tea.md": "n\n",
        "notes/ben/tea.md": "n\n",
        "notes/ben/Likes-Tea.md": "n\n",
        "notes/cleo/likes-tea.md": "n\n",
        "notes/cleo/only-here.md": "n\n",
        "sessions/summaries/s1.md": "s\n",
        "notes/ada/s1.md": "n\n",
        "sessions/summaries/s2.md": "s\n",
    }
    view = BrainView(MemTree(files, tmp_path))
    assert view.resolve("TEA") == ["knowledge/people/ada.md", "knowledge/people/tea.md", "notes/ada/tea.md", "notes/ben/tea.md"]
    assert view.resolve("likes-tea") == ["notes/ben/Likes-Tea.md", "notes/cleo/likes-tea.md"]
    assert view.resolve("s1") == ["notes/ada/s1.md", "sessions/summaries/s1.md"]
    assert view.resolve(" only-here ") == ["notes/cleo/only-here.md"]
    assert view.resolve("s2") == ["sessions/summaries/s2.md"]
    assert view.resolve("ada") == ["knowledge/people/ada.md"]
    assert view.resolve("nobody") == []


def test_index_lines_of_a_staged_tree_follow_its_writes_and_drops(tmp_path: Path):
    live = tmp_path / "live"
    files = {
        "knowledge/people/ada.md": _page("Ada", "A friend."),
        "knowledge/people/ben.md": _page("Ben", "A colleague."),
        "sessions/summaries/s1.md": _summary("s1", "2026-01-01T09:00:00+00:00"),
    }
    for rel, text in files.items():
        (live / rel).parent.mkdir(parents=True, exist_ok=True)
        (live / rel).write_text(text, encoding="utf-8")
    live_view = BrainView(DirTree(live))
    staged: dict[str, str] = {}

    def lines() -> tuple[dict, dict]:
        view = BrainView.staged(live_view, MemTree(staged, tmp_path / "staged"))
        return view.page_lines(), view.summary_entries()

    def expected() -> tuple[dict, dict]:  # a view of a folder holding the staged tree
        merged = tmp_path / f"merged-{len(staged)}"
        for rel, text in {**files, **staged}.items():
            (merged / rel).parent.mkdir(parents=True, exist_ok=True)
            (merged / rel).write_text(text, encoding="utf-8")
        view = BrainView(DirTree(merged))
        return view.page_lines(), view.summary_entries()

    assert lines() == expected()
    staged["knowledge/people/ben.md"] = _page("Ben", "A manager now.")
    staged["knowledge/people/cleo.md"] = _page("Cleo", "New.")
    staged["knowledge/people/ada.md"] = "---\ntitle: [unclosed\n---\n"  # does not parse: no line
    staged["sessions/summaries/s2.md"] = _summary("s2", "2026-02-01T09:00:00+00:00")
    pages, entries = lines()
    assert (pages, entries) == expected()
    assert "knowledge/people/ada.md" not in pages and "manager" in pages["knowledge/people/ben.md"] and set(entries) == {"s1", "s2"}
    for rel in ("knowledge/people/ben.md", "knowledge/people/ada.md", "sessions/summaries/s2.md"):
        del staged[rel]  # the live file's line comes back
    assert lines() == expected()
    assert "A colleague." in lines()[0]["knowledge/people/ben.md"]


def test_a_page_parses_its_body_only_when_its_links_are_asked(tmp_path: Path):
    tree = MemTree({"knowledge/people/ada.md": _page("Ada") + "Works with [[ben]] [cite:1].\n"}, tmp_path)
    page = BrainView(tree).doc("knowledge/people/ada.md")
    assert "refs" not in page.__dict__
    assert [link.target for link in page.links] == ["ben"] and [c.n for c in page.cites] == [1]
    assert page.links[0].line == 8
