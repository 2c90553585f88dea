"""`brain index` trimming: lowest-value lines go first; output is exact and deterministic."""

from __future__ import annotations

from brain.indexing import estimate_tokens, index_for_agent, trim_index
from brain.render import render_knowledge_index
from brain.tree import DirTree
from brain.view import BrainView


def page(title: str, kind: str, updated: str, body: str = "", summary: str = "") -> str:
    return (
        f"---\ntitle: {title}\ntype: {kind}\nsummary: {summary or f'About {title}.'}\ncreated: 2026-01-01\n"
        f"updated: {updated}\n---\n# {title}\n\n{body}\n"
    )


CITY = "A city with a long summary that takes up a fair share of the budget on its own line."
FILES = {
    "knowledge/people/ann.md": page("Ann", "person", "2026-01-01", "Works on [[alpha]] and [[beta]]."),
    "knowledge/people/bob.md": page("Bob", "person", "2026-03-01", "Knows [[ann]] and [[alpha]]."),
    "knowledge/projects/proj.md": page("Proj", "project", "2026-02-01", "Led by [[ann]]."),
    "knowledge/concepts/alpha.md": page("Alpha", "concept", "2026-05-01"),
    "knowledge/concepts/beta.md": page("Beta", "concept", "2026-06-01"),
    "knowledge/places/city.md": page("City", "place", "2026-06-01", summary=CITY),
}
FULL = """\
# Index

## People
- [[ann|Ann]]: About Ann.
- [[bob|Bob]]: About Bob.

## Places
- [[city|City]]: A city with a long summary that takes up a fair share of the budget on its own line.

## Projects
- [[proj|Proj]]: About Proj.

## Concepts
- [[alpha|Alpha]]: About Alpha.
- [[beta|Beta]]: About Beta.
"""


def view_of(make_tree, files):
    return BrainView(DirTree(make_tree(files)))


def test_full_index_is_rendered_when_missing(make_tree):
    result = index_for_agent(view_of(make_tree, FILES), budget=0)
    assert result.text == FULL
    assert (result.generated, result.trimmed, result.total) == (True, False, 6)
    assert result.tokens == estimate_tokens(FULL) == 86


def test_index_on_disk_is_printed_as_it_is(make_tree):
    text = "# Index\n\nOwner's intro.\n\n## People\n- [[ann|Ann]]: Hand-written.\n"
    result = index_for_agent(view_of(make_tree, {**FILES, "knowledge/index.md": text}), budget=8000)
    assert (result.text, result.generated, result.total) == (text, False, 1)


def test_over_budget_drops_lowest_value_lines_first(make_tree):
    view = view_of(make_tree, {**FILES, "knowledge/index.md": FULL})
    result = index_for_agent(view, budget=80)
    # Value: person/project first (ann: 2 backlinks, then bob and proj by recency), then
    # alpha (2 backlinks), beta (1), city (0): city goes first, then beta.
    assert result.text == """\
# Index

## People
- [[ann|Ann]]: About Ann.
- [[bob|Bob]]: About Bob.

## Projects
- [[proj|Proj]]: About Proj.

## Concepts
- [[alpha|Alpha]]: About Alpha.

(index trimmed to 80 tokens: 2 of 6 pages omitted — open knowledge/ or run `brain show NAME` for the rest)
"""
    assert result.omitted == ["beta", "city"]
    assert result.tokens <= 80


def test_tiny_budget_keeps_only_the_most_valuable(make_tree):
    view = view_of(make_tree, {**FILES, "knowledge/index.md": FULL})
    result = index_for_agent(view, budget=45)
    assert result.text == """\
# Index

## People
- [[ann|Ann]]: About Ann.

(index trimmed to 45 tokens: 5 of 6 pages omitted — open knowledge/ or run `brain show NAME` for the rest)
"""
    assert result.tokens <= 45


def test_budget_below_the_headings_prints_the_note_only():
    text, omitted = trim_index(FULL, 5, {})
    assert text.startswith("# Index\n\n(index trimmed to 5 tokens: 6 of 6 pages omitted")
    assert omitted == ["alpha", "ann", "beta", "bob", "city", "proj"]


def test_lines_naming_no_page_go_first_and_prose_stays():
    text = "# Index\n\nIntro.\n\n## People\n- [[ann|Ann]]: a\n- [[ghost]]: gone\n\n## Other\nProse only.\n"
    out, omitted = trim_index(text, 50, {"ann": (0, -1, 0, "ann")})
    assert omitted == ["ghost"]
    assert out.startswith("# Index\n\nIntro.\n\n## People\n- [[ann|Ann]]: a\n\n## Other\nProse only.\n\n(index trimmed")


