"""The Brain as a networkx DiGraph: wikilinks (context edges) and citations (evidence edges).

Nodes are documents by path (kind "page", "note" or "summary") and citation targets by their
canonical string (kind "target": `session:<id>#t4-t6`, `source:<connector>/<id>`, `note:<path>`).
A link edge is doc → doc (kind="link", `line` = first line, `lines`/`names` = every use); a cite edge is
doc → target (kind="cite", `sources` = the N of `[cite:N]`, `line`/`lines` where they are used).
Built from a BrainView, so the same graph serves the live wiki and a staged tree.
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

import networkx as nx

from brain import layout
from brain.citations import CitationError, CitationTarget
from brain.lookup import find_doc
from brain.page import Page
from brain.view import BrainView


class Link(NamedTuple):
    """One `[[name]]` at `line` of `source`; `target` is the path it resolves to (None: nowhere)."""

    source: str
    name: str
    line: int
    target: str | None


class BrainGraph:
    """Links and citations of one BrainView. Helpers take any name `brain show` accepts."""

    def __init__(self, view: BrainView, pages_only: bool = False) -> None:
        """`pages_only`: the edges of knowledge/ pages alone (the web view's graph), not of every
        note and summary: a 10,000-session Brain has ~60,000 of those."""
        self.view = view
        self.graph = nx.DiGraph()
        for path in view.page_paths:
            self.graph.add_node(path, kind="page", slug=path.rsplit("/", 1)[1][:-3], title=None)
        docs = view.pages if pages_only else view.docs
        for path, doc in docs.items():
            self.graph.add_node(path, kind=layout.doc_kind(path), slug=doc.slug, title=doc.frontmatter.title)
        for path, doc in docs.items():
            self._add_links(path, doc)
            self._add_cites(path, doc)

    def _add_links(self, path: str, doc: Page) -> None:
        for link in doc.links:
            if not link.target:
                continue  # [[#Heading]]: a link inside the page itself
            for target in self.view.resolve(link.target):
                if self.graph.has_edge(path, target):
                    self.graph[path][target]["lines"].append(link.line)
                    self.graph[path][target]["names"].append(link.target)
                else:
                    self.graph.add_edge(path, target, kind="link", line=link.line, lines=[link.line], names=[link.target])

    def _add_cites(self, path: str, doc: Page) -> None:
        used: dict[int, list[int]] = defaultdict(list)
        for cite in doc.cites:
            used[cite.n].append(cite.line)
        for n, raw in sorted(doc.frontmatter.sources.items()):
            try:
                target = CitationTarget.parse(raw)
            except CitationError:
                continue  # C validators report malformed targets
            node = str(target)
            if node not in self.graph:
                self.graph.add_node(node, kind="target", target_kind=target.kind, ref=target.ref)
            lines = used.get(n) or [doc.key_lines.get("sources", 1)]
            if self.graph.has_edge(path, node):
                edge = self.graph[path][node]
                edge["sources"].append(n)
                edge["lines"] = sorted(edge["lines"] + lines)
                edge["line"] = edge["lines"][0]
            else:
                self.graph.add_edge(path, node, kind="cite", sources=[n], line=min(lines), lines=sorted(lines))

    # -- queries ----------------------------------------------------------------------------
    def node(self, name: str) -> str:
        """The document node `name` means (path, slug, alias, title, …); NotFoundError otherwise."""
        if name in self.graph and self.graph.nodes[name].get("kind") != "target":
            return name
        return find_doc(self.view, name)

    def outlinks(self, name: str) -> list[Link]:
        """Every wikilink written in the document, in order, resolved or not (one per target)."""
        path = self.node(name)
        doc = self.view.docs.get(path)
        out: list[Link] = []
        for link in doc.links if doc else []:
            targets = self.view.resolve(link.target) if link.target else [path]
            out += [Link(source=path, name=link.target, line=link.line, target=t) for t in targets or [None]]
        return out

    def backlinks(self, name: str) -> list[Link]:
        """Every wikilink in other documents (and the page itself) that resolves to it."""
        path = self.node(name)
        out = [
            Link(source=source, name=name, line=line, target=path)
            for source, _, data in self.graph.in_edges(path, data=True)
            if data["kind"] == "link"
            for line, name in zip(data["lines"], data["names"])
        ]
        return sorted(out, key=lambda lk: (lk.source, lk.line, lk.name))

    def evidence(self, name: str) -> list[str]:
        """Citation targets the document cites, sorted."""
        path = self.node(name)
        return sorted(t for _, t, d in self.graph.out_edges(path, data=True) if d["kind"] == "cite")
