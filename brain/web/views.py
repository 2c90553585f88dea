"""What each view of `brain serve` shows, gathered as plain data for its template.

A page's text, a transcript and the history are read at each request. The pages' link graph
(names, backlinks, the graph view, which pages cite a session, the counts) and the search index
are kept per HEAD commit (`HeadCache`), as they are slow to build for a large Brain. An edit shows
on its page at once, in links and search after its commit.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from pathlib import Path

from markupsafe import Markup

from brain import layout
from brain.answers import searchers, view_of
from brain.errors import NotFoundError, PageError
from brain.evidence import cite_evidence
from brain.graph import BrainGraph
from brain.indexing import index_for_agent
from brain.lookup import find_doc
from brain.markdown import strip_refs
from brain.page import Page
from brain.repo import BrainRepo, HeadCache
from brain.tree import DirTree
from brain.view import BrainView, parse_bytes
from brain.web.html import diff_rows, doc_href, ref_href, target_href, to_html, turn_range

TURN_FIELDS = ("tool", "command", "path", "description")  # what a tool event carries besides its text


class Site:
    """One Brain as the server keeps it: its root, and per HEAD its pages' graph and search index.
    `refresh()` once per request looks at HEAD (a git call); the views then read `graph`."""

    def __init__(self, root: Path, embedder: str = "auto") -> None:
        self.root = Path(root)
        self.graphs = HeadCache(self.root, lambda: BrainGraph(view_of(self.root), pages_only=True))
        self.searchers = searchers(self.root, embedder)
        self.graph: BrainGraph | None = None

    def refresh(self) -> "Site":
        self.graph = self.graphs.get()
        return self

    def find(self, name: str) -> str:
        """The document `name` names: by the committed names, else on disk (a page not committed yet)."""
        try:
            return find_doc(self.graph.view, name)
        except NotFoundError:
            return find_doc(view_of(self.root), name)

    def read(self, path: str) -> Page | None:
        """The document at `path` as it is on disk now (None: there is none); PageError when unreadable."""
        data = DirTree(self.root).read_if_exists(path)
        parsed = parse_bytes(path, data) if data is not None else None
        if isinstance(parsed, PageError):
            raise parsed
        return parsed

    def link_href(self, target: str) -> str | None:
        hits = self.graph.view.resolve(target)
        return doc_href(hits[0]) if hits else None

    def html(self, doc: Page) -> Markup:
        """The body, without the `# Title` line it starts with (the view shows the title itself)."""
        sources, body = doc.frontmatter.sources, doc.body
        head, _, rest = body.lstrip("\n").partition("\n")
        if head.strip() == f"# {doc.frontmatter.title}".strip():
            body = rest
        return to_html(body, self.link_href, lambda n: target_href(sources[n], doc.path, n) if n in sources else None)

    def title(self, path: str) -> str:
        node = self.graph.graph.nodes.get(path) or {}
        return node.get("title") or path.rsplit("/", 1)[-1].removesuffix(".md")


def home_view(site: Site) -> dict:
    """The index, the last commits (a Dream run's with its trailers and rejections) and the counts."""
    view = site.graph.view
    index = index_for_agent(view, 0, dict)  # budget 0: the whole index, so no page ranks are asked
    counts = {
        "pages": len(view.page_paths),
        "sessions": sum(1 for p in view.files if p.startswith(layout.SESSIONS_RAW + "/") and p.endswith(".jsonl")),
        "summaries": len(view.paths_under(layout.SESSIONS_SUMMARIES + "/")),
        "notes": len(view.paths_under(layout.NOTES + "/")),
        "citations": sum(len(p.frontmatter.sources) for p in view.pages.values()),
    }
    body = index.text.split("\n", 1)[1] if index.text.startswith("# ") else index.text  # the view has its own heading
    return {"index": to_html(body, site.link_href, lambda n: None), "counts": counts,
            "runs": BrainRepo(site.root).log(None, limit=10)}


def sessions_view(site: Site) -> dict:
    text = (DirTree(site.root).read_if_exists(layout.SESSIONS_INDEX) or b"").decode("utf-8", "replace")
    body = text.split("\n", 1)[1] if text.startswith("# ") else text
    return {"index": to_html(body, site.link_href, lambda n: None) if body.strip() else None}


def page_view(site: Site, name: str) -> dict:
    """A page, note or summary: its text rendered, its sources, the pages that link to it, its history."""
    path = site.find(name)
    doc = site.read(path)
    if doc is None:
        raise NotFoundError(f"{path} was deleted", "open the Home view for the pages there are")
    sources = [(n, raw.removeprefix("session:").replace("#", " · "), target_href(raw, path, n))
               for n, raw in sorted(doc.frontmatter.sources.items())]
    try:
        linking = sorted({lk.source for lk in site.graph.backlinks(path) if lk.source != path})
    except NotFoundError:  # not in the graph of HEAD: a page not committed yet
        linking = []
    return {"doc": doc, "path": path, "kind": layout.doc_kind(path), "body": site.html(doc), "sources": sources,
            "backlinks": [(doc_href(p), site.title(p)) for p in linking],
            "history": BrainRepo(site.root).log(path, limit=30)}


def session_view(site: Site, session_id: str, turns: str | None) -> dict:
    """A transcript with its cited turns marked, its summary, and the pages that cite it."""
    view = BrainView(DirTree(site.root))
    session = view.session(session_id)
    if session is None:
        raise NotFoundError(f"no session {session_id!r} under {layout.SESSIONS_RAW}/", "open Search to find one")
    rows = [{"turn": t, "kind": (t.model_extra or {}).get("kind") or "speech",
             "fields": [(k, str(v)) for k in TURN_FIELDS if (v := (t.model_extra or {}).get(k))]} for t in session.turns]
    summary = site.read(layout.summary_path(session_id))
    return {"session": session, "rows": rows, "cited": turn_range(turns), "summary": summary,
            "summary_html": site.html(summary) if summary else None, "citing": _citing(site, session_id),
            "problems": [str(p) for p in view.session_problems.get(session_id, [])],
            "extra": sorted((k, str(v)) for k, v in (session.header.model_extra or {}).items())}


def _citing(site: Site, session_id: str) -> list[dict]:
    """Each page citing the session, with its `[cite:N]` numbers and the turns each one cites."""
    graph = site.graph.graph
    pages: dict[str, list[tuple[int, str, str]]] = {}
    for node, attrs in graph.nodes(data=True):
        if attrs.get("kind") == "target" and attrs.get("target_kind") == "session" and attrs.get("ref") == session_id:
            turns, href = node.rpartition("#")[2], ref_href(node)  # a target node is named by its target
            for source, _, edge in graph.in_edges(node, data=True):
                pages.setdefault(source, []).extend((n, turns, href) for n in edge["sources"])
    return [{"href": doc_href(p), "title": site.title(p), "cites": sorted(c)} for p, c in sorted(pages.items())]


def evidence_view(site: Site, path: str, n: int) -> dict:
    """What `[cite:n]` of a document points at when it is not a session: the record or the note."""
    view = BrainView(DirTree(site.root), focus=[path])  # only this document is parsed
    return {"path": path, "href": doc_href(path), "title": site.title(path), "evidence": cite_evidence(view, path, n)}


def diff_view(site: Site, sha: str, path: str) -> dict:
    """The change one commit made to a document, line by line."""
    if not layout.doc_kind(path):
        raise NotFoundError(f"{path} is not a page, note or session summary")
    repo = BrainRepo(site.root)
    rows = diff_rows(repo.patch(sha, path))
    entry = next((e for e in repo.log(path, limit=200) if e.sha.startswith(sha)), None)
    return {"path": path, "href": doc_href(path), "title": site.title(path), "entry": entry, "rows": rows}


def graph_data(site: Site) -> dict:
    """Pages (no cards, no summaries) as nodes with their type, links and citation counts; links between them."""
    graph = site.graph.graph
    pages = {p: a for p, a in graph.nodes(data=True) if a.get("kind") == "page"}
    links: list[dict] = []
    degree: Counter[str] = Counter()
    cites: Counter[str] = Counter()
    for source, target, edge in graph.edges(data=True):
        if edge["kind"] == "link" and source in pages and target in pages and source != target:
            links.append({"source": pages[source]["slug"], "target": pages[target]["slug"]})
            degree.update((source, target))
        elif edge["kind"] == "cite" and source in pages:
            cites[source] += len(edge["sources"])
    nodes = [{"id": a["slug"], "title": a.get("title") or a["slug"], "type": (layout.page_location(p) or ("page",))[0],
              "links": degree[p], "cites": cites[p], "url": doc_href(p)} for p, a in sorted(pages.items())]
    return {"nodes": nodes, "links": links}


def search_view(site: Site, query: str, k: int) -> dict:
    result = site.searchers.get().search(query, k=k) if query else None
    hits = [{"hit": h, "href": ref_href(h.ref), "text": " ".join(strip_refs(h.text).split())[:400]} for h in result.hits] if result else []
    return {"query": query, "k": k, "result": result, "hits": hits}


def context_view(site: Site, question: str, budget: int) -> dict:
    """The packet an agent gets for `question`, every item considered with its lane, tokens and reason."""
    if not question:
        return {"question": "", "budget": budget, "packet": None}
    from brain.context import ContextBuilder, ContextOptions

    packet = ContextBuilder(site.root, site.searchers.get()).build(question, ContextOptions(budget=budget, now=dt.date.today()))
    return {"question": question, "budget": budget, "packet": packet,
            "admitted": [{"item": i, "href": ref_href(i.ref)} for i in packet.items if i.admitted],
            "rejected": [{"item": i, "href": ref_href(i.ref)} for i in packet.items if not i.admitted]}
