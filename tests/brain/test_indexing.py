"""`brain index` trimming: lowest-value lines go first; output is exact and deterministic."""

from __future__ import annotations

from brain.indexing import index_for_agent, trim_index
from brain.render import render_knowledge_index
from brain.tokens import estimate_tokens
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


def documents_of(view: BrainView) -> dict:
    """What the search index keeps of each document (links, aliases, date)."""
    from brain.search_index import SearchIndex

    index = SearchIndex.open(view.tree.root)
    try:
        return index.documents()
    finally:
        index.close()


def index_of(view: BrainView, budget: int):
    return index_for_agent(view, budget, lambda: documents_of(view))


def test_full_index_is_rendered_when_missing(make_tree):
    result = index_of(view_of(make_tree, FILES), budget=0)
    assert result.text == FULL
    assert (result.generated, result.trimmed, result.total) == (True, False, 6)
    assert result.tokens == estimate_tokens(FULL) == 86


def test_index_on_disk_is_printed_as_it_is(make_tree):
    text = "# Index\n\nOwner's intro.\n\n## People\n- [[ann|Ann]]: Hand-written.\n"
    result = index_of(view_of(make_tree, {**FILES, "knowledge/index.md": text}), budget=8000)
    assert (result.text, result.generated, result.total) == (text, False, 1)


def test_over_budget_drops_lowest_value_lines_first(make_tree):
    view = view_of(make_tree, {**FILES, "knowledge/index.md": FULL})
    result = index_of(view, budget=80)
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
    result = index_of(view, budget=45)
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
    assert index_of(view, 70).text == index_of(view_of(make_tree, FILES), 70).text


# -- ranks from the links the search index keeps ---------------------------------------------------
def graph_ranks(view: BrainView) -> dict[str, tuple]:
    """The definition page_ranks must match: in-degree in the link graph (brain.graph)."""
    from brain import layout
    from brain.graph import BrainGraph
    from brain.indexing import PRIORITY_TYPES

    graph = BrainGraph(view)
    out = {}
    for path, doc in view.pages.items():
        updated = doc.frontmatter.updated.toordinal() if doc.frontmatter.updated else 0
        out[doc.slug] = (0 if layout.page_location(path)[0] in PRIORITY_TYPES else 1, -len({lk.source for lk in graph.backlinks(path)} - {path}), -updated, doc.slug)
    return out


TRICKY = {
    **FILES,
    "knowledge/people/ann.md": page("Ann", "person", "2026-01-01", "Works on [[alpha]], [[Alpha]] twice, [[ann]] herself, [[#Top]] and [[nowhere]]."),
    "knowledge/concepts/gamma.md": "---\ntitle: Gamma\ntype: concept\naliases: [Γ, the third]\nupdated: 2026-01-02\n---\nSee `[[beta]]` in code.\n",
    "knowledge/concepts/broken.md": "---\ntitle: [unclosed\n---\nLinks [[alpha]].\n",
    "notes/ann/n1.md": "---\ntitle: A note\ntype: note\n---\nAbout [[the third]] and [[Beta|b]].\n",
    "sessions/summaries/s1.md": "---\ntitle: Session\ntype: summary\n---\n[[bob]] and [[city]].\n",
}


def test_ranks_from_the_indexed_links_equal_the_link_graphs(make_tree, nadia):
    from brain.indexing import page_ranks

    for root in (make_tree(TRICKY), nadia):
        view = BrainView(DirTree(root))
        assert page_ranks(documents_of(view)) == graph_ranks(view)


def test_ranks_follow_documents_changed_since_the_index_was_updated(make_tree):
    from brain.indexing import page_ranks

    root = make_tree(TRICKY)
    documents_of(BrainView(DirTree(root)))
    (root / "notes/ann/n1.md").write_text("---\ntitle: A note\ntype: note\n---\nAbout [[city]] now, and [[city]] again.\n", encoding="utf-8")
    (root / "sessions/summaries/s1.md").unlink()
    (root / "notes/ann/link.md").symlink_to("n1.md")  # a symlink is no document: its links do not count
    (root / "notes/ann/n2.md").write_bytes(b"---\ntitle: Bad\ntype: note\n---\n[[bob]] \xff\n")  # not UTF-8: unreadable
    (root / "knowledge/people/bob.md").write_text(page("Bob", "person", "2026-09-01", "Knows [[ann]].").replace("type: person", "type: person\naliases: [Robert]"), encoding="utf-8")
    (root / "knowledge/concepts/beta.md").write_text(page("Beta", "concept", "2026-06-01", "About [[Robert]]."), encoding="utf-8")
    view = BrainView(DirTree(root))
    assert page_ranks(documents_of(view)) == graph_ranks(view)




def test_the_last_indexed_documents_are_what_the_index_kept_and_built_when_there_is_none(make_tree):
    from brain.indexing import indexed_documents, last_indexed_documents

    root = make_tree(TRICKY)
    first = last_indexed_documents(DirTree(root))  # no index yet: it is built
    assert first == indexed_documents(DirTree(root))
    (root / "notes/ann/n1.md").write_text("---\ntitle: A note\ntype: note\n---\nAbout [[city]] only.\n", encoding="utf-8")
    assert last_indexed_documents(DirTree(root)) == first  # as the last search left it: the files are not read
    assert indexed_documents(DirTree(root))["notes/ann/n1.md"].links == ["city"]
