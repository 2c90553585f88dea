"""The link/evidence graph of a small Brain."""

from __future__ import annotations

import pytest

from brain.errors import NotFoundError
from brain.graph import BrainGraph, Link
from brain.tree import DirTree
from brain.view import BrainView

NADIA = "knowledge/people/nadia-rahman.md"
JUDS = "knowledge/projects/juds.md"
DESIGN = "knowledge/concepts/universal-design.md"
NOTE = "notes/juds/report-due.md"


@pytest.fixture
def graph(small_brain):
    return BrainGraph(BrainView(DirTree(small_brain)))


def test_nodes_and_edges(graph):
    g = graph.graph
    assert g.nodes[JUDS] == {"kind": "page", "slug": "juds", "title": "Japan Universal Design Sprint"}
    assert g.nodes[NOTE]["kind"] == "note"
    assert g.nodes["session:s1#t1-t2"] == {"kind": "target", "target_kind": "session", "ref": "s1"}
    assert g.edges[JUDS, NADIA] == {"kind": "link", "line": 14, "lines": [14], "names": ["nadia-rahman"]}
    assert g.edges[DESIGN, JUDS]["names"] == ["JUDS"]
    assert g.edges[JUDS, "session:s1#t1-t2"] == {"kind": "cite", "sources": [1], "line": 14, "lines": [14]}
    assert g.edges[JUDS, "source:cal/evt-1"]["line"] == 15
    assert sorted(t for _, t, d in g.out_edges(JUDS, data=True) if d["kind"] == "link") == [NADIA]
    dangling = [lk for path in graph.view.docs for lk in graph.outlinks(path) if lk.target is None]
    assert dangling == [Link(source=JUDS, name="kyoto-station", line=15, target=None)]


def test_backlinks_and_outlinks(graph):
    assert graph.backlinks("JUDS") == [
        Link(source=DESIGN, name="JUDS", line=10, target=JUDS),
        Link(source=NADIA, name="juds", line=13, target=JUDS),
        Link(source=NOTE, name="juds", line=11, target=JUDS),
    ]
    assert graph.outlinks("juds") == [
        Link(source=JUDS, name="nadia-rahman", line=14, target=NADIA),
        Link(source=JUDS, name="kyoto-station", line=15, target=None),
    ]
    assert len({lk.source for lk in graph.backlinks(JUDS)} - {JUDS}) == 3  # other documents linking to it


def test_evidence(graph):
    assert graph.evidence("juds") == ["session:s1#t1-t2", "source:cal/evt-1"]


def test_unknown_name_suggests(graph):
    with pytest.raises(NotFoundError) as err:
        graph.backlinks("jds")
    assert err.value.hint == "did you mean 'juds'?"


def test_heading_links_inside_a_page_are_not_dangling(make_tree):
    page = "---\ntitle: A\ntype: concept\n---\n# A\n\nSee [[#History]].\n\n## History\n"
    graph = BrainGraph(BrainView(DirTree(make_tree({"knowledge/concepts/a.md": page}))))
    assert all(lk.target is not None for lk in graph.outlinks("a"))
    assert graph.outlinks("a") == [Link(source="knowledge/concepts/a.md", name="", line=7, target="knowledge/concepts/a.md")]