def test_trimming_is_deterministic_and_matches_render(make_tree):
    view = view_of(make_tree, FILES)
    assert render_knowledge_index(view.pages) == FULL
    assert index_for_agent(view, 70).text == index_for_agent(view_of(make_tree, FILES), 70).text


# -- ranks from link cards -------------------------------------------------------------------------
def graph_ranks(view: BrainView) -> dict[str, tuple]:
    """The definition page_ranks must match: in-degree in the link graph (brain.graph)."""
    from brain import layout
    from brain.graph import build_graph
    from brain.indexing import PRIORITY_TYPES

    graph = build_graph(view)
    out = {}
    for path, doc in view.pages.items():
        updated = doc.frontmatter.updated.toordinal() if doc.frontmatter.updated else 0
        out[doc.slug] = (0 if layout.page_location(path)[0] in PRIORITY_TYPES else 1, -graph.in_degree(path), -updated, doc.slug)
    return out


TRICKY = {
    **FILES,
    "knowledge/people/ann.md": page("Ann", "person", "2026-01-01", "Works on [[alpha]], [[Alpha]] twice, [[ann]] herself, [[#Top]] and [[nowhere]]."),
    "knowledge/concepts/gamma.md": "---\ntitle: Gamma\ntype: concept\naliases: [Γ, the third]\nupdated: 2026-01-02\n---\nSee `[[beta]]` in code.\n",
    "knowledge/concepts/broken.md": "---\ntitle: [unclosed\n---\nLinks [[alpha]].\n",
    "notes/ann/n1.md": "---\ntitle: A note\ntype: note\n---\nAbout [[the third]] and [[Beta|b]].\n",
    "sessions/summaries/s1.md": "---\ntitle: Session\ntype: summary\n---\n[[bob]] and [[city]].\n",
}


def test_ranks_from_link_cards_equal_the_link_graphs(make_tree, nadia):
    from brain.indexing import cached_view, page_ranks

    for root in (make_tree(TRICKY), nadia):
        expected = graph_ranks(BrainView(DirTree(root)))
        assert page_ranks(cached_view(root)) == expected
        assert page_ranks(BrainView(DirTree(root))) == expected  # no persisted cards: the same


def test_a_second_brain_index_parses_only_what_changed(make_tree, monkeypatch):
    import brain.view
    from brain.indexing import cached_view, page_ranks, save_cards

    root = make_tree(TRICKY)
    view = cached_view(root)
    first = page_ranks(view)
    save_cards(view)
    parsed = []
    real = brain.view.parse_page
    monkeypatch.setattr(brain.view, "parse_page", lambda text, rel: parsed.append(rel) or real(text, rel))
    brain.view._PARSE_CACHE.clear()
    assert page_ranks(cached_view(root)) == first and parsed == ["knowledge/concepts/broken.md"]  # unreadable: no card
    (root / "notes/ann/n1.md").write_text("---\ntitle: A note\ntype: note\n---\nNow only [[proj]].\n")
    parsed.clear()
    brain.view._PARSE_CACHE.clear()
    again = page_ranks(cached_view(root))
    assert sorted(parsed) == ["knowledge/concepts/broken.md", "notes/ann/n1.md"]
    assert again == graph_ranks(BrainView(DirTree(root))) != first


# -- link tallies: a folder of notes or summaries counted once per git tree --------------------------
def _tallied(root):
    from brain.indexing import LinkTallies, cached_view, page_ranks, save_cards

    view = cached_view(root)
    tallies = LinkTallies(view)
    ranks = page_ranks(view, tallies)
    save_cards(view)
    return ranks, tallies.how


def _commit(root, message="edit"):
    from tests.conftest import git

    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


TALLIED = {
    **TRICKY,
    "notes/ann/n2.md": "---\ntitle: Another\ntype: note\n---\nAbout [[proj]].\n",
    "notes/bob/n1.md": "---\ntitle: Bob's\ntype: note\n---\nAbout [[bob]], [[Bob]] and [[alpha]].\n",
    "sessions/summaries/s2.md": "---\ntitle: Session 2\ntype: summary\n---\n[[ann]] met [[bob]].\n",
    "sessions/summaries/s3.md": "---\ntitle: Session 3\ntype: summary\n---\nNo links.\n",
}
FOLDERS = ["notes/ann", "notes/bob", "sessions/summaries"]


def test_a_folders_tally_is_kept_while_git_vouches_for_its_tree_and_moved_by_a_commit(make_tree):
    from tests.conftest import git

    root = make_tree(TALLIED)
    git(root, "init", "-q", "-b", "main")
    _commit(root, "start")
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how == {f: "counted" for f in FOLDERS}
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how == {f: "kept" for f in FOLDERS}
    # A commit (a nightly run's): changed, added, deleted and broken documents in two folders.
    (root / "notes/ann/n1.md").write_text("---\ntitle: A note\ntype: note\n---\nNow only [[proj]].\n")
    (root / "notes/ann/n3.md").write_text("---\ntitle: New\ntype: note\n---\n[[city]] and [[the third]].\n")
    (root / "notes/ann/n2.md").write_text("---\ntitle: [unclosed\n---\nAbout [[proj]].\n")
    (root / "sessions/summaries/s2.md").unlink()
    (root / "notes/ann/readme.txt").write_text("not a document\n")
    _commit(root)
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how == {"notes/ann": "moved", "notes/bob": "kept", "sessions/summaries": "moved"}
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and set(how.values()) == {"kept"}
    import json
    import shutil

    from brain.indexing import LinkTallies

    shutil.rmtree(root / "notes/bob")  # a folder gone: its tally is not kept
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and sorted(how) == ["notes/ann", "sessions/summaries"]
    kept = json.loads((root / ".dream/cache/brain-cards" / LinkTallies.FILE).read_text())
    assert sorted(kept["folders"]) == ["notes/ann", "sessions/summaries"]


def test_a_folder_with_changes_git_does_not_vouch_for_is_counted_from_its_files(make_tree):
    from tests.conftest import git

    root = make_tree(TALLIED)
    git(root, "init", "-q", "-b", "main")
    _commit(root, "start")
    _tallied(root)
    (root / "notes/bob/n1.md").write_text("---\ntitle: Bob's\ntype: note\n---\nNow [[city]].\n")  # not committed
    (root / "sessions/summaries/s4.md").write_text("---\ntitle: S4\ntype: summary\n---\n[[city]].\n")  # untracked
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how == {"notes/ann": "kept", "notes/bob": "counted", "sessions/summaries": "counted"}
    git(root, "add", "sessions/summaries/s4.md")  # staged: git vouches for it, but HEAD's tree is not this
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how["sessions/summaries"] == "counted"
    _commit(root)
    ranks, how = _tallied(root)  # what was counted at no tree is not kept: the tallies of the first commit move
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how == {"notes/ann": "kept", "notes/bob": "moved", "sessions/summaries": "moved"}
    assert set(_tallied(root)[1].values()) == {"kept"}


def test_a_tally_file_that_cannot_be_trusted_is_counted_again(make_tree):
    import json

    from brain.indexing import LinkTallies
    from tests.conftest import git

    root = make_tree(TALLIED)
    git(root, "init", "-q", "-b", "main")
    _commit(root, "start")
    expected, _ = _tallied(root)
    path = next((root / ".dream/cache/brain-cards").glob(LinkTallies.FILE))
    kept = json.loads(path.read_text())
    for bad in ("{", json.dumps({**kept, "version": "other code"}), json.dumps({**kept, "folders": {"notes/ann": ["x", [[["ann"], -1]]]}}),
                json.dumps({**kept, "folders": {"notes/ann": [kept["folders"]["notes/ann"][0], "not a list"]}})):
        path.write_text(bad)
        ranks, how = _tallied(root)
        assert ranks == expected and how["notes/ann"] == "counted", bad
    # A tally kept with a tree git does not have (a rewritten history): counted, not moved.
    kept["folders"]["notes/ann"][0] = "0123456789abcdef0123456789abcdef01234567"
    path.write_text(json.dumps(kept))
    ranks, how = _tallied(root)
    assert ranks == expected and how["notes/ann"] == "counted"
    # A tally that is not the one of its tree (the counts do not add up): counted, not moved.
    (root / "notes/ann/n2.md").unlink()
    _commit(root)
    kept = json.loads(path.read_text())
    before = git(root, "rev-parse", "HEAD~1:notes/ann").strip()
    kept["folders"]["notes/ann"] = [before, [[["nothing"], 1]]]
    path.write_text(json.dumps(kept))
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how["notes/ann"] == "counted"


def test_a_symlink_committed_into_a_folder_is_no_document_of_its_tally(make_tree):
    from tests.conftest import git

    root = make_tree(TALLIED)
    git(root, "init", "-q", "-b", "main")
    _commit(root, "start")
    _tallied(root)
    (root / "notes/ann/link.md").symlink_to("n1.md")  # a link to a note that names [[the third]] and [[Beta|b]]
    _commit(root, "a symlink")
    ranks, how = _tallied(root)
    assert ranks == graph_ranks(BrainView(DirTree(root))) and how["notes/ann"] == "moved"
    assert _tallied(root)[0] == ranks
